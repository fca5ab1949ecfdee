/* The forward pass (model-spec section 4) on the CPU. Memory is O(T*d): no T x T matrix. */
#ifndef HS_FORWARD_H
#define HS_FORWARD_H

#include <stdint.h>
#include "model.h"
#include "knobs.h"

/* What a mixer computed, handed to an optional capture hook right after the mixer ran,
 * so analysis can look at any head without a second forward. Pointers are valid only
 * during the call. Rows are tokens; columns are heads x dims (head-major). */
typedef struct {
    int layer, mixer;
    const hs_mixer_config *mc;
    int T;
    const float *q;        /* [T, H*dk]   after rope (rope/swa), conv+silu, l2norm (gdn) */
    const float *k;        /* [T, Hkv*dk] same */
    const float *v;        /* [T, Hkv*dv] after conv+silu where the mixer has them */
    const float *gk;       /* gla: [T, H*dk] log decay per step (<= 0); else NULL */
    const float *beta;     /* gdn: [T, H] (already x2 when allow_neg_eigval); else NULL */
    const float *log_alpha;/* gdn: [T, H] ln alpha_t (<= 0); else NULL */
    const float *row_scale;/* softmax: [T] c_t (log scaling) or NULL for all ones */
    int window;            /* softmax: effective window (0 = full causal) */
    const hs_knobs_resolved *knobs;  /* swla mode/window for gla/gdn */
    const float *out;      /* [T, H*dv] the mixer's raw per-head output before norm/gate */
} hs_mixer_acts;

typedef void (*hs_capture_fn)(void *ctx, const hs_mixer_acts *acts);
/* Progress in [0,1]; return nonzero to cancel (the forward then returns HS_CANCELLED). */
typedef int (*hs_progress_fn)(void *ctx, double fraction);

#define HS_CANCELLED 1

/* Per-head statistics (model-spec section 7) of chosen query rows, computed by the CUDA
 * backend inside its forward from the mixers' device tensors (engine/analysis.c asks for them;
 * the CPU engine gets the same numbers through the capture hook, hs_probe_stats_capture).
 * Heads in hs_config_head_index order; entry [head * n_rows + r] is row rows[r]. */
typedef struct {
    const int *rows;           /* query positions, each in [0, T) */
    int n_rows;
    int span_start, span_end;  /* half-open; empty (start >= end) => no hits */
    int topk;                  /* >= 1 */
    double *entropy;           /* out [n_heads * n_rows]: normalised entropy */
    int *hit;                  /* out [n_heads * n_rows]: top-k hit against the span */
    int *argmax;               /* out [n_heads * n_rows]: argmax_s a~_{t,s}, earliest on ties */
} hs_head_stats_req;

/* A pooled map (model-spec section 7; engine/analysis_map.c's rules) of one head, computed by
 * the CUDA backend inside its forward from the mixer's device tensors (engine/analysis_map_device.c
 * asks for them; the CPU engine pools through the capture hook). Geometry as resolved by
 * hs_map_opts_resolve and hs_map_rows_per_bin. */
typedef struct {
    hs_head_ref head;
    int t0, t1, s0, s1;        /* half-open query and source ranges */
    int bins_t, bins_s;
    int rows_per_bin;          /* 0: every query row; R: R sampled rows per row bin */
    int agg;                   /* 0 mean, 1 max (hs_pool_agg) */
    float *cells;              /* out [bins_t * bins_s], NaN where a cell has no causal entry */
} hs_map_req;

typedef struct {
    int chunk;                 /* gla/gdn chunk size (0 => 64) */
    int tile;                  /* attention tile (0 => 64) */
    int use_recurrent;         /* 1 => plain recurrence for gla/gdn (reference) */
    hs_capture_fn capture;
    void *capture_ctx;
    hs_progress_fn progress;
    void *progress_ctx;
    /* Outputs (any may be NULL): */
    float *logits;             /* [n_logit_rows, V], rows T-n_logit_rows .. T-1 */
    int n_logit_rows;
    float *nll;                /* [T-1]: -ln p(tokens[t+1] | tokens[..t]) */
    float *hidden;             /* [T, d] final normed hidden state */
    hs_head_stats_req *stats;  /* CUDA backend only (NULL: none) */
    hs_map_req *maps;          /* CUDA backend only: n_maps pooled maps (NULL: none) */
    int n_maps;
} hs_forward_opts;

/* Returns 0, HS_CANCELLED, or -1 with a message in err (e.g. out of memory). */
int hs_forward(const hs_model *m, const int32_t *tokens, int T, const hs_knobs *knobs,
               const hs_forward_opts *opts, char *err, size_t errlen);

/* One mixer on already-normed input h [T,d]; adds its output projection into y [T,d].
 * Exposed for tests (HH == sum of mixers) and for the decoder. */
int hs_mixer_forward(float *y, const hs_model *m, int layer, int mixer, const float *h, int T,
                     const hs_knobs *knobs, const hs_forward_opts *opts);

#endif
