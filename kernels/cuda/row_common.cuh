/* Device helpers of the per-row analysis kernels (head_stats_body.cuh, pooled_map_body.cuh):
 * the visible range of a query, block reductions in double, dot products in the CPU's sum
 * order. Internal to kernels/cuda; the CPU emulators include it too. */
#ifndef HS_ROW_COMMON_CUH
#define HS_ROW_COMMON_CUH

#include "kernels.cuh"

#include <math.h>

/* The block's dynamic shared memory (the CPU emulator's shim defines its own). */
#ifndef LA_SMEM
#define LA_SMEM(type, name) extern __shared__ __align__(128) type name[]
#endif

/* first visible source position of query t (engine/analysis_dist.c hs_head_view_start) */
__device__ __forceinline__ int visible_start(int t, int window, int swla, int W, int S) {
    long long lo = 0;
    if (window > 0) lo = (long long)t - window + 1;
    else if (swla == CU_SWLA_EXACT) lo = (long long)t - W + 1;
    else if (swla == CU_SWLA_OVERLAP) lo = ((long long)(t / S) + 1) * S - W;
    return lo > 0 ? (int)lo : 0;
}

/* Block-wide reductions through shared scratch (every thread gets the result). */
__device__ inline double block_sum(double v, double *sh) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    int w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    __syncthreads();
    if ((threadIdx.x & 31) == 0) sh[w] = v;
    __syncthreads();
    double r = 0;
    for (int i = 0; i < nw; i++) r += sh[i];
    return r;
}

__device__ inline double block_max(double v, double *sh) {
    for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    int w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    __syncthreads();
    if ((threadIdx.x & 31) == 0) sh[w] = v;
    __syncthreads();
    double r = -INFINITY;
    for (int i = 0; i < nw; i++) r = fmax(r, sh[i]);
    return r;
}

/* (value, position) maximum, ties to the smaller position. */
__device__ inline void block_argmax(double *v, int *s, double *sh, int *shi) {
    double bv = *v;
    int bs = *s;
    for (int o = 16; o > 0; o >>= 1) {
        double ov = __shfl_xor_sync(0xffffffffu, bv, o);
        int os = __shfl_xor_sync(0xffffffffu, bs, o);
        if (ov > bv || (ov == bv && os < bs)) { bv = ov; bs = os; }
    }
    int w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    __syncthreads();
    if ((threadIdx.x & 31) == 0) { sh[w] = bv; shi[w] = bs; }
    __syncthreads();
    bv = sh[0]; bs = shi[0];
    for (int i = 1; i < nw; i++)
        if (sh[i] > bv || (sh[i] == bv && shi[i] < bs)) { bv = sh[i]; bs = shi[i]; }
    *v = bv; *s = bs;
}

/* The same sum order as the CPU's dot_ff (four partial sums), in double. */
__device__ __forceinline__ double dot_fd(const float *a, const float *b, int n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += (double)a[i] * b[i];
        s1 += (double)a[i + 1] * b[i + 1];
        s2 += (double)a[i + 2] * b[i + 2];
        s3 += (double)a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s0 += (double)a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

__device__ __forceinline__ double dot_dd(const double *a, const float *b, int n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

#endif
