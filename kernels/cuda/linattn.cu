/* Linear-attention scans on the GPU (gla and gdn, model-spec section 4).
 *
 * Full recurrence: the dk x dv state of a head is split by value channel; the column of one
 * value channel lives in the registers of a group of G = ceil(dk/32) threads (R = dk/G rows
 * each), so a step is R fused multiply-adds per thread plus a G-wide shuffle reduction, with
 * no shared state between columns. Inputs are staged through shared memory in chunks of
 * LA_TC steps (exp of the gla gate computed once per chunk, not once per column).
 * Exact SWLA for gla costs one extra multiply-add per row and step: the windowed state is the
 * full recurrence minus the contribution of s = t-W, decayed by exp(sum of gk over (t-W, t]);
 * that window sum is carried per channel in double while staging (no extra pass over gk).
 *
 * Windowed form (gdn exact SWLA, overlap SWLA for both): per query, the value-path form
 * o_t = sum_{s in window} c_{t,s} v_s walked backwards from s = t, one warp per (t, head):
 * O(T * W * (dk + dv)) work, fully parallel over t. */
#include "kernels.cuh"

#include <math.h>

#define LA_TC 32                   /* time steps per staged chunk */
#define LA_THREADS 128
#define LA_RMAX 32                 /* state rows per thread */
#define LA_SMEM_MAX (200 * 1024)

struct scan_args {
    float *out;
    const float *q, *k, *v, *gk, *beta, *log_alpha;
    int T, H, dk, dv, G, R, W, is_gdn, exact;
};

__global__ static void __launch_bounds__(LA_THREADS) scan_kernel(scan_args a) {
    extern __shared__ float sm[];
    const int RP = a.R + 1;                         /* padded row stride: conflict-free groups */
    const int span = a.G * RP;                      /* one time step of a dk-vector */
    const int cols = LA_THREADS / a.G;              /* value channels per block */
    float *qs = sm;                                 /* [TC][span] scaled q */
    float *ks = qs + LA_TC * span;                  /* [TC][span] */
    float *es = ks + LA_TC * span;                  /* [TC][span] gla: exp(gk) */
    float *ews = es + LA_TC * span;                 /* [TC][span] gla exact: exp(window gate sum) */
    float *kos = ews + LA_TC * span;                /* [TC][span] gla exact: k_{t-W} */
    float *vs = kos + LA_TC * span;                 /* [TC][cols] */
    float *vos = vs + LA_TC * cols;                 /* [TC][cols] gla exact: v_{t-W} */
    float *bs = vos + LA_TC * cols;                 /* [TC] gdn beta */
    float *as = bs + LA_TC;                         /* [TC] gdn alpha */

    const int h = blockIdx.y, tid = threadIdx.x;
    const int lc = tid / a.G, g = tid % a.G;
    const int c0 = blockIdx.x * cols, col = c0 + lc;
    const bool active = col < a.dv;
    const size_t kld = (size_t)a.H * a.dk, vld = (size_t)a.H * a.dv;
    const float scale = 1.0f / sqrtf((float)a.dk);
    const bool sub = a.exact && !a.is_gdn;

    float s[LA_RMAX];
    #pragma unroll
    for (int i = 0; i < LA_RMAX; i++) s[i] = 0.0f;
    /* exact SWLA: the gate sum over the window (t-W, t] of channels tid and tid + LA_THREADS,
     * carried across chunks in double (adding gk_t, dropping gk_{t-W}) */
    double wsum[CU_MAX_HEAD_DIM / LA_THREADS] = {};

    for (int t0 = 0; t0 < a.T; t0 += LA_TC) {
        const int n = min(LA_TC, a.T - t0);
        __syncthreads();
        for (int i = tid; i < n * a.dk; i += LA_THREADS) {
            int tt = i / a.dk, c = i % a.dk, t = t0 + tt;
            int dst = tt * span + (c / a.R) * RP + (c % a.R);
            size_t src = (size_t)t * kld + (size_t)h * a.dk + c;
            qs[dst] = a.q[src] * scale;
            ks[dst] = a.k[src];
            if (!a.is_gdn) es[dst] = expf(a.gk[src]);
            if (sub) kos[dst] = t >= a.W ? a.k[src - (size_t)a.W * kld] : 0.0f;
        }
        if (sub)
            for (int u = 0; u < CU_MAX_HEAD_DIM / LA_THREADS; u++) {
                int c = tid + u * LA_THREADS;
                if (c >= a.dk) break;
                for (int tt = 0; tt < n; tt++) {
                    int t = t0 + tt;
                    size_t src = (size_t)t * kld + (size_t)h * a.dk + c;
                    wsum[u] += a.gk[src];
                    if (t >= a.W) wsum[u] -= a.gk[src - (size_t)a.W * kld];
                    ews[tt * span + (c / a.R) * RP + (c % a.R)] = t >= a.W ? expf((float)wsum[u]) : 0.0f;
                }
            }
        for (int i = tid; i < n * cols; i += LA_THREADS) {
            int tt = i / cols, cc = c0 + i % cols, t = t0 + tt;
            float vv = 0.0f, vo = 0.0f;
            if (cc < a.dv) {
                vv = a.v[(size_t)t * vld + (size_t)h * a.dv + cc];
                if (sub && t >= a.W) vo = a.v[(size_t)(t - a.W) * vld + (size_t)h * a.dv + cc];
            }
            vs[i] = vv;
            if (sub) vos[i] = vo;
        }
        if (a.is_gdn)
            for (int i = tid; i < n; i += LA_THREADS) {
                bs[i] = a.beta[(size_t)(t0 + i) * a.H + h];
                as[i] = expf(a.log_alpha[(size_t)(t0 + i) * a.H + h]);
            }
        __syncthreads();
        /* inactive columns (past dv) compute on zeros so their warp's shuffles stay full */
        for (int tt = 0; tt < n; tt++) {
            const float *qr = qs + tt * span + g * RP, *kr = ks + tt * span + g * RP;
            const float vj = vs[tt * cols + lc];
            float acc = 0.0f;
            if (a.is_gdn) {
                float kv = 0.0f;
                #pragma unroll
                for (int i = 0; i < LA_RMAX; i++) if (i < a.R) kv += kr[i] * s[i];
                for (int o = a.G >> 1; o > 0; o >>= 1) kv += __shfl_xor_sync(0xffffffffu, kv, o, a.G);
                const float al = as[tt], w = bs[tt] * (vj - al * kv);
                #pragma unroll
                for (int i = 0; i < LA_RMAX; i++)
                    if (i < a.R) { s[i] = al * s[i] + kr[i] * w; acc += qr[i] * s[i]; }
            } else {
                const float *er = es + tt * span + g * RP;
                if (sub) {
                    const float *ewr = ews + tt * span + g * RP, *kor = kos + tt * span + g * RP;
                    const float vo = vos[tt * cols + lc];
                    #pragma unroll
                    for (int i = 0; i < LA_RMAX; i++)
                        if (i < a.R) {
                            s[i] = er[i] * s[i] + kr[i] * vj - ewr[i] * kor[i] * vo;
                            acc += qr[i] * s[i];
                        }
                } else {
                    #pragma unroll
                    for (int i = 0; i < LA_RMAX; i++)
                        if (i < a.R) { s[i] = er[i] * s[i] + kr[i] * vj; acc += qr[i] * s[i]; }
                }
            }
            for (int o = a.G >> 1; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o, a.G);
            if (g == 0 && active) a.out[(size_t)(t0 + tt) * vld + (size_t)h * a.dv + col] = acc;
        }
    }
}

static cudaError_t scan_launch(scan_args a, cudaStream_t st) {
    if (a.dk > CU_MAX_HEAD_DIM || a.dv > CU_MAX_HEAD_DIM) return cudaErrorInvalidValue;
    /* the smallest group (a power of two, so groups never straddle a warp) with whole rows */
    a.G = 1;
    while (a.G <= 8 && (a.dk % a.G || a.dk / a.G > LA_RMAX)) a.G <<= 1;
    if (a.G > 8) return cudaErrorInvalidValue;
    a.R = a.dk / a.G;
    int cols = LA_THREADS / a.G;
    int span = a.G * (a.R + 1);
    size_t smem = sizeof(float) * ((size_t)5 * LA_TC * span + (size_t)2 * LA_TC * cols + 2 * LA_TC);
    dim3 grid((unsigned)((a.dv + cols - 1) / cols), (unsigned)a.H);
    static int configured;
    if (!configured) {
        cudaError_t e = cudaFuncSetAttribute(scan_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             LA_SMEM_MAX);
        if (e != cudaSuccess) return e;
        configured = 1;
    }
    if (smem > LA_SMEM_MAX) return cudaErrorInvalidValue;
    scan_kernel<<<grid, LA_THREADS, smem, st>>>(a);
    return cudaGetLastError();
}

cudaError_t cu_gla_scan(float *out, const float *q, const float *k, const float *v, const float *gk,
                        int T, int H, int dk, int dv, int swla, int W, cudaStream_t st) {
    scan_args a = {};
    a.out = out; a.q = q; a.k = k; a.v = v; a.gk = gk;
    a.T = T; a.H = H; a.dk = dk; a.dv = dv; a.W = W;
    a.exact = swla == CU_SWLA_EXACT && W < T;
    return scan_launch(a, st);
}

cudaError_t cu_gdn_scan(float *out, const float *q, const float *k, const float *v, const float *beta,
                        const float *log_alpha, int T, int H, int dk, int dv, cudaStream_t st) {
    scan_args a = {};
    a.out = out; a.q = q; a.k = k; a.v = v; a.beta = beta; a.log_alpha = log_alpha;
    a.T = T; a.H = H; a.dk = dk; a.dv = dv; a.is_gdn = 1;
    return scan_launch(a, st);
}

#define LW_PER_LANE (CU_MAX_HEAD_DIM / 32)

__global__ static void window_kernel(float *out, const float *q, const float *k, const float *v,
                                     const float *gk, const float *beta, const float *log_alpha,
                                     int T, int H, int dk, int dv, int swla, int W, int S) {
    long wid = (blockIdx.x * (long)blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (wid >= (long)T * H) return;
    int t = (int)(wid / H), h = (int)(wid % H);
    int start = swla == CU_SWLA_OVERLAP ? max(0, (t / S + 1) * S - W) : max(0, t - W + 1);
    const size_t kld = (size_t)H * dk, vld = (size_t)H * dv;
    const float scale = 1.0f / sqrtf((float)dk);
    float x[LW_PER_LANE], acc[LW_PER_LANE];
    #pragma unroll
    for (int u = 0; u < LW_PER_LANE; u++) {
        int i = lane + 32 * u;
        x[u] = i < dk ? q[(size_t)t * kld + (size_t)h * dk + i] * scale : 0.0f;
        acc[u] = 0.0f;
    }
    for (int s = t; s >= start; s--) {
        const float *kr = k + (size_t)s * kld + (size_t)h * dk;
        float kk[LW_PER_LANE];
        float d = 0.0f;
        #pragma unroll
        for (int u = 0; u < LW_PER_LANE; u++) {
            int i = lane + 32 * u;
            kk[u] = i < dk ? kr[i] : 0.0f;
            d += x[u] * kk[u];
        }
        for (int o = 16; o > 0; o >>= 1) d += __shfl_xor_sync(0xffffffffu, d, o);
        float c;
        if (beta) {
            float be = beta[(size_t)s * H + h], al = expf(log_alpha[(size_t)s * H + h]);
            c = be * d;
            #pragma unroll
            for (int u = 0; u < LW_PER_LANE; u++) x[u] = al * (x[u] - c * kk[u]);
        } else {
            c = d;
            const float *gr = gk + (size_t)s * kld + (size_t)h * dk;
            #pragma unroll
            for (int u = 0; u < LW_PER_LANE; u++) {
                int i = lane + 32 * u;
                if (i < dk) x[u] *= expf(gr[i]);
            }
        }
        const float *vr = v + (size_t)s * vld + (size_t)h * dv;
        #pragma unroll
        for (int u = 0; u < LW_PER_LANE; u++) {
            int e = lane + 32 * u;
            if (e < dv) acc[u] += c * vr[e];
        }
    }
    #pragma unroll
    for (int u = 0; u < LW_PER_LANE; u++) {
        int e = lane + 32 * u;
        if (e < dv) out[(size_t)t * vld + (size_t)h * dv + e] = acc[u];
    }
}

cudaError_t cu_linattn_window(float *out, const float *q, const float *k, const float *v,
                              const float *gk, const float *beta, const float *log_alpha, int T,
                              int H, int dk, int dv, int swla, int W, int S, cudaStream_t st) {
    if (dk > CU_MAX_HEAD_DIM || dv > CU_MAX_HEAD_DIM || W < 1 || (swla == CU_SWLA_OVERLAP && S < 1))
        return cudaErrorInvalidValue;
    long warps = (long)T * H;
    window_kernel<<<(unsigned)((warps * 32 + 255) / 256), 256, 0, st>>>(out, q, k, v, gk, beta,
                                                                       log_alpha, T, H, dk, dv, swla, W, S);
    return cudaGetLastError();
}
