/* Model tensor list (names/shapes of model-spec section 3), arena, random init, save/load. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "presets.h"
#include "safetensors.h"
#include "test.h"

/* One-layer config with a given mixer list, written as JSON the way a user would. */
static int one_layer(hs_config *c, const char *mixers, int tied, char *err) {
    char json[2048];
    snprintf(json, sizeof json,
             "{\"model_type\":\"hybrid\",\"vocab_size\":300,\"hidden_size\":8,"
             "\"intermediate_size\":12,\"num_hidden_layers\":1,\"head_dim\":4,"
             "\"tie_word_embeddings\":%s,\"train_context\":64,\"layers\":[{\"mixers\":[%s]}]}",
             tied ? "true" : "false", mixers);
    return hs_config_parse(c, json, strlen(json), "test.json", err, HS_ERR_LEN);
}

typedef struct { const char *name; int ndim; int64_t s[3]; } want;

/* Checks the spec list equals `w` (in any order) and that the arena holds every tensor. */
static int specs_equal(hs_model *m, const want *w, int nw, char *why, size_t n) {
    int cnt = hs_model_tensor_specs(m, NULL, 0);
    if (cnt != nw) { snprintf(why, n, "%d specs, expected %d", cnt, nw); return 0; }
    hs_tensor_spec *s = malloc((size_t)cnt * sizeof *s);
    hs_model_tensor_specs(m, s, cnt);
    int ok = 1;
    for (int i = 0; i < nw && ok; i++) {
        int found = 0;
        for (int j = 0; j < cnt; j++) {
            if (strcmp(s[j].name, w[i].name)) continue;
            found = 1;
            if (s[j].ndim != w[i].ndim) ok = 0;
            for (int k = 0; ok && k < w[i].ndim; k++) ok = s[j].shape[k] == w[i].s[k];
            if (!ok) snprintf(why, n, "%s: wrong shape", w[i].name);
        }
        if (!found) { snprintf(why, n, "missing %s", w[i].name); ok = 0; }
    }
    free(s);
    return ok;
}

#define COMMON_HEAD(V) \
    { "model.embeddings.weight", 2, { V, 8 } }, { "model.layers.0.attn_norm.weight", 1, { 8 } }, \
    { "model.layers.0.mlp_norm.weight", 1, { 8 } }, { "model.layers.0.mlp.gate_proj.weight", 2, { 12, 8 } }, \
    { "model.layers.0.mlp.up_proj.weight", 2, { 12, 8 } }, { "model.layers.0.mlp.down_proj.weight", 2, { 8, 12 } }, \
    { "model.norm.weight", 1, { 8 } }

TEST(model_specs_softmax_gqa_untied) {
    hs_config c; char err[HS_ERR_LEN];
    CHECK(one_layer(&c, "{\"type\":\"rope\",\"num_heads\":4,\"num_kv_heads\":2,\"head_v_dim\":6}", 0, err) == 0, "%.400s", err);
    want w[] = { COMMON_HEAD(300), { "lm_head.weight", 2, { 300, 8 } },
        { "model.layers.0.attn.q_proj.weight", 2, { 16, 8 } }, { "model.layers.0.attn.k_proj.weight", 2, { 8, 8 } },
        { "model.layers.0.attn.v_proj.weight", 2, { 12, 8 } }, { "model.layers.0.attn.o_proj.weight", 2, { 8, 24 } } };
    hs_model *m = calloc(1, sizeof *m); m->cfg = c;
    char why[256] = "";
    int ok = specs_equal(m, w, (int)(sizeof w / sizeof w[0]), why, sizeof why);
    free(m);
    CHECK(ok, "%s", why);
}

TEST(model_specs_gla_tied_conv) {
    hs_config c; char err[HS_ERR_LEN];
    CHECK(one_layer(&c, "{\"type\":\"gla\",\"num_heads\":2,\"gate_low_rank_dim\":3,\"use_short_conv\":true,\"conv_size\":5}", 1, err) == 0, "%.400s", err);
    want w[] = { COMMON_HEAD(300),
        { "model.layers.0.attn.q_proj.weight", 2, { 8, 8 } }, { "model.layers.0.attn.k_proj.weight", 2, { 8, 8 } },
        { "model.layers.0.attn.v_proj.weight", 2, { 8, 8 } }, { "model.layers.0.attn.o_proj.weight", 2, { 8, 8 } },
        { "model.layers.0.attn.gk_proj.0.weight", 2, { 3, 8 } }, { "model.layers.0.attn.gk_proj.1.weight", 2, { 8, 3 } },
        { "model.layers.0.attn.gk_proj.1.bias", 1, { 8 } }, { "model.layers.0.attn.g_proj.weight", 2, { 8, 8 } },
        { "model.layers.0.attn.g_norm_swish_gate.weight", 1, { 4 } },
        { "model.layers.0.attn.q_conv1d.weight", 3, { 8, 1, 5 } }, { "model.layers.0.attn.k_conv1d.weight", 3, { 8, 1, 5 } },
        { "model.layers.0.attn.v_conv1d.weight", 3, { 8, 1, 5 } } };
    hs_model *m = calloc(1, sizeof *m); m->cfg = c;
    char why[256] = "";
    int ok = specs_equal(m, w, (int)(sizeof w / sizeof w[0]), why, sizeof why);
    free(m);
    CHECK(ok, "%s", why);
}

TEST(model_specs_hh_gdn_nope) {
    hs_config c; char err[HS_ERR_LEN];
    CHECK(one_layer(&c, "{\"type\":\"gdn\",\"num_heads\":3,\"head_v_dim\":2},{\"type\":\"nope\",\"num_heads\":1}", 1, err) == 0, "%.400s", err);
    want w[] = { COMMON_HEAD(300),
        { "model.layers.0.attn.q_proj.weight", 2, { 12, 8 } }, { "model.layers.0.attn.k_proj.weight", 2, { 12, 8 } },
        { "model.layers.0.attn.v_proj.weight", 2, { 6, 8 } }, { "model.layers.0.attn.o_proj.weight", 2, { 8, 6 } },
        { "model.layers.0.attn.a_proj.weight", 2, { 3, 8 } }, { "model.layers.0.attn.b_proj.weight", 2, { 3, 8 } },
        { "model.layers.0.attn.A_log", 1, { 3 } }, { "model.layers.0.attn.dt_bias", 1, { 3 } },
        { "model.layers.0.attn.g_proj.weight", 2, { 6, 8 } }, { "model.layers.0.attn.o_norm.weight", 1, { 2 } },
        { "model.layers.0.attn.q_conv1d.weight", 3, { 12, 1, 4 } }, { "model.layers.0.attn.k_conv1d.weight", 3, { 12, 1, 4 } },
        { "model.layers.0.attn.v_conv1d.weight", 3, { 6, 1, 4 } },
        { "model.layers.0.nope_attn.q_proj.weight", 2, { 4, 8 } }, { "model.layers.0.nope_attn.k_proj.weight", 2, { 4, 8 } },
        { "model.layers.0.nope_attn.v_proj.weight", 2, { 4, 8 } }, { "model.layers.0.nope_attn.o_proj.weight", 2, { 8, 4 } } };
    hs_model *m = calloc(1, sizeof *m); m->cfg = c;
    char why[256] = "";
    int ok = specs_equal(m, w, (int)(sizeof w / sizeof w[0]), why, sizeof why);
    free(m);
    CHECK(ok, "%s", why);
}

TEST(model_specs_swa_nope_plain) {
    hs_config c; char err[HS_ERR_LEN];
    CHECK(one_layer(&c, "{\"type\":\"swa\",\"num_heads\":2,\"window\":16},{\"type\":\"nope\",\"num_heads\":2,\"num_kv_heads\":1}", 1, err) == 0, "%.400s", err);
    want w[] = { COMMON_HEAD(300),
        { "model.layers.0.attn.q_proj.weight", 2, { 8, 8 } }, { "model.layers.0.attn.k_proj.weight", 2, { 8, 8 } },
        { "model.layers.0.attn.v_proj.weight", 2, { 8, 8 } }, { "model.layers.0.attn.o_proj.weight", 2, { 8, 8 } },
        { "model.layers.0.nope_attn.q_proj.weight", 2, { 8, 8 } }, { "model.layers.0.nope_attn.k_proj.weight", 2, { 4, 8 } },
        { "model.layers.0.nope_attn.v_proj.weight", 2, { 4, 8 } }, { "model.layers.0.nope_attn.o_proj.weight", 2, { 8, 8 } } };
    hs_model *m = calloc(1, sizeof *m); m->cfg = c;
    char why[256] = "";
    int ok = specs_equal(m, w, (int)(sizeof w / sizeof w[0]), why, sizeof why);
    free(m);
    CHECK(ok, "%s", why);
}

/* Builds a model from preset flags given as one string. */
static int build(hs_model *m, const char *flags, char *err) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", flags);
    char *argv[64];
    int argc = 0;
    for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " ")) argv[argc++] = t;
    hs_preset_args a;
    hs_preset_args_init(&a);
    for (int i = 0; i < argc; i++) {
        int r = hs_preset_parse_arg(&a, argc, argv, &i, err, HS_ERR_LEN);
        if (r <= 0) { if (!r) snprintf(err, HS_ERR_LEN, "not a flag: %s", argv[i]); return -1; }
    }
    memset(m, 0, sizeof *m);
    if (hs_preset_build(&m->cfg, &a, err, HS_ERR_LEN) < 0) return -1;
    return hs_model_alloc(m, err, HS_ERR_LEN);
}

TEST(model_param_count_matches_specs) {
    const char *variants[] = { "--preset tiny --efficient gla --short-conv",
        "--preset tiny --efficient gdn --layout HH --ratio 1:1", "--preset tiny --efficient swa --kv-heads 2 --ratio 1:1",
        "--preset tiny --efficient rope --tied", "--preset tiny --efficient nope" };
    for (int v = 0; v < 5; v++) {
        hs_model *m = malloc(sizeof *m);
        char err[HS_ERR_LEN];
        CHECK(build(m, variants[v], err) == 0, "%s: %.300s", variants[v], err);
        int n = hs_model_tensor_specs(m, NULL, 0);
        hs_tensor_spec *s = malloc((size_t)n * sizeof *s);
        hs_model_tensor_specs(m, s, n);
        long long sum = 0;
        for (int i = 0; i < n; i++) {
            long long e = 1;
            for (int k = 0; k < s[i].ndim; k++) e *= s[i].shape[k];
            sum += e;
            /* every tensor lies inside the arena, 64-byte aligned */
            float *p = *s[i].slot;
            CHECK(p >= m->arena && p + e <= m->arena + m->arena_floats && ((uintptr_t)p & 63) == 0,
                  "%s outside the arena or misaligned", s[i].name);
        }
        long long pc = hs_config_param_count(&m->cfg);
        free(s);
        hs_model_free(m);
        free(m);
        CHECK(sum == pc, "%s: specs hold %lld values, param count says %lld", variants[v], sum, pc);
    }
}

static uint64_t hash_arena(const hs_model *m) {
    uint64_t h = 1469598103934665603ULL;
    const uint8_t *p = (const uint8_t *)m->arena;
    for (size_t i = 0; i < m->arena_floats * 4; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

TEST(model_init_deterministic_and_finite) {
    hs_model *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    char err[HS_ERR_LEN];
    CHECK(build(a, "--preset tiny --efficient gdn --layout HH --ratio 1:1", err) == 0, "%.400s", err);
    CHECK(build(b, "--preset tiny --efficient gdn --layout HH --ratio 1:1", err) == 0, "%.400s", err);
    hs_model_init_random(a, 42);
    hs_model_init_random(b, 42);
    uint64_t ha = hash_arena(a), hb = hash_arena(b);
    hs_model_init_random(b, 43);
    uint64_t hc = hash_arena(b);
    int finite = 1;
    for (size_t i = 0; i < a->arena_floats; i++) finite &= isfinite(a->arena[i]);
    /* gdn: A = exp(A_log) in [1, 16]; softplus(dt_bias) in [1e-3, 1e-1] */
    const float *Al = a->layers[0].mix[0].A_log, *dt = a->layers[0].mix[0].dt_bias;
    int ranges = 1;
    for (int h = 0; h < a->cfg.layers[0].mixers[0].num_heads; h++) {
        double A = exp(Al[h]), sp = log1p(exp(dt[h]));
        ranges &= A >= 1 - 1e-5 && A <= 16 + 1e-4 && sp >= 1e-3 * (1 - 1e-4) && sp <= 0.1 * (1 + 1e-4);
    }
    hs_model_free(a); hs_model_free(b); free(a); free(b);
    CHECK(ha == hb, "same seed gave different weights");
    CHECK(ha != hc, "different seeds gave the same weights");
    CHECK(finite, "non-finite initial weight");
    CHECK(ranges, "gdn A_log / dt_bias outside fla's ranges");
}

TEST(model_init_gla_decay_below_one) {
    hs_model *m = malloc(sizeof *m);
    char err[HS_ERR_LEN];
    CHECK(build(m, "--preset tiny --efficient gla", err) == 0, "%.400s", err);
    hs_model_init_random(m, 7);
    const hs_mixer_config *mc = &m->cfg.layers[0].mixers[0];
    const float *b = m->layers[0].mix[0].gk_bias;
    int ok = 1;
    for (int i = 0; i < mc->num_heads * mc->head_k_dim; i++) {
        /* decay at zero gate input: exp(logsigmoid(b)/normalizer) */
        double ls = -log1p(exp(-(double)b[i]));
        double decay = exp(ls / mc->gate_logit_normalizer);
        ok &= decay > 0.85 && decay < 1.0;
    }
    hs_model_free(m); free(m);
    CHECK(ok, "gla decay outside (0.85, 1)");
}

static int save_load(const char *flags, int bf16, double *maxrel, char *err) {
    hs_model *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    int rc = build(a, flags, err);
    if (rc == 0) {
        hs_model_init_random(a, 5);
        const char *dir = hs_test_tmpdir();
        rc = hs_model_save(a, dir, bf16, "{\"training\":{\"steps\":3}}", err, HS_ERR_LEN);
        if (rc == 0) rc = hs_model_load(b, dir, err, HS_ERR_LEN);
        if (rc == 0) {
            double mr = 0;
            if (b->arena_floats != a->arena_floats) { snprintf(err, HS_ERR_LEN, "arena size differs"); rc = -1; }
            for (size_t i = 0; rc == 0 && i < a->arena_floats; i++) {
                double x = a->arena[i], y = b->arena[i];
                /* NaN on one side only is a difference that sticks; on both, a round trip */
                double r = (x != x || y != y) ? (x != x && y != y ? 0.0 : NAN)
                                              : fabs(x - y) / (fabs(x) > 1e-30 ? fabs(x) : 1.0);
                if (mr == mr && !(r <= mr)) mr = r;
            }
            *maxrel = mr;
            /* (the saved config.json gains a "training" block, which the reload records) */
            b->cfg.training = a->cfg.training;
            if (memcmp(&a->cfg, &b->cfg, sizeof a->cfg)) { snprintf(err, HS_ERR_LEN, "config differs after reload"); rc = -1; }
            hs_model_free(b);
        }
        hs_model_free(a);
    }
    free(a); free(b);
    return rc;
}

TEST(model_save_load_f32_exact) {
    char err[HS_ERR_LEN];
    double r = 1;
    CHECK(save_load("--preset tiny --efficient gla --short-conv --layout HH --ratio 1:1", 0, &r, err) == 0, "%.400s", err);
    CHECK(r == 0, "f32 round trip changed weights (max rel %g)", r);
}

TEST(model_save_load_bf16_rounding) {
    char err[HS_ERR_LEN];
    double r = 1;
    CHECK(save_load("--preset tiny --efficient gdn --kv-heads 2", 1, &r, err) == 0, "%.400s", err);
    /* bf16 keeps 8 significant bits (7 stored): relative error <= 2^-8 */
    CHECK(r <= 1.0 / 256 && r > 0, "bf16 round trip max rel error %g", r);
}

TEST(model_cache_bytes) {
    hs_config c; char err[HS_ERR_LEN];
    CHECK(one_layer(&c, "{\"type\":\"swa\",\"num_heads\":4,\"num_kv_heads\":2,\"window\":10,\"head_v_dim\":6},{\"type\":\"nope\",\"num_heads\":2}", 1, err) == 0, "%.400s", err);
    /* swa: min(T, 10) keys x 2 kv heads x (4 + 6) floats; nope: T keys x 2 x (4 + 4) */
    CHECK(hs_layer_cache_bytes(&c, 0, 5) == 4LL * (5 * 2 * 10 + 5 * 2 * 8), "T=5");
    CHECK(hs_layer_cache_bytes(&c, 0, 100) == 4LL * (10 * 2 * 10 + 100 * 2 * 8), "T=100");
    CHECK(one_layer(&c, "{\"type\":\"gdn\",\"num_heads\":2,\"head_v_dim\":6,\"conv_size\":4}", 1, err) == 0, "%.400s", err);
    /* state 2 x 4 x 6 floats + conv state 3 steps x (2*4 + 2*4 + 2*6) channels, independent of T */
    long long want = 4LL * (2 * 4 * 6 + 3 * (8 + 8 + 12));
    CHECK(hs_layer_cache_bytes(&c, 0, 7) == want && hs_layer_cache_bytes(&c, 0, 70000) == want,
          "gdn: %lld, want %lld", hs_layer_cache_bytes(&c, 0, 7), want);
}

/* ---- loader errors at the model level ------------------------------------------------- */

/* Copies checkpoint src to a fresh dir with one change: drop a tensor, give one another
 * shape (same element count, flattened), or add an extra one. Returns the new dir. */
static const char *rewrite(const char *src, const char *drop, const char *flatten, const char *extra,
                           int shards, char *err) {
    static char dst[512];   /* hs_test_tmpdir's buffer is reused by its next call */
    snprintf(dst, sizeof dst, "%s", hs_test_tmpdir());
    char path[600];
    snprintf(path, sizeof path, "%s/config.json", src);
    hs_config c;
    if (hs_config_load(&c, path, err, HS_ERR_LEN) < 0) return NULL;
    char *json = hs_config_to_json(&c, NULL);
    snprintf(path, sizeof path, "%s/config.json", dst);
    FILE *f = fopen(path, "w");
    fputs(json, f);
    fclose(f);
    free(json);
    hs_st_archive ar;
    memset(&ar, 0, sizeof ar);
    snprintf(path, sizeof path, "%s/model.safetensors", src);
    if (hs_st_open_file(&ar, path, err, HS_ERR_LEN) < 0) return NULL;
    hs_st_out_tensor *out = calloc((size_t)ar.n_tensors + 1, sizeof *out);
    float **bufs = calloc((size_t)ar.n_tensors + 1, sizeof *bufs);
    int n = 0;
    for (int i = 0; i < ar.n_tensors; i++) {
        hs_st_tensor *t = &ar.tensors[i];
        if (drop && !strcmp(t->name, drop)) continue;
        size_t ne = t->nbytes / hs_dtype_size(t->dtype);
        bufs[n] = malloc((ne ? ne : 1) * sizeof(float));
        hs_st_to_f32(bufs[n], t);
        out[n].name = t->name;
        out[n].ndim = t->ndim;
        for (int k = 0; k < t->ndim; k++) out[n].shape[k] = t->shape[k];
        if (flatten && !strcmp(t->name, flatten)) { out[n].ndim = 1; out[n].shape[0] = (int64_t)ne; }
        out[n].data = bufs[n];
        n++;
    }
    static float extra_val[3] = { 1, 2, 3 };
    if (extra) {
        out[n].name = extra;
        out[n].ndim = 1;
        out[n].shape[0] = 3;
        out[n].data = extra_val;
        n++;
    }
    int rc = 0;
    if (shards) {
        /* first half in one shard, the rest in another, and the HF index */
        int h = n / 2;
        snprintf(path, sizeof path, "%s/model-00001-of-00002.safetensors", dst);
        rc |= hs_st_write(path, out, h, HS_DT_F32, err, HS_ERR_LEN);
        snprintf(path, sizeof path, "%s/model-00002-of-00002.safetensors", dst);
        rc |= hs_st_write(path, out + h, n - h, HS_DT_BF16, err, HS_ERR_LEN);
        snprintf(path, sizeof path, "%s/model.safetensors.index.json", dst);
        f = fopen(path, "w");
        fprintf(f, "{\"metadata\": {}, \"weight_map\": {");
        for (int i = 0; i < n; i++)
            fprintf(f, "%s\"%s\": \"model-0000%d-of-00002.safetensors\"", i ? ", " : "", out[i].name, i < h ? 1 : 2);
        fprintf(f, "}}\n");
        fclose(f);
    } else {
        snprintf(path, sizeof path, "%s/model.safetensors", dst);
        rc = hs_st_write(path, out, n, HS_DT_F32, err, HS_ERR_LEN);
    }
    for (int i = 0; i < n; i++) free(bufs[i]);   /* the extra tensor's slot is NULL */
    free(bufs);
    free(out);
    hs_st_close(&ar);
    return rc ? NULL : dst;
}

static const char *saved_tiny(const char *flags, char *err) {
    hs_model *m = malloc(sizeof *m);
    const char *dir = NULL;
    if (build(m, flags, err) == 0) {
        hs_model_init_random(m, 9);
        dir = hs_test_tmpdir();
        if (hs_model_save(m, dir, 0, NULL, err, HS_ERR_LEN) < 0) dir = NULL;
        hs_model_free(m);
    }
    free(m);
    return dir;
}

/* hs_model_load with stderr captured. */
static int load_capture(hs_model *m, const char *dir, char *err, char *warn, size_t wn) {
    char path[512];
    snprintf(path, sizeof path, "%s/stderr.txt", hs_test_tmpdir());
    fflush(stderr);
    int saved = dup(2);
    FILE *f = fopen(path, "w+");
    dup2(fileno(f), 2);
    int rc = hs_model_load(m, dir, err, HS_ERR_LEN);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    size_t n = fread(warn, 1, wn - 1, f);
    warn[n] = 0;
    fclose(f);
    return rc;
}

TEST(model_load_rejects_shape_mismatch) {
    char err[HS_ERR_LEN], src[512], warn[2048];
    const char *s = saved_tiny("--preset tiny --efficient gla", err);
    CHECK(s, "%.400s", err);
    snprintf(src, sizeof src, "%s", s);
    const char *d = rewrite(src, NULL, "model.layers.1.attn.k_proj.weight", NULL, 0, err);
    CHECK(d, "%.400s", err);
    hs_model *m = malloc(sizeof *m);
    int rc = load_capture(m, d, err, warn, sizeof warn);
    free(m);
    CHECK(rc == -1, "wrong shape accepted");
    CHECK(strstr(err, "/model.safetensors: tensor 'model.layers.1.attn.k_proj.weight' has shape [4096] but config.json requires [64, 64]"),
          "%.400s", err);
}

TEST(model_load_rejects_missing_tensor) {
    char err[HS_ERR_LEN], src[512], warn[2048];
    const char *s = saved_tiny("--preset tiny --efficient gdn", err);
    CHECK(s, "%.400s", err);
    snprintf(src, sizeof src, "%s", s);
    const char *d = rewrite(src, "model.layers.2.attn.dt_bias", NULL, NULL, 0, err);
    CHECK(d, "%.400s", err);
    hs_model *m = malloc(sizeof *m);
    int rc = load_capture(m, d, err, warn, sizeof warn);
    free(m);
    CHECK(rc == -1, "missing tensor accepted");
    CHECK(strstr(err, "/model.safetensors: missing tensor 'model.layers.2.attn.dt_bias' [4] that config.json requires"),
          "%.400s", err);
}

TEST(model_load_warns_unused_tensor) {
    char err[HS_ERR_LEN], src[512], warn[2048];
    const char *s = saved_tiny("--preset tiny --efficient swa --tied", err);
    CHECK(s, "%.400s", err);
    snprintf(src, sizeof src, "%s", s);
    const char *d = rewrite(src, NULL, NULL, "model.layers.0.attn.rotary.inv_freq", 0, err);
    CHECK(d, "%.400s", err);
    hs_model *m = malloc(sizeof *m);
    int rc = load_capture(m, d, err, warn, sizeof warn);
    int tied = rc == 0 && m->lm_head == m->embed;
    if (rc == 0) hs_model_free(m);
    free(m);
    CHECK(rc == 0, "%.400s", err);
    CHECK(strstr(warn, "/model.safetensors: warning: tensor 'model.layers.0.attn.rotary.inv_freq' is not used"),
          "warning missing: %.300s", warn);
    CHECK(tied, "tied head should alias the embeddings");
}

TEST(model_load_sharded_checkpoint) {
    char err[HS_ERR_LEN], src[512], warn[2048];
    const char *s = saved_tiny("--preset tiny --efficient gla --layout HH --ratio 1:1", err);
    CHECK(s, "%.400s", err);
    snprintf(src, sizeof src, "%s", s);
    const char *d = rewrite(src, NULL, NULL, NULL, 1, err);
    CHECK(d, "%.400s", err);
    hs_model *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    CHECK(hs_model_load(a, src, err, HS_ERR_LEN) == 0, "%.400s", err);
    int rc = load_capture(b, d, err, warn, sizeof warn);
    double mr = 0;
    if (rc == 0) {
        for (size_t i = 0; i < a->arena_floats; i++) {
            double x = a->arena[i], y = b->arena[i];
            double r = (x != x || y != y) ? (x != x && y != y ? 0.0 : NAN)
                                          : fabs(x - y) / (fabs(x) > 1e-30 ? fabs(x) : 1);
            if (mr == mr && !(r <= mr)) mr = r;
        }
        hs_model_free(b);
    }
    hs_model_free(a);
    free(a); free(b);
    CHECK(rc == 0, "%.400s", err);
    CHECK(mr <= 1.0 / 256, "sharded weights differ (max rel %g; second shard is bf16)", mr);
    CHECK(!warn[0], "unexpected warnings: %.300s", warn);
}

TEST(model_check_matches_load) {
    char err[HS_ERR_LEN];
    const char *s = saved_tiny("--preset tiny --efficient rope --kv-heads 2", err);
    CHECK(s, "%.400s", err);
    hs_config c;
    CHECK(hs_model_check(s, &c, err, sizeof err) == 0, "%.400s", err);
    CHECK(c.layers[0].mixers[0].type == HS_ROPE && c.layers[0].mixers[0].num_kv_heads == 2, "config");
    CHECK(hs_model_check("/nonexistent-dir", &c, err, sizeof err) == -1 && strstr(err, "/nonexistent-dir/config.json"),
          "%.400s", err);
}
