/* A naive double-precision forward pass written directly from model-spec sections 4 and 6:
 * O(T^2) loops, the literal recurrences, the literal SWLA restart, literal masks. It shares
 * nothing with engine/forward.c or the kernels (it reads hs_knobs fields itself), so tests
 * can hold the engine against it. Small T only. */
#ifndef HS_REF_MODEL_H
#define HS_REF_MODEL_H

#include <stdint.h>
#include "model.h"
#include "knobs.h"

/* What one mixer computed, all [T, ...] row-major, head-major columns (malloc'd by ref,
 * freed with ref_trace_free). Same meaning as hs_mixer_acts in engine/forward.h. */
typedef struct {
    int T, H, Hkv, dk, dv;
    double *q, *k, *v;         /* after rope / conv+silu / l2norm */
    double *gk;                /* gla [T, H*dk]; else NULL */
    double *beta, *log_alpha;  /* gdn [T, H]; else NULL */
    double *row_scale;         /* softmax [T] c_t (all ones when log scaling is off) */
    int window;                /* softmax: effective window, 0 = full causal */
    double *raw;               /* [T, H*dv] output before norm/gate (and before ablation) */
    double *y;                 /* [T, d] the mixer's contribution to the residual stream */
} ref_trace;
void ref_trace_free(ref_trace *tr);

/* y [T,d] += mixer(h) for mixer `mixer` of layer `layer`; h [T,d] is the normed input.
 * tr may be NULL; otherwise filled. */
void ref_mixer_forward(double *y, ref_trace *tr, const hs_model *m, int layer, int mixer,
                       const double *h, int T, const hs_knobs *k);

/* Whole model. logits [T,V], nll [T-1], hidden [T,d] (final normed), any may be NULL.
 * k may be NULL (all knobs off). */
void ref_forward(double *logits, double *nll, double *hidden, const hs_model *m,
                 const int32_t *tok, int T, const hs_knobs *k);

/* Helpers tests reuse. */
void ref_rms(double *out, const double *in, const float *w, int n, int dim, double eps);
/* out [n, o] = in [n, i] W^T with W float [o, i]. */
void ref_linear(double *out, const double *in, const float *W, int n, int in_dim, int out_dim);

#endif
