/* Model shapes from presets and flags: layer-wise (LH) and head-wise (HH) hybrids at a
 * given efficient:NoPE ratio. */
#include "presets.h"
#include "flag_values.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    int hidden, layers, heads, head_dim, ffn, vocab, train_context, paper;
} preset;

static const preset presets[] = {
    { "tiny", 64, 4, 4, 16, 128, 258, 1024, 0 },
    { "small", 256, 8, 4, 64, 768, 258, 1024, 0 },
    { "376m", 1024, 8, 8, 128, 3584, 128256, 4096, 1 },
    { "776m", 1536, 12, 12, 128, 5376, 128256, 4096, 1 },
    { "1b", 2048, 16, 16, 128, 7168, 128256, 4096, 1 },
    { "3b", 3072, 24, 24, 128, 10752, 128256, 4096, 1 },
};
#define N_PRESETS (int)(sizeof presets / sizeof presets[0])

const char *const hs_preset_names[] = { "tiny", "small", "376m", "776m", "1b", "3b", NULL };

const char hs_preset_help[] =
    "  --preset NAME          tiny (hidden 64, 4 layers), small (256, 8; the default),\n"
    "                         376m 776m 1b 3b (the paper's shapes, vocab 128256, L0 4096)\n"
    "  --efficient TYPE       gla (default), gdn, swa, rope, or nope (an all-NoPE model)\n"
    "  --layout LH|HH         layer-wise (default) or head-wise hybrid\n"
    "  --ratio A:B            efficient:NoPE, default 3:1 (LH: A efficient layers then B NoPE\n"
    "                         layers, repeated; HH: per layer A/(A+B) of the heads efficient);\n"
    "                         1:0 = no NoPE heads\n"
    "  --hidden N --layers N --heads N --kv-heads N --head-dim N --ffn N --vocab N\n"
    "  --window W             swa window (default 128)\n"
    "  --train-context L0     default 4096 for the paper presets, 1024 otherwise\n"
    "  --rope-theta X         default 10000\n"
    "  --short-conv / --no-short-conv   short convolutions in gla/gdn (default off / on)\n"
    "  --tied / --untied      tie the LM head to the embeddings (default untied)\n"
    "  --seed N               random init seed (default 0)\n"
    "  --dtype bf16|f32       checkpoint dtype (default bf16 for paper presets, else f32)\n";

void hs_preset_args_init(hs_preset_args *a) {
    memset(a, 0, sizeof *a);
    a->preset = NULL;
    a->efficient = a->layout_hh = a->ratio_a = a->ratio_b = -1;
    a->hidden = a->layers = a->heads = a->kv_heads = a->head_dim = a->ffn = a->vocab = -1;
    a->window = a->train_context = a->short_conv = a->tied = a->bf16 = -1;
    a->rope_theta = -1;
    a->seed = -1;
}

static int errf(char *err, size_t errlen, const char *fmt, const char *flag, const char *val) {
    snprintf(err, errlen, fmt, flag, val);
    return -1;
}

/* Positive integer with an optional binary suffix: 1k = 1024, 64K = 65536, 2m = 2097152. */
static int parse_pos(const char *s, int *out) {
    long long v = hs_value_count(s);
    if (v <= 0 || v > INT_MAX) return -1;
    *out = (int)v;
    return 0;
}

static const preset *find_preset(const char *name) {
    for (int i = 0; i < N_PRESETS; i++)
        if (!strcmp(presets[i].name, name)) return &presets[i];
    return NULL;
}

int hs_preset_parse_arg(hs_preset_args *a, int argc, char **argv, int *i, char *err, size_t errlen) {
    const char *arg = argv[*i];
    if (strncmp(arg, "--", 2)) return 0;
    /* flags without a value */
    if (!strcmp(arg, "--short-conv")) { a->short_conv = 1; return 1; }
    if (!strcmp(arg, "--no-short-conv")) { a->short_conv = 0; return 1; }
    if (!strcmp(arg, "--tied")) { a->tied = 1; return 1; }
    if (!strcmp(arg, "--untied")) { a->tied = 0; return 1; }

    static const char *const valued[] = { "--preset", "--efficient", "--layout", "--ratio",
        "--hidden", "--layers", "--heads", "--kv-heads", "--head-dim", "--ffn", "--vocab",
        "--window", "--train-context", "--rope-theta", "--seed", "--dtype", NULL };
    /* --flag VALUE or --flag=VALUE */
    char flag[32];
    const char *val = NULL;
    const char *eq = strchr(arg, '=');
    size_t fl = eq ? (size_t)(eq - arg) : strlen(arg);
    if (fl >= sizeof flag) return 0;
    memcpy(flag, arg, fl);
    flag[fl] = 0;
    int known = 0;
    for (int k = 0; valued[k] && !known; k++) known = !strcmp(flag, valued[k]);
    if (!known) return 0;
    if (eq) val = eq + 1;
    else if (*i + 1 < argc) val = argv[++*i];
    else return errf(err, errlen, "%s needs a value%s", flag, "");

    if (!strcmp(flag, "--preset")) {
        if (!find_preset(val))
            return errf(err, errlen, "%s: unknown preset '%s' (tiny, small, 376m, 776m, 1b, 3b)", flag, val);
        a->preset = val;
    } else if (!strcmp(flag, "--efficient")) {
        int t = hs_mixer_type_parse(val);
        if (t < 0) return errf(err, errlen, "%s: unknown type '%s' (gla, gdn, swa, rope, nope)", flag, val);
        a->efficient = t;
    } else if (!strcmp(flag, "--layout")) {
        if (!strcmp(val, "LH") || !strcmp(val, "lh")) a->layout_hh = 0;
        else if (!strcmp(val, "HH") || !strcmp(val, "hh")) a->layout_hh = 1;
        else return errf(err, errlen, "%s: '%s' is not LH or HH", flag, val);
    } else if (!strcmp(flag, "--ratio")) {
        const char *colon = strchr(val, ':');
        char left[16];
        long long x = -1, y = -1;
        if (colon && (size_t)(colon - val) < sizeof left) {
            memcpy(left, val, (size_t)(colon - val));
            left[colon - val] = 0;
            x = hs_value_count(left);
            y = hs_value_count(colon + 1);
        }
        if (x < 0 || y < 0 || x + y == 0 || x > 1000 || y > 1000)
            return errf(err, errlen, "%s: '%s' is not A:B with A, B >= 0 (e.g. 3:1, 1:0)", flag, val);
        a->ratio_a = (int)x;
        a->ratio_b = (int)y;
    } else if (!strcmp(flag, "--dtype")) {
        if (!strcmp(val, "bf16")) a->bf16 = 1;
        else if (!strcmp(val, "f32")) a->bf16 = 0;
        else return errf(err, errlen, "%s: '%s' is not bf16 or f32", flag, val);
    } else if (!strcmp(flag, "--rope-theta")) {
        char *end;
        double v = strtod(val, &end);
        if (end == val || *end || !(v > 0) || v > 1e30)
            return errf(err, errlen, "%s: '%s' is not a positive number", flag, val);
        a->rope_theta = (float)v;
    } else if (!strcmp(flag, "--seed")) {
        char *end;
        errno = 0;
        long long v = strtoll(val, &end, 10);
        if (end == val || *end || errno || v < 0)
            return errf(err, errlen, "%s: '%s' is not a non-negative integer", flag, val);
        a->seed = v;
    } else {
        int v;
        if (parse_pos(val, &v) < 0)
            return errf(err, errlen, "%s: '%s' is not a positive integer", flag, val);
        if (!strcmp(flag, "--hidden")) a->hidden = v;
        else if (!strcmp(flag, "--layers")) a->layers = v;
        else if (!strcmp(flag, "--heads")) a->heads = v;
        else if (!strcmp(flag, "--kv-heads")) a->kv_heads = v;
        else if (!strcmp(flag, "--head-dim")) a->head_dim = v;
        else if (!strcmp(flag, "--ffn")) a->ffn = v;
        else if (!strcmp(flag, "--vocab")) a->vocab = v;
        else if (!strcmp(flag, "--window")) a->window = v;
        else a->train_context = v;
    }
    return 1;
}

static const preset *preset_of(const hs_preset_args *a) {
    const preset *p = a->preset ? find_preset(a->preset) : NULL;
    return p ? p : find_preset("small");
}

uint64_t hs_preset_seed(const hs_preset_args *a) { return a->seed >= 0 ? (uint64_t)a->seed : 0; }

int hs_preset_bf16(const hs_preset_args *a) { return a->bf16 >= 0 ? a->bf16 : preset_of(a)->paper; }

#define PICK(flag, pre) ((flag) >= 0 ? (flag) : (pre))

static int make_mixer(hs_mixer_config *m, hs_mixer_type t, int heads, int head_dim,
                      const hs_preset_args *a, char *err, size_t errlen) {
    hs_mixer_config_defaults(m, t, head_dim);
    m->num_heads = heads;
    m->num_kv_heads = heads;
    if (a->rope_theta > 0) m->rope_theta = a->rope_theta;
    if (t == HS_SWA) m->window = PICK(a->window, 128);
    if ((t == HS_GLA || t == HS_GDN) && a->short_conv >= 0) m->use_short_conv = a->short_conv;
    if (hs_mixer_is_softmax(t) && a->kv_heads > 0) {
        if (heads % a->kv_heads) {
            snprintf(err, errlen, "--kv-heads %d does not divide the %d heads of a %s mixer",
                     a->kv_heads, heads, hs_mixer_type_name(t));
            return -1;
        }
        m->num_kv_heads = a->kv_heads;
    }
    return 0;
}

int hs_preset_build(hs_config *c, const hs_preset_args *a, char *err, size_t errlen) {
    const preset *p = preset_of(a);
    memset(c, 0, sizeof *c);
    c->hidden_size = PICK(a->hidden, p->hidden);
    c->num_layers = PICK(a->layers, p->layers);
    c->head_dim = PICK(a->head_dim, p->head_dim);
    c->intermediate_size = PICK(a->ffn, p->ffn);
    c->vocab_size = PICK(a->vocab, p->vocab);
    c->train_context = PICK(a->train_context, p->train_context);
    c->norm_eps = 1e-6f;
    c->tie_word_embeddings = PICK(a->tied, 0);
    c->bos_id = 256;
    c->eos_id = 257;
    strcpy(c->tokenizer_type, "bytes");
    int heads = PICK(a->heads, p->heads);
    hs_mixer_type eff = (hs_mixer_type)PICK(a->efficient, HS_GLA);
    int hh = PICK(a->layout_hh, 0);
    int ra = PICK(a->ratio_a, 3), rb = PICK(a->ratio_b, 1);
    if (eff == HS_NOPE) { ra = 0; rb = 1; }
    if (c->num_layers > HS_MAX_LAYERS) {
        snprintf(err, errlen, "--layers %d: at most %d layers", c->num_layers, HS_MAX_LAYERS);
        return -1;
    }
    if (c->vocab_size < 258) {   /* the byte tokenizer: ids 0..255, BOS 256, EOS 257 */
        snprintf(err, errlen, "--vocab %d: the byte tokenizer needs at least 258 ids", c->vocab_size);
        return -1;
    }
    int he = heads, hn = 0;
    if (hh) {
        if ((long long)heads * ra % (ra + rb)) {
            snprintf(err, errlen, "--ratio %d:%d with --layout HH needs --heads divisible into %d:%d (got %d heads)",
                     ra, rb, ra, rb, heads);
            return -1;
        }
        he = (int)((long long)heads * ra / (ra + rb));
        hn = heads - he;
    }
    for (int i = 0; i < c->num_layers; i++) {
        hs_layer_config *l = &c->layers[i];
        if (!hh) {
            hs_mixer_type t = (i % (ra + rb)) < ra ? eff : HS_NOPE;
            l->n_mixers = 1;
            if (make_mixer(&l->mixers[0], t, heads, c->head_dim, a, err, errlen) < 0) return -1;
        } else if (he == 0 || hn == 0) {
            l->n_mixers = 1;
            if (make_mixer(&l->mixers[0], he ? eff : HS_NOPE, heads, c->head_dim, a, err, errlen) < 0)
                return -1;
        } else {
            l->n_mixers = 2;
            if (make_mixer(&l->mixers[0], eff, he, c->head_dim, a, err, errlen) < 0 ||
                make_mixer(&l->mixers[1], HS_NOPE, hn, c->head_dim, a, err, errlen) < 0)
                return -1;
        }
    }
    /* Round trip through the checkpoint format: the same validation a loaded config gets. */
    char *json = hs_config_to_json(c, NULL);
    if (!json) { snprintf(err, errlen, "out of memory"); return -1; }
    int rc = hs_config_parse(c, json, strlen(json), "the model flags", err, errlen);
    free(json);
    return rc;
}
