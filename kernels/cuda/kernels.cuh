/* CUDA kernels: device tensors in, device tensors out, launched on a stream. They know
 * nothing of models or configs (same split as kernels/cpu/kernels.h, which is the reference
 * each one is checked against). Layout: row-major, rows are tokens, multi-head tensors are
 * [T, H*dim] head-major. fp32 activations; bf16 only where a cuBLAS GEMM reads them.
 * Every launcher returns the launch error (cudaGetLastError) so callers can check it. */
#ifndef HS_KERNELS_CUDA_H
#define HS_KERNELS_CUDA_H

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/* SWLA modes, the same numbers as kernels/cpu/kernels.h. */
enum { CU_SWLA_OFF = 0, CU_SWLA_EXACT = 1, CU_SWLA_OVERLAP = 2 };

/* Largest head dims the attention and linear-attention kernels take. */
#define CU_MAX_HEAD_DIM 256

/* x[t,:] = embed[tokens[t],:] (bf16 table, fp32 rows). */
cudaError_t cu_embedding(float *x, const __nv_bfloat16 *embed, const int32_t *tokens, int T, int d,
                         cudaStream_t st);
/* out = x / sqrt(mean(x^2) + eps) * w per row; writes the bf16 copy (GEMM input) and, when
 * out_f32 != NULL, the fp32 one. */
cudaError_t cu_rmsnorm(__nv_bfloat16 *out_bf16, float *out_f32, const float *x, const float *w,
                       int n, int dim, float eps, cudaStream_t st);
/* NeoX half-split rotary embedding in place at positions 0..T-1 (angles in double). */
cudaError_t cu_rope(float *x, int T, int n_heads, int head_dim, float theta, cudaStream_t st);
/* cs[t * head_dim/2 + p] = (cos, sin) of cu_rope's angle for position t and pair p, the same
 * float values cu_rope rotates with. */
cudaError_t cu_rope_table(float2 *cs, int T, int head_dim, float theta, cudaStream_t st);
/* out[t, f] = silu(gu[t, f]) * gu[t, F + f] for the fused [T, 2F] gate|up projection. */
cudaError_t cu_swiglu(__nv_bfloat16 *out, const float *gu, int T, int F, cudaStream_t st);
/* the same with gu in bf16 */
cudaError_t cu_swiglu_bf16(__nv_bfloat16 *out, const __nv_bfloat16 *gu, int T, int F, cudaStream_t st);
/* Causal depthwise conv of width K (w [C, K]; NULL = none), then silu when `silu`;
 * in and out are distinct [T, C]. */
cudaError_t cu_conv_silu(float *out, const float *in, const float *w, int T, int C, int K, int silu,
                         cudaStream_t st);
/* x / sqrt(sum x^2 + eps) per head, in place. */
cudaError_t cu_l2norm_heads(float *x, int T, int n_heads, int dim, float eps, cudaStream_t st);
/* cu_conv_silu then cu_l2norm_heads over heads of dim in one pass, the same values;
 * C a multiple of dim and C floats at most 48 KB (else cudaErrorInvalidValue). */
cudaError_t cu_conv_silu_l2norm(float *out, const float *in, const float *w, int T, int C, int K, int silu, int dim,
                                float eps, cudaStream_t st);
#define CU_CONV_L2NORM_MAX_C (48 * 1024 / 4)
/* gk = logsigmoid(z + b) / normalizer in place on z [T, C]. */
cudaError_t cu_gla_gate(float *z, const float *b, int T, int C, float normalizer, cudaStream_t st);
/* z = logsigmoid(lr w^T + b) / normalizer in one pass (lr [T, R], w [C, R] bf16; R <= 32) */
cudaError_t cu_gla_gate_lowrank(float *z, const __nv_bfloat16 *lr, const __nv_bfloat16 *w, const float *b, int T, int C,
                                int R, float normalizer, cudaStream_t st);
/* beta = mul * sigmoid(beta); log_alpha = -exp(A_log) * softplus(log_alpha + dt_bias), in place, [T, H]. */
cudaError_t cu_gdn_gates(float *beta, float *log_alpha, const float *A_log, const float *dt_bias,
                         int T, int H, float beta_mul, cudaStream_t st);
/* Per head: ob = rms(o, norm_w, eps) * silu(g) (norm_w == NULL: ob = o), zero for heads with
 * head_mask[h] == 0 (mask NULL = keep all). bf16 out for the output projection. */
cudaError_t cu_head_norm_gate(__nv_bfloat16 *ob, const float *o, const float *g, const float *norm_w,
                              const uint8_t *head_mask, int T, int H, int dv, float eps,
                              cudaStream_t st);
/* the same with g in bf16 (the output gate's projection written in bf16 by cuBLAS) */
cudaError_t cu_head_norm_gate_bg(__nv_bfloat16 *ob, const float *o, const __nv_bfloat16 *g, const float *norm_w,
                                 const uint8_t *head_mask, int T, int H, int dv, float eps, cudaStream_t st);
/* fp32 -> bf16 */
cudaError_t cu_to_bf16(__nv_bfloat16 *out, const float *in, size_t n, cudaStream_t st);
/* nll[i] = logsumexp(logits[i,:]) - logits[i, targets[i]] for i < n. */
cudaError_t cu_nll_rows(float *nll, const float *logits, const int32_t *targets, int n, int V,
                        cudaStream_t st);

/* Flash-style causal softmax attention: online softmax over key tiles, tiles wholly outside
 * the window skipped. z_{t,s} = row_scale[t] (q_t . k_s) / sqrt(dk) (row_scale NULL => 1),
 * visible s <= t and (window > 0) s > t - window; GQA: head j reads kv head j / (H/Hkv).
 * dk, dv <= CU_MAX_HEAD_DIM. scratch (16-byte aligned, scratch_bytes long; may be NULL) is
 * device memory the FA2 kernel needs, cu_attention_fa2_scratch_bytes(T, Hkv, dk, dv) bytes;
 * without enough of it cu_attention runs the fp32 kernel. Which kernel runs:
 * cu_attention_choice(). */
cudaError_t cu_attention(float *out, const float *q, const float *k, const float *v,
                         const float *row_scale, int T, int H, int Hkv, int dk, int dv, int window,
                         void *scratch, size_t scratch_bytes, cudaStream_t st);
/* The implementations cu_attention picks from: CU_ATT_SIMT (fp32 CUDA cores, any dims up to
 * 256), CU_ATT_TC (WMMA), CU_ATT_FA2 (mma.sync FlashAttention-2 style, dk == dv in {64, 128}),
 * CU_ATT_WG (wgmma, sm_90a, same dims), CU_ATT_WGT (wgmma fed by TMA, warpgroups taking turns);
 * HS_CUDA_ATTENTION=simt|tc|fa2|wgmma|wgtma overrides the default (CU_ATT_DEFAULT, attention.cu).
 * A choice whose kernel cannot run (dims, machine code, scratch) falls back: wgtma to wgmma,
 * wgmma to fa2, then to simt. */
enum { CU_ATT_SIMT = 0, CU_ATT_TC = 1, CU_ATT_FA2 = 2, CU_ATT_WG = 3, CU_ATT_WGT = 4 };
int cu_attention_choice(void);
/* Dynamic shared memory the attention kernels need (call once, before the first launch). */
cudaError_t cu_attention_setup(void);
/* The WMMA kernel (bf16, fp32 accumulation; dk, dv multiples of 16 up to 128) and the fp32
 * CUDA-core one (any dims up to 256). */
int cu_attention_tc_fits(int dk, int dv);
cudaError_t cu_attention_tc_setup(void);
cudaError_t cu_attention_tc(float *out, const float *q, const float *k, const float *v,
                            const float *row_scale, int T, int H, int Hkv, int dk, int dv, int window,
                            cudaStream_t st);
cudaError_t cu_attention_simt(float *out, const float *q, const float *k, const float *v,
                              const float *row_scale, int T, int H, int Hkv, int dk, int dv, int window,
                              cudaStream_t st);
/* The FA2 kernel (attention_fa2.cu): bf16 K/V copies in scratch (>= cu_attention_fa2_scratch_bytes),
 * then the tensor-core kernel; q, k, v, scratch 16-byte aligned. */
int cu_attention_fa2_fits(int dk, int dv);
size_t cu_attention_fa2_scratch_bytes(int T, int Hkv, int dk, int dv);
cudaError_t cu_attention_fa2_setup(void);
cudaError_t cu_attention_fa2(float *out, const float *q, const float *k, const float *v,
                             const float *row_scale, int T, int H, int Hkv, int dk, int dv, int window,
                             void *scratch, size_t scratch_bytes, cudaStream_t st);
/* K alone to the FA2 kernels' bf16 head-major copy [Hkv][T][D] (D 64 or 128). */
cudaError_t cu_attention_convert_k(uint16_t *kb, const float *k, int T, int Hkv, int D, cudaStream_t st);
/* The wgmma kernel (attention_wg.cu, sm_90a machine code only; fits reports 0 elsewhere):
 * scratch holds bf16 K and V^T, cu_attention_wg_scratch_bytes (slightly more than FA2's). */
int cu_attention_wg_fits(int dk, int dv);
size_t cu_attention_wg_scratch_bytes(int T, int Hkv, int dk, int dv);
cudaError_t cu_attention_wg_setup(void);
cudaError_t cu_attention_wg(float *out, const float *q, const float *k, const float *v,
                            const float *row_scale, int T, int H, int Hkv, int dk, int dv, int window,
                            void *scratch, size_t scratch_bytes, cudaStream_t st);
/* Its TMA-fed variant (attention_wgt_body.cuh; where wgmma fits and a block may have 225 KB of
 * shared memory): scratch holds K and V^T as bf16 tile
 * images, cu_attention_wgt_scratch_bytes (T rounded up to 128 tokens). */
int cu_attention_wgt_fits(int dk, int dv);
size_t cu_attention_wgt_scratch_bytes(int T, int Hkv, int dk, int dv);
cudaError_t cu_attention_wgt(float *out, const float *q, const float *k, const float *v,
                             const float *row_scale, int T, int H, int Hkv, int dk, int dv, int window,
                             void *scratch, size_t scratch_bytes, cudaStream_t st);
/* The same on q and k not yet rotated: each is rotated (RoPE, NeoX half split) as the kernel
 * loads it, by the angles in rope ([T][dk/2] (cos, sin), cu_rope_table; 16-byte aligned), so the
 * rotated q and k are never written. */
cudaError_t cu_attention_wgt_rope(float *out, const float *q, const float *k, const float *v,
                                  const float *row_scale, int T, int H, int Hkv, int dk, int dv, int window,
                                  const float2 *rope, void *scratch, size_t scratch_bytes, cudaStream_t st);
/* Whether cu_attention would run the TMA-fed kernel for these sizes (so cu_attention_wgt_rope
 * computes what cu_rope on q and k then cu_attention compute). */
int cu_attention_runs_wgt(int T, int Hkv, int dk, int dv, size_t scratch_bytes);

/* Gated linear attention, full recurrence S_t = diag(exp(gk_t)) S_{t-1} + k_t^T v_t,
 * o_t = (q_t/sqrt(dk)) S_t; the state column of each value channel lives in registers of a
 * small thread group. swla == CU_SWLA_EXACT with window W subtracts the contribution that
 * leaves the window, decayed by exp(sum of gk over (t-W, t]) (exact windowed state). */
cudaError_t cu_gla_scan(float *out, const float *q, const float *k, const float *v, const float *gk,
                        int T, int H, int dk, int dv, int swla, int W, cudaStream_t st);
/* Gated delta rule, full recurrence S_t = alpha_t (I - beta_t k_t^T k_t) S_{t-1} + beta_t k_t^T v_t,
 * o_t = (q_t/sqrt(dk)) S_t; q, k already L2-normalised; beta, log_alpha [T, H]. */
cudaError_t cu_gdn_scan(float *out, const float *q, const float *k, const float *v, const float *beta,
                        const float *log_alpha, int T, int H, int dk, int dv, cudaStream_t st);
/* Windowed linear attention by the value-path form: for each query t (one warp), walk
 * s = t, t-1, ..., start(t) carrying x = (q_t/sqrt dk) times the transition products, and
 * accumulate c_{t,s} v_s. start(t) = max(0, t-W+1) (exact) or max(0, (t/S+1)S - W) (overlap).
 * gla: gk != NULL (beta/log_alpha NULL); gdn: beta and log_alpha != NULL. */
cudaError_t cu_linattn_window(float *out, const float *q, const float *k, const float *v,
                              const float *gk, const float *beta, const float *log_alpha, int T,
                              int H, int dk, int dv, int swla, int W, int S, cudaStream_t st);

/* Head statistics of query rows (kernels/cuda/head_stats.cu; model-spec section 7): for row r
 * of rows[] and head h, entropy[h*n_rows + r] (normalised), hit[...] (top-k hit against the
 * half-open span [span0, span1)) and argmax[...] (earliest on ties). */
typedef struct {
    double *entropy;
    int *hit, *argmax;
} cu_head_stats_out;
/* softmax heads: q [T, H*dk], k [T, Hkv*dk] (after rope), row_scale [T] or NULL, window 0 = causal. */
cudaError_t cu_head_stats_softmax(cu_head_stats_out o, const float *q, const float *k,
                                  const float *row_scale, int H, int Hkv, int dk, int window,
                                  const int *rows, int n_rows, int span0, int span1, int topk,
                                  cudaStream_t st);
/* gla heads: first cu_head_stats_gla_prep (ktil [T, C] like k, dchunk of
 * cu_head_stats_gla_scratch bytes; C = H*dk), then cu_head_stats_gla. swla/W/S as the forward. */
size_t cu_head_stats_gla_scratch(int T, int C);
cudaError_t cu_head_stats_gla_prep(float *ktil, double *dchunk, const float *k, const float *gk, int T,
                                   int C, cudaStream_t st);
cudaError_t cu_head_stats_gla(cu_head_stats_out o, const float *q, const float *k, const float *gk,
                              const float *ktil, const double *dchunk, int H, int dk, int swla, int W,
                              int S, const int *rows, int n_rows, int span0, int span1, int topk,
                              cudaStream_t st);
/* gdn heads: q, k L2-normalised, beta and log_alpha [T, H]; dk <= CU_MAX_HEAD_DIM. */
cudaError_t cu_head_stats_gdn(cu_head_stats_out o, const float *q, const float *k, const float *beta,
                              const float *log_alpha, int H, int dk, int swla, int W, int S,
                              const int *rows, int n_rows, int span0, int span1, int topk,
                              cudaStream_t st);

/* Pooled map of one head (kernels/cuda/pooled_map.cu; the rules of engine/analysis_map.c):
 * cells [bins_t, bins_s] (row-major), each the mean or max of a~_{t,s} over the cell's causal
 * entries (zeros outside a window count), NaN where there is none. rows_per_bin 0: every query
 * row; R > 0: R evenly spaced rows of each row bin, the bin's last among them. */
enum { CU_MAP_SOFTMAX, CU_MAP_GLA, CU_MAP_GDN };
enum { CU_MAP_MEAN, CU_MAP_MAX };
typedef struct {
    int t0, t1, s0, s1;        /* half-open query and source ranges */
    int bins_t, bins_s, rows_per_bin, agg;
} cu_map_geom;
typedef struct {
    int kind, h, H, Hkv, dk;   /* head h of a mixer with H query heads (Hkv: softmax GQA) */
    const float *q, *k;        /* [T, H*dk] / [T, Hkv*dk]: after rope (softmax), L2 norm (gdn) */
    const float *row_scale;    /* softmax: [T] log scaling or NULL */
    int window;                /* softmax: 0 = full causal */
    const float *gk, *ktil;    /* gla: log gates and cu_head_stats_gla_prep's K~ */
    const double *dchunk;      /* gla: its chunk decays */
    const float *beta, *log_alpha; /* gdn: [T, H] */
    int swla, W, S;            /* gla/gdn: the visible range under SWLA */
} cu_map_head;
size_t cu_pooled_map_scratch(int T, int bins_t, int bins_s);
cudaError_t cu_pooled_map(float *cells, void *scratch, cu_map_geom g, cu_map_head hd, int T, cudaStream_t st);

/* Incremental decoding (kernels/cuda/decode_kernels.cu): one new token against caches. */
/* out[o] (+= when accumulate) = sum_i in[i] w[o * in_dim + i]: a one-row projection (decode
 * steps). cudaErrorInvalidValue unless in_dim % 8 == 0 and in, w are 16-byte aligned (then use
 * a GEMM). */
cudaError_t cu_dec_gemv(float *out, const __nv_bfloat16 *in, const __nv_bfloat16 *w, int in_dim, int out_dim,
                        int accumulate, cudaStream_t st);
/* x[0..d) = embed[token, :] (the bf16 table as cu_embedding reads it). */
cudaError_t cu_embed_token(float *x, const __nv_bfloat16 *embed, int token, int d, cudaStream_t st);
/* cu_rope for one row [n_heads*head_dim] at position pos, in place. */
cudaError_t cu_rope_at(float *x, int pos, int n_heads, int head_dim, float theta, cudaStream_t st);
/* cu_conv_silu for one new row x [C] against hist [K-1, C] (the previous pre-conv rows, oldest
 * first), which then shifts x in; w NULL: silu (when `silu`) only. out may equal x. */
cudaError_t cu_conv_step(float *out, float *hist, const float *x, const float *w, int C, int K, int silu,
                         cudaStream_t st);
/* Softmax attention of one query q [H*dk] (scaled by qscale = c_t / sqrt(dk)) over positions
 * lo..t of a ring cache (position s in row s % cap of kc [cap, Hkv*dk], vc [cap, Hkv*dv]);
 * t - lo + 1 <= cap. out [H*dv]. part: cu_decode_attention_scratch_floats(H, dv) floats. */
size_t cu_decode_attention_scratch_floats(int H, int dv);
cudaError_t cu_decode_attention(float *out, const float *q, const float *kc, const float *vc, int cap, int lo,
                                int t, int H, int Hkv, int dk, int dv, float qscale, float *part,
                                cudaStream_t st);
/* The gla (gk != NULL) or gdn (beta, log_alpha != NULL) recurrence over T rows with the state
 * S [H][dv][dk] (column j of head h contiguous), starting from S (load) or zero, leaving the
 * final state in S; out [T, H*dv] (may be NULL: state only) gets o_t = (q_t/sqrt(dk)) S_t.
 * Rows as cu_gla_scan / cu_gdn_scan. */
cudaError_t cu_linattn_state_run(float *S, float *out, const float *q, const float *k, const float *v,
                                 const float *gk, const float *beta, const float *log_alpha, int T,
                                 int H, int dk, int dv, int load, cudaStream_t st);
/* cu_linattn_window for the single query t (q [H*dk]) over history rings whose position s is
 * row s % cap: hk, hg [cap, H*dk], hv [cap, H*dv], hbeta, hla [cap, H]; sums s = lo..t
 * (t - lo + 1 <= cap). gla: hg != NULL; gdn: hbeta, hla != NULL. out [H*dv]. */
cudaError_t cu_linattn_window_step(float *out, const float *q, const float *hk, const float *hv,
                                   const float *hg, const float *hbeta, const float *hla, int cap, int t,
                                   int lo, int H, int dk, int dv, cudaStream_t st);

#endif
