/* Causal attention on Hopper's warpgroup MMA (wgmma, sm_90a) for head dims 64 and 128: the
 * kernel bodies are attention_wg_body.cuh and its TMA-fed variant attention_wgt_body.cuh
 * (shared with the CPU emulator test), the primitives attention_ptx.cuh. The kernel exists only in the sm_90a machine code of the library; where
 * the driver runs another image (another GPU, or the sm_90 one), a probe at setup reports it
 * unavailable and cu_attention falls back to the FA2 kernel. */
#include "kernels.cuh"

#include <math.h>

#include "attention_ptx.cuh"

#include "attention_wgt_body.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WG_COMPILED 1
#endif

template <int D> static size_t wg_smem_bytes(void) { return wg_geom<D>::SMEM_BYTES; }

template <int D>
__global__ static void __launch_bounds__(WG_THREADS, 1)
wg_attention_kernel(float *out, const float *q, const uint16_t *kb, const uint16_t *vtb, const float *row_scale,
                    int T, int Tp, int H, int Hkv, int window, float qscale) {
#if defined(WG_COMPILED)
    extern __shared__ __align__(1024) unsigned char wg_smem[];
    wg_attention_body<D>(out, q, kb, vtb, row_scale, T, Tp, H, Hkv, window, qscale, wg_smem);
#endif
}

/* the TMA-fed variant (attention_wgt_body.cuh) */
template <int D>
__global__ static void __launch_bounds__(WG_THREADS, 1)
wgt_attention_kernel(float *out, const float *q, const uint16_t *kt, const uint16_t *vt, const float *row_scale,
                     int T, int H, int Hkv, int window, float qscale, const float2 *rope) {
#if defined(WG_COMPILED)
    extern __shared__ __align__(1024) unsigned char wg_smem[];
    wgt_attention_body<D>(out, q, kt, vt, row_scale, T, H, Hkv, window, qscale, rope, wg_smem);
#endif
}

/* one block a key tile (blockIdx.x) of a kv head (blockIdx.y) */
template <int D>
__global__ static void wgt_convert_kernel(uint16_t *kt, uint16_t *vt, const float *k, const float *v, int T, int Hkv,
                                          const float2 *rope) {
#if defined(WG_COMPILED)
    const int NT = WGT_NTILES(T);
    for (int e = threadIdx.x; e < WGT_TILE_CHUNKS(D); e += blockDim.x)
        wgt_convert_tile<D>(kt, vt, k, v, T, Hkv, NT, blockIdx.y, blockIdx.x, e, rope);
#endif
}

template <int D>
__global__ static void wg_convert_vt_kernel(uint16_t *vtb, const float *v, int T, int Tp, int Hkv) {
#if defined(WG_COMPILED)
    const size_t n = (size_t)Tp * Hkv * (D / 4);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        wg_convert_vt_body<D>(vtb, v, T, Tp, Hkv, i);
#endif
}

__global__ static void wg_probe_kernel(int *flag) {
#if defined(WG_COMPILED)
    *flag = 1;
#else
    *flag = 0;
#endif
}

static int wg_available = 0, wgt_available = 0;

int cu_attention_wg_fits(int dk, int dv) { return wg_available && dk == dv && (dk == 64 || dk == 128); }
int cu_attention_wgt_fits(int dk, int dv) { return wgt_available && cu_attention_wg_fits(dk, dv); }

static size_t wg_tp(int T) { return ((size_t)(T > 0 ? T : 0) + 7) / 8 * 8; }

size_t cu_attention_wg_scratch_bytes(int T, int Hkv, int dk, int dv) {
    return ((size_t)(T > 0 ? T : 0) * dk + wg_tp(T) * dv) * (size_t)Hkv * sizeof(uint16_t);
}

cudaError_t cu_attention_wg_setup(void) {
    cudaError_t e = cudaFuncSetAttribute(wg_attention_kernel<64>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)wg_smem_bytes<64>());
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(wg_attention_kernel<128>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)wg_smem_bytes<128>());
    if (e != cudaSuccess) return e;
    /* which machine code runs here: only the sm_90a image has the kernel */
    int *flag, h = 0;
    if ((e = cudaMalloc(&flag, sizeof(int))) != cudaSuccess) return e;
    wg_probe_kernel<<<1, 1>>>(flag);
    e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaMemcpy(&h, flag, sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(flag);
    wg_available = e == cudaSuccess && h == 1;
    /* the TMA-fed kernel's 225 KB of shared memory (D = 128) only Hopper gives a block:
     * elsewhere it is reported unavailable and cu_attention uses the other one */
    if (e == cudaSuccess && wg_available) {
        cudaError_t e2 = cudaFuncSetAttribute(wgt_attention_kernel<64>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)wgt_geom<64>::SMEM_BYTES);
        if (e2 == cudaSuccess)
            e2 = cudaFuncSetAttribute(wgt_attention_kernel<128>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)wgt_geom<128>::SMEM_BYTES);
        wgt_available = e2 == cudaSuccess;
        (void)cudaGetLastError();        /* a refused size is not an error of the setup */
    }
    return e;
}

template <int D>
static cudaError_t wg_launch(float *out, const float *q, const float *k, const float *v, const float *row_scale,
                             int T, int H, int Hkv, int window, uint16_t *kb, uint16_t *vtb, cudaStream_t st) {
    cudaError_t e = cu_attention_convert_k(kb, k, T, Hkv, D, st);
    if (e != cudaSuccess) return e;
    const int Tp = (int)wg_tp(T);
    const size_t n4 = (size_t)Tp * Hkv * (D / 4);
    const unsigned cblocks = (unsigned)((n4 + 255) / 256 < 65535 ? (n4 + 255) / 256 : 65535);
    wg_convert_vt_kernel<D><<<cblocks, 256, 0, st>>>(vtb, v, T, Tp, Hkv);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    const float qscale = (float)(1.4426950408889634 / sqrt((double)D)); /* log2(e) / sqrt(dk) */
    dim3 grid((unsigned)((T + WG_BM - 1) / WG_BM), (unsigned)H);
    wg_attention_kernel<D><<<grid, WG_THREADS, wg_smem_bytes<D>(), st>>>(out, q, kb, vtb, row_scale, T, Tp, H, Hkv,
                                                                       window, qscale);
    return cudaGetLastError();
}

/* The arguments both wgmma entry points take: heads, scratch size and 16-byte alignment. */
static bool wg_args_ok(const float *out, const float *q, const float *k, const float *v, int T, int H, int Hkv,
                       const void *scratch, size_t scratch_bytes, size_t need) {
    return Hkv >= 1 && H % Hkv == 0 && T >= 0 && scratch && scratch_bytes >= need && !((uintptr_t)scratch & 15) &&
           !((uintptr_t)q & 15) && !((uintptr_t)k & 15) && !((uintptr_t)v & 15) && !((uintptr_t)out & 7);
}

cudaError_t cu_attention_wg(float *out, const float *q, const float *k, const float *v, const float *row_scale,
                            int T, int H, int Hkv, int dk, int dv, int window, void *scratch, size_t scratch_bytes,
                            cudaStream_t st) {
    if (!cu_attention_wg_fits(dk, dv) ||
        !wg_args_ok(out, q, k, v, T, H, Hkv, scratch, scratch_bytes, cu_attention_wg_scratch_bytes(T, Hkv, dk, dv)))
        return cudaErrorInvalidValue;
    if (T == 0) return cudaSuccess;
    uint16_t *kb = (uint16_t *)scratch, *vtb = kb + (size_t)T * Hkv * dk;
    return dk == 64 ? wg_launch<64>(out, q, k, v, row_scale, T, H, Hkv, window, kb, vtb, st)
                    : wg_launch<128>(out, q, k, v, row_scale, T, H, Hkv, window, kb, vtb, st);
}

size_t cu_attention_wgt_scratch_bytes(int T, int Hkv, int dk, int dv) {
    return (size_t)WGT_NTILES(T > 0 ? T : 0) * WG_BN * (size_t)(dk + dv) * (size_t)Hkv * sizeof(uint16_t);
}

template <int D>
static cudaError_t wgt_launch(float *out, const float *q, const float *k, const float *v, const float *row_scale,
                              int T, int H, int Hkv, int window, uint16_t *kt, uint16_t *vt, const float2 *rope,
                              cudaStream_t st) {
    wgt_convert_kernel<D><<<dim3((unsigned)WGT_NTILES(T), (unsigned)Hkv), 256, 0, st>>>(kt, vt, k, v, T, Hkv, rope);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    const float qscale = (float)(1.4426950408889634 / sqrt((double)D));
    dim3 grid((unsigned)((T + WG_BM - 1) / WG_BM), (unsigned)H);
    wgt_attention_kernel<D><<<grid, WG_THREADS, wgt_geom<D>::SMEM_BYTES, st>>>(out, q, kt, vt, row_scale, T, H, Hkv,
                                                                              window, qscale, rope);
    return cudaGetLastError();
}

cudaError_t cu_attention_wgt_rope(float *out, const float *q, const float *k, const float *v, const float *row_scale,
                                  int T, int H, int Hkv, int dk, int dv, int window, const float2 *rope, void *scratch,
                                  size_t scratch_bytes, cudaStream_t st) {
    if (!cu_attention_wgt_fits(dk, dv) ||
        !wg_args_ok(out, q, k, v, T, H, Hkv, scratch, scratch_bytes, cu_attention_wgt_scratch_bytes(T, Hkv, dk, dv)) ||
        ((uintptr_t)rope & 15))
        return cudaErrorInvalidValue;
    if (T == 0) return cudaSuccess;
    uint16_t *kt = (uint16_t *)scratch, *vt = kt + (size_t)WGT_NTILES(T) * WG_BN * dk * Hkv;
    return dk == 64 ? wgt_launch<64>(out, q, k, v, row_scale, T, H, Hkv, window, kt, vt, rope, st)
                    : wgt_launch<128>(out, q, k, v, row_scale, T, H, Hkv, window, kt, vt, rope, st);
}

cudaError_t cu_attention_wgt(float *out, const float *q, const float *k, const float *v, const float *row_scale,
                             int T, int H, int Hkv, int dk, int dv, int window, void *scratch, size_t scratch_bytes,
                             cudaStream_t st) {
    return cu_attention_wgt_rope(out, q, k, v, row_scale, T, H, Hkv, dk, dv, window, NULL, scratch, scratch_bytes, st);
}
