/* config.json (native dialect, model-spec section 2): parsing with cJSON, validation,
 * serialisation, and counts derived from the config. */
#include "config.h"
#include "config_dialect.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upper bounds keep every derived size inside int64 and reject absurd (or fuzzed) configs
 * before anything tries to allocate for them. */
#define MAX_DIM      (1 << 20)
#define MAX_VOCAB    (1 << 24)
#define MAX_HEADS    4096
#define MAX_HEAD_DIM 65536
#define MAX_CONV     256
#define MAX_CONTEXT  (1 << 30)

static const char *type_names[HS_MIXER_TYPES] = { "nope", "rope", "swa", "gla", "gdn" };
static const char *type_labels[HS_MIXER_TYPES] = { "NoPE", "RoPE", "SWA", "GLA", "GDN" };

const char *hs_mixer_type_name(hs_mixer_type t) {
    return (unsigned)t < HS_MIXER_TYPES ? type_names[t] : "?";
}

const char *hs_mixer_type_label(hs_mixer_type t) {
    return (unsigned)t < HS_MIXER_TYPES ? type_labels[t] : "?";
}

int hs_mixer_type_parse(const char *s) {
    for (int i = 0; i < HS_MIXER_TYPES; i++)
        if (!strcmp(s, type_names[i])) return i;
    return -1;
}

int hs_mixer_is_softmax(hs_mixer_type t) { return t == HS_NOPE || t == HS_ROPE || t == HS_SWA; }

void hs_mixer_config_defaults(hs_mixer_config *m, hs_mixer_type t, int head_dim) {
    memset(m, 0, sizeof *m);
    m->type = t;
    m->head_k_dim = head_dim;
    m->head_v_dim = head_dim;
    m->rope_theta = 10000.0f;
    m->gate_low_rank_dim = 16;
    m->gate_logit_normalizer = 16.0f;
    m->use_short_conv = (t == HS_GDN);
    m->conv_size = 4;
    m->norm_eps = 1e-5f;
}

/* ---- parsing helpers: every failure writes "PATH: WHERE: problem" ---------------------- */

typedef struct {
    const char *path;
    char *err;
    size_t errlen;
} ctx;

static int fail(ctx *c, const char *where, const char *fmt, ...) {
    char msg[HS_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->err && c->errlen) {
        if (where && where[0]) snprintf(c->err, c->errlen, "%s: %s: %s", c->path, where, msg);
        else snprintf(c->err, c->errlen, "%s: %s", c->path, msg);
    }
    return -1;
}

static void warn_unknown(ctx *c, const char *where, const char *key, const char *why) {
    if (where && where[0])
        fprintf(stderr, "%s: %s: warning: %s key '%s' (ignored)\n", c->path, where, why, key);
    else
        fprintf(stderr, "%s: warning: %s key '%s' (ignored)\n", c->path, why, key);
}

static int in_list(const char *key, const char *const *list) {
    for (int i = 0; list[i]; i++)
        if (!strcmp(key, list[i])) return 1;
    return 0;
}

/* Integer member in [lo, hi]. Returns 1 when present and valid, 0 when absent, -1 on error. */
static int get_int(ctx *c, const cJSON *obj, const char *where, const char *key, long long lo,
                   long long hi, int *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble))
        return fail(c, where, "'%s' must be an integer", key);
    double d = v->valuedouble;
    if (d < (double)lo || d > (double)hi)
        return fail(c, where, "'%s' = %.17g is out of range [%lld, %lld]", key, d, lo, hi);
    *out = (int)d;
    return 1;
}

static int get_required_int(ctx *c, const cJSON *obj, const char *where, const char *key,
                            long long lo, long long hi, int *out) {
    int r = get_int(c, obj, where, key, lo, hi, out);
    if (r == 0) return fail(c, where, "missing required key '%s'", key);
    return r;
}

/* Positive finite float member. */
static int get_pos_float(ctx *c, const cJSON *obj, const char *where, const char *key, float *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v)) return fail(c, where, "'%s' must be a number", key);
    double d = v->valuedouble;
    if (!(d > 0) || !isfinite(d) || d > 3.4e38 || (float)d <= 0.0f)
        return fail(c, where, "'%s' must be a positive finite number (got %.17g)", key, d);
    *out = (float)d;
    return 1;
}

/* Boolean member (true/false, or 0/1). */
static int get_bool(ctx *c, const cJSON *obj, const char *where, const char *key, int *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) return 0;
    if (cJSON_IsBool(v)) { *out = cJSON_IsTrue(v) ? 1 : 0; return 1; }
    if (cJSON_IsNumber(v) && (v->valuedouble == 0 || v->valuedouble == 1)) {
        *out = v->valuedouble != 0;
        return 1;
    }
    return fail(c, where, "'%s' must be true or false", key);
}

/* ---- mixers --------------------------------------------------------------------------- */

static const char *const mixer_common_keys[] = { "type", "num_heads", "head_k_dim", "head_v_dim", NULL };
static const char *const mixer_softmax_keys[] = { "num_kv_heads", NULL };
static const char *const mixer_rope_keys[] = { "rope_theta", NULL };
static const char *const mixer_swa_keys[] = { "window", NULL };
static const char *const mixer_gla_keys[] = { "gate_low_rank_dim", "gate_logit_normalizer",
                                              "use_short_conv", "conv_size", "norm_eps", NULL };
static const char *const mixer_gdn_keys[] = { "use_short_conv", "conv_size", "allow_neg_eigval",
                                              "norm_eps", NULL };
static const char *const mixer_all_keys[] = { "type", "num_heads", "head_k_dim", "head_v_dim",
    "num_kv_heads", "rope_theta", "window", "gate_low_rank_dim", "gate_logit_normalizer",
    "use_short_conv", "conv_size", "norm_eps", "allow_neg_eigval", NULL };

static int key_applies(hs_mixer_type t, const char *key) {
    if (in_list(key, mixer_common_keys)) return 1;
    if (hs_mixer_is_softmax(t) && in_list(key, mixer_softmax_keys)) return 1;
    if ((t == HS_ROPE || t == HS_SWA) && in_list(key, mixer_rope_keys)) return 1;
    if (t == HS_SWA && in_list(key, mixer_swa_keys)) return 1;
    if (t == HS_GLA && in_list(key, mixer_gla_keys)) return 1;
    if (t == HS_GDN && in_list(key, mixer_gdn_keys)) return 1;
    return 0;
}

static int parse_mixer(ctx *c, const cJSON *jm, const char *where, int head_dim,
                       hs_mixer_config *m) {
    if (!cJSON_IsObject(jm)) return fail(c, where, "a mixer must be a JSON object");
    const cJSON *jt = cJSON_GetObjectItemCaseSensitive(jm, "type");
    if (!jt) return fail(c, where, "missing required key 'type'");
    if (!cJSON_IsString(jt)) return fail(c, where, "'type' must be a string");
    int t = hs_mixer_type_parse(jt->valuestring);
    if (t < 0)
        return fail(c, where, "unknown mixer type '%.64s' (expected nope, rope, swa, gla or gdn)",
                    jt->valuestring);
    hs_mixer_config_defaults(m, (hs_mixer_type)t, head_dim);

    for (const cJSON *it = jm->child; it; it = it->next) {
        if (!it->string) continue;
        if (!in_list(it->string, mixer_all_keys)) warn_unknown(c, where, it->string, "unknown");
        else if (!key_applies((hs_mixer_type)t, it->string))
            warn_unknown(c, where, it->string, jt->valuestring);
    }

    if (get_required_int(c, jm, where, "num_heads", 1, MAX_HEADS, &m->num_heads) < 0) return -1;
    m->num_kv_heads = m->num_heads;
    if (hs_mixer_is_softmax(m->type)) {
        if (get_int(c, jm, where, "num_kv_heads", 1, MAX_HEADS, &m->num_kv_heads) < 0) return -1;
        if (m->num_heads % m->num_kv_heads != 0)
            return fail(c, where, "num_heads (%d) is not divisible by num_kv_heads (%d)",
                        m->num_heads, m->num_kv_heads);
    }
    int rk = get_int(c, jm, where, "head_k_dim", 1, MAX_HEAD_DIM, &m->head_k_dim);
    if (rk < 0) return -1;
    int rv = get_int(c, jm, where, "head_v_dim", 1, MAX_HEAD_DIM, &m->head_v_dim);
    if (rv < 0) return -1;
    if (head_dim <= 0 && (rk == 0 || rv == 0))
        return fail(c, where, "missing required key '%s' (the config has no head_dim)",
                    rk == 0 ? "head_k_dim" : "head_v_dim");

    if (m->type == HS_ROPE || m->type == HS_SWA) {
        if (get_pos_float(c, jm, where, "rope_theta", &m->rope_theta) < 0) return -1;
        if (m->head_k_dim % 2 != 0)
            return fail(c, where, "%s needs an even head_k_dim for the rotary embedding (got %d)",
                        jt->valuestring, m->head_k_dim);
    }
    if (m->type == HS_SWA &&
        get_required_int(c, jm, where, "window", 1, MAX_CONTEXT, &m->window) < 0)
        return -1;
    if (m->type == HS_GLA) {
        if (get_int(c, jm, where, "gate_low_rank_dim", 1, MAX_DIM, &m->gate_low_rank_dim) < 0 ||
            get_pos_float(c, jm, where, "gate_logit_normalizer", &m->gate_logit_normalizer) < 0)
            return -1;
    }
    if (m->type == HS_GLA || m->type == HS_GDN) {
        if (get_bool(c, jm, where, "use_short_conv", &m->use_short_conv) < 0 ||
            get_int(c, jm, where, "conv_size", 1, MAX_CONV, &m->conv_size) < 0 ||
            get_pos_float(c, jm, where, "norm_eps", &m->norm_eps) < 0)
            return -1;
    }
    if (m->type == HS_GDN && get_bool(c, jm, where, "allow_neg_eigval", &m->allow_neg_eigval) < 0)
        return -1;
    return 0;
}

static int parse_layer(ctx *c, const cJSON *jl, int i, int head_dim, hs_layer_config *l) {
    char where[64];
    snprintf(where, sizeof where, "layers[%d]", i);
    if (!cJSON_IsObject(jl)) return fail(c, where, "a layer must be a JSON object");
    for (const cJSON *it = jl->child; it; it = it->next)
        if (it->string && strcmp(it->string, "mixers")) warn_unknown(c, where, it->string, "unknown");
    const cJSON *jm = cJSON_GetObjectItemCaseSensitive(jl, "mixers");
    if (!jm) return fail(c, where, "missing required key 'mixers'");
    if (!cJSON_IsArray(jm)) return fail(c, where, "'mixers' must be an array");
    int n = cJSON_GetArraySize(jm);
    if (n < 1) return fail(c, where, "'mixers' is empty (one mixer, or two for a head-wise hybrid layer)");
    if (n > 2) return fail(c, where, "%d mixers; a layer has one mixer, or two (head-wise hybrid)", n);
    l->n_mixers = n;
    int k = 0;
    for (const cJSON *it = jm->child; it; it = it->next, k++) {
        char mw[96];
        snprintf(mw, sizeof mw, "%s.mixers[%d]", where, k);
        if (parse_mixer(c, it, mw, head_dim, &l->mixers[k]) < 0) return -1;
    }
    if (n == 2) {
        hs_mixer_type a = l->mixers[0].type, b = l->mixers[1].type;
        if (a == HS_NOPE)
            return fail(c, where, "a head-wise hybrid layer's first mixer must be rope, swa, gla or gdn (got nope)");
        if (b != HS_NOPE)
            return fail(c, where, "a head-wise hybrid layer's second mixer must be nope (got %s)",
                        hs_mixer_type_name(b));
    }
    return 0;
}

static const char *const top_keys[] = { "model_type", "vocab_size", "hidden_size",
    "intermediate_size", "num_hidden_layers", "head_dim", "norm_eps", "tie_word_embeddings",
    "train_context", "tokenizer", "layers", NULL };
/* Known keys that the engine does not read: recorded by the training recipe. */
static const char *const top_ignored_keys[] = { "training", NULL };

static int parse_tokenizer(ctx *c, const cJSON *jt, hs_config *o) {
    const char *where = "tokenizer";
    if (!cJSON_IsObject(jt)) return fail(c, where, "must be a JSON object");
    for (const cJSON *it = jt->child; it; it = it->next)
        if (it->string && strcmp(it->string, "type") && strcmp(it->string, "bos_id") &&
            strcmp(it->string, "eos_id"))
            warn_unknown(c, where, it->string, "unknown");
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(jt, "type");
    if (ty) {
        if (!cJSON_IsString(ty)) return fail(c, where, "'type' must be a string");
        if (!ty->valuestring[0] || strlen(ty->valuestring) >= sizeof o->tokenizer_type)
            return fail(c, where, "'type' must be a name of 1 to %zu characters",
                        sizeof o->tokenizer_type - 1);
        memset(o->tokenizer_type, 0, sizeof o->tokenizer_type);
        strcpy(o->tokenizer_type, ty->valuestring);
    }
    if (get_int(c, jt, where, "bos_id", 0, MAX_VOCAB - 1, &o->bos_id) < 0 ||
        get_int(c, jt, where, "eos_id", 0, MAX_VOCAB - 1, &o->eos_id) < 0)
        return -1;
    return 0;
}

/* The recipe's "training" block, read leniently: it is a record for people, so a field of
 * another shape is left unrecorded rather than failing the model's load. */
static int whole_number(const cJSON *j, double lo, double hi) {
    return cJSON_IsNumber(j) && j->valuedouble >= lo && j->valuedouble <= hi &&
           j->valuedouble == floor(j->valuedouble);
}

static int continues_phase(const cJSON *rec) {
    return cJSON_IsObject(rec) && whole_number(cJSON_GetObjectItemCaseSensitive(rec, "phase_start"), 1, 1e15);
}

static void parse_training(const cJSON *t, hs_training_info *o) {
    memset(o, 0, sizeof *o);
    if (!cJSON_IsObject(t)) return;
    o->present = 1;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(t, "total_steps");
    if (!s) s = cJSON_GetObjectItemCaseSensitive(t, "steps");
    if (whole_number(s, 0, 1e15)) o->has_steps = 1, o->steps = (long long)s->valuedouble;
    /* a record whose phase_start is past 0 continues the phase before it (a phase cut by the
     * end of a device call), so it is not a phase of its own */
    const cJSON *ep = cJSON_GetObjectItemCaseSensitive(t, "earlier_phases");
    if (cJSON_IsArray(ep) && cJSON_GetArraySize(ep) < 1000000) {
        int n = 0;
        const cJSON *p;
        cJSON_ArrayForEach(p, ep) n += !n || !continues_phase(p);
        o->phases = n + (!n || !continues_phase(t));
    } else if (!ep && o->has_steps) {
        o->phases = 1;
    }
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(t, "data");
    if (!cJSON_IsObject(d)) return;
    const char *keys[3] = { "p_needle", "p_kv", "p_copy" };
    double *dst[3] = { &o->p_needle, &o->p_kv, &o->p_copy };
    for (int i = 0; i < 3; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(d, keys[i]);
        if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 1) {
            *dst[i] = v->valuedouble;
            o->shares |= 1 << i;
        }
    }
}

/* 17020 -> "17,020" */
static void fmt_thousands(char *out, size_t n, long long v) {
    char d[32];
    int len = snprintf(d, sizeof d, "%lld", v < 0 ? 0 : v), o = 0;
    for (int i = 0; i < len && o + 2 < (int)n; i++) {
        if (i > 0 && (len - i) % 3 == 0) out[o++] = ',';
        out[o++] = d[i];
    }
    out[o] = 0;
}

int hs_training_describe(char *out, size_t n, const hs_training_info *t) {
    if (n == 0) return 0;
    out[0] = 0;
    if (!t->present || !(t->has_steps || t->shares)) return 0;
    size_t u = 0;
    char st[32];
    if (t->has_steps) {
        fmt_thousands(st, sizeof st, t->steps);
        u += (size_t)snprintf(out, n, "trained %s step%s", st, t->steps == 1 ? "" : "s");
        if (t->phases > 1 && u < n) u += (size_t)snprintf(out + u, n - u, " in %d phases", t->phases);
    } else {
        u += (size_t)snprintf(out, n, "trained");
    }
    const char *names[3] = { "needles", "key-value", "copy" };
    const double shares[3] = { t->p_needle, t->p_kv, t->p_copy };
    for (int i = 0, first = 1; i < 3 && u < n; i++) {
        if (!(t->shares >> i & 1)) continue;
        u += (size_t)snprintf(out + u, n - u, "%s %s %.2g", first ? (t->has_steps ? ";" : " on") : ",", names[i],
                              shares[i]);
        first = 0;
    }
    return 1;
}

int hs_config_parse(hs_config *o, const char *json, size_t len, const char *path, char *err,
                    size_t errlen) {
    ctx c = { path ? path : "config.json", err, errlen };
    memset(o, 0, sizeof *o);
    o->norm_eps = 1e-6f;
    o->bos_id = 256;
    o->eos_id = 257;
    strcpy(o->tokenizer_type, "bytes");

    /* JSON allows no control characters but tab, CR and LF; cJSON would take them (a NUL
     * would silently cut a string short). */
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)json[i];
        if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
            return fail(&c, NULL, "not valid JSON (control character 0x%02x at byte %zu)", ch, i);
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (!root) {
        size_t off = end && end >= json ? (size_t)(end - json) : 0;
        return fail(&c, NULL, "not valid JSON (near byte %zu)", off);
    }
    for (const char *p = end; p && p < json + len; p++)
        if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') {
            cJSON_Delete(root);
            return fail(&c, NULL, "not valid JSON (trailing data at byte %zu)", (size_t)(p - json));
        }
    int rc = -1;
    if (!cJSON_IsObject(root)) { fail(&c, NULL, "the top level must be a JSON object"); goto done; }

    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    if (!mt) { fail(&c, NULL, "missing required key 'model_type'"); goto done; }
    if (!cJSON_IsString(mt)) { fail(&c, NULL, "'model_type' must be a string"); goto done; }
    if (hs_config_is_dialect(mt->valuestring)) {
        /* fla's configs: translated to the native structure, then validated as one. */
        cJSON *native = hs_config_translate(root, c.path, err, errlen);
        if (!native) goto done;
        cJSON_Delete(root);
        root = native;
    } else if (strcmp(mt->valuestring, "hybrid")) {
        fail(&c, NULL, "model_type '%.64s' is not supported (expected \"hybrid\", \"gla\" or \"gated_deltanet\")",
             mt->valuestring);
        goto done;
    }
    for (const cJSON *it = root->child; it; it = it->next)
        if (it->string && !in_list(it->string, top_keys) && !in_list(it->string, top_ignored_keys))
            warn_unknown(&c, NULL, it->string, "unknown");

    if (get_required_int(&c, root, NULL, "vocab_size", 1, MAX_VOCAB, &o->vocab_size) < 0 ||
        get_required_int(&c, root, NULL, "hidden_size", 1, MAX_DIM, &o->hidden_size) < 0 ||
        get_required_int(&c, root, NULL, "intermediate_size", 1, MAX_DIM, &o->intermediate_size) < 0 ||
        get_required_int(&c, root, NULL, "num_hidden_layers", 1, HS_MAX_LAYERS, &o->num_layers) < 0 ||
        get_required_int(&c, root, NULL, "train_context", 1, MAX_CONTEXT, &o->train_context) < 0 ||
        get_int(&c, root, NULL, "head_dim", 1, MAX_HEAD_DIM, &o->head_dim) < 0 ||
        get_pos_float(&c, root, NULL, "norm_eps", &o->norm_eps) < 0 ||
        get_bool(&c, root, NULL, "tie_word_embeddings", &o->tie_word_embeddings) < 0)
        goto done;
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(root, "tokenizer");
    if (tok && parse_tokenizer(&c, tok, o) < 0) goto done;

    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    if (!layers) { fail(&c, NULL, "missing required key 'layers'"); goto done; }
    if (!cJSON_IsArray(layers)) { fail(&c, NULL, "'layers' must be an array"); goto done; }
    int n = cJSON_GetArraySize(layers);
    if (n != o->num_layers) {
        fail(&c, NULL, "num_hidden_layers is %d but 'layers' has %d entries", o->num_layers, n);
        goto done;
    }
    int i = 0;
    for (const cJSON *it = layers->child; it; it = it->next, i++)
        if (parse_layer(&c, it, i, o->head_dim, &o->layers[i]) < 0) goto done;
    parse_training(cJSON_GetObjectItemCaseSensitive(root, "training"), &o->training);
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}

int hs_config_load(hs_config *out, const char *path, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    /* A config.json is a few KB; anything past 64 MB is not one. */
    const size_t cap = 64u << 20;
    size_t n = 0, size = 4096;
    char *buf = malloc(size);
    while (buf) {
        n += fread(buf + n, 1, size - n, f);
        if (n < size) break;
        if (size >= cap) { free(buf); buf = NULL; fclose(f);
            snprintf(err, errlen, "%s: larger than 64 MB, not a config.json", path); return -1; }
        char *nb = realloc(buf, size * 2);
        if (!nb) { free(buf); buf = NULL; break; }
        buf = nb;
        size *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf) { snprintf(err, errlen, "%s: out of memory", path); return -1; }
    if (bad) { free(buf); snprintf(err, errlen, "%s: read error", path); return -1; }
    int rc = hs_config_parse(out, buf, n, path, err, errlen);
    free(buf);
    return rc;
}

/* ---- serialisation -------------------------------------------------------------------- */

/* The shortest decimal that reads back as the same float, so 1e-6f prints as 1e-06. */
static double clean_float(float f) {
    char s[32];
    for (int prec = 6; prec <= 9; prec++) {
        snprintf(s, sizeof s, "%.*g", prec, (double)f);
        if ((float)strtod(s, NULL) == f) break;
    }
    return strtod(s, NULL);
}

static cJSON *mixer_to_json(const hs_mixer_config *m) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", hs_mixer_type_name(m->type));
    cJSON_AddNumberToObject(o, "num_heads", m->num_heads);
    if (hs_mixer_is_softmax(m->type)) cJSON_AddNumberToObject(o, "num_kv_heads", m->num_kv_heads);
    cJSON_AddNumberToObject(o, "head_k_dim", m->head_k_dim);
    cJSON_AddNumberToObject(o, "head_v_dim", m->head_v_dim);
    if (m->type == HS_ROPE || m->type == HS_SWA)
        cJSON_AddNumberToObject(o, "rope_theta", clean_float(m->rope_theta));
    if (m->type == HS_SWA) cJSON_AddNumberToObject(o, "window", m->window);
    if (m->type == HS_GLA) {
        cJSON_AddNumberToObject(o, "gate_low_rank_dim", m->gate_low_rank_dim);
        cJSON_AddNumberToObject(o, "gate_logit_normalizer", clean_float(m->gate_logit_normalizer));
    }
    if (m->type == HS_GLA || m->type == HS_GDN) {
        cJSON_AddBoolToObject(o, "use_short_conv", m->use_short_conv);
        cJSON_AddNumberToObject(o, "conv_size", m->conv_size);
        cJSON_AddNumberToObject(o, "norm_eps", clean_float(m->norm_eps));
    }
    if (m->type == HS_GDN) cJSON_AddBoolToObject(o, "allow_neg_eigval", m->allow_neg_eigval);
    return o;
}

char *hs_config_to_json(const hs_config *c, const char *extra_json) {
    cJSON *extra = NULL;
    if (extra_json) {
        extra = cJSON_Parse(extra_json);
        if (!cJSON_IsObject(extra)) { cJSON_Delete(extra); return NULL; }
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model_type", "hybrid");
    cJSON_AddNumberToObject(o, "vocab_size", c->vocab_size);
    cJSON_AddNumberToObject(o, "hidden_size", c->hidden_size);
    cJSON_AddNumberToObject(o, "intermediate_size", c->intermediate_size);
    cJSON_AddNumberToObject(o, "num_hidden_layers", c->num_layers);
    if (c->head_dim > 0) cJSON_AddNumberToObject(o, "head_dim", c->head_dim);
    cJSON_AddNumberToObject(o, "norm_eps", clean_float(c->norm_eps));
    cJSON_AddBoolToObject(o, "tie_word_embeddings", c->tie_word_embeddings);
    cJSON_AddNumberToObject(o, "train_context", c->train_context);
    cJSON *tok = cJSON_AddObjectToObject(o, "tokenizer");
    cJSON_AddStringToObject(tok, "type", c->tokenizer_type[0] ? c->tokenizer_type : "bytes");
    cJSON_AddNumberToObject(tok, "bos_id", c->bos_id);
    cJSON_AddNumberToObject(tok, "eos_id", c->eos_id);
    cJSON *layers = cJSON_AddArrayToObject(o, "layers");
    for (int i = 0; i < c->num_layers; i++) {
        cJSON *l = cJSON_CreateObject();
        cJSON *ms = cJSON_AddArrayToObject(l, "mixers");
        for (int k = 0; k < c->layers[i].n_mixers; k++)
            cJSON_AddItemToArray(ms, mixer_to_json(&c->layers[i].mixers[k]));
        cJSON_AddItemToArray(layers, l);
    }
    if (extra) {
        while (extra->child) {
            cJSON *item = cJSON_DetachItemViaPointer(extra, extra->child);
            cJSON_DeleteItemFromObjectCaseSensitive(o, item->string);
            cJSON_AddItemToObject(o, item->string, item);
        }
        cJSON_Delete(extra);
    }
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    return s;
}

/* ---- counts --------------------------------------------------------------------------- */

static long long mixer_params(const hs_mixer_config *m, long long d) {
    long long H = m->num_heads, Hkv = m->num_kv_heads, dk = m->head_k_dim, dv = m->head_v_dim;
    if (!hs_mixer_is_softmax(m->type)) Hkv = H;
    long long p = H * dk * d + Hkv * dk * d + Hkv * dv * d + d * H * dv;  /* q k v o */
    if (m->type == HS_GLA) {
        long long r = m->gate_low_rank_dim;
        p += r * d + H * dk * r + H * dk + H * dv * d + dv;
    } else if (m->type == HS_GDN) {
        p += 2 * H * d + 2 * H + H * dv * d + dv;
    }
    if ((m->type == HS_GLA || m->type == HS_GDN) && m->use_short_conv)
        p += (2 * H * dk + H * dv) * m->conv_size;
    return p;
}

long long hs_config_param_count(const hs_config *c) {
    long long d = c->hidden_size, V = c->vocab_size, F = c->intermediate_size;
    long long p = V * d + d;                      /* embeddings, final norm */
    if (!c->tie_word_embeddings) p += V * d;      /* lm_head */
    for (int i = 0; i < c->num_layers; i++) {
        p += 2 * d + 3 * F * d;                   /* norms, mlp */
        for (int k = 0; k < c->layers[i].n_mixers; k++) p += mixer_params(&c->layers[i].mixers[k], d);
    }
    return p;
}

int hs_config_total_heads(const hs_config *c, int *biased, int *nope) {
    int b = 0, n = 0;
    for (int i = 0; i < c->num_layers; i++)
        for (int k = 0; k < c->layers[i].n_mixers; k++) {
            const hs_mixer_config *m = &c->layers[i].mixers[k];
            if (m->type == HS_NOPE) n += m->num_heads;
            else b += m->num_heads;
        }
    if (biased) *biased = b;
    if (nope) *nope = n;
    return b + n;
}
