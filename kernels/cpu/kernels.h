/* CPU kernels: tensors in, tensors out. They know nothing of models or configs.
 * Layout: row-major, rows are tokens; multi-head tensors are [T, H*dim] head-major.
 * Output-first arguments. fp32 throughout; no -ffast-math here. */
#ifndef HS_KERNELS_CPU_H
#define HS_KERNELS_CPU_H

#include <stddef.h>

/* SWLA modes for the linear-attention kernels (model-spec section 6). */
enum { SWLA_OFF = 0, SWLA_EXACT = 1, SWLA_OVERLAP = 2 };

/* out[n, out_dim] = in[n, in_dim] @ weight[out_dim, in_dim]^T  (CBLAS sgemm). */
void matmul_forward(float *out, const float *in, const float *weight, int n, int in_dim, int out_dim);
/* out += in @ weight^T */
void matmul_accumulate(float *out, const float *in, const float *weight, int n, int in_dim, int out_dim);

/* out[i,:] = in[i,:] / sqrt(mean(in[i,:]^2) + eps) * weight; in == out allowed. */
void rmsnorm_forward(float *out, const float *in, const float *weight, int n, int dim, float eps);
/* x[t, h*head_dim + :] rotated NeoX half-split style at position pos0 + t. */
void rope_forward(float *x, int T, int n_heads, int head_dim, float theta, int pos0);
void silu_forward(float *out, const float *in, size_t n);
/* out = silu(gate) * up */
void swiglu_forward(float *out, const float *gate, const float *up, size_t n);
/* x / sqrt(sum x^2 + eps) per head. */
void l2norm_heads_forward(float *x, int T, int n_heads, int dim, float eps);
/* Causal depthwise conv: out[t,c] = sum_{j<K} w[c*K + j] * in[t-K+1+j, c], zeros before t=0,
 * or rows of `history` ([K-1, C], oldest first) when history != NULL (decoding). */
void conv1d_causal_forward(float *out, const float *in, const float *w, int T, int C, int K,
                           const float *history);

/* Tiled causal softmax attention (flash style: running max and sum, never a T x T matrix).
 * q [T, H*dk], k [T, Hkv*dk], v [T, Hkv*dv] -> out [T, H*dv].
 * z_{t,s} = row_scale[t] * (q_t . k_s) / sqrt(dk) (row_scale NULL => 1);
 * visible: s <= t and, if window > 0, s > t - window. Key tiles outside the window are skipped.
 * GQA: query head j uses kv head j / (H / Hkv). */
void attention_forward(float *out, const float *q, const float *k, const float *v,
                       const float *row_scale, int T, int H, int Hkv, int dk, int dv,
                       int window, int tile);

/* The softmax's inner pass: s[j] = exp(s[j] - m) for n scores s <= m, returns their sum (AVX-512
 * where the CPU has it, else hs_expf; attention_forward's, exposed for its accuracy test). */
float softmax_exp_row(float *s, int n, float m);

/* Gated linear attention, per head: S_t = diag(exp(gk_t)) S_{t-1} + k_t^T v_t,
 * o_t = (q_t / sqrt(dk)) S_t. q,k,gk [T, H*dk], v [T, H*dv] -> out [T, H*dv].
 * swla: SWLA_EXACT: o_t sums only s in (t-W, t]. SWLA_OVERLAP (stride S): query t in block
 * j = t/S runs the recurrence from zero at max(0, (j+1)S - W). */
void gla_forward_recurrent(float *out, const float *q, const float *k, const float *v,
                           const float *gk, int T, int H, int dk, int dv,
                           int swla, int W, int S);
void gla_forward_chunked(float *out, const float *q, const float *k, const float *v,
                         const float *gk, int T, int H, int dk, int dv, int chunk,
                         int swla, int W, int S);

/* Gated delta rule, per head: S_t = alpha_t (I - beta_t k_t^T k_t) S_{t-1} + beta_t k_t^T v_t,
 * o_t = (q_t / sqrt(dk)) S_t, alpha_t = exp(log_alpha[t,h]), beta [T, H].
 * q, k are expected already L2-normalised. SWLA as for gla. */
void gdn_forward_recurrent(float *out, const float *q, const float *k, const float *v,
                           const float *beta, const float *log_alpha, int T, int H, int dk,
                           int dv, int swla, int W, int S);
void gdn_forward_chunked(float *out, const float *q, const float *k, const float *v,
                         const float *beta, const float *log_alpha, int T, int H, int dk,
                         int dv, int chunk, int swla, int W, int S);

#endif
