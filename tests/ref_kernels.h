/* Naive double-precision references for the CPU kernels, written directly from
 * /work/shared/docs/model-spec.md (sections 4 and 6). O(T^2) or worse where the definition
 * is; meant for tests with small T. Layouts as in kernels/cpu/kernels.h (rows are tokens,
 * heads head-major). */
#ifndef HS_REF_KERNELS_H
#define HS_REF_KERNELS_H

#include <stddef.h>

/* out[n, out_dim] = in @ w^T */
void ref_matmul(double *out, const float *in, const float *w, int n, int in_dim, int out_dim);
/* x / sqrt(mean(x^2) + eps) * w per row */
void ref_rmsnorm(double *out, const float *in, const float *w, int n, int dim, double eps);
/* x / sqrt(sum x^2 + eps) per head */
void ref_l2norm_heads(double *out, const float *x, int T, int n_heads, int dim, double eps);
/* NeoX half-split rotary embedding at positions pos0 + t */
void ref_rope(double *out, const float *x, int T, int n_heads, int head_dim, double theta, int pos0);
void ref_silu(double *out, const float *in, size_t n);
void ref_swiglu(double *out, const float *gate, const float *up, size_t n);
/* Causal depthwise conv; positions < 0 read `history` ([K-1, C], oldest first) or zeros. */
void ref_conv1d(double *out, const float *in, const float *w, int T, int C, int K, const float *history);

/* Softmax attention, O(T^2): z_{t,s} = c_t q_t.k_s / sqrt(dk) over s <= t (and s > t - window
 * when window > 0), GQA head j -> kv head j / (H/Hkv). */
void ref_attention(double *out, const float *q, const float *k, const float *v,
                   const float *row_scale, int T, int H, int Hkv, int dk, int dv, int window);

/* First visible source position of query t under SWLA (0 off, 1 exact, 2 overlap). */
int ref_swla_restart(int t, int swla, int W, int S);

/* GLA / GDN by the literal definition: the recurrence run from a zero state at
 * ref_swla_restart(t) up to t, for every t (the state is reused while the restart point
 * stays the same, so off/overlap cost one pass and exact costs O(T W dk dv)). */
void ref_gla(double *out, const float *q, const float *k, const float *v, const float *gk,
             int T, int H, int dk, int dv, int swla, int W, int S);
void ref_gdn(double *out, const float *q, const float *k, const float *v, const float *beta,
             const float *log_alpha, int T, int H, int dk, int dv, int swla, int W, int S);

/* Value-path form: o_t = sum_{s = lo[t]}^{t} c_{t,s} v_s with the spec's c_{t,s}
 * (gla: (q_t/sqrt(dk)) . (exp(G_t - G_s) k_s); gdn: beta_s (q_t/sqrt(dk)) A_t..A_{s+1} k_s^T).
 * lo [T] gives each query's first visible source. */
void ref_gla_valuepath(double *out, const float *q, const float *k, const float *v, const float *gk,
                       int T, int H, int dk, int dv, const int *lo);
void ref_gdn_valuepath(double *out, const float *q, const float *k, const float *v, const float *beta,
                       const float *log_alpha, int T, int H, int dk, int dv, const int *lo);

#endif
