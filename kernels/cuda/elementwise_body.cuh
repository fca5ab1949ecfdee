/* The element-wise kernels of elementwise.cu, apart from their launchers so that
 * tests/gpu/ew_emu.cpp can run them on the CPU. Internal to kernels/cuda.
 *
 * Each walks rows with the blocks (grid-stride) and a row's columns with the threads. The flat
 * form (one grid-stride index over T x width, split by a 64-bit division and remainder per
 * element) spent most of its instructions on that division at 64K tokens: SwiGLU's 235M
 * elements a layer in the 376m preset, the short convolutions' 200M. RoPE takes each angle's
 * cos and sin once for every head of the row (the flat form did it per head, in double). The
 * arithmetic of every element is unchanged. */
#ifndef HS_ELEMENTWISE_BODY_CUH
#define HS_ELEMENTWISE_BODY_CUH

#include <math.h>
#include <stdint.h>

__global__ static void embedding_kernel(float *x, const __nv_bfloat16 *embed, const int32_t *tokens, int T, int d) {
    for (int t = blockIdx.x; t < T; t += gridDim.x) {
        const __nv_bfloat16 *e = embed + (size_t)tokens[t] * d;
        float *y = x + (size_t)t * d;
        for (int j = threadIdx.x; j < d; j += blockDim.x) y[j] = __bfloat162float(e[j]);
    }
}

/* blockDim.x >= 1 threads over the half-dims p of a row t; every head of the row rotated by the
 * same angle t theta^(-2p/head_dim) */
__global__ static void rope_kernel(float *x, int T, int n_heads, int head_dim, double log_theta) {
    const int half = head_dim / 2;
    for (int t = blockIdx.x; t < T; t += gridDim.x)
        for (int p = threadIdx.x; p < half; p += blockDim.x) {
            const double a = (double)t * exp(-2.0 * p / head_dim * log_theta);
            const float c = (float)cos(a), s = (float)sin(a);
            for (int h = 0; h < n_heads; h++) {
                float *y = x + ((size_t)t * n_heads + h) * head_dim;
                const float x0 = y[p], x1 = y[p + half];
                y[p] = x0 * c - x1 * s;
                y[p + half] = x1 * c + x0 * s;
            }
        }
}

/* cs[t * half + p] = (cos, sin) of rope_kernel's angle, computed as it computes it */
__global__ static void rope_table_kernel(float2 *cs, int T, int head_dim, double log_theta) {
    const int half = head_dim / 2;
    for (int t = blockIdx.x; t < T; t += gridDim.x)
        for (int p = threadIdx.x; p < half; p += blockDim.x) {
            const double a = (double)t * exp(-2.0 * p / head_dim * log_theta);
            cs[(size_t)t * half + p] = make_float2((float)cos(a), (float)sin(a));
        }
}

/* out[t, f] = silu(gu[t, f]) gu[t, F + f] */
__global__ static void swiglu_kernel(__nv_bfloat16 *out, const float *gu, int T, int F) {
    for (int t = blockIdx.x; t < T; t += gridDim.x) {
        const float *g = gu + (size_t)t * 2 * F, *u = g + F;
        __nv_bfloat16 *o = out + (size_t)t * F;
        for (int f = threadIdx.x; f < F; f += blockDim.x) {
            const float gv = g[f];
            o[f] = __float2bfloat16(gv / (1.0f + expf(-gv)) * u[f]);
        }
    }
}

/* the same from a bf16 gu (the gate/up product written in bf16 by cuBLAS: HS_CUDA_FFN_BF16=1) */
__global__ static void swiglu_bf16_kernel(__nv_bfloat16 *out, const __nv_bfloat16 *gu, int T, int F) {
    for (int t = blockIdx.x; t < T; t += gridDim.x) {
        const __nv_bfloat16 *g = gu + (size_t)t * 2 * F, *u = g + F;
        __nv_bfloat16 *o = out + (size_t)t * F;
        for (int f = threadIdx.x; f < F; f += blockDim.x) {
            const float gv = __bfloat162float(g[f]);
            o[f] = __float2bfloat16(gv / (1.0f + expf(-gv)) * __bfloat162float(u[f]));
        }
    }
}

/* [silu] (sum_j w[c, j] in[t - K + 1 + j, c]) (causal depthwise, zero before 0), or [silu]
 * in[t, c] without w */
__device__ __forceinline__ float conv_silu_at(const float *in, const float *w, int t, int c, int C, int K, int silu) {
    float acc;
    if (w) {
        acc = 0.0f;
        for (int j = 0; j < K; j++) {
            const int s = t - K + 1 + j;
            if (s >= 0) acc += w[(size_t)c * K + j] * in[(size_t)s * C + c];
        }
    } else {
        acc = in[(size_t)t * C + c];
    }
    return silu ? acc / (1.0f + expf(-acc)) : acc;
}

/* out[t, c] = conv_silu_at(t, c) */
__global__ static void conv_silu_kernel(float *out, const float *in, const float *w, int T, int C, int K,
                                        int silu) {
    for (int t = blockIdx.x; t < T; t += gridDim.x)
        for (int c = threadIdx.x; c < C; c += blockDim.x) out[(size_t)t * C + c] = conv_silu_at(in, w, t, c, C, K, silu);
}

#ifndef LA_SMEM
#define LA_SMEM(type, name) extern __shared__ __align__(128) type name[]
#endif

/* conv_silu_kernel's row, then each head's dim values times 1/sqrt(sum of squares + eps), in
 * l2norm_kernel's arithmetic (elementwise.cu: lane j of a warp sums the squares of its head's
 * elements j, j + 32, ..., a butterfly over the warp, each lane scales its own elements by its
 * own sum): gdn's q and k in one pass where there were two, each reading and writing [T, C]
 * fp32. blockDim.x a multiple of 32; dynamic shared memory C floats. */
__global__ static void conv_silu_l2norm_kernel(float *out, const float *in, const float *w, int T, int C, int K,
                                               int silu, int dim, float eps) {
    LA_SMEM(float, row);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    for (int t = blockIdx.x; t < T; t += gridDim.x) {
        for (int c = threadIdx.x; c < C; c += blockDim.x) row[c] = conv_silu_at(in, w, t, c, C, K, silu);
        __syncthreads();
        for (int h = warp; h < C / dim; h += nw) {
            const float *y = row + (size_t)h * dim;
            float ss = 0.0f;
            for (int j = lane; j < dim; j += 32) ss += y[j] * y[j];
            for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
            const float inv = rsqrtf(ss + eps);
            float *z = out + (size_t)t * C + (size_t)h * dim;
            for (int j = lane; j < dim; j += 32) z[j] = y[j] * inv;
        }
        __syncthreads();                       /* the next row overwrites row[] */
    }
}

/* z[t, c] = logsigmoid(z[t, c] + b[c]) / normalizer */
/* The gla gate from its low-rank factor directly: z[t, c] = logsigmoid(lr[t] . w[c] + b[c]) *
 * inv_norm, lr [T, R] and w [C, R] in bf16, the R products summed in fp32 by fused multiply-
 * adds in order. Replaces the second low-rank GEMM (written in fp32) and the gate's pass over
 * it: the gate's T x C floats are written once instead of written, read and written again. A
 * thread keeps its column's R weights in registers and walks rows (blockIdx.y, grid-stride);
 * the row's R factors are the same address for every thread (a broadcast). */
#define GLA_GATE_RMAX 32
__global__ static void gla_gate_lowrank_kernel(float *z, const __nv_bfloat16 *lr, const __nv_bfloat16 *w,
                                               const float *b, int T, int C, int R, float inv_norm) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float wc[GLA_GATE_RMAX];
    #pragma unroll
    for (int r = 0; r < GLA_GATE_RMAX; r++) wc[r] = r < R ? __bfloat162float(w[(size_t)c * R + r]) : 0.0f;
    const float bc = b[c];
    for (int t = blockIdx.y; t < T; t += gridDim.y) {
        const __nv_bfloat16 *l = lr + (size_t)t * R;
        float acc = 0.0f;
        #pragma unroll
        for (int r = 0; r < GLA_GATE_RMAX; r++)
            if (r < R) acc = fmaf(__bfloat162float(l[r]), wc[r], acc);
        const float v = acc + bc;
        z[(size_t)t * C + c] = (fminf(v, 0.0f) - log1pf(expf(-fabsf(v)))) * inv_norm;
    }
}

__global__ static void gla_gate_kernel(float *z, const float *b, int T, int C, float inv_norm) {
    for (int t = blockIdx.x; t < T; t += gridDim.x) {
        float *row = z + (size_t)t * C;
        for (int c = threadIdx.x; c < C; c += blockDim.x) {
            const float v = row[c] + b[c];
            /* logsigmoid(v) = min(v, 0) - log1p(exp(-|v|)) */
            row[c] = (fminf(v, 0.0f) - log1pf(expf(-fabsf(v)))) * inv_norm;
        }
    }
}

#endif
