/* Row-wise and element-wise kernels: embedding, RMSNorm, RoPE, SwiGLU, short conv, l2norm,
 * the gla/gdn gates, per-head norm and gate, conversions, per-row NLL. Plain expf/logf
 * (no fast math): these feed softmax, entropy and the NLL. */
#include "kernels.cuh"
#include "elementwise_body.cuh"

#include <math.h>

static inline unsigned blocks_for(size_t n, unsigned threads) {
    size_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 65535u * 64u ? b : 65535u * 64u);
}

/* blocks for the row kernels of elementwise_body.cuh: one a row, up to the same cap */
static inline unsigned rows_for(int T) { return (unsigned)(T < 65535 * 64 ? (T > 0 ? T : 1) : 65535 * 64); }

/* threads for a row kernel over a head's half dims (RoPE and its angles): a warp at least */
static inline int half_threads(int half) { return half < 32 ? 32 : (half > 256 ? 256 : (half + 31) / 32 * 32); }

__device__ static float block_max(float v, float *red) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    int w = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    __syncthreads();
    if (lane == 0) red[w] = v;
    __syncthreads();
    float s = red[0];
    for (int i = 1; i < nw; i++) s = fmaxf(s, red[i]);
    return s;
}

cudaError_t cu_embedding(float *x, const __nv_bfloat16 *embed, const int32_t *tokens, int T, int d,
                         cudaStream_t st) {
    embedding_kernel<<<rows_for(T), 256, 0, st>>>(x, embed, tokens, T, d);
    return cudaGetLastError();
}

cudaError_t cu_rmsnorm(__nv_bfloat16 *out_bf16, float *out_f32, const float *x, const float *w,
                       int n, int dim, float eps, cudaStream_t st) {
    rmsnorm_kernel<<<n, 256, 0, st>>>(out_bf16, out_f32, x, w, dim, eps);
    return cudaGetLastError();
}

cudaError_t cu_rope(float *x, int T, int n_heads, int head_dim, float theta, cudaStream_t st) {
    size_t n = (size_t)T * n_heads * (head_dim / 2);
    if (n == 0) return cudaSuccess;
    rope_kernel<<<rows_for(T), half_threads(head_dim / 2), 0, st>>>(x, T, n_heads, head_dim, log((double)theta));
    return cudaGetLastError();
}

cudaError_t cu_rope_table(float2 *cs, int T, int head_dim, float theta, cudaStream_t st) {
    if (T < 1 || head_dim < 2) return cudaSuccess;
    rope_table_kernel<<<rows_for(T), half_threads(head_dim / 2), 0, st>>>(cs, T, head_dim, log((double)theta));
    return cudaGetLastError();
}

cudaError_t cu_swiglu_bf16(__nv_bfloat16 *out, const __nv_bfloat16 *gu, int T, int F, cudaStream_t st) {
    swiglu_bf16_kernel<<<rows_for(T), 256, 0, st>>>(out, gu, T, F);
    return cudaGetLastError();
}

cudaError_t cu_swiglu(__nv_bfloat16 *out, const float *gu, int T, int F, cudaStream_t st) {
    swiglu_kernel<<<rows_for(T), 256, 0, st>>>(out, gu, T, F);
    return cudaGetLastError();
}

/* conv_silu_strip_kernel's shapes (elementwise_body.cuh); dim 0: no l2 norm */
static int conv_strip_fits(const float *out, const float *in, const float *w, int C, int K, int dim) {
    if ((w && K != CONV_K) || C % 128 || C / 4 > 1024 || (((uintptr_t)out | (uintptr_t)in | (uintptr_t)w) & 15)) return 0;
    if (dim == 0) return 1;
    const int lanes = dim / 4;
    return dim % 4 == 0 && lanes >= 1 && lanes <= 32 && !(lanes & (lanes - 1));
}

/* blocks for conv_silu_strip_kernel: one a strip of CONV_STRIP rows, capped as rows_for */
static unsigned conv_strips(int T) { return rows_for((T + CONV_STRIP - 1) / CONV_STRIP); }

cudaError_t cu_conv_silu(float *out, const float *in, const float *w, int T, int C, int K, int silu,
                         cudaStream_t st) {
    if (conv_strip_fits(out, in, w, C, K, 0))
        conv_silu_strip_kernel<false><<<conv_strips(T), C / 4, 0, st>>>(out, in, w, T, C, silu, 0, 0.0f);
    else
        conv_silu_kernel<<<rows_for(T), 256, 0, st>>>(out, in, w, T, C, K, silu);
    return cudaGetLastError();
}

cudaError_t cu_conv_silu_l2norm(float *out, const float *in, const float *w, int T, int C, int K, int silu, int dim,
                                float eps, cudaStream_t st) {
    if (dim < 1 || C % dim || C > CU_CONV_L2NORM_MAX_C) return cudaErrorInvalidValue;
    if (conv_strip_fits(out, in, w, C, K, dim)) {
        conv_silu_strip_kernel<true><<<conv_strips(T), C / 4, 0, st>>>(out, in, w, T, C, silu, dim, eps);
        return cudaGetLastError();
    }
    conv_silu_l2norm_kernel<<<rows_for(T), 256, (size_t)C * sizeof(float), st>>>(out, in, w, T, C, K, silu, dim, eps);
    return cudaGetLastError();
}

/* One warp per (t, head); conv_silu_l2norm_kernel (elementwise_body.cuh) does the same sums. */
__global__ static void l2norm_kernel(float *x, long rows, int dim, float eps) {
    long r = (blockIdx.x * (long)blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (r >= rows) return;
    float *y = x + (size_t)r * dim;
    float ss = 0.0f;
    for (int j = lane; j < dim; j += 32) ss += y[j] * y[j];
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    float inv = rsqrtf(ss + eps);
    for (int j = lane; j < dim; j += 32) y[j] *= inv;
}

cudaError_t cu_l2norm_heads(float *x, int T, int n_heads, int dim, float eps, cudaStream_t st) {
    long rows = (long)T * n_heads;
    l2norm_kernel<<<(unsigned)((rows * 32 + 255) / 256), 256, 0, st>>>(x, rows, dim, eps);
    return cudaGetLastError();
}

cudaError_t cu_gla_gate_lowrank(float *z, const __nv_bfloat16 *lr, const __nv_bfloat16 *w, const float *b, int T, int C,
                                int R, float normalizer, cudaStream_t st) {
    if (R < 1 || R > GLA_GATE_RMAX || C < 1) return cudaErrorInvalidValue;
    if (T < 1) return cudaSuccess;
    const int vec = (R == 8 || R == 16) && C % 4 == 0 && ((uintptr_t)z | (uintptr_t)lr | (uintptr_t)w | (uintptr_t)b) % 16 == 0;
    if (vec) {
        /* a thread 4 columns and at least 8 rows (its 4R factors are loaded once); at most 2048
         * row walkers, ~32 rows a thread at 64K */
        const int walkers = (T + 7) / 8;
        const unsigned cols = (unsigned)((C / 4 + 255) / 256), rows = (unsigned)(walkers < 2048 ? walkers : 2048);
        const dim3 grid(cols, rows);
        if (R == 8) gla_gate_lowrank4_kernel<8><<<grid, 256, 0, st>>>(z, lr, w, b, T, C, 1.0f / normalizer);
        else gla_gate_lowrank4_kernel<16><<<grid, 256, 0, st>>>(z, lr, w, b, T, C, 1.0f / normalizer);
        return cudaGetLastError();
    }
    /* enough row walkers to fill the GPU several times over, each thread a few hundred rows at 64K */
    const dim3 grid((unsigned)((C + 255) / 256), (unsigned)(T < 512 ? T : 512));
    gla_gate_lowrank_kernel<<<grid, 256, 0, st>>>(z, lr, w, b, T, C, R, 1.0f / normalizer);
    return cudaGetLastError();
}

cudaError_t cu_gla_gate(float *z, const float *b, int T, int C, float normalizer, cudaStream_t st) {
    gla_gate_kernel<<<rows_for(T), 256, 0, st>>>(z, b, T, C, 1.0f / normalizer);
    return cudaGetLastError();
}

__global__ static void gdn_gates_kernel(float *beta, float *la, const float *A_log, const float *dt_bias,
                                        int T, int H, float beta_mul) {
    size_t n = (size_t)T * H;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        int h = (int)(i % H);
        beta[i] = beta_mul / (1.0f + expf(-beta[i]));
        float z = la[i] + dt_bias[h];
        float sp = fmaxf(z, 0.0f) + log1pf(expf(-fabsf(z)));
        la[i] = -expf(A_log[h]) * sp;
    }
}

cudaError_t cu_gdn_gates(float *beta, float *log_alpha, const float *A_log, const float *dt_bias,
                         int T, int H, float beta_mul, cudaStream_t st) {
    gdn_gates_kernel<<<blocks_for((size_t)T * H, 256), 256, 0, st>>>(beta, log_alpha, A_log, dt_bias,
                                                                     T, H, beta_mul);
    return cudaGetLastError();
}

/* one warp a (t, head) row, g in fp32 or bf16 */
template <typename G>
static cudaError_t head_norm_gate_launch(__nv_bfloat16 *ob, const float *o, const G *g, const float *norm_w,
                                         const uint8_t *head_mask, int T, int H, int dv, float eps, cudaStream_t st) {
    const long rows = (long)T * H;
    head_norm_gate_kernel<G><<<(unsigned)((rows * 32 + 255) / 256), 256, 0, st>>>(ob, o, g, norm_w, head_mask, rows,
                                                                                 H, dv, eps);
    return cudaGetLastError();
}

cudaError_t cu_head_norm_gate(__nv_bfloat16 *ob, const float *o, const float *g, const float *norm_w,
                              const uint8_t *head_mask, int T, int H, int dv, float eps,
                              cudaStream_t st) {
    return head_norm_gate_launch(ob, o, g, norm_w, head_mask, T, H, dv, eps, st);
}

cudaError_t cu_head_norm_gate_bg(__nv_bfloat16 *ob, const float *o, const __nv_bfloat16 *g, const float *norm_w,
                                 const uint8_t *head_mask, int T, int H, int dv, float eps, cudaStream_t st) {
    return head_norm_gate_launch(ob, o, g, norm_w, head_mask, T, H, dv, eps, st);
}

__global__ static void to_bf16_kernel(__nv_bfloat16 *out, const float *in, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = __float2bfloat16(in[i]);
}

cudaError_t cu_to_bf16(__nv_bfloat16 *out, const float *in, size_t n, cudaStream_t st) {
    if (n == 0) return cudaSuccess;
    to_bf16_kernel<<<blocks_for(n, 256), 256, 0, st>>>(out, in, n);
    return cudaGetLastError();
}

/* One block per row: max, then the sum of exp(l - max). */
__global__ static void nll_kernel(float *nll, const float *logits, const int32_t *targets, int V) {
    __shared__ float red[32];
    const float *row = logits + (size_t)blockIdx.x * V;
    float mx = -INFINITY;
    for (int j = threadIdx.x; j < V; j += blockDim.x) mx = fmaxf(mx, row[j]);
    mx = block_max(mx, red);
    float s = 0.0f;
    for (int j = threadIdx.x; j < V; j += blockDim.x) s += expf(row[j] - mx);
    s = block_sum(s, red);
    if (threadIdx.x == 0) nll[blockIdx.x] = logf(s) + mx - row[targets[blockIdx.x]];
}

cudaError_t cu_nll_rows(float *nll, const float *logits, const int32_t *targets, int n, int V,
                        cudaStream_t st) {
    if (n <= 0) return cudaSuccess;
    nll_kernel<<<n, 256, 0, st>>>(nll, logits, targets, V);
    return cudaGetLastError();
}
