/* FlashAttention-2 style causal attention on the tensor cores (mma.sync m16n8k16 bf16, fp32
 * accumulation, ldmatrix, cp.async double buffering) for head dims 64 and 128 (dk == dv).
 * The kernel body is attention_fa2_body.cuh (shared with the CPU emulator test); this file
 * supplies its warp primitives as PTX, the bf16 K/V conversion pass and the launchers.
 * A pass first writes K and V as bf16 head-major copies [Hkv][T][D] into the caller's
 * scratch buffer, so the kernel streams 16-byte cp.async chunks of exactly what the tensor
 * cores read (the engine's activations are fp32). */
#include "kernels.cuh"

#include <math.h>

#include "attention_ptx.cuh"

#include "attention_fa2_body.cuh"

template <int D>
__global__ static void __launch_bounds__(FA2_THREADS, 2)
fa2_attention_kernel(float *out, const float *q, const uint16_t *kb, const uint16_t *vb, const float *row_scale,
                     int T, int H, int Hkv, int window, float qscale) {
    extern __shared__ __align__(16) unsigned char fa2_smem[];
    fa2_attention_body<D>(out, q, kb, vb, row_scale, T, H, Hkv, window, qscale, fa2_smem);
}

template <int D>
__global__ static void fa2_convert_kv_kernel(uint16_t *kb, uint16_t *vb, const float *k, const float *v, int T,
                                             int Hkv) {
    const size_t n = (size_t)T * Hkv * (D / 4);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        fa2_convert_body<D>(kb, k, T, Hkv, i);
        if (vb) fa2_convert_body<D>(vb, v, T, Hkv, i);
    }
}

/* K alone (vb NULL), for the wgmma kernel (attention_wg.cu), which transposes V itself. */
cudaError_t cu_attention_convert_k(uint16_t *kb, const float *k, int T, int Hkv, int D, cudaStream_t st) {
    const size_t n4 = (size_t)T * Hkv * (D / 4);
    const unsigned blocks = (unsigned)((n4 + 255) / 256 < 65535 ? (n4 + 255) / 256 : 65535);
    if (D == 64) fa2_convert_kv_kernel<64><<<blocks, 256, 0, st>>>(kb, NULL, k, NULL, T, Hkv);
    else fa2_convert_kv_kernel<128><<<blocks, 256, 0, st>>>(kb, NULL, k, NULL, T, Hkv);
    return cudaGetLastError();
}

int cu_attention_fa2_fits(int dk, int dv) { return dk == dv && (dk == 64 || dk == 128); }

size_t cu_attention_fa2_scratch_bytes(int T, int Hkv, int dk, int dv) {
    return (size_t)(T > 0 ? T : 0) * (size_t)Hkv * (size_t)(dk + dv) * sizeof(uint16_t);
}

template <int D> static cudaError_t fa2_setup_one(void) {
    cudaError_t e = cudaFuncSetAttribute(fa2_attention_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)fa2_geom<D>::SMEM_BYTES);
    if (e != cudaSuccess) return e;
    /* two blocks per multiprocessor need most of the unified L1/shared memory as shared */
    return cudaFuncSetAttribute(fa2_attention_kernel<D>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                (int)cudaSharedmemCarveoutMaxShared);
}

cudaError_t cu_attention_fa2_setup(void) {
    cudaError_t e = fa2_setup_one<64>();
    return e != cudaSuccess ? e : fa2_setup_one<128>();
}

template <int D>
static cudaError_t fa2_launch(float *out, const float *q, const float *k, const float *v, const float *row_scale,
                              int T, int H, int Hkv, int window, uint16_t *kb, uint16_t *vb, cudaStream_t st) {
    const size_t n4 = (size_t)T * Hkv * (D / 4);
    const unsigned cblocks = (unsigned)((n4 + 255) / 256 < 65535 ? (n4 + 255) / 256 : 65535);
    fa2_convert_kv_kernel<D><<<cblocks, 256, 0, st>>>(kb, vb, k, v, T, Hkv);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    const float qscale = (float)(1.4426950408889634 / sqrt((double)D)); /* log2(e) / sqrt(dk) */
    dim3 grid((unsigned)((T + FA2_BM - 1) / FA2_BM), (unsigned)H);
    fa2_attention_kernel<D><<<grid, FA2_THREADS, fa2_geom<D>::SMEM_BYTES, st>>>(out, q, kb, vb, row_scale, T, H, Hkv,
                                                                                window, qscale);
    return cudaGetLastError();
}

cudaError_t cu_attention_fa2(float *out, const float *q, const float *k, const float *v, const float *row_scale,
                             int T, int H, int Hkv, int dk, int dv, int window, void *scratch,
                             size_t scratch_bytes, cudaStream_t st) {
    if (!cu_attention_fa2_fits(dk, dv) || Hkv < 1 || H % Hkv || T < 0) return cudaErrorInvalidValue;
    if (!scratch || scratch_bytes < cu_attention_fa2_scratch_bytes(T, Hkv, dk, dv) || ((uintptr_t)scratch & 15) ||
        ((uintptr_t)q & 15) || ((uintptr_t)k & 15) || ((uintptr_t)v & 15) || ((uintptr_t)out & 7))
        return cudaErrorInvalidValue;
    if (T == 0) return cudaSuccess;
    uint16_t *kb = (uint16_t *)scratch, *vb = kb + (size_t)T * Hkv * dk;
    return dk == 64 ? fa2_launch<64>(out, q, k, v, row_scale, T, H, Hkv, window, kb, vb, st)
                    : fa2_launch<128>(out, q, k, v, row_scale, T, H, Hkv, window, kb, vb, st);
}
