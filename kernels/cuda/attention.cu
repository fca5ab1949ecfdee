/* Causal softmax attention, flash style, on the CUDA cores (any head dim up to 256; the
 * tensor-core kernel in attention_tc.cu takes multiples of 16 up to 128): a block owns 32 queries of one head and streams key
 * tiles of 64 through shared memory with an online softmax (running max and sum per query),
 * so no T x T matrix exists anywhere. Key tiles wholly before the window of the block's first
 * query are never loaded (key-block skipping). Each warp owns 4 queries; a lane scores two keys
 * of the tile and accumulates dv/32 output channels. fp32 arithmetic (CUDA cores). */
#include "kernels.cuh"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ATT_BQ 32                  /* queries per block */
#define ATT_KT 64                  /* keys per tile */
#define ATT_WARPS 8
#define ATT_QPW (ATT_BQ / ATT_WARPS) /* queries per warp */
#define ATT_VPL (CU_MAX_HEAD_DIM / 32) /* output channels per lane, at most */

static size_t att_smem_bytes(int dk, int dv) {
    return sizeof(float) * ((size_t)ATT_BQ * dk + (size_t)ATT_KT * (dk + 1) + (size_t)ATT_KT * dv +
                            (size_t)ATT_WARPS * ATT_KT);
}

__global__ static void __launch_bounds__(ATT_WARPS * 32)
attention_kernel(float *out, const float *q, const float *k, const float *v, const float *row_scale,
                 int T, int H, int Hkv, int dk, int dv, int window) {
    extern __shared__ float sm[];
    float *Qs = sm;                                /* [BQ][dk], pre-scaled */
    float *Ks = Qs + ATT_BQ * dk;                  /* [KT][dk+1] (padded: conflict-free rows) */
    float *Vs = Ks + ATT_KT * (dk + 1);            /* [KT][dv] */
    float *Ps = Vs + ATT_KT * dv;                  /* [WARPS][KT] */
    const int h = blockIdx.y, kvh = h / (H / Hkv);
    const int q0 = blockIdx.x * ATT_BQ;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const size_t qld = (size_t)H * dk, kld = (size_t)Hkv * dk, vld = (size_t)Hkv * dv;
    const float inv_sqrt = 1.0f / sqrtf((float)dk);

    for (int i = threadIdx.x; i < ATT_BQ * dk; i += blockDim.x) {
        int r = i / dk, c = i % dk, t = q0 + r;
        float sc = t < T ? inv_sqrt * (row_scale ? row_scale[t] : 1.0f) : 0.0f;
        Qs[i] = t < T ? q[(size_t)t * qld + (size_t)h * dk + c] * sc : 0.0f;
    }

    float acc[ATT_QPW][ATT_VPL];
    float m[ATT_QPW], l[ATT_QPW];
    #pragma unroll
    for (int a = 0; a < ATT_QPW; a++) {
        m[a] = -INFINITY;
        l[a] = 0.0f;
        #pragma unroll
        for (int u = 0; u < ATT_VPL; u++) acc[a][u] = 0.0f;
    }

    const int q_last = min(T, q0 + ATT_BQ) - 1;
    const int s_min = window > 0 ? max(0, q0 - window + 1) : 0;
    for (int k0 = s_min / ATT_KT * ATT_KT; k0 <= q_last; k0 += ATT_KT) {
        __syncthreads();                           /* previous tile fully consumed */
        for (int i = threadIdx.x; i < ATT_KT * dk; i += blockDim.x) {
            int r = i / dk, c = i % dk, s = k0 + r;
            Ks[r * (dk + 1) + c] = s < T ? k[(size_t)s * kld + (size_t)kvh * dk + c] : 0.0f;
        }
        for (int i = threadIdx.x; i < ATT_KT * dv; i += blockDim.x) {
            int r = i / dv, c = i % dv, s = k0 + r;
            Vs[i] = s < T ? v[(size_t)s * vld + (size_t)kvh * dv + c] : 0.0f;
        }
        __syncthreads();
        #pragma unroll
        for (int a = 0; a < ATT_QPW; a++) {
            const int qr = warp * ATT_QPW + a, t = q0 + qr;
            if (t >= T) continue;                  /* warp-uniform */
            const float *qs = Qs + qr * dk;
            float sc[2];
            #pragma unroll
            for (int b = 0; b < 2; b++) {
                int j = lane + 32 * b, s = k0 + j;
                bool vis = s <= t && (window <= 0 || s > t - window);
                float z = -INFINITY;
                if (vis) {
                    const float *ks = Ks + j * (dk + 1);
                    float d = 0.0f;
                    for (int i = 0; i < dk; i++) d += qs[i] * ks[i];
                    z = d;
                }
                sc[b] = z;
            }
            float mt = fmaxf(sc[0], sc[1]);
            for (int o = 16; o > 0; o >>= 1) mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, o));
            if (mt == -INFINITY) continue;         /* no visible key here (warp-uniform) */
            float mn = fmaxf(m[a], mt);
            float corr = expf(m[a] - mn);
            float p0 = sc[0] == -INFINITY ? 0.0f : expf(sc[0] - mn);
            float p1 = sc[1] == -INFINITY ? 0.0f : expf(sc[1] - mn);
            float ps = p0 + p1;
            for (int o = 16; o > 0; o >>= 1) ps += __shfl_xor_sync(0xffffffffu, ps, o);
            l[a] = l[a] * corr + ps;
            m[a] = mn;
            float *pw = Ps + warp * ATT_KT;
            pw[lane] = p0;
            pw[lane + 32] = p1;
            __syncwarp();
            #pragma unroll
            for (int u = 0; u < ATT_VPL; u++) {
                int e = lane + 32 * u;
                if (e < dv) {
                    float s = acc[a][u] * corr;
                    for (int j = 0; j < ATT_KT; j++) s += pw[j] * Vs[j * dv + e];
                    acc[a][u] = s;
                }
            }
            __syncwarp();
        }
    }
    #pragma unroll
    for (int a = 0; a < ATT_QPW; a++) {
        const int t = q0 + warp * ATT_QPW + a;
        if (t >= T) continue;
        float inv = l[a] > 0.0f ? 1.0f / l[a] : 0.0f;
        #pragma unroll
        for (int u = 0; u < ATT_VPL; u++) {
            int e = lane + 32 * u;
            if (e < dv) out[(size_t)t * H * dv + (size_t)h * dv + e] = acc[a][u] * inv;
        }
    }
}

/* The default kernel: the TMA-fed wgmma kernel (wgtma) where its sm_90a code runs, the head dim
 * is 64 or 128 and a block may have its 225 KB, else wgmma, else FA2 (mma.sync), else the fp32
 * kernel (cu_attention below). All passed the GPU kernel check (tests/gpu/attn_fa2.cu) and
 * whole-model parity on an H200; at 64K causal, 8 heads x 128, one run (2026-12-04, session 10)
 * timed wgtma at 599 TFLOP/s, wgmma 458, SDPA 656 (docs/bench-notes.md).
 * HS_CUDA_ATTENTION=wgtma|wgmma|fa2|tc|simt picks one. */
#define CU_ATT_DEFAULT CU_ATT_WGT

int cu_attention_choice(void) {
    static int choice = -1;
    if (choice < 0) {
        const char *e = getenv("HS_CUDA_ATTENTION");
        choice = !e || !*e               ? CU_ATT_DEFAULT
                 : !strcmp(e, "fa2")     ? CU_ATT_FA2
                 : !strcmp(e, "wgmma")   ? CU_ATT_WG
                 : !strcmp(e, "wgtma")   ? CU_ATT_WGT
                 : !strcmp(e, "tc")      ? CU_ATT_TC
                 : !strcmp(e, "simt")    ? CU_ATT_SIMT
                                         : CU_ATT_DEFAULT;
    }
    return choice;
}

cudaError_t cu_attention_setup(void) {
    cudaError_t e = cudaFuncSetAttribute(attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)att_smem_bytes(CU_MAX_HEAD_DIM, CU_MAX_HEAD_DIM));
    if (e == cudaSuccess) e = cu_attention_tc_setup();
    if (e == cudaSuccess) e = cu_attention_fa2_setup();
    return e != cudaSuccess ? e : cu_attention_wg_setup();
}

int cu_attention_runs_wgt(int T, int Hkv, int dk, int dv, size_t scratch_bytes) {
    return cu_attention_choice() == CU_ATT_WGT && cu_attention_wgt_fits(dk, dv) &&
           scratch_bytes >= cu_attention_wgt_scratch_bytes(T, Hkv, dk, dv);
}

cudaError_t cu_attention(float *out, const float *q, const float *k, const float *v,
                         const float *row_scale, int T, int H, int Hkv, int dk, int dv, int window,
                         void *scratch, size_t scratch_bytes, cudaStream_t st) {
    if (H % Hkv) return cudaErrorInvalidValue;
    const int c = cu_attention_choice();
    if (cu_attention_runs_wgt(T, Hkv, dk, dv, scratch_bytes))
        return cu_attention_wgt(out, q, k, v, row_scale, T, H, Hkv, dk, dv, window, scratch, scratch_bytes, st);
    if ((c == CU_ATT_WG || c == CU_ATT_WGT) && cu_attention_wg_fits(dk, dv) &&
        scratch_bytes >= cu_attention_wg_scratch_bytes(T, Hkv, dk, dv))
        return cu_attention_wg(out, q, k, v, row_scale, T, H, Hkv, dk, dv, window, scratch, scratch_bytes, st);
    if ((c == CU_ATT_FA2 || c == CU_ATT_WG || c == CU_ATT_WGT) && cu_attention_fa2_fits(dk, dv) &&
        scratch_bytes >= cu_attention_fa2_scratch_bytes(T, Hkv, dk, dv))
        return cu_attention_fa2(out, q, k, v, row_scale, T, H, Hkv, dk, dv, window, scratch, scratch_bytes, st);
    if (c == CU_ATT_TC && cu_attention_tc_fits(dk, dv))
        return cu_attention_tc(out, q, k, v, row_scale, T, H, Hkv, dk, dv, window, st);
    return cu_attention_simt(out, q, k, v, row_scale, T, H, Hkv, dk, dv, window, st);
}

cudaError_t cu_attention_simt(float *out, const float *q, const float *k, const float *v,
                         const float *row_scale, int T, int H, int Hkv, int dk, int dv, int window,
                         cudaStream_t st) {
    if (dk > CU_MAX_HEAD_DIM || dv > CU_MAX_HEAD_DIM || H % Hkv) return cudaErrorInvalidValue;
    dim3 grid((unsigned)((T + ATT_BQ - 1) / ATT_BQ), (unsigned)H);
    attention_kernel<<<grid, ATT_WARPS * 32, att_smem_bytes(dk, dv), st>>>(out, q, k, v, row_scale, T,
                                                                            H, Hkv, dk, dv, window);
    return cudaGetLastError();
}
