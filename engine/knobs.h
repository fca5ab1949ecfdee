/* Inference-time interventions (model-spec section 6). One struct shared by the CLI, the UI
 * and the tests; every knob defaults to off (all-zero struct). */
#ifndef HS_KNOBS_H
#define HS_KNOBS_H

#include <stddef.h>
#include "config.h"

#define HS_MAX_ABLATE 256

typedef enum { HS_SWLA_OFF = 0, HS_SWLA_EXACT, HS_SWLA_OVERLAP } hs_swla_mode;

typedef struct { int layer, mixer, head; } hs_head_ref;

/* rope_window value meaning "the model's train_context" (`--rope-window` without a value). */
#define HS_KNOB_L0 (-1)

typedef struct {
    int log_scale;            /* NoPE mixers: c_t = max(1, ln(t+1)/ln(L0)) */
    int log_scale_L0;         /* 0 => train_context */
    hs_swla_mode swla;        /* gla and gdn mixers */
    int swla_window;          /* 0 => train_context */
    int swla_stride;          /* overlap only; 0 => max(1, W/4) */
    int swa_window;           /* 0 => each swa mixer's own window */
    int rope_window;          /* 0 => off; >0 => rope mixers attend only to s > t - W;
                                 HS_KNOB_L0 => W = train_context */
    int n_ablate;
    hs_head_ref ablate[HS_MAX_ABLATE];
} hs_knobs;

/* Knob values resolved against a config: what the kernels use. */
typedef struct {
    float log_L0;             /* 0 => no log scaling */
    hs_swla_mode swla;
    int swla_window, swla_stride;
    int swa_window;           /* 0 => per mixer */
    int rope_window;          /* 0 => full */
} hs_knobs_resolved;

void hs_knobs_resolve(hs_knobs_resolved *out, const hs_knobs *k, const hs_config *c);
/* Checks ranges and ablation targets against the config. */
int hs_knobs_validate(const hs_knobs *k, const hs_config *c, char *err, size_t errlen);

/* Effective softmax window of a mixer under the knobs: 0 = full causal. */
int hs_knobs_mixer_window(const hs_knobs_resolved *k, const hs_mixer_config *m);
/* c_t for a NoPE mixer (1 when off). */
float hs_knobs_log_scale(const hs_knobs_resolved *k, int t);
int hs_knobs_is_ablated(const hs_knobs *k, int layer, int mixer, int head);

/* CLI parsing shared by every subcommand. Recognises
 *   --log-scale[=L0] --swla[=exact|overlap] --swla-window W --swla-stride S
 *   --swa-window W --rope-window[=W] --ablate L.M.H,...
 * argv[*i] is the current argument; on a match sets *i to the first argument after the flag
 * and its value (so a caller looping with i++ must step back one) and returns 1;
 * returns 0 if the argument is not a knob; -1 on a bad value (message in err naming the flag). */
int hs_knobs_parse_arg(hs_knobs *k, int argc, char **argv, int *i, char *err, size_t errlen);
/* Human-readable one-line summary, e.g. "swla=exact W=1024 log(L0=1024)" or "off". */
void hs_knobs_describe(char *out, size_t n, const hs_knobs *k);
/* Help text for the knob flags (for --help). */
extern const char hs_knobs_help[];

#endif
