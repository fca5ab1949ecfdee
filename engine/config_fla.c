/* fla's `gla` and `gated_deltanet` configs -> the native dialect (see config_dialect.h).
 * Defaults are fla's (GLAConfig, GatedDeltaNetConfig); fla's tensor names are already the
 * native ones. Features the engine does not compute are rejected, naming the key. */
#include "config_dialect.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *path;
    char *err;
    size_t errlen;
    int failed;
} ctx;

static void fail(ctx *c, const char *fmt, ...) {
    if (c->failed) return;   /* keep the first problem */
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->err && c->errlen) snprintf(c->err, c->errlen, "%s: %s", c->path, msg);
    c->failed = 1;
}

/* Absent or null -> dflt. */
static double num(ctx *c, const cJSON *o, const char *key, double dflt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v)) return dflt;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
        fail(c, "'%s' must be a number", key);
        return dflt;
    }
    return v->valuedouble;
}

static int integer(ctx *c, const cJSON *o, const char *key, double dflt, double lo, double hi) {
    double d = num(c, o, key, dflt);
    if (d != floor(d) || d < lo || d > hi) {
        fail(c, "'%s' = %.17g must be an integer in [%.0f, %.0f]", key, d, lo, hi);
        return (int)lo;
    }
    return (int)d;
}

/* (int)(base x factor) for a size from an expand_* factor; out of [0, 2^24] it fails (a huge or
 * negative factor must not reach the int conversion) */
static int scaled_size(ctx *c, double base, double factor, const char *key) {
    const double x = base * factor;
    if (!(x >= 0 && x <= (double)(1 << 24))) {
        fail(c, "'%s' = %g gives a size of %g, out of [0, %d]", key, factor, x, 1 << 24);
        return 0;
    }
    return (int)x;
}

static int flag(ctx *c, const cJSON *o, const char *key, int dflt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v)) return dflt;
    if (!cJSON_IsBool(v)) {
        fail(c, "'%s' must be true or false", key);
        return dflt;
    }
    return cJSON_IsTrue(v);
}

static int is_null(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return !v || cJSON_IsNull(v);
}

static const char *str(const cJSON *o, const char *key, const char *dflt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

static int in_list(const char *key, const char *const *list) {
    for (int i = 0; list[i]; i++)
        if (!strcmp(key, list[i])) return 1;
    return 0;
}

/* Keys of fla/transformers configs that do not change what the engine computes. */
static const char *const ignored_keys[] = { "architectures", "attn_mode", "fuse_norm",
    "fuse_swiglu", "fuse_cross_entropy", "fuse_linear_cross_entropy", "use_l2warp",
    "initializer_range", "use_cache", "pad_token_id", "torch_dtype", "transformers_version",
    "_name_or_path", "output_attentions", "output_hidden_states", "return_dict", "dtype",
    "training", "auto_map", NULL };
static const char *const gla_keys[] = { "model_type", "hidden_size", "expand_k", "expand_v",
    "hidden_ratio", "intermediate_size", "num_hidden_layers", "num_heads", "num_kv_heads",
    "feature_map", "use_short_conv", "conv_size", "use_output_gate", "clamp_min", "hidden_act",
    "max_position_embeddings", "elementwise_affine", "norm_eps", "use_gk", "use_gv", "attn",
    "bos_token_id", "eos_token_id", "tie_word_embeddings", "vocab_size", "gate_low_rank_dim",
    "gate_logit_normalizer", NULL };
static const char *const gdn_keys[] = { "model_type", "hidden_size", "expand_v", "use_gate",
    "use_short_conv", "allow_neg_eigval", "conv_size", "head_dim", "num_heads", "num_v_heads",
    "max_position_embeddings", "hidden_ratio", "intermediate_size", "hidden_act",
    "num_hidden_layers", "norm_eps", "attn", "bos_token_id", "eos_token_id",
    "tie_word_embeddings", "vocab_size", NULL };
static const char *const attn_keys[] = { "layers", "num_heads", "num_kv_heads", "qkv_bias",
    "window_size", "rope_theta", NULL };

int hs_config_is_dialect(const char *model_type) {
    return !strcmp(model_type, "gla") || !strcmp(model_type, "gated_deltanet");
}

/* A softmax mixer for a layer named in the `attn` block: fla's Attention (RoPE, NeoX style;
 * a window makes it SWA; rope_theta null means no rotary embedding: NoPE). */
static cJSON *attn_mixer(ctx *c, const cJSON *attn, int d) {
    int H = integer(c, attn, "num_heads", 0, 1, 4096);
    int Hkv = integer(c, attn, "num_kv_heads", H, 1, 4096);
    if (c->failed) return NULL;
    if (d % H) { fail(c, "attn: hidden_size %d is not divisible by num_heads %d", d, H); return NULL; }
    if (flag(c, attn, "qkv_bias", 0)) { fail(c, "attn: 'qkv_bias' true is not supported"); return NULL; }
    int window = is_null(attn, "window_size") ? 0 : integer(c, attn, "window_size", 0, 1, 1 << 30);
    int nope = cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(attn, "rope_theta"));
    double theta = nope ? 0 : num(c, attn, "rope_theta", 10000.0);
    if (c->failed) return NULL;
    if (nope && window) { fail(c, "attn: a window without rotary embedding is not supported"); return NULL; }
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "type", nope ? "nope" : window ? "swa" : "rope");
    cJSON_AddNumberToObject(m, "num_heads", H);
    cJSON_AddNumberToObject(m, "num_kv_heads", Hkv);
    cJSON_AddNumberToObject(m, "head_k_dim", d / H);
    cJSON_AddNumberToObject(m, "head_v_dim", d / H);
    if (!nope) cJSON_AddNumberToObject(m, "rope_theta", theta);
    if (window) cJSON_AddNumberToObject(m, "window", window);
    return m;
}

static cJSON *gla_mixer(ctx *c, const cJSON *r, int d, double eps) {
    int H = integer(c, r, "num_heads", 4, 1, 4096);
    double ek = num(c, r, "expand_k", 0.5), ev = num(c, r, "expand_v", 1.0);
    int kd = scaled_size(c, d, ek, "expand_k"), vd = scaled_size(c, d, ev, "expand_v");
    if (c->failed) return NULL;
    if (!is_null(r, "num_kv_heads") && integer(c, r, "num_kv_heads", H, 1, 4096) != H) {
        fail(c, "'num_kv_heads' != num_heads (grouped GLA) is not supported");
        return NULL;
    }
    if (!is_null(r, "feature_map")) { fail(c, "'feature_map' is not supported (must be null)"); return NULL; }
    if (!is_null(r, "clamp_min")) { fail(c, "'clamp_min' is not supported (must be null)"); return NULL; }
    if (!flag(c, r, "use_output_gate", 1)) { fail(c, "'use_output_gate' false is not supported"); return NULL; }
    if (!flag(c, r, "use_gk", 1) || flag(c, r, "use_gv", 0)) {
        fail(c, "only use_gk true and use_gv false are supported");
        return NULL;
    }
    if (!flag(c, r, "elementwise_affine", 1)) { fail(c, "'elementwise_affine' false is not supported"); return NULL; }
    if (kd < H || vd < H || kd % H || vd % H) {
        fail(c, "key dim %d / value dim %d (hidden_size x expand_k / expand_v) not divisible into %d heads", kd, vd, H);
        return NULL;
    }
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "type", "gla");
    cJSON_AddNumberToObject(m, "num_heads", H);
    cJSON_AddNumberToObject(m, "head_k_dim", kd / H);
    cJSON_AddNumberToObject(m, "head_v_dim", vd / H);
    cJSON_AddNumberToObject(m, "gate_low_rank_dim", integer(c, r, "gate_low_rank_dim", 16, 1, 1 << 20));
    cJSON_AddNumberToObject(m, "gate_logit_normalizer", num(c, r, "gate_logit_normalizer", 16));
    cJSON_AddBoolToObject(m, "use_short_conv", flag(c, r, "use_short_conv", 0));
    cJSON_AddNumberToObject(m, "conv_size", integer(c, r, "conv_size", 4, 1, 256));
    cJSON_AddNumberToObject(m, "norm_eps", eps);
    return m;
}

static cJSON *gdn_mixer(ctx *c, const cJSON *r, double eps) {
    int H = integer(c, r, "num_heads", 6, 1, 4096);
    int dk = integer(c, r, "head_dim", 256, 1, 65536);
    double ev = num(c, r, "expand_v", 2.0);
    if (c->failed) return NULL;
    int dv = scaled_size(c, dk, ev, "expand_v");
    if (!is_null(r, "num_v_heads") && integer(c, r, "num_v_heads", H, 1, 4096) != H) {
        fail(c, "'num_v_heads' != num_heads is not supported");
        return NULL;
    }
    if (!flag(c, r, "use_gate", 1)) { fail(c, "'use_gate' false is not supported"); return NULL; }
    if (dv < 1) { fail(c, "head_dim x expand_v = %d is not a positive size", dv); return NULL; }
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "type", "gdn");
    cJSON_AddNumberToObject(m, "num_heads", H);
    cJSON_AddNumberToObject(m, "head_k_dim", dk);
    cJSON_AddNumberToObject(m, "head_v_dim", dv);
    cJSON_AddBoolToObject(m, "use_short_conv", flag(c, r, "use_short_conv", 1));
    cJSON_AddNumberToObject(m, "conv_size", integer(c, r, "conv_size", 4, 1, 256));
    cJSON_AddBoolToObject(m, "allow_neg_eigval", flag(c, r, "allow_neg_eigval", 0));
    cJSON_AddNumberToObject(m, "norm_eps", eps);
    return m;
}

cJSON *hs_config_translate(const cJSON *r, const char *path, char *err, size_t errlen) {
    ctx c = { path, err, errlen, 0 };
    int gla = !strcmp(str(r, "model_type", ""), "gla");
    const char *const *known = gla ? gla_keys : gdn_keys;
    for (const cJSON *it = r->child; it; it = it->next)
        if (it->string && !in_list(it->string, known) && !in_list(it->string, ignored_keys))
            fprintf(stderr, "%s: warning: unknown key '%s' (ignored)\n", path, it->string);

    int d = integer(&c, r, "hidden_size", 2048, 1, 1 << 20);
    int L = integer(&c, r, "num_hidden_layers", gla ? 24 : 21, 1, 256);
    double eps = num(&c, r, "norm_eps", 1e-6);
    int hr = integer(&c, r, "hidden_ratio", 4, 1, 1024);
    int F = is_null(r, "intermediate_size") ? 0 : integer(&c, r, "intermediate_size", 0, 1, 1 << 20);
    if (!F) F = 256 * (((int)(d * hr * 2.0 / 3) + 255) / 256);   /* fla's GatedMLP default */
    if (strcmp(str(r, "hidden_act", "swish"), "swish")) fail(&c, "'hidden_act' must be \"swish\"");
    const cJSON *attn = cJSON_GetObjectItemCaseSensitive(r, "attn");
    if (attn && !cJSON_IsNull(attn)) {
        if (!cJSON_IsObject(attn)) fail(&c, "'attn' must be an object");
        else {
            for (const cJSON *it = attn->child; it; it = it->next)
                if (it->string && !in_list(it->string, attn_keys))
                    fprintf(stderr, "%s: attn: warning: unknown key '%s' (ignored)\n", path, it->string);
            const cJSON *ls = cJSON_GetObjectItemCaseSensitive(attn, "layers");
            if (!cJSON_IsArray(ls)) fail(&c, "attn: missing 'layers' (a list of layer indices)");
            else
                for (const cJSON *it = ls->child; it && !c.failed; it = it->next)
                    if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) ||
                        it->valuedouble < 0 || it->valuedouble >= L)
                        fail(&c, "attn: layers: %g is not a layer index in [0, %d)",
                             cJSON_IsNumber(it) ? it->valuedouble : -1.0, L);
            if (!cJSON_GetObjectItemCaseSensitive(attn, "num_heads")) fail(&c, "attn: missing 'num_heads'");
        }
    } else {
        attn = NULL;
    }
    if (c.failed) return NULL;

    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model_type", "hybrid");
    cJSON_AddNumberToObject(o, "vocab_size", integer(&c, r, "vocab_size", 32000, 1, 1 << 24));
    cJSON_AddNumberToObject(o, "hidden_size", d);
    cJSON_AddNumberToObject(o, "intermediate_size", F);
    cJSON_AddNumberToObject(o, "num_hidden_layers", L);
    cJSON_AddNumberToObject(o, "norm_eps", eps);
    cJSON_AddBoolToObject(o, "tie_word_embeddings", flag(&c, r, "tie_word_embeddings", 0));
    /* fla configs carry no training length; max_position_embeddings is the closest. */
    cJSON_AddNumberToObject(o, "train_context", integer(&c, r, "max_position_embeddings", 2048, 1, 1 << 30));
    cJSON *tok = cJSON_AddObjectToObject(o, "tokenizer");
    cJSON_AddStringToObject(tok, "type", "hf");
    cJSON_AddNumberToObject(tok, "bos_id", is_null(r, "bos_token_id") ? 1 : integer(&c, r, "bos_token_id", 1, 0, 1 << 24));
    cJSON_AddNumberToObject(tok, "eos_id", is_null(r, "eos_token_id") ? 2 : integer(&c, r, "eos_token_id", 2, 0, 1 << 24));
    cJSON *layers = cJSON_AddArrayToObject(o, "layers");
    for (int i = 0; i < L && !c.failed; i++) {
        int is_attn = 0;
        if (attn)
            for (const cJSON *it = cJSON_GetObjectItemCaseSensitive(attn, "layers")->child; it; it = it->next)
                is_attn |= (int)it->valuedouble == i;
        cJSON *m = is_attn ? attn_mixer(&c, attn, d) : gla ? gla_mixer(&c, r, d, eps) : gdn_mixer(&c, r, eps);
        if (!m) break;
        cJSON *l = cJSON_CreateObject();
        cJSON_AddItemToArray(cJSON_AddArrayToObject(l, "mixers"), m);
        cJSON_AddItemToArray(layers, l);
    }
    if (c.failed) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}
