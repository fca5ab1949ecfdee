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

/* Block-wide sum for blockDim.x a multiple of 32, up to 1024 threads. */
__device__ static float block_sum(float v, float *red) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    int w = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    __syncthreads();
    if (lane == 0) red[w] = v;
    __syncthreads();
    float s = 0.0f;
    for (int i = 0; i < nw; i++) s += red[i];
    return s;
}

/* RMSNorm, one block a row (blockDim.x a multiple of 32); bf16 out, and fp32 too where of is
 * given. A pass that only moves memory (17 of them a 376m prefill, 3.6 ms at 64K on the H100,
 * ~1.8 TB/s one element a load, session 23): where the row is float4-aligned a thread loads 4
 * elements at a time and keeps up to RMS_KEEP of those in registers for the second walk, so x
 * is read once. The per-thread sums add four squares at a time, so the sum of squares differs
 * from the scalar walk's in rounding only. */
#define RMS_KEEP 4
__global__ static void rmsnorm_kernel(__nv_bfloat16 *ob, float *of, const float *x, const float *w,
                                      int dim, float eps) {
    __shared__ float red[32];
    const float *row = x + (size_t)blockIdx.x * dim;
    __nv_bfloat16 *orow = ob + (size_t)blockIdx.x * dim;
    float *frow = of ? of + (size_t)blockIdx.x * dim : NULL;
    float ss = 0.0f;
    if (dim % 4 == 0 && ((uintptr_t)x | (uintptr_t)w | (uintptr_t)of) % 16 == 0 && (uintptr_t)ob % 8 == 0) {
        const int d4 = dim / 4;
        const float4 *r4 = (const float4 *)row, *w4 = (const float4 *)w;
        float4 keep[RMS_KEEP];
        #pragma unroll
        for (int i = 0; i < RMS_KEEP; i++) {
            const int j = threadIdx.x + i * blockDim.x;
            if (j < d4) {
                keep[i] = r4[j];
                ss += keep[i].x * keep[i].x + keep[i].y * keep[i].y + keep[i].z * keep[i].z + keep[i].w * keep[i].w;
            }
        }
        for (int j = threadIdx.x + RMS_KEEP * blockDim.x; j < d4; j += blockDim.x) {
            const float4 v = r4[j];
            ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
        }
        ss = block_sum(ss, red);
        const float r = rsqrtf(ss / dim + eps);
        auto put = [&](int j, float4 v) {
            const float4 g = w4[j];
            v = make_float4(v.x * r * g.x, v.y * r * g.y, v.z * r * g.z, v.w * r * g.w);
            const unsigned lo = (unsigned)__bfloat16_as_ushort(__float2bfloat16(v.x)) |
                                (unsigned)__bfloat16_as_ushort(__float2bfloat16(v.y)) << 16;
            const unsigned hi = (unsigned)__bfloat16_as_ushort(__float2bfloat16(v.z)) |
                                (unsigned)__bfloat16_as_ushort(__float2bfloat16(v.w)) << 16;
            ((uint2 *)orow)[j] = make_uint2(lo, hi);
            if (frow) ((float4 *)frow)[j] = v;
        };
        #pragma unroll
        for (int i = 0; i < RMS_KEEP; i++) {
            const int j = threadIdx.x + i * blockDim.x;
            if (j < d4) put(j, keep[i]);
        }
        for (int j = threadIdx.x + RMS_KEEP * blockDim.x; j < d4; j += blockDim.x) put(j, r4[j]);
        return;
    }
    for (int j = threadIdx.x; j < dim; j += blockDim.x) ss += row[j] * row[j];
    ss = block_sum(ss, red);
    const float r = rsqrtf(ss / dim + eps);
    for (int j = threadIdx.x; j < dim; j += blockDim.x) {
        const float y = row[j] * r * w[j];
        orow[j] = __float2bfloat16(y);
        if (frow) frow[j] = y;
    }
}

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

__device__ __forceinline__ __nv_bfloat16 swiglu_one(__nv_bfloat16 g, __nv_bfloat16 u) {
    const float gv = __bfloat162float(g);
    return __float2bfloat16(gv / (1.0f + expf(-gv)) * __bfloat162float(u));
}

/* the same from a bf16 gu (the gate/up product written in bf16 by cuBLAS: HS_CUDA_FFN_BF16=1).
 * A pass that only moves memory (~1.4 GB a layer of the 376m preset at 64K): where F is a
 * multiple of 8 every row's gate, up and output start on 16 bytes, so a thread moves 8 elements
 * a load (one 2-byte load an element issued 8x the memory instructions); each element's
 * arithmetic is the scalar walk's. */
__global__ static void swiglu_bf16_kernel(__nv_bfloat16 *out, const __nv_bfloat16 *gu, int T, int F) {
    if (F % 8 == 0 && ((uintptr_t)gu | (uintptr_t)out) % 16 == 0) {
        const int F8 = F / 8;
        for (int t = blockIdx.x; t < T; t += gridDim.x) {
            const uint4 *g = (const uint4 *)(gu + (size_t)t * 2 * F), *u = g + F8;
            uint4 *o = (uint4 *)(out + (size_t)t * F);
            for (int f = threadIdx.x; f < F8; f += blockDim.x) {
                const uint4 gv = g[f], uv = u[f];
                const unsigned gw[4] = { gv.x, gv.y, gv.z, gv.w }, uw[4] = { uv.x, uv.y, uv.z, uv.w };
                unsigned ow[4];
                #pragma unroll
                for (int e = 0; e < 4; e++) {   /* element 2e in the low half of word e */
                    const unsigned short lo = __bfloat16_as_ushort(swiglu_one(
                        __ushort_as_bfloat16((unsigned short)gw[e]), __ushort_as_bfloat16((unsigned short)uw[e])));
                    const unsigned short hi = __bfloat16_as_ushort(swiglu_one(
                        __ushort_as_bfloat16((unsigned short)(gw[e] >> 16)), __ushort_as_bfloat16((unsigned short)(uw[e] >> 16))));
                    ow[e] = (unsigned)lo | (unsigned)hi << 16;
                }
                o[f] = make_uint4(ow[0], ow[1], ow[2], ow[3]);
            }
        }
        return;
    }
    for (int t = blockIdx.x; t < T; t += gridDim.x) {
        const __nv_bfloat16 *g = gu + (size_t)t * 2 * F, *u = g + F;
        __nv_bfloat16 *o = out + (size_t)t * F;
        for (int f = threadIdx.x; f < F; f += blockDim.x) o[f] = swiglu_one(g[f], u[f]);
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

/* The same passes four channels a thread and CONV_STRIP rows a block: a thread walks its rows
 * in order and keeps the last K - 1 input rows of its channels in registers, so each input is
 * loaded once (16 bytes at a time) instead of K times by K blocks (conv_silu_kernel reads every
 * element 4 times and the 4 taps 4 bytes apart: gdn's three convolutions took 7.5 ms of a 64K
 * prefill at ~1.1-1.5 TB/s on the H100, session 23). Each element's sum is conv_silu_at's, in
 * the same order (a row before 0 adds w x 0 = 0, which leaves the sum as skipping it does).
 * With L2, each head's l2 norm follows from dim/4 lanes: a lane adds its four squares in
 * order, then a butterfly over the head's lanes. For K = CONV_K (or no conv), C a multiple of
 * 128, blockDim.x = C/4, 16-byte aligned rows; L2 for dim/4 a power of two up to 32 (the
 * launchers check, else the kernels above). */
#define CONV_STRIP 16
#define CONV_K 4
template <bool L2>
__global__ static void conv_silu_strip_kernel(float *out, const float *in, const float *w, int T, int C, int silu,
                                              int dim, float eps) {
    const int c = 4 * threadIdx.x;
    float4 wt[CONV_K];           /* wt[j]: tap j of channels c..c+3 */
    for (int j = 0; j < CONV_K; j++) wt[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (w) {
        const float4 *w4 = (const float4 *)(w + (size_t)c * CONV_K);   /* channel c's taps, then c+1's, ... */
        const float4 a = w4[0], b = w4[1], d = w4[2], e = w4[3];
        wt[0] = make_float4(a.x, b.x, d.x, e.x);
        wt[1] = make_float4(a.y, b.y, d.y, e.y);
        wt[2] = make_float4(a.z, b.z, d.z, e.z);
        wt[3] = make_float4(a.w, b.w, d.w, e.w);
    }
    const int lanes = L2 ? dim / 4 : 1;
    for (int t0 = blockIdx.x * CONV_STRIP; t0 < T; t0 += gridDim.x * CONV_STRIP) {
        const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        /* x3, x2, x1: rows t - 3, t - 2, t - 1 */
        float4 x3 = zero, x2 = zero, x1 = zero;
        if (w) {
            if (t0 >= 3) x3 = *(const float4 *)(in + (size_t)(t0 - 3) * C + c);
            if (t0 >= 2) x2 = *(const float4 *)(in + (size_t)(t0 - 2) * C + c);
            if (t0 >= 1) x1 = *(const float4 *)(in + (size_t)(t0 - 1) * C + c);
        }
        const int t1 = t0 + CONV_STRIP < T ? t0 + CONV_STRIP : T;
        for (int t = t0; t < t1; t++) {
            const float4 x0 = *(const float4 *)(in + (size_t)t * C + c);
            float y[4] = { x0.x, x0.y, x0.z, x0.w };
            if (w) {
                const float a3[4] = { x3.x, x3.y, x3.z, x3.w }, a2[4] = { x2.x, x2.y, x2.z, x2.w };
                const float a1[4] = { x1.x, x1.y, x1.z, x1.w };
                const float w0[4] = { wt[0].x, wt[0].y, wt[0].z, wt[0].w }, w1[4] = { wt[1].x, wt[1].y, wt[1].z, wt[1].w };
                const float w2[4] = { wt[2].x, wt[2].y, wt[2].z, wt[2].w }, w3[4] = { wt[3].x, wt[3].y, wt[3].z, wt[3].w };
                #pragma unroll
                for (int u = 0; u < 4; u++) {
                    float acc = 0.0f;
                    acc += w0[u] * a3[u];
                    acc += w1[u] * a2[u];
                    acc += w2[u] * a1[u];
                    acc += w3[u] * y[u];
                    y[u] = acc;
                }
            }
            if (silu) {
                #pragma unroll
                for (int u = 0; u < 4; u++) y[u] = y[u] / (1.0f + expf(-y[u]));
            }
            if (L2) {
                float ss = y[0] * y[0];
                ss += y[1] * y[1];
                ss += y[2] * y[2];
                ss += y[3] * y[3];
                for (int o = lanes >> 1; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
                const float inv = rsqrtf(ss + eps);
                #pragma unroll
                for (int u = 0; u < 4; u++) y[u] *= inv;
            }
            *(float4 *)(out + (size_t)t * C + c) = make_float4(y[0], y[1], y[2], y[3]);
            x3 = x2; x2 = x1; x1 = x0;
        }
    }
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

/* Per head: ob = rms(o, norm_w) * silu(g), one warp a (t, head) row; norm_w NULL: ob = o; rows of
 * a masked head zero. g in fp32 or bf16 (G). A pass that only moves memory (o and g in, ob out:
 * 0.24 ms a layer at 64K on the H100, session 24, one 4-byte load an element): where dv is a
 * multiple of 4 and the rows are aligned a lane moves 4 elements a load (o 16 bytes, g 16 or 8,
 * ob 8). The lanes' sums of squares add four at a time, so the sum differs from the scalar
 * walk's in rounding only; each element's arithmetic is the same. */
__device__ __forceinline__ float hng_load(const float *g, size_t i) { return g[i]; }
__device__ __forceinline__ float hng_load(const __nv_bfloat16 *g, size_t i) { return __bfloat162float(g[i]); }
__device__ __forceinline__ float4 hng_load4(const float *g, size_t i) { return *(const float4 *)(g + i); }
__device__ __forceinline__ float4 hng_load4(const __nv_bfloat16 *g, size_t i) {
    const uint2 u = *(const uint2 *)(g + i);
    return make_float4(__bfloat162float(__ushort_as_bfloat16((unsigned short)u.x)),
                       __bfloat162float(__ushort_as_bfloat16((unsigned short)(u.x >> 16))),
                       __bfloat162float(__ushort_as_bfloat16((unsigned short)u.y)),
                       __bfloat162float(__ushort_as_bfloat16((unsigned short)(u.y >> 16))));
}
__device__ __forceinline__ float hng_one(float x, float rr, float w, float gv) {
    return x * rr * w * (gv / (1.0f + expf(-gv)));
}
template <typename G>
__global__ static void head_norm_gate_kernel(__nv_bfloat16 *ob, const float *o, const G *g,
                                             const float *norm_w, const uint8_t *mask, long rows,
                                             int H, int dv, float eps) {
    const long r = (blockIdx.x * (long)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (r >= rows) return;
    const float *x = o + (size_t)r * dv;
    __nv_bfloat16 *y = ob + (size_t)r * dv;
    const int vec = dv % 4 == 0 && ((uintptr_t)o | (uintptr_t)norm_w) % 16 == 0 && (uintptr_t)ob % 8 == 0 &&
                    (uintptr_t)g % (4 * sizeof(G)) == 0;
    const int n4 = vec ? dv / 4 : 0;
    auto put4 = [&](int j4, float a, float b, float c, float d) {
        const unsigned lo = (unsigned)__bfloat16_as_ushort(__float2bfloat16(a)) |
                            (unsigned)__bfloat16_as_ushort(__float2bfloat16(b)) << 16;
        const unsigned hi = (unsigned)__bfloat16_as_ushort(__float2bfloat16(c)) |
                            (unsigned)__bfloat16_as_ushort(__float2bfloat16(d)) << 16;
        ((uint2 *)y)[j4] = make_uint2(lo, hi);
    };
    if (mask && !mask[r % H]) {
        for (int j4 = lane; j4 < n4; j4 += 32) put4(j4, 0.0f, 0.0f, 0.0f, 0.0f);
        for (int j = 4 * n4 + lane; j < dv; j += 32) y[j] = __float2bfloat16(0.0f);
        return;
    }
    if (!norm_w) {
        for (int j4 = lane; j4 < n4; j4 += 32) {
            const float4 v = ((const float4 *)x)[j4];
            put4(j4, v.x, v.y, v.z, v.w);
        }
        for (int j = 4 * n4 + lane; j < dv; j += 32) y[j] = __float2bfloat16(x[j]);
        return;
    }
    float ss = 0.0f;
    for (int j4 = lane; j4 < n4; j4 += 32) {
        const float4 v = ((const float4 *)x)[j4];
        ss += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
    }
    for (int j = 4 * n4 + lane; j < dv; j += 32) ss += x[j] * x[j];
    for (int s = 16; s > 0; s >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, s);
    const float rr = rsqrtf(ss / dv + eps);
    const G *gr = g + (size_t)r * dv;
    for (int j4 = lane; j4 < n4; j4 += 32) {
        const float4 v = ((const float4 *)x)[j4], w = ((const float4 *)norm_w)[j4], gv = hng_load4(gr, (size_t)4 * j4);
        put4(j4, hng_one(v.x, rr, w.x, gv.x), hng_one(v.y, rr, w.y, gv.y), hng_one(v.z, rr, w.z, gv.z),
             hng_one(v.w, rr, w.w, gv.w));
    }
    for (int j = 4 * n4 + lane; j < dv; j += 32)
        y[j] = __float2bfloat16(hng_one(x[j], rr, norm_w[j], hng_load(gr, (size_t)j)));
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

/* The factors of gate columns c0..c0+3 (4R contiguous bf16 of w [C, R]) into registers: R/2
 * 16-byte loads, not 4R two-byte ones (at 4K, with few rows a thread, the two-byte prologue cost
 * more than the rows). */
template <int R>
__device__ static inline void gla_gate_load_cols4(float (&wc)[4][R], const __nv_bfloat16 *w, int c0) {
    const uint4 *w4 = (const uint4 *)(w + (size_t)c0 * R);
    #pragma unroll
    for (int q = 0; q < R / 2; q++) {
        const uint4 u = w4[q];
        const unsigned uw[4] = { u.x, u.y, u.z, u.w };
        #pragma unroll
        for (int e = 0; e < 4; e++) {
            const int k = q * 8 + 2 * e;   /* flat index (column i, factor r) = i * R + r */
            wc[k / R][k % R] = __bfloat162float(__ushort_as_bfloat16((unsigned short)uw[e]));
            wc[(k + 1) / R][(k + 1) % R] = __bfloat162float(__ushort_as_bfloat16((unsigned short)(uw[e] >> 16)));
        }
    }
}

/* z[c0..c0+3] of one row: logsigmoid(l . wc[i] + b[i]) * inv_norm, the R products in order */
template <int R>
__device__ static inline float4 gla_gate_row4(const float (&l)[R], const float (&wc)[4][R], float4 bc, float inv_norm) {
    float v[4];
    #pragma unroll
    for (int i = 0; i < 4; i++) {
        float acc = 0.0f;
        #pragma unroll
        for (int r = 0; r < R; r++) acc = fmaf(l[r], wc[i][r], acc);
        const float x = acc + (i == 0 ? bc.x : i == 1 ? bc.y : i == 2 ? bc.z : bc.w);
        v[i] = (fminf(x, 0.0f) - log1pf(expf(-fabsf(x)))) * inv_norm;
    }
    return make_float4(v[0], v[1], v[2], v[3]);
}

/* The same gate, four columns a thread and the row's factors in 16-byte loads (R a multiple of 8,
 * C of 4, z and lr 16-byte aligned). The one-column form above issues R two-byte loads and one
 * four-byte store per element, and at 64K it took 0.53 ms a layer on the H100 (session 24's
 * prefprof), slower than the GEMM and gate pass it replaces (0.1 + 0.2 ms); here a row costs a
 * thread R/8 loads for 4 elements and one 16-byte store, so the pass should be bound by the
 * gate's T x C floats written once. Each element's products are summed in the same order, so
 * the results are those of the one-column form bit for bit. */
template <int R>
__global__ static void gla_gate_lowrank4_kernel(float *z, const __nv_bfloat16 *lr, const __nv_bfloat16 *w,
                                                const float *b, int T, int C, float inv_norm) {
    const int c0 = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (c0 >= C) return;
    float wc[4][R];
    gla_gate_load_cols4<R>(wc, w, c0);
    const float4 bc = *(const float4 *)(b + c0);
    for (int t = blockIdx.y; t < T; t += gridDim.y) {
        const uint4 *l4 = (const uint4 *)(lr + (size_t)t * R);
        float l[R];
        #pragma unroll
        for (int q = 0; q < R / 8; q++) {
            const uint4 u = l4[q];
            const unsigned uw[4] = { u.x, u.y, u.z, u.w };
            #pragma unroll
            for (int e = 0; e < 4; e++) {   /* element 2e in the low half of word e */
                l[q * 8 + 2 * e] = __bfloat162float(__ushort_as_bfloat16((unsigned short)uw[e]));
                l[q * 8 + 2 * e + 1] = __bfloat162float(__ushort_as_bfloat16((unsigned short)(uw[e] >> 16)));
            }
        }
        *(float4 *)(z + (size_t)t * C + c0) = gla_gate_row4<R>(l, wc, bc, inv_norm);
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
