/* A loaded model: config + fp32 weights in one allocation (the arena). */
#ifndef HS_MODEL_H
#define HS_MODEL_H

#include <stdint.h>
#include "config.h"
#include "safetensors.h"

typedef struct {
    /* all mixers */
    float *q_proj, *k_proj, *v_proj, *o_proj;   /* [H*dk,d] [Hkv*dk,d] [Hkv*dv,d] [d,H*dv] */
    /* gla */
    float *gk_proj0, *gk_proj1, *gk_bias;       /* [r,d] [H*dk,r] [H*dk] */
    float *g_proj;                              /* gla/gdn [H*dv,d] */
    float *g_norm;                              /* gla g_norm_swish_gate / gdn o_norm [dv] */
    /* gdn */
    float *a_proj, *b_proj, *A_log, *dt_bias;   /* [H,d] [H,d] [H] [H] */
    /* short conv: [C, 1, K] stored as [C, K] */
    float *q_conv, *k_conv, *v_conv;
} hs_mixer_weights;

typedef struct {
    float *attn_norm, *mlp_norm;                /* [d] */
    float *gate_proj, *up_proj, *down_proj;     /* [F,d] [F,d] [d,F] */
    hs_mixer_weights mix[2];
} hs_layer_weights;

typedef struct {
    hs_config cfg;
    float *embed;                               /* [V,d] */
    float *norm;                                /* [d] */
    float *lm_head;                             /* [V,d]; == embed when tied */
    hs_layer_weights layers[HS_MAX_LAYERS];
    float *arena;                               /* the one allocation */
    size_t arena_floats;
    char dir[1024];
} hs_model;

/* One tensor the config requires: name, shape, and where its fp32 data lives in the model.
 * The loader, the random initialiser and the writer all walk this one list. */
typedef struct {
    char name[192];
    int ndim;
    int64_t shape[4];
    float **slot;
    int kind;                                   /* HS_TK_* : how init fills it */
    int fan_in;
} hs_tensor_spec;

enum { HS_TK_LINEAR = 0, HS_TK_NORM, HS_TK_EMBED, HS_TK_GK_BIAS, HS_TK_A_LOG, HS_TK_DT_BIAS,
       HS_TK_CONV, HS_TK_OUT_LINEAR };

/* Returns the number of specs; fills up to cap (call with NULL/0 to count). */
int hs_model_tensor_specs(hs_model *m, hs_tensor_spec *specs, int cap);

/* Loads MODEL_DIR (config.json + safetensors). Returns 0, or -1 with one line in err. */
int hs_model_load(hs_model *m, const char *dir, char *err, size_t errlen);
/* Validates MODEL_DIR as hs_model_load does (config, safetensors, every tensor's shape;
 * unused tensors warned about) without converting weights. cfg_out may be NULL. */
int hs_model_check(const char *dir, hs_config *cfg_out, char *err, size_t errlen);
/* Allocates the arena for m->cfg (already set) and sets the pointers; weights zero. */
int hs_model_alloc(hs_model *m, char *err, size_t errlen);
void hs_model_free(hs_model *m);

/* Progress callback for hs_model_load, hs_model_init_random and hs_model_save (the CLI's
 * progress bar); process-wide, NULL = none. */
void hs_model_set_progress(hs_io_progress_fn fn, void *ctx);
void hs_model_get_progress(hs_io_progress_fn *fn, void **ctx);

/* Random weights (deterministic from seed) whose scales keep activations finite at 64K. */
void hs_model_init_random(hs_model *m, uint64_t seed);
/* Writes DIR/config.json and DIR/model.safetensors (bf16 or f32). extra_json: see config.h */
int hs_model_save(const hs_model *m, const char *dir, int bf16, const char *extra_json,
                  char *err, size_t errlen);

/* Cache/state bytes (fp32) per layer for a context of T tokens (KV cache for softmax mixers,
 * capped by the window; dk x dv state per head for gla/gdn plus conv state). */
long long hs_layer_cache_bytes(const hs_config *c, int layer, long long T);

#endif
