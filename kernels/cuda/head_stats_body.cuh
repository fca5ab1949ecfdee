/* The kernels of head_stats.cu (its header comment describes them), apart from its host side
 * so that tests/gpu/hs_emu.cpp can run them on the CPU. Internal to kernels/cuda. */
#ifndef HS_HEAD_STATS_BODY_CUH
#define HS_HEAD_STATS_BODY_CUH

#include "row_common.cuh"

#include <math.h>

#define HS_THREADS 256           /* softmax block */
#define HS_GLA_CHUNK 64
#define HS_GLA_THREADS 128       /* gla block (and the prep kernel's) */
#define HS_GDN_WARPS 4           /* gdn: (row, head) items per block, one a warp */

/* Launch geometry the host side and the emulator share. */
static inline int hs_gla_chunks(int T) { return (T + HS_GLA_CHUNK - 1) / HS_GLA_CHUNK; }
static inline size_t hs_gla_smem(int dk) { return (size_t)(dk + HS_GLA_CHUNK) * sizeof(double); }

/* Writes one (row, head) result from a distribution given as weights w_s >= 0 that are not
 * yet normalised: sum = sum w, wlogw = sum w ln w (w > 0), best/bests the argmax, mspan the
 * span's largest weight (< 0: no span position visible), larger = #{w > mspan}. For softmax
 * w_s = exp(z_s - max) and the caller passes the shifted sums. */
__device__ void write_stats(cu_head_stats_out o, int idx, int t, double sum, double wlogw,
                            int bests, double mspan, int larger, int topk) {
    double ent = 0;
    int hit = 0;
    if (sum > 0) {
        if (t > 0) ent = (log(sum) - wlogw / sum) / log((double)t + 1.0);
        hit = mspan >= 0 && mspan * (1.0 / sum) > 0 && larger < topk;
    }
    o.entropy[idx] = ent;
    o.hit[idx] = hit;
    o.argmax[idx] = bests;
}

/* ---- softmax heads: grid (rows, H) ---- */
__global__ void __launch_bounds__(HS_THREADS)
stats_softmax_kernel(cu_head_stats_out o, const float *q, const float *k, const float *row_scale,
                     int H, int Hkv, int dk, int window, const int *rows, int n_rows, int span0,
                     int span1, int topk) {
    __shared__ double sh[HS_THREADS / 32];
    __shared__ int shi[HS_THREADS / 32];
    const int r = blockIdx.x, h = blockIdx.y, t = rows[r];
    const int kvh = h / (H / Hkv), lo = visible_start(t, window, CU_SWLA_OFF, 0, 1);
    const float *qt = q + (size_t)t * H * dk + (size_t)h * dk;
    const double scale = (1.0 / sqrt((double)dk)) * (row_scale ? (double)row_scale[t] : 1.0);
    const int a = span0 > lo ? span0 : lo, b = span1 < t + 1 ? span1 : t + 1;
    /* pass 1: the largest score (and where), the span's largest score */
    double zmax = -INFINITY, zspan = -INFINITY;
    int smax = t;
    for (int s = lo + (int)threadIdx.x; s <= t; s += blockDim.x) {
        double z = scale * dot_fd(qt, k + (size_t)s * Hkv * dk + (size_t)kvh * dk, dk);
        if (z > zmax) { zmax = z; smax = s; }       /* s rises: the first of equals stays */
        if (s >= a && s < b && z > zspan) zspan = z;
    }
    block_argmax(&zmax, &smax, sh, shi);
    zspan = block_max(zspan, sh);
    /* pass 2: sum w and sum w ln w for w = exp(z - zmax); the scores above the span's best */
    double sum = 0, wl = 0;
    int larger = 0;
    for (int s = lo + (int)threadIdx.x; s <= t; s += blockDim.x) {
        double z = scale * dot_fd(qt, k + (size_t)s * Hkv * dk + (size_t)kvh * dk, dk);
        double w = exp(z - zmax);
        sum += w;
        if (w > 0) wl += w * (z - zmax);
        larger += a < b && z > zspan;
    }
    sum = block_sum(sum, sh);
    wl = block_sum(wl, sh);
    larger = (int)block_sum((double)larger, sh);
    if (threadIdx.x == 0) {
        double mspan = a < b ? exp(zspan - zmax) : -1.0;
        write_stats(o, h * n_rows + r, t, sum, wl, smax, mspan, larger, topk);
    }
}

/* ---- gla heads ----
 * c_{t,s} = (q_t/sqrt dk) . (exp(G_t - G_s) * k_s). Split the sources into chunks of
 * HS_GLA_CHUNK; with e the chunk's last position, K~_s = k_s * exp(G_e - G_s) and
 * D_c = exp(G_e - G_(chunk start - 1)) (every exponent <= 0, nothing overflows). A query walks
 * its own chunk step by step (r <- r * exp(gk_s), as the CPU does), which leaves
 * r = (q_t/sqrt dk) exp(G_t - G_e') for the previous chunk's end e'; then chunk by chunk
 * c_{t,s} = r . K~_s and r <- r * D_c. */

__global__ void gla_prep_kernel(float *ktil, double *dchunk, const float *k, const float *gk, int T,
                                int C) {
    const int c = blockIdx.x;
    const int e = min(T, (c + 1) * HS_GLA_CHUNK) - 1, b = c * HS_GLA_CHUNK;
    for (int ch = threadIdx.x; ch < C; ch += blockDim.x) {
        double acc = 0;
        for (int s = e; s >= b; s--) {
            size_t i = (size_t)s * C + ch;
            ktil[i] = (float)((double)k[i] * exp(acc));
            acc += (double)gk[i];
        }
        dchunk[(size_t)c * C + ch] = exp(acc);
    }
}

/* One pass over the row: pass 0 gathers sum, sum w ln w, argmax and the span's max; pass 1
 * counts the weights above the span's max. r: shared [dk]. */
__device__ void gla_pass(int pass, double *r, double *cs, const float *q, const float *k,
                         const float *gk, const float *ktil, const double *dchunk, int C, int h,
                         int dk, int t, int lo, int a, int b, double *sum, double *wl, double *best,
                         int *bests, double *mspan, int *larger, double thr) {
    const double inv = 1.0 / sqrt((double)dk);
    for (int d = threadIdx.x; d < dk; d += blockDim.x) r[d] = (double)q[(size_t)t * C + (size_t)h * dk + d] * inv;
    __syncthreads();
    const int ct = t / HS_GLA_CHUNK, cb = ct * HS_GLA_CHUNK;
    /* the query's own chunk, step by step (a block-wide dot per position) */
    int s_end = lo > cb ? lo : cb;
    for (int s = t; s >= s_end; s--) {
        const float *ks = k + (size_t)s * C + (size_t)h * dk;
        double p = 0;
        for (int d = threadIdx.x; d < dk; d += blockDim.x) p += r[d] * ks[d];
        __shared__ double red[HS_THREADS / 32];
        double c = fabs(block_sum(p, red));
        if (threadIdx.x == 0) {
            if (pass == 0) {
                *sum += c;
                if (c > 0) *wl += c * log(c);
                if (c >= *best) { *best = c; *bests = s; }     /* s falls: ties go earlier */
                if (s >= a && s < b && c > *mspan) *mspan = c;
            } else {
                *larger += c > thr;
            }
        }
        const float *g = gk + (size_t)s * C + (size_t)h * dk;
        __syncthreads();
        for (int d = threadIdx.x; d < dk; d += blockDim.x) r[d] *= exp((double)g[d]);
        __syncthreads();
    }
    /* earlier chunks: every position of a chunk at once */
    for (int c = ct - 1; c >= 0 && (c + 1) * HS_GLA_CHUNK > lo; c--) {
        const int b0 = c * HS_GLA_CHUNK;
        for (int i = threadIdx.x; i < HS_GLA_CHUNK; i += blockDim.x) {
            int s = b0 + i;
            cs[i] = s >= lo ? fabs(dot_dd(r, ktil + (size_t)s * C + (size_t)h * dk, dk)) : -1.0;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            for (int i = HS_GLA_CHUNK - 1; i >= 0; i--) {
                double v = cs[i];
                if (v < 0) continue;
                int s = b0 + i;
                if (pass == 0) {
                    *sum += v;
                    if (v > 0) *wl += v * log(v);
                    if (v >= *best) { *best = v; *bests = s; }
                    if (s >= a && s < b && v > *mspan) *mspan = v;
                } else {
                    *larger += v > thr;
                }
            }
        }
        for (int d = threadIdx.x; d < dk; d += blockDim.x) r[d] *= dchunk[(size_t)c * C + (size_t)h * dk + d];
        __syncthreads();
    }
}

__global__ void __launch_bounds__(HS_GLA_THREADS)
stats_gla_kernel(cu_head_stats_out o, const float *q, const float *k, const float *gk,
                 const float *ktil, const double *dchunk, int H, int dk, int swla, int W, int S,
                 const int *rows, int n_rows, int span0, int span1, int topk) {
    LA_SMEM(double, smem);
    double *r = smem, *cs = smem + dk;
    __shared__ double sum, wl, best, mspan;
    __shared__ int bests, larger;
    const int row = blockIdx.x, h = blockIdx.y, t = rows[row], C = H * dk;
    const int lo = visible_start(t, 0, swla, W, S);
    const int a = span0 > lo ? span0 : lo, b = span1 < t + 1 ? span1 : t + 1;
    if (threadIdx.x == 0) { sum = 0; wl = 0; best = -1; bests = t; mspan = -1; larger = 0; }
    __syncthreads();
    gla_pass(0, r, cs, q, k, gk, ktil, dchunk, C, h, dk, t, lo, a, b, &sum, &wl, &best, &bests, &mspan,
             &larger, 0);
    __syncthreads();
    double thr = mspan;
    if (a < b && thr >= 0)
        gla_pass(1, r, cs, q, k, gk, ktil, dchunk, C, h, dk, t, lo, a, b, &sum, &wl, &best, &bests,
                 &mspan, &larger, thr);
    __syncthreads();
    if (threadIdx.x == 0) write_stats(o, h * n_rows + row, t, sum, wl, bests, a < b ? mspan : -1.0, larger, topk);
}

/* ---- gdn heads: one warp per (row, head) ----
 * c_{t,s} = beta_s r_s . k_s with r_t = q_t/sqrt dk and r_(s-1) = alpha_s (r_s - beta_s (r_s.k_s) k_s):
 * a sequential sweep, the state of a row being dk doubles spread over the lanes. */
#define HS_GDN_PER_LANE (CU_MAX_HEAD_DIM / 32)

__device__ void gdn_pass(int pass, const float *q, const float *k, const float *beta,
                         const float *la, int H, int dk, int h, int t, int lo, int a, int b,
                         double *sum, double *wl, double *best, int *bests, double *mspan,
                         int *larger, double thr) {
    const int lane = threadIdx.x & 31, C = H * dk;
    const double inv = 1.0 / sqrt((double)dk);
    double r[HS_GDN_PER_LANE];
#pragma unroll
    for (int j = 0; j < HS_GDN_PER_LANE; j++) {
        int d = lane + 32 * j;
        r[j] = d < dk ? (double)q[(size_t)t * C + (size_t)h * dk + d] * inv : 0.0;
    }
    /* the next position's key and gates are loaded while this one reduces (the sweep is a
     * chain of dependent steps; without the prefetch each step waits for its loads) */
    float kc[HS_GDN_PER_LANE], kn[HS_GDN_PER_LANE];
    float bc = 0, lc = 0, bn = 0, ln = 0;
    if (t >= lo) {
#pragma unroll
        for (int j = 0; j < HS_GDN_PER_LANE; j++) {
            int d = lane + 32 * j;
            kc[j] = d < dk ? k[(size_t)t * C + (size_t)h * dk + d] : 0.0f;
        }
        bc = beta[(size_t)t * H + h];
        lc = la[(size_t)t * H + h];
    }
    for (int s = t; s >= lo; s--) {
        if (s > lo) {
#pragma unroll
            for (int j = 0; j < HS_GDN_PER_LANE; j++) {
                int d = lane + 32 * j;
                kn[j] = d < dk ? k[(size_t)(s - 1) * C + (size_t)h * dk + d] : 0.0f;
            }
            bn = beta[(size_t)(s - 1) * H + h];
            ln = la[(size_t)(s - 1) * H + h];
        }
        double p = 0;
#pragma unroll
        for (int j = 0; j < HS_GDN_PER_LANE; j++) p += r[j] * kc[j];
        for (int o = 16; o > 0; o >>= 1) p += __shfl_xor_sync(0xffffffffu, p, o);
        const double bt = (double)bc, al = exp((double)lc);
        double c = fabs(bt * p);
        if (pass == 0) {
            *sum += c;
            if (c > 0) *wl += c * log(c);
            if (c >= *best) { *best = c; *bests = s; }
            if (s >= a && s < b && c > *mspan) *mspan = c;
        } else {
            *larger += c > thr;
        }
        const double bd = bt * p;
#pragma unroll
        for (int j = 0; j < HS_GDN_PER_LANE; j++) {
            r[j] = al * (r[j] - bd * (double)kc[j]);
            kc[j] = kn[j];
        }
        bc = bn;
        lc = ln;
    }
}

__global__ void stats_gdn_kernel(cu_head_stats_out o, const float *q, const float *k, const float *beta,
                                 const float *la, int H, int dk, int swla, int W, int S, const int *rows,
                                 int n_rows, int span0, int span1, int topk) {
    const int item = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (item >= n_rows * H) return;
    const int h = item / n_rows, row = item % n_rows, t = rows[row];
    const int lo = visible_start(t, 0, swla, W, S);
    const int a = span0 > lo ? span0 : lo, b = span1 < t + 1 ? span1 : t + 1;
    double sum = 0, wl = 0, best = -1, mspan = -1;
    int bests = t, larger = 0;
    gdn_pass(0, q, k, beta, la, H, dk, h, t, lo, a, b, &sum, &wl, &best, &bests, &mspan, &larger, 0);
    if (a < b && mspan >= 0)
        gdn_pass(1, q, k, beta, la, H, dk, h, t, lo, a, b, &sum, &wl, &best, &bests, &mspan, &larger, mspan);
    if ((threadIdx.x & 31) == 0)
        write_stats(o, h * n_rows + row, t, sum, wl, bests, a < b ? mspan : -1.0, larger, topk);
}

#endif
