/* The kernels of pooled_map.cu (its header comment describes them), apart from its host side
 * so that tests/gpu/map_emu.cpp can run them on the CPU. Internal to kernels/cuda. */
#ifndef HS_POOLED_MAP_BODY_CUH
#define HS_POOLED_MAP_BODY_CUH

#include "row_common.cuh"

#include <math.h>

#define PM_THREADS 256           /* one block a row bin at a time */
#define PM_MAX_BLOCKS 256        /* scratch is per block: this bounds it */
#define PM_GLA_CHUNK 64          /* = HS_GLA_CHUNK: the chunk of cu_head_stats_gla_prep */

/* Launch geometry the host side and the emulator share. */
static inline int pm_blocks(int bins_t) { return bins_t < PM_MAX_BLOCKS ? bins_t : PM_MAX_BLOCKS; }
/* per block: the row's weights (T floats), then sum, max (doubles) and count (long long) per
 * column bin */
static inline __host__ __device__ size_t pm_block_bytes(int T, int bins_s) {
    size_t w = ((size_t)T * sizeof(float) + 255) & ~(size_t)255;
    return w + (size_t)3 * (size_t)bins_s * 8;
}
static inline size_t pm_gla_smem(int dk) { return (size_t)(dk + PM_GLA_CHUNK) * sizeof(double); }

/* engine/analysis_map.c bin_edge / bin_rows / bin_row */
__device__ __forceinline__ int pm_edge(int start, int n, int bins, int i) {
    return start + (int)((long long)i * n / bins);
}

__device__ __forceinline__ int pm_row(const cu_map_geom *g, int i, int r) {
    const int nt = g->t1 - g->t0;
    const int a = pm_edge(g->t0, nt, g->bins_t, i), b = pm_edge(g->t0, nt, g->bins_t, i + 1);
    return g->rows_per_bin > 0 ? a + (int)((long long)(r + 1) * (b - a) / g->rows_per_bin) - 1 : a + r;
}

__device__ __forceinline__ int pm_nrows(const cu_map_geom *g, int i) {
    const int nt = g->t1 - g->t0;
    return g->rows_per_bin > 0 ? g->rows_per_bin
                               : pm_edge(g->t0, nt, g->bins_t, i + 1) - pm_edge(g->t0, nt, g->bins_t, i);
}

/* ---- row producers: w[s] >= 0 for s in [lo, t] (not normalised); returns sum w to every
 * thread. Only [lo, t] is written; the fold reads nothing else. ---- */

__device__ double row_softmax(float *w, const cu_map_head *hd, int t, int lo, double *sh) {
    const int dk = hd->dk, kvh = hd->h / (hd->H / hd->Hkv);
    const float *qt = hd->q + (size_t)t * hd->H * dk + (size_t)hd->h * dk;
    const double scale = (1.0 / sqrt((double)dk)) * (hd->row_scale ? (double)hd->row_scale[t] : 1.0);
    double zmax = -INFINITY;
    for (int s = lo + (int)threadIdx.x; s <= t; s += blockDim.x)
        zmax = fmax(zmax, scale * dot_fd(qt, hd->k + (size_t)s * hd->Hkv * dk + (size_t)kvh * dk, dk));
    zmax = block_max(zmax, sh);
    double sum = 0;
    for (int s = lo + (int)threadIdx.x; s <= t; s += blockDim.x) {
        double e = exp(scale * dot_fd(qt, hd->k + (size_t)s * hd->Hkv * dk + (size_t)kvh * dk, dk) - zmax);
        w[s] = (float)e;
        sum += e;
    }
    return block_sum(sum, sh);
}

/* gla: c_{t,s} = (q_t/sqrt dk) . (exp(G_t - G_s) k_s), as stats_gla_kernel walks it: the
 * query's own chunk step by step, earlier chunks at once through K~ = k exp(G_e - G_s) and the
 * chunk decays D (cu_head_stats_gla_prep). r: shared [dk] doubles. */
__device__ double row_gla(float *w, const cu_map_head *hd, int t, int lo, double *r, double *sh) {
    const int dk = hd->dk, h = hd->h, C = hd->H * dk;
    const double inv = 1.0 / sqrt((double)dk);
    for (int d = threadIdx.x; d < dk; d += blockDim.x) r[d] = (double)hd->q[(size_t)t * C + (size_t)h * dk + d] * inv;
    __syncthreads();
    double sum = 0;            /* thread 0's own-chunk part, every thread's chunk part */
    const int ct = t / PM_GLA_CHUNK, cb = ct * PM_GLA_CHUNK;
    const int s_end = lo > cb ? lo : cb;
    for (int s = t; s >= s_end; s--) {
        const float *ks = hd->k + (size_t)s * C + (size_t)h * dk;
        double p = 0;
        for (int d = threadIdx.x; d < dk; d += blockDim.x) p += r[d] * ks[d];
        double c = fabs(block_sum(p, sh));
        if (threadIdx.x == 0) { w[s] = (float)c; sum += c; }
        const float *g = hd->gk + (size_t)s * C + (size_t)h * dk;
        __syncthreads();
        for (int d = threadIdx.x; d < dk; d += blockDim.x) r[d] *= exp((double)g[d]);
        __syncthreads();
    }
    for (int c = ct - 1; c >= 0 && (c + 1) * PM_GLA_CHUNK > lo; c--) {
        const int b0 = c * PM_GLA_CHUNK;
        for (int i = threadIdx.x; i < PM_GLA_CHUNK; i += blockDim.x) {
            int s = b0 + i;
            if (s >= lo) {
                double v = fabs(dot_dd(r, hd->ktil + (size_t)s * C + (size_t)h * dk, dk));
                w[s] = (float)v;
                sum += v;
            }
        }
        __syncthreads();
        for (int d = threadIdx.x; d < dk; d += blockDim.x) r[d] *= hd->dchunk[(size_t)c * C + (size_t)h * dk + d];
        __syncthreads();
    }
    return block_sum(sum, sh);
}

/* gdn: c_{t,s} = beta_s r_s . k_s with r_t = q_t/sqrt dk and r_(s-1) = alpha_s (r_s - beta_s
 * (r_s.k_s) k_s), a sequential sweep by warp 0 (the state is dk doubles over its lanes). */
#define PM_GDN_PER_LANE (CU_MAX_HEAD_DIM / 32)

__device__ double row_gdn(float *w, const cu_map_head *hd, int t, int lo, double *sh) {
    double sum = 0;
    if (threadIdx.x < 32) {
        const int lane = threadIdx.x, dk = hd->dk, h = hd->h, H = hd->H, C = H * dk;
        const double inv = 1.0 / sqrt((double)dk);
        double r[PM_GDN_PER_LANE];
        float kc[PM_GDN_PER_LANE], kn[PM_GDN_PER_LANE];
#pragma unroll
        for (int j = 0; j < PM_GDN_PER_LANE; j++) {
            int d = lane + 32 * j;
            r[j] = d < dk ? (double)hd->q[(size_t)t * C + (size_t)h * dk + d] * inv : 0.0;
            kc[j] = d < dk ? hd->k[(size_t)t * C + (size_t)h * dk + d] : 0.0f;
            kn[j] = 0.0f;
        }
        float bc = hd->beta[(size_t)t * H + h], lc = hd->log_alpha[(size_t)t * H + h], bn = 0, ln = 0;
        for (int s = t; s >= lo; s--) {
            if (s > lo) {      /* the next key loads while this one reduces */
#pragma unroll
                for (int j = 0; j < PM_GDN_PER_LANE; j++) {
                    int d = lane + 32 * j;
                    kn[j] = d < dk ? hd->k[(size_t)(s - 1) * C + (size_t)h * dk + d] : 0.0f;
                }
                bn = hd->beta[(size_t)(s - 1) * H + h];
                ln = hd->log_alpha[(size_t)(s - 1) * H + h];
            }
            double p = 0;
#pragma unroll
            for (int j = 0; j < PM_GDN_PER_LANE; j++) p += r[j] * kc[j];
            for (int o = 16; o > 0; o >>= 1) p += __shfl_xor_sync(0xffffffffu, p, o);
            const double bd = (double)bc * p, al = exp((double)lc);
            if (lane == 0) { w[s] = (float)fabs(bd); sum += fabs(bd); }
#pragma unroll
            for (int j = 0; j < PM_GDN_PER_LANE; j++) {
                r[j] = al * (r[j] - bd * (double)kc[j]);
                kc[j] = kn[j];
            }
            bc = bn;
            lc = ln;
        }
    }
    return block_sum(sum, sh);
}

/* ---- the kernel: block b pools row bins b, b + gridDim.x, ...; for each of the bin's rows
 * (t >= s0 only: a row before s0 has no source in range), its weights go to the block's row
 * buffer and are folded into the column bins by warps, one column bin per warp at a time, so
 * nothing is shared between blocks and the result does not depend on scheduling. ---- */
__global__ void __launch_bounds__(PM_THREADS)
pooled_map_kernel(float *cells, char *scratch, cu_map_geom g, cu_map_head hd, int T) {
    LA_SMEM(double, smem);     /* gla: r [dk] */
    __shared__ double sh[PM_THREADS / 32];
    char *blk = scratch + (size_t)blockIdx.x * pm_block_bytes(T, g.bins_s);
    float *w = (float *)blk;
    double *bsum = (double *)(blk + (((size_t)T * sizeof(float) + 255) & ~(size_t)255));
    double *bmax = bsum + g.bins_s;
    long long *bcnt = (long long *)(bmax + g.bins_s);
    const int ns = g.s1 - g.s0, Bs = g.bins_s;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    for (int i = blockIdx.x; i < g.bins_t; i += gridDim.x) {
        for (int j = threadIdx.x; j < Bs; j += blockDim.x) { bsum[j] = 0; bmax[j] = 0; bcnt[j] = 0; }
        __syncthreads();
        const int nr = pm_nrows(&g, i);
        for (int r = 0; r < nr; r++) {
            const int t = pm_row(&g, i, r);
            if (t < g.s0) continue;            /* the same for every thread */
            const int lo = visible_start(t, hd.window, hd.swla, hd.W, hd.S);
            double total;
            if (hd.kind == CU_MAP_GLA) total = row_gla(w, &hd, t, lo, smem, sh);
            else if (hd.kind == CU_MAP_GDN) total = row_gdn(w, &hd, t, lo, sh);
            else total = row_softmax(w, &hd, t, lo, sh);
            __syncthreads();                   /* w complete */
            const double inv = total > 0 ? 1.0 / total : 0.0;
            for (int j = warp; j < Bs; j += nw) {
                const int c0 = pm_edge(g.s0, ns, Bs, j), c1e = pm_edge(g.s0, ns, Bs, j + 1);
                const int c1 = c1e < t + 1 ? c1e : t + 1;
                if (c0 >= c1) break;           /* this and every later column bin: not causal */
                double acc = 0, m = 0;
                for (int s = (c0 > lo ? c0 : lo) + lane; s < c1; s += 32) {
                    double a = (double)w[s] * inv;
                    acc += a;
                    m = fmax(m, a);
                }
                for (int o = 16; o > 0; o >>= 1) {
                    acc += __shfl_xor_sync(0xffffffffu, acc, o);
                    m = fmax(m, __shfl_xor_sync(0xffffffffu, m, o));
                }
                if (lane == 0) {
                    bsum[j] += acc;
                    bmax[j] = fmax(bmax[j], m);
                    bcnt[j] += c1 - c0;
                }
            }
            __syncthreads();                   /* w is rewritten by the next row */
        }
        for (int j = threadIdx.x; j < Bs; j += blockDim.x)
            cells[(size_t)i * Bs + j] = bcnt[j] == 0 ? NAN
                                        : (float)(g.agg == CU_MAP_MAX ? bmax[j] : bsum[j] / (double)bcnt[j]);
        __syncthreads();
    }
}

#endif
