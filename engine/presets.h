/* Building an hs_config from a preset and/or command-line flags (`hybridscope init`, tests,
 * benchmarks). Flags override preset values whatever their order on the command line. */
#ifndef HS_PRESETS_H
#define HS_PRESETS_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"

/* Every field -1 (or NULL) = not given: the preset's value, else the default, applies. */
typedef struct {
    const char *preset;        /* tiny, small, 376m, 776m, 1b, 3b; NULL = small */
    int efficient;             /* hs_mixer_type; default gla */
    int layout_hh;             /* 0 = LH (default), 1 = HH */
    int ratio_a, ratio_b;      /* efficient : NoPE; default 3:1 */
    int hidden, layers, heads, kv_heads, head_dim, ffn, vocab, window, train_context;
    int short_conv;            /* gla/gdn use_short_conv; default: the type's default */
    int tied;                  /* tie_word_embeddings; default 0 */
    float rope_theta;          /* default 10000 */
    long long seed;            /* default 0 */
    int bf16;                  /* checkpoint dtype; default bf16 for paper presets, else f32 */
} hs_preset_args;

void hs_preset_args_init(hs_preset_args *a);

/* Parses one model-shape flag at argv[*i]: --preset --efficient --layout --ratio --hidden
 * --layers --heads --kv-heads --head-dim --ffn --vocab --window --train-context --rope-theta
 * --seed --dtype --short-conv --no-short-conv --tied --untied. Returns 1 and advances *i past
 * its value when it is one, 0 when it is not, -1 with a message naming the flag on a bad value. */
int hs_preset_parse_arg(hs_preset_args *a, int argc, char **argv, int *i, char *err, size_t errlen);

/* Builds the config. Returns 0, or -1 with one line (naming the flag) in err. */
int hs_preset_build(hs_config *out, const hs_preset_args *a, char *err, size_t errlen);

/* Resolved values that the config does not hold. */
uint64_t hs_preset_seed(const hs_preset_args *a);
int hs_preset_bf16(const hs_preset_args *a);

/* Names of the presets, NULL-terminated, and help text for the flags. */
extern const char *const hs_preset_names[];
extern const char hs_preset_help[];

#endif
