/* Shared by forward.c and the mixer_*.c files: the per-call workspace and the small steps
 * every mixer type uses. Not part of the engine's public interface. */
#ifndef HS_MIXER_INTERNAL_H
#define HS_MIXER_INTERNAL_H

#include <stddef.h>
#include "forward.h"

/* Rows per block for projections that are staged (conv, gates, MLP, logits): big enough for
 * an efficient GEMM, small enough that the staging buffers stay O(B * width). */
#define HS_ROW_BLOCK 1024

/* Buffers for one mixer call, sized for the widest mixer of the model at T tokens. */
typedef struct {
    int T;
    float *q, *k, *v, *o;      /* [T, width] */
    float *gk;                 /* gla log decay [T, width] */
    float *stage;              /* [HS_ROW_BLOCK + conv history, width] projection staging */
    float *lowrank;            /* gla gate low rank [T, r] */
    float *beta, *log_alpha;   /* gdn [T, H] */
    float *row_scale;          /* softmax [T] */
    void *block;               /* the single allocation */
    size_t bytes;
} hs_mixer_ws;

/* Sizes for the widest mixer of the config; allocates. -1 with err when out of memory. */
int hs_mixer_ws_alloc(hs_mixer_ws *ws, const hs_config *c, int T, char *err, size_t errlen);
size_t hs_mixer_ws_bytes(const hs_config *c, int T);
void hs_mixer_ws_free(hs_mixer_ws *ws);

/* Runs one mixer on normed h [T,d], adding its output projection into y [T,d]. */
int hs_mixer_run(float *y, const hs_model *m, int layer, int mixer, const float *h, int T,
                 const hs_knobs *knobs, const hs_knobs_resolved *kr,
                 const hs_forward_opts *opts, hs_mixer_ws *ws);

int hs_mixer_run_softmax(float *y, const hs_model *m, int layer, int mixer, const float *h,
                         int T, const hs_knobs *knobs, const hs_knobs_resolved *kr,
                         const hs_forward_opts *opts, hs_mixer_ws *ws);
int hs_mixer_run_gla(float *y, const hs_model *m, int layer, int mixer, const float *h, int T,
                     const hs_knobs *knobs, const hs_knobs_resolved *kr,
                     const hs_forward_opts *opts, hs_mixer_ws *ws);
int hs_mixer_run_gdn(float *y, const hs_model *m, int layer, int mixer, const float *h, int T,
                     const hs_knobs *knobs, const hs_knobs_resolved *kr,
                     const hs_forward_opts *opts, hs_mixer_ws *ws);

/* out [T,C] = h [T,d] W^T, then (conv_w != NULL) the causal depthwise conv of width K,
 * computed in row blocks through ws->stage so no second [T,C] buffer is needed. */
void hs_project_conv(float *out, const float *h, const float *W, const float *conv_w, int T,
                     int d, int C, int K, float *stage);

/* Per head: o = rms(o, norm_w, eps) * silu(h Wg^T), the gate projected in row blocks. */
void hs_head_norm_gate(float *o, const float *h, const float *Wg, const float *norm_w, int T,
                       int d, int H, int dv, float eps, float *stage);

/* Zeroes the columns of every ablated head of this mixer in o [T, H*dv]. */
void hs_ablate_heads(float *o, const hs_knobs *knobs, int layer, int mixer, int T, int H, int dv);

/* Calls opts->capture when set. */
void hs_capture(const hs_forward_opts *opts, const hs_mixer_acts *acts);

#endif
