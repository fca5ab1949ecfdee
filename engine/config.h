/* config.json (native dialect, model-spec section 2) as a plain struct. */
#ifndef HS_CONFIG_H
#define HS_CONFIG_H

#include <stddef.h>

#define HS_MAX_LAYERS 256
#define HS_ERR_LEN 512

typedef enum { HS_NOPE = 0, HS_ROPE, HS_SWA, HS_GLA, HS_GDN, HS_MIXER_TYPES } hs_mixer_type;

typedef struct {
    hs_mixer_type type;
    int num_heads;
    int num_kv_heads;          /* softmax types; gla/gdn: == num_heads */
    int head_k_dim, head_v_dim;
    float rope_theta;          /* rope, swa */
    int window;                /* swa: keys including the query itself */
    int gate_low_rank_dim;     /* gla */
    float gate_logit_normalizer; /* gla */
    int use_short_conv;        /* gla (default 0), gdn (default 1) */
    int conv_size;
    float norm_eps;            /* gla g_norm_swish_gate, gdn o_norm */
    int allow_neg_eigval;      /* gdn */
} hs_mixer_config;

typedef struct {
    int n_mixers;              /* 1 = LH layer, 2 = HH layer (biased mixer, then nope) */
    hs_mixer_config mixers[2];
} hs_layer_config;

/* What a checkpoint's optional "training" block records (the training recipe's record, not the
 * contract's: shown by the model view, never used to compute). A field that is absent or not
 * of the expected kind stays "not recorded". */
typedef struct {
    int present;               /* the block exists */
    int has_steps;
    long long steps;           /* total optimizer steps */
    int phases;                /* training phases (restarts); 0: not recorded */
    int shares;                /* which of the last phase's data shares are recorded: bit 0
                                * p_needle, bit 1 p_kv, bit 2 p_copy (all zero: nothing recorded,
                                * so a config without the block equals a zeroed one) */
    double p_needle, p_kv, p_copy;
} hs_training_info;

typedef struct {
    int vocab_size, hidden_size, intermediate_size, num_layers, head_dim;
    float norm_eps;
    int tie_word_embeddings;
    int train_context;         /* L0 */
    int bos_id, eos_id;
    char tokenizer_type[16];   /* "bytes" */
    hs_layer_config layers[HS_MAX_LAYERS];
    hs_training_info training;
} hs_config;

const char *hs_mixer_type_name(hs_mixer_type t);      /* "nope", "rope", ... */
const char *hs_mixer_type_label(hs_mixer_type t);     /* "NoPE", "RoPE", "SWA", "GLA", "GDN" */
int hs_mixer_type_parse(const char *s);               /* -1 if unknown */
int hs_mixer_is_softmax(hs_mixer_type t);             /* nope, rope, swa */

/* Fills defaults for one mixer of the given type (spec section 2). head_dim is the model's. */
void hs_mixer_config_defaults(hs_mixer_config *m, hs_mixer_type t, int head_dim);

/* Parses config.json text. `path` is only used in messages. Warnings (unknown keys) go to
 * stderr prefixed with the path. Returns 0, or -1 with a one-line message in err. */
int hs_config_parse(hs_config *out, const char *json, size_t len, const char *path,
                    char *err, size_t errlen);
int hs_config_load(hs_config *out, const char *path, char *err, size_t errlen);

/* Serialises to config.json text (malloc'd). `extra_json` (may be NULL) is a JSON object
 * whose members are appended at top level (e.g. "training"). */
char *hs_config_to_json(const hs_config *c, const char *extra_json);

/* One line for people, e.g. "trained 17,020 steps in 9 phases; needles 0.6, key-value 0.3,
 * copy 0" (the model view and `info`). Returns 0 and writes "" when nothing is recorded. */
int hs_training_describe(char *out, size_t n, const hs_training_info *t);

/* Counts over the whole model. */
long long hs_config_param_count(const hs_config *c);
int hs_config_total_heads(const hs_config *c, int *biased, int *nope);

#endif
