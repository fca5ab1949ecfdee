/* Analysis functions (model-spec section 7) that fill the structs of analysis.h.
 *
 * Everything here works from what a mixer computed (hs_mixer_acts, handed to a capture hook
 * right after the mixer ran), a query row (or a block of up to 64 rows) at a time: a row costs
 * O(visible * dk) and T doubles of buffer; no T x T matrix is ever held. */
#ifndef HS_ANALYSIS_API_H
#define HS_ANALYSIS_API_H

#include <stdint.h>
#include "analysis.h"
#include "decode.h"

/* ---- one head of one captured mixer, ready for row queries ---- */
#define HS_ANALYSIS_MAX_DK 1024    /* head_k_dim the row sweeps support */
/* Sweep values below this are flushed to 0: far below anything a normalised distribution can
 * show, and it keeps the sweeps out of denormal arithmetic (tens of times slower). */
#define HS_SWEEP_TINY 1e-250
typedef struct {
    const hs_mixer_acts *acts;
    int head, kv_head;
    hs_mixer_type type;
    int T, dk;
    double inv_sqrt_dk;
    int window;                /* softmax: 0 = full causal */
    hs_swla_mode swla;         /* gla/gdn */
    int swla_window, swla_stride;
    double *decay;             /* gla: exp(gk) of this head [T, dk]; gdn: alpha [T] */
    /* Chunk data for hs_head_view_rows (hs_head_view_prepare): */
    int prepared;
    float *keys;               /* softmax: the kv head's keys; gla: K~; gdn: U  [T, dk] */
    double *carry;             /* gla: chunk decay [chunks, dk]; gdn: chunk M [chunks, dk, dk] */
} hs_head_view;

/* Prepares head `head` of a captured mixer. -1 when out of memory or head out of range. */
int hs_head_view_init(hs_head_view *v, const hs_mixer_acts *a, int head);
void hs_head_view_free(hs_head_view *v);

/* First source position that query t sees under the knobs: softmax windows (s > t - W),
 * SWLA exact (s > t - W) and overlap (s >= max(0, (floor(t/S)+1) S - W)). */
int hs_head_view_start(const hs_head_view *v, int t);

/* a~_{t,s} for s in [lo, t] written to dist[lo..t]; returns lo. dist[0..lo) is not touched
 * (the distribution is 0 there). Softmax: p_{t,s} with row_scale. gla: |c_{t,s}| by a
 * backward sweep of the cumulative decay relative to t (r_s = q_t/sqrt(dk) * exp(G_t - G_s),
 * so nothing overflows). gdn: r <- r A_s backward from t. Both normalised over [lo, t]
 * (all zero when the sum is 0). Cost O((t - lo + 1) * dk). */
int hs_head_view_row(const hs_head_view *v, int t, double *dist);

/* The fast path for many rows (analysis_rows.c): prepare once per head (O(T dk), gdn
 * O(T dk^2)), then any rows in one call: dist of row r is out[r*ld + s] for s in
 * [los[r], ts[r]] (los filled; other entries untouched). Same values as hs_head_view_row up
 * to float GEMM rounding (~1e-6 relative). -1 when out of memory. Calls sgemm: inside an
 * OpenMP team, hold OpenBLAS to one thread. */
int hs_head_view_prepare(hs_head_view *v);
int hs_head_view_rows(const hs_head_view *v, const int *ts, int n, double *out, size_t ld,
                      int *los);

/* ---- per-row statistics (spec section 7) ---- */
/* -sum a ln a / ln(t+1) over dist[lo..t]; 0 for t = 0. */
double hs_dist_entropy(const double *dist, int lo, int t);
/* 1 when one of the k largest entries of dist[lo..t] lies in [span_start, span_end): the
 * span position with the largest a~, m, counts when m > 0 and fewer than k positions have a
 * strictly larger a~ (ties all count). */
int hs_dist_topk_hit(const double *dist, int lo, int t, int span_start, int span_end, int k);
/* Position of the largest entry of dist[lo..t]; ties go to the earliest position. */
int hs_dist_argmax(const double *dist, int lo, int t);
int hs_dist_argmax_f(const float *dist, int n);
/* k used when the caller gives none: min(64, max(1, T / 64)). */
int hs_topk_default(int T);

/* Retrieval score (spec section 7): generated token gen[i] came from query row T-1+i, whose
 * argmax position for head h is amax[h * stride + i] (-1 = unknown). Adds 1/|span| to
 * score[h] when that position lies in [span_start, span_end) on a token equal to gen[i]. */
void hs_retrieval_score(double *score, const int *amax, int n_heads, int stride,
                        const int32_t *tokens, int span_start, int span_end,
                        const int32_t *gen, int n_gen);

/* ---- head indexing (layer-major, then mixer, then head) ---- */
int hs_config_head_count(const hs_config *c);
int hs_config_head_index(const hs_config *c, int layer, int mixer, int head);

/* ---- probe statistics from a capture hook ---- */
typedef struct {
    const hs_config *cfg;
    int T;
    const int *probe_pos;      /* sorted or not; each in [0, T) */
    int n_probe;
    int span_start, span_end;  /* half-open; empty (start >= end or -1) => hit rate 0 */
    int topk;
    /* Outputs, [hs_config_head_count] each (caller allocates): */
    hs_head_stat *heads;       /* layer/mixer/head/type, entropy and hit_rate filled */
    int failed;                /* set when out of memory inside the hook */
} hs_probe_stats;

/* A capture hook (hs_capture_fn) that fills ctx (an hs_probe_stats) for every mixer. */
void hs_probe_stats_capture(void *ctx, const hs_mixer_acts *acts);

/* ---- decoding and partial forwards (decode.c) ---- */
/* hs_decoder_new that, with keep_history, keeps every position's gla/gdn keys and gates so
 * hs_decoder_step can hand a head_fn the full distribution of gla/gdn heads without SWLA
 * (O(max_tokens * d) more memory). hs_generate_greedy does this when given a head_fn. */
hs_decoder *hs_decoder_new_ex(const hs_model *m, const hs_knobs *k, int max_tokens,
                              int keep_history, char *err, size_t errlen);
/* Runs only layers [0, n_layers) of the forward (embeddings, mixers, MLPs), calling
 * opts->capture for every mixer and opts->progress per layer: for analyses of one layer.
 * 0, HS_CANCELLED, or -1 with err. */
int hs_forward_layers(const hs_model *m, const int32_t *tokens, int T, const hs_knobs *k,
                      int n_layers, const hs_forward_opts *opts, char *err, size_t errlen);

/* ---- probe: one forward + greedy decoding ---- */
typedef struct {
    const int32_t *tokens;
    int T;
    const int *probe_pos;      /* NULL => the last token */
    int n_probe;
    int span_start, span_end;  /* -1 => no span */
    int topk;                  /* 0 => hs_topk_default(T) */
    int max_new;               /* tokens to generate greedily (0 = no generation) */
    const char *expect;        /* answer is correct when this occurs in it (NULL: no check) */
    hs_progress_fn progress;
    void *progress_ctx;
    int use_cuda;              /* 1: the forward and the head statistics on the CUDA backend */
} hs_probe_opts;

/* Fills r (tokens, probe positions, span, k, per-head statistics, answer). Generated token
 * ids are returned through gen/n_gen when gen != NULL (capacity max_new). 0, HS_CANCELLED, or
 * -1 with err. */
int hs_probe_run(hs_probe_result *r, const hs_model *m, const hs_knobs *k, const hs_probe_opts *o,
                 int32_t *gen, int *n_gen, char *err, size_t errlen);

/* hs_probe_run's CUDA path (analysis_probe_device.c): r holds tokens, probe rows, span, k and
 * head count; fills r->heads' entropy and hit rate, out/n_out (greedy tokens) and amax
 * ([n_heads, max_new] argmax of each generated token's query row). */
int hs_probe_fill_cuda(hs_probe_result *r, const hs_model *m, const hs_knobs *k, int max_new,
                       int32_t *out, int *n_out, int *amax, hs_progress_fn progress, void *pctx,
                       char *err, size_t errlen);

/* ---- pooled maps ---- */
typedef struct {
    hs_head_ref head;
    int bins_t, bins_s;        /* 0 => min(256, range length) */
    int t0, t1, s0, s1;        /* t1/s1 = 0 => T */
    hs_pool_agg agg;
    int rows_per_bin;          /* 0 => auto (exact when each row bin has <= HS_MAP_SAMPLE_ROWS
                                  rows or the query range is <= HS_MAP_EXACT_T); -1 => exact;
                                  n > 0 => at most n evenly spaced rows per bin (always
                                  including the bin's last row) */
} hs_map_opts;

#define HS_MAP_SAMPLE_ROWS 16
#define HS_MAP_EXACT_T 4096

/* Checks and fills defaults of o against T (0 or -1 with a message naming the flag). */
int hs_map_opts_resolve(hs_map_opts *o, int T, char *err, size_t errlen);
/* Rows per bin that will be used (0 = every row). */
int hs_map_rows_per_bin(const hs_map_opts *o);

/* From one head of a captured mixer (o already resolved; v is prepared here when needed).
 * *rows_used: query rows computed.
 * progress (may be NULL) gets the fraction of row bins done; nonzero cancels. */
int hs_pooled_map_from_view(hs_pooled_map *out, hs_head_view *v, const hs_map_opts *o,
                            long long *rows_used, hs_progress_fn progress, void *pctx,
                            char *err, size_t errlen);

/* Runs the layers up to the head's and pools its map. o is resolved inside. */
int hs_pooled_map_compute(hs_pooled_map *out, const hs_model *m, const hs_knobs *k,
                          const int32_t *tokens, int T, hs_map_opts *o, long long *rows_used,
                          hs_progress_fn progress, void *progress_ctx, char *err, size_t errlen);

/* Query rows a map with resolved o computes (rows before o->s0 have no source and are skipped). */
long long hs_map_rows_used(const hs_map_opts *o);

/* The pooled maps of n heads on the CUDA backend (engine/analysis_map_device.c): one forward of
 * the whole model, each map computed on the GPU right after its mixer ran, with the rules and
 * results of hs_pooled_map_compute. opts[i] are resolved inside; rows_used (may be NULL) gets
 * each map's computed rows. progress covers the forward. On failure no out[i] holds cells. */
int hs_pooled_maps_cuda(hs_pooled_map *out, const hs_model *m, const hs_knobs *k, const int32_t *tokens,
                        int T, hs_map_opts *opts, int n, long long *rows_used, hs_progress_fn progress,
                        void *progress_ctx, char *err, size_t errlen);

/* ---- parameter displacement (diff) ---- */
typedef struct {
    int layer, mixer, head;
    hs_mixer_type type;
    double r_q, r_k;           /* ||W_B - W_A||_2 / ||W_A||_2 over the head's rows */
} hs_head_displacement;

/* Spectral norm of (M - minus), rows x cols row-major floats (minus may be NULL), by power
 * iteration in double on the rows x rows Gram matrix; NaN when out of memory. */
double hs_spectral_norm(const float *M, int rows, int cols, const float *minus, int iters);
/* out: [hs_config_head_count(&a->cfg)]. -1 with err when the configs differ in shape. */
int hs_model_displacement(hs_head_displacement *out, const hs_model *a, const hs_model *b,
                          char *err, size_t errlen);

#endif
