/* Causal softmax attention on the tensor cores (bf16 WMMA 16x16x16, fp32 accumulation), for
 * head dims that are multiples of 16 up to 128. Same contract as cu_attention (which calls
 * this when the dims fit): flash-style online softmax over key tiles of 64, tiles before the
 * window of the block's first query never loaded, GQA, per-row log scaling.
 * A block owns 64 queries (4 warps x 16 rows). Per key tile each warp computes its 16 x 64
 * scores with WMMA into shared memory, applies the mask and the online softmax there (two
 * lanes per row), writes P in bf16, and accumulates P V tile by tile into an fp32 output kept
 * in shared memory (rescaled per row, which WMMA fragments cannot be). */
#include "kernels.cuh"

#include <mma.h>
#include <math.h>

using namespace nvcuda;

#define TC_BQ 64
#define TC_KT 64
#define TC_WARPS 4
#define TC_MAXD 128

struct tc_layout {
    int ldq, ldv, lds, ldp, ldo;   /* leading dims (elements), padded against bank conflicts */
    size_t q, k, v, s, p, o, tmp, stats, total; /* byte offsets */
};

__host__ __device__ static tc_layout tc_make_layout(int dk, int dv) {
    tc_layout L;
    L.ldq = dk + 8;                /* bf16 rows: ldm a multiple of 8 */
    L.ldv = dv + 8;
    L.lds = TC_KT + 4;             /* fp32 rows: ldm a multiple of 4 */
    L.ldp = TC_KT + 8;
    L.ldo = dv + 4;
    size_t off = 0;
    L.q = off; off += (size_t)TC_BQ * L.ldq * 2;
    L.k = off; off += (size_t)TC_KT * L.ldq * 2;
    L.v = off; off += (size_t)TC_KT * L.ldv * 2;
    off = (off + 31) / 32 * 32;
    L.s = off; off += (size_t)TC_BQ * L.lds * 4;
    L.p = off; off += (size_t)TC_BQ * L.ldp * 2;
    off = (off + 31) / 32 * 32;
    L.o = off; off += (size_t)TC_BQ * L.ldo * 4;
    L.tmp = off; off += (size_t)TC_WARPS * 256 * 4;
    L.stats = off; off += (size_t)TC_BQ * 3 * 4; /* m, l, corr */
    L.total = off;
    return L;
}

__global__ static void __launch_bounds__(TC_WARPS * 32)
attention_tc_kernel(float *out, const float *q, const float *k, const float *v, const float *row_scale,
                    int T, int H, int Hkv, int dk, int dv, int window) {
    extern __shared__ __align__(128) unsigned char smem[];
    const tc_layout L = tc_make_layout(dk, dv);
    __nv_bfloat16 *Qs = (__nv_bfloat16 *)(smem + L.q), *Ks = (__nv_bfloat16 *)(smem + L.k);
    __nv_bfloat16 *Vs = (__nv_bfloat16 *)(smem + L.v), *Ps = (__nv_bfloat16 *)(smem + L.p);
    float *Ss = (float *)(smem + L.s), *Os = (float *)(smem + L.o), *Tm = (float *)(smem + L.tmp);
    float *Ms = (float *)(smem + L.stats), *Ls = Ms + TC_BQ, *Cs = Ls + TC_BQ;

    const int h = blockIdx.y, kvh = h / (H / Hkv);
    const int q0 = blockIdx.x * TC_BQ;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const size_t qld = (size_t)H * dk, kld = (size_t)Hkv * dk, vld = (size_t)Hkv * dv;
    const float inv_sqrt = 1.0f / sqrtf((float)dk);

    for (int i = threadIdx.x; i < TC_BQ * dk; i += blockDim.x) {
        int r = i / dk, c = i % dk, t = q0 + r;
        float x = 0.0f;
        if (t < T) x = q[(size_t)t * qld + (size_t)h * dk + c] * inv_sqrt * (row_scale ? row_scale[t] : 1.0f);
        Qs[r * L.ldq + c] = __float2bfloat16(x);
    }
    for (int i = threadIdx.x; i < TC_BQ * dv; i += blockDim.x) Os[(i / dv) * L.ldo + i % dv] = 0.0f;
    for (int i = threadIdx.x; i < TC_BQ; i += blockDim.x) { Ms[i] = -INFINITY; Ls[i] = 0.0f; }

    const int q_last = min(T, q0 + TC_BQ) - 1;
    const int s_min = window > 0 ? max(0, q0 - window + 1) : 0;
    const int r0 = warp * 16;                      /* this warp's first row in the block */
    for (int k0 = s_min / TC_KT * TC_KT; k0 <= q_last; k0 += TC_KT) {
        __syncthreads();                           /* previous tile fully consumed */
        for (int i = threadIdx.x; i < TC_KT * dk; i += blockDim.x) {
            int r = i / dk, c = i % dk, s = k0 + r;
            Ks[r * L.ldq + c] = __float2bfloat16(s < T ? k[(size_t)s * kld + (size_t)kvh * dk + c] : 0.0f);
        }
        for (int i = threadIdx.x; i < TC_KT * dv; i += blockDim.x) {
            int r = i / dv, c = i % dv, s = k0 + r;
            Vs[r * L.ldv + c] = __float2bfloat16(s < T ? v[(size_t)s * vld + (size_t)kvh * dv + c] : 0.0f);
        }
        __syncthreads();

        /* S = Q K^T for this warp's 16 rows and the tile's 64 keys */
        for (int jn = 0; jn < TC_KT / 16; jn++) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::fill_fragment(acc, 0.0f);
            for (int kk = 0; kk < dk / 16; kk++) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b;
                wmma::load_matrix_sync(a, Qs + r0 * L.ldq + kk * 16, L.ldq);
                wmma::load_matrix_sync(b, Ks + jn * 16 * L.ldq + kk * 16, L.ldq);
                wmma::mma_sync(acc, a, b, acc);
            }
            wmma::store_matrix_sync(Ss + r0 * L.lds + jn * 16, acc, L.lds, wmma::mem_row_major);
        }
        __syncwarp();

        /* mask + online softmax: two lanes per row, 32 keys each */
        {
            const int r = r0 + (lane >> 1), half = lane & 1, t = q0 + r;
            float *srow = Ss + r * L.lds + half * 32;
            float mt = -INFINITY;
            for (int c = 0; c < 32; c++) {
                int s = k0 + half * 32 + c;
                bool vis = t < T && s <= t && (window <= 0 || s > t - window);
                float z = vis ? srow[c] : -INFINITY;
                srow[c] = z;
                mt = fmaxf(mt, z);
            }
            mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 1));
            const float m_old = Ms[r];
            const float m_new = fmaxf(m_old, mt);
            float corr = 1.0f, sum = 0.0f;
            __nv_bfloat16 *prow = Ps + r * L.ldp + half * 32;
            if (m_new == -INFINITY) {
                for (int c = 0; c < 32; c++) prow[c] = __float2bfloat16(0.0f);
            } else {
                corr = expf(m_old - m_new);
                for (int c = 0; c < 32; c++) {
                    float p = srow[c] == -INFINITY ? 0.0f : expf(srow[c] - m_new);
                    __nv_bfloat16 pb = __float2bfloat16(p);
                    prow[c] = pb;
                    sum += __bfloat162float(pb);   /* the sum of what P V actually weights */
                }
            }
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            __syncwarp();
            if (half == 0) {
                Ms[r] = m_new;
                Ls[r] = Ls[r] * corr + sum;
                Cs[r] = corr;
            }
        }
        __syncwarp();

        /* O = O * corr + P V, 16 output columns at a time through a per-warp 16 x 16 tile */
        float *tm = Tm + warp * 256;
        for (int jn = 0; jn < dv / 16; jn++) {
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::fill_fragment(acc, 0.0f);
            for (int kk = 0; kk < TC_KT / 16; kk++) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b;
                wmma::load_matrix_sync(a, Ps + r0 * L.ldp + kk * 16, L.ldp);
                wmma::load_matrix_sync(b, Vs + kk * 16 * L.ldv + jn * 16, L.ldv);
                wmma::mma_sync(acc, a, b, acc);
            }
            wmma::store_matrix_sync(tm, acc, 16, wmma::mem_row_major);
            __syncwarp();
            for (int e = lane; e < 256; e += 32) {
                int rr = r0 + e / 16, cc = jn * 16 + e % 16;
                float *o = Os + rr * L.ldo + cc;
                *o = *o * Cs[rr] + tm[e];
            }
            __syncwarp();
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < TC_BQ * dv; i += blockDim.x) {
        int r = i / dv, c = i % dv, t = q0 + r;
        if (t >= T) continue;
        float l = Ls[r];
        out[(size_t)t * H * dv + (size_t)h * dv + c] = l > 0.0f ? Os[r * L.ldo + c] / l : 0.0f;
    }
}

int cu_attention_tc_fits(int dk, int dv) {
    return dk % 16 == 0 && dv % 16 == 0 && dk >= 16 && dv >= 16 && dk <= TC_MAXD && dv <= TC_MAXD;
}

cudaError_t cu_attention_tc_setup(void) {
    return cudaFuncSetAttribute(attention_tc_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)tc_make_layout(TC_MAXD, TC_MAXD).total);
}

cudaError_t cu_attention_tc(float *out, const float *q, const float *k, const float *v,
                            const float *row_scale, int T, int H, int Hkv, int dk, int dv, int window,
                            cudaStream_t st) {
    dim3 grid((unsigned)((T + TC_BQ - 1) / TC_BQ), (unsigned)H);
    attention_tc_kernel<<<grid, TC_WARPS * 32, tc_make_layout(dk, dv).total, st>>>(out, q, k, v, row_scale, T,
                                                                                   H, Hkv, dk, dv, window);
    return cudaGetLastError();
}
