/* config.json parsing (model-spec section 2): every rejection with its message, defaults,
 * warnings, serialisation round trip, counts, and the presets/flags that build configs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "presets.h"
#include "test.h"

/* Runs the parser with stderr captured into `warn` (the warnings it printed). */
static int parse_capture(hs_config *c, const char *json, char *err, char *warn, size_t wn) {
    char path[512];
    snprintf(path, sizeof path, "%s/stderr.txt", hs_test_tmpdir());
    fflush(stderr);
    int saved = dup(2);
    FILE *f = fopen(path, "w+");
    dup2(fileno(f), 2);
    int rc = hs_config_parse(c, json, strlen(json), "MODEL/config.json", err, HS_ERR_LEN);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    size_t n = fread(warn, 1, wn - 1, f);
    warn[n] = 0;
    fclose(f);
    return rc;
}

static int parse(hs_config *c, const char *json, char *err) {
    char warn[4096];
    return parse_capture(c, json, err, warn, sizeof warn);
}

/* A valid two-layer config with one spot (%s) where a test splices in keys, and another
 * where it replaces the layer list. */
#define TOP "\"model_type\":\"hybrid\",\"vocab_size\":258,\"hidden_size\":16,\"intermediate_size\":32," \
            "\"num_hidden_layers\":2,\"head_dim\":4,\"train_context\":64"
#define LAYERS "\"layers\":[{\"mixers\":[{\"type\":\"gla\",\"num_heads\":4}]},{\"mixers\":[{\"type\":\"nope\",\"num_heads\":4}]}]"

static char *cfg_with(const char *top, const char *layers) {
    static char buf[4096];
    snprintf(buf, sizeof buf, "{%s,%s}", top, layers);
    return buf;
}

/* Asserts the parse fails and the message has the file and each given fragment. */
#define EXPECT_ERR(json, ...)                                                                 \
    do {                                                                                      \
        hs_config c__;                                                                        \
        char err__[HS_ERR_LEN] = "";                                                          \
        CHECK(parse(&c__, json, err__) == -1, "accepted a bad config");                       \
        CHECK(!strchr(err__, '\n'), "message is not one line: %.300s", err__);                \
        CHECK(strstr(err__, "MODEL/config.json: ") == err__, "message lacks the file: %.300s", err__); \
        const char *frag__[] = { __VA_ARGS__, NULL };                                         \
        for (int k__ = 0; frag__[k__]; k__++)                                                 \
            CHECK(strstr(err__, frag__[k__]), "message '%.300s' lacks '%s'", err__, frag__[k__]); \
    } while (0)

TEST(config_valid_minimal_and_defaults) {
    hs_config c;
    char err[HS_ERR_LEN];
    CHECK(parse(&c, cfg_with(TOP, LAYERS), err) == 0, "%.400s", err);
    CHECK(c.num_layers == 2 && c.vocab_size == 258 && c.hidden_size == 16 && c.head_dim == 4, "sizes");
    CHECK(c.norm_eps == 1e-6f && c.tie_word_embeddings == 0, "top-level defaults");
    CHECK(c.bos_id == 256 && c.eos_id == 257 && !strcmp(c.tokenizer_type, "bytes"), "tokenizer defaults");
    const hs_mixer_config *g = &c.layers[0].mixers[0], *n = &c.layers[1].mixers[0];
    CHECK(g->type == HS_GLA && g->gate_low_rank_dim == 16 && g->gate_logit_normalizer == 16.0f &&
          g->use_short_conv == 0 && g->conv_size == 4 && g->norm_eps == 1e-5f, "gla defaults");
    CHECK(g->head_k_dim == 4 && g->head_v_dim == 4 && g->num_kv_heads == 4, "head dim defaults");
    CHECK(n->type == HS_NOPE && n->num_kv_heads == 4, "nope kv default");
    CHECK(c.layers[0].n_mixers == 1, "LH layer");
}

TEST(config_type_defaults_gdn_rope) {
    hs_config c;
    char err[HS_ERR_LEN];
    CHECK(parse(&c, cfg_with(TOP, "\"layers\":[{\"mixers\":[{\"type\":\"gdn\",\"num_heads\":2}]},"
                                  "{\"mixers\":[{\"type\":\"rope\",\"num_heads\":2,\"num_kv_heads\":1}]}]"), err) == 0,
          "%.400s", err);
    CHECK(c.layers[0].mixers[0].use_short_conv == 1 && c.layers[0].mixers[0].conv_size == 4 &&
          c.layers[0].mixers[0].allow_neg_eigval == 0, "gdn defaults");
    CHECK(c.layers[1].mixers[0].rope_theta == 10000.0f && c.layers[1].mixers[0].num_kv_heads == 1, "rope");
}

TEST(config_rejects_missing_required_keys) {
    const char *keys[] = { "model_type", "vocab_size", "hidden_size", "intermediate_size",
                           "num_hidden_layers", "train_context" };
    for (int k = 0; k < 6; k++) {
        /* rebuild TOP without key k */
        char top[512] = "";
        char all[] = TOP;
        for (char *tok = strtok(all, ","); tok; tok = strtok(NULL, ",")) {
            char want[64];
            snprintf(want, sizeof want, "\"%s\"", keys[k]);
            if (strncmp(tok, want, strlen(want)) == 0) continue;
            if (top[0]) strcat(top, ",");
            strcat(top, tok);
        }
        char missing[96];
        snprintf(missing, sizeof missing, "missing required key '%s'", keys[k]);
        EXPECT_ERR(cfg_with(top, LAYERS), missing);
    }
    EXPECT_ERR("{" TOP "}", "missing required key 'layers'");
}

TEST(config_rejects_layer_count_mismatch) {
    EXPECT_ERR(cfg_with(TOP, "\"layers\":[{\"mixers\":[{\"type\":\"gla\",\"num_heads\":4}]}]"),
               "num_hidden_layers is 2", "'layers' has 1");
}

TEST(config_rejects_swa_without_window) {
    EXPECT_ERR(cfg_with(TOP, "\"layers\":[{\"mixers\":[{\"type\":\"gla\",\"num_heads\":4}]},"
                             "{\"mixers\":[{\"type\":\"swa\",\"num_heads\":3},{\"type\":\"nope\",\"num_heads\":1}]}]"),
               "layers[1].mixers[0]: missing required key 'window'");
}

TEST(config_rejects_hh_first_nope) {
    EXPECT_ERR(cfg_with(TOP, "\"layers\":[{\"mixers\":[{\"type\":\"nope\",\"num_heads\":2},{\"type\":\"nope\",\"num_heads\":2}]},"
                             "{\"mixers\":[{\"type\":\"nope\",\"num_heads\":4}]}]"),
               "layers[0]", "first mixer must be rope, swa, gla or gdn");
}

TEST(config_rejects_hh_second_not_nope) {
    EXPECT_ERR(cfg_with(TOP, "\"layers\":[{\"mixers\":[{\"type\":\"gla\",\"num_heads\":2},{\"type\":\"rope\",\"num_heads\":2}]},"
                             "{\"mixers\":[{\"type\":\"nope\",\"num_heads\":4}]}]"),
               "layers[0]", "second mixer must be nope (got rope)");
}

TEST(config_rejects_three_mixers_and_none) {
    EXPECT_ERR(cfg_with(TOP, "\"layers\":[{\"mixers\":[{\"type\":\"gla\",\"num_heads\":2},{\"type\":\"nope\",\"num_heads\":1},"
                             "{\"type\":\"nope\",\"num_heads\":1}]},{\"mixers\":[{\"type\":\"nope\",\"num_heads\":4}]}]"),
               "layers[0]", "3 mixers");
    EXPECT_ERR(cfg_with(TOP, "\"layers\":[{\"mixers\":[]},{\"mixers\":[{\"type\":\"nope\",\"num_heads\":4}]}]"),
               "layers[0]", "empty");
}

TEST(config_rejects_non_positive_sizes) {
    char top[512];
    snprintf(top, sizeof top, "%s", TOP);
    char *p = strstr(top, "\"hidden_size\":16");
    memcpy(p, "\"hidden_size\":00", 16);
    EXPECT_ERR(cfg_with(top, LAYERS), "'hidden_size' = 0 is out of range");
    EXPECT_ERR(cfg_with(TOP, "\"layers\":[{\"mixers\":[{\"type\":\"gla\",\"num_heads\":-1}]},{\"mixers\":[{\"type\":\"nope\",\"num_heads\":4}]}]"),
               "layers[0].mixers[0]", "'num_heads' = -1 is out of range");
    EXPECT_ERR(cfg_with(TOP, "\"layers\":[{\"mixers\":[{\"type\":\"swa\",\"num_heads\":4,\"window\":0}]},{\"mixers\":[{\"type\":\"nope\",\"num_heads\":4}]}]"),
               "layers[0].mixers[0]", "'window' = 0");
    EXPECT_ERR(cfg_with(TOP ",\"norm_eps\":-1", LAYERS), "'norm_eps' must be a positive");
    EXPECT_ERR(cfg_with(TOP, "\"layers\":[{\"mixers\":[{\"type\":\"gla\",\"num_heads\":2.5}]},{\"mixers\":[{\"type\":\"nope\",\"num_heads\":4}]}]"),
               "'num_heads' must be an integer");
}

TEST(config_head_dim_or_every_mixer) {
    const char *top = "\"model_type\":\"hybrid\",\"vocab_size\":258,\"hidden_size\":16,\"intermediate_size\":32,"
                      "\"num_hidden_layers\":1,\"train_context\":64";
    EXPECT_ERR(cfg_with(top, "\"layers\":[{\"mixers\":[{\"type\":\"gla\",\"num_heads\":4,\"head_k_dim\":4}]}]"),
               "layers[0].mixers[0]", "missing required key 'head_v_dim'");
    hs_config c;
    char err[HS_ERR_LEN];
    CHECK(parse(&c, cfg_with(top, "\"layers\":[{\"mixers\":[{\"type\":\"gla\",\"num_heads\":4,\"head_k_dim\":4,\"head_v_dim\":8}]}]"), err) == 0,
          "%.400s", err);
    CHECK(c.layers[0].mixers[0].head_v_dim == 8 && c.head_dim == 0, "explicit head dims");
}

TEST(config_rejects_kv_heads_not_dividing) {
    EXPECT_ERR(cfg_with(TOP, "\"layers\":[{\"mixers\":[{\"type\":\"gla\",\"num_heads\":4}]},{\"mixers\":[{\"type\":\"nope\",\"num_heads\":4,\"num_kv_heads\":3}]}]"),
               "layers[1].mixers[0]", "num_heads (4) is not divisible by num_kv_heads (3)");
}

TEST(config_rejects_unknown_type_and_model_type) {
    EXPECT_ERR(cfg_with(TOP, "\"layers\":[{\"mixers\":[{\"type\":\"mamba\",\"num_heads\":4}]},{\"mixers\":[{\"type\":\"nope\",\"num_heads\":4}]}]"),
               "layers[0].mixers[0]", "unknown mixer type 'mamba'");
    char top[512];
    snprintf(top, sizeof top, "%s", TOP);
    memcpy(strstr(top, "hybrid"), "llama\" ", 7);
    EXPECT_ERR(cfg_with(top, LAYERS), "model_type 'llama' is not supported");
}

TEST(config_rejects_non_json) {
    EXPECT_ERR("{\"model_type\": \"hybrid\", ", "not valid JSON");
    EXPECT_ERR("[1, 2]", "top level must be a JSON object");
    EXPECT_ERR("{\"model_type\":\"hybrid\"} trailing", "not valid JSON");
    EXPECT_ERR("{\"model_type\":\"hyb\x01rid\"}", "control character");
}

TEST(config_rejects_odd_rope_dim) {
    EXPECT_ERR(cfg_with(TOP, "\"layers\":[{\"mixers\":[{\"type\":\"rope\",\"num_heads\":4,\"head_k_dim\":3}]},{\"mixers\":[{\"type\":\"nope\",\"num_heads\":4}]}]"),
               "layers[0].mixers[0]", "even head_k_dim");
}

TEST(config_warns_unknown_keys_not_training) {
    hs_config c;
    char err[HS_ERR_LEN], warn[4096];
    CHECK(parse_capture(&c, cfg_with(TOP ",\"frobnicate\":1,\"training\":{\"lr\":1}",
                                     "\"layers\":[{\"mixers\":[{\"type\":\"gla\",\"num_heads\":4,\"window\":5,\"zap\":1}]},{\"mixers\":[{\"type\":\"nope\",\"num_heads\":4}]}]"),
                        err, warn, sizeof warn) == 0, "%.400s", err);
    CHECK(strstr(warn, "MODEL/config.json: warning: unknown key 'frobnicate'"), "top-level warning missing: %.300s", warn);
    CHECK(strstr(warn, "MODEL/config.json: layers[0].mixers[0]: warning: unknown key 'zap'"), "mixer warning missing: %.300s", warn);
    CHECK(strstr(warn, "layers[0].mixers[0]: warning: gla key 'window'"), "inapplicable key warning missing: %.300s", warn);
    CHECK(!strstr(warn, "training"), "'training' should be silent: %.300s", warn);
}

/* The recipe's "training" record: read where it has the expected shape, never an error. */
TEST(config_training_record) {
    hs_config c;
    char err[HS_ERR_LEN];
    CHECK(parse(&c, cfg_with(TOP, LAYERS), err) == 0, "%.300s", err);
    hs_training_info zero;
    memset(&zero, 0, sizeof zero);
    CHECK(!memcmp(&c.training, &zero, sizeof zero), "no block: nothing recorded (all zero)");
    CHECK(parse(&c, cfg_with(TOP ",\"training\":{\"steps\":500,\"total_steps\":17020,"
                                 "\"earlier_phases\":[{},{},{}],\"data\":{\"p_needle\":0.6,\"p_kv\":0.3,\"p_copy\":0}}",
                             LAYERS), err) == 0, "%.300s", err);
    CHECK(c.training.present && c.training.has_steps && c.training.steps == 17020 && c.training.phases == 4, "steps %lld phases %d",
          c.training.steps, c.training.phases);
    CHECK(c.training.shares == 7 && c.training.p_needle == 0.6 && c.training.p_kv == 0.3 && c.training.p_copy == 0,
          "mixture %g %g %g", c.training.p_needle, c.training.p_kv, c.training.p_copy);
    /* parts that continue a phase cut by a device call's end (phase_start > 0) count with it;
     * a first record that continues one still counts (its start was not recorded) */
    CHECK(parse(&c, cfg_with(TOP ",\"training\":{\"total_steps\":7785,\"phase_start\":0,\"earlier_phases\":"
                                 "[{\"phase_start\":0},{},{\"phase_start\":0},{\"phase_start\":824},{\"phase_start\":\"x\"}]}",
                             LAYERS), err) == 0, "%.300s", err);
    CHECK(c.training.phases == 5, "continued parts: phases %d (want 5)", c.training.phases);
    CHECK(parse(&c, cfg_with(TOP ",\"training\":{\"total_steps\":3000,\"phase_start\":500,\"earlier_phases\":"
                                 "[{\"phase_start\":200}]}", LAYERS), err) == 0, "%.300s", err);
    CHECK(c.training.phases == 1, "a continued first record and its continuation: phases %d (want 1)", c.training.phases);
    /* one phase: "steps" when there is no total; shares that are absent stay unrecorded */
    CHECK(parse(&c, cfg_with(TOP ",\"training\":{\"steps\":1870,\"data\":{\"p_needle\":0.7}}", LAYERS), err) == 0,
          "%.300s", err);
    CHECK(c.training.has_steps && c.training.steps == 1870 && c.training.phases == 1 && c.training.shares == 1 &&
          c.training.p_needle == 0.7, "partial record");
    /* shapes that are not the recipe's: loaded, nothing recorded from them */
    const char *odd[] = {
        "\"training\":\"yes\"", "\"training\":[1,2]", "\"training\":{\"total_steps\":-5}",
        "\"training\":{\"total_steps\":1.5,\"earlier_phases\":7}", "\"training\":{\"total_steps\":\"many\"}",
        "\"training\":{\"data\":{\"p_needle\":1.5,\"p_kv\":-0.1,\"p_copy\":\"x\"}}", "\"training\":{\"data\":[0.5]}",
        "\"training\":{\"total_steps\":1e300}", "\"training\":null",
    };
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
        char top[1024];
        snprintf(top, sizeof top, TOP ",%s", odd[i]);
        CHECK(parse(&c, cfg_with(top, LAYERS), err) == 0, "%s: %.300s", odd[i], err);
        CHECK(!c.training.has_steps && !c.training.shares && !c.training.phases,
              "%s: recorded steps %d / shares %d / phases %d", odd[i], c.training.has_steps, c.training.shares,
              c.training.phases);
    }
}

TEST(config_json_round_trip) {
    hs_config a, b;
    char err[HS_ERR_LEN];
    const char *layers = "\"layers\":[{\"mixers\":[{\"type\":\"swa\",\"num_heads\":3,\"window\":7,\"rope_theta\":500000.0},"
                         "{\"type\":\"nope\",\"num_heads\":1}]},{\"mixers\":[{\"type\":\"gdn\",\"num_heads\":2,"
                         "\"allow_neg_eigval\":true,\"conv_size\":3,\"norm_eps\":1e-6,\"head_v_dim\":6}]}]";
    CHECK(parse(&a, cfg_with(TOP ",\"norm_eps\":1e-5,\"tie_word_embeddings\":true,\"tokenizer\":{\"type\":\"bytes\",\"bos_id\":1,\"eos_id\":2}", layers), err) == 0,
          "%.400s", err);
    char *json = hs_config_to_json(&a, "{\"training\":{\"steps\":10}}");
    CHECK(json && strstr(json, "\"training\""), "extra JSON not appended");
    int rc = parse(&b, json, err);
    free(json);
    CHECK(rc == 0, "%.400s", err);
    /* the extra block is now the config's training record; everything else is unchanged */
    CHECK(b.training.present && b.training.has_steps && b.training.steps == 10, "the training record");
    CHECK(!a.training.present, "a had no record");
    b.training = a.training;
    CHECK(memcmp(&a, &b, sizeof a) == 0, "config changed through to_json/parse");
    CHECK(b.layers[0].mixers[0].rope_theta == 500000.0f && b.layers[1].mixers[0].head_v_dim == 6 &&
          b.bos_id == 1 && b.tie_word_embeddings == 1, "values");
    CHECK(hs_config_to_json(&a, "[1]") == NULL, "extra JSON that is not an object accepted");
}

TEST(config_param_count_by_hand) {
    hs_config c;
    char err[HS_ERR_LEN];
    /* d=16, F=32, V=258, untied. layer 0: gla H=4 dk=dv=4 r=16: q,k,v,o 4*16*16 = 1024,
     * gk0 16*16 = 256, gk1 16*16 = 256, bias 16, g_proj 256, g_norm 4 -> 1812.
     * layer 1: nope: 1024. Each layer: norms 32 + mlp 3*32*16 = 1536 -> 1568.
     * Embeddings + head 2*258*16 = 8256, final norm 16. */
    CHECK(parse(&c, cfg_with(TOP, LAYERS), err) == 0, "%.400s", err);
    long long want = 8256 + 16 + 2 * 1568 + 1812 + 1024;
    CHECK(hs_config_param_count(&c) == want, "param count %lld, want %lld", hs_config_param_count(&c), want);
    int b, n;
    CHECK(hs_config_total_heads(&c, &b, &n) == 8 && b == 4 && n == 4, "head counts");
}

TEST(config_load_missing_file) {
    hs_config c;
    char err[HS_ERR_LEN];
    CHECK(hs_config_load(&c, "/nonexistent/config.json", err, sizeof err) == -1, "loaded a missing file");
    CHECK(strstr(err, "/nonexistent/config.json: cannot open"), "%.400s", err);
}

/* ---- presets and flags ---------------------------------------------------------------- */

static int build(hs_config *c, const char *flags, char *err) {
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
    return hs_preset_build(c, &a, err, HS_ERR_LEN);
}

static void pattern(char *out, const hs_config *c) {
    for (int i = 0; i < c->num_layers; i++) out[i] = c->layers[i].mixers[0].type == HS_NOPE ? 'N' : 'E';
    out[c->num_layers] = 0;
}

TEST(preset_lh_ratio_patterns) {
    hs_config c;
    char err[HS_ERR_LEN], p[300];
    CHECK(build(&c, "--layers 8 --ratio 3:1", err) == 0, "%.400s", err);
    pattern(p, &c);
    CHECK(!strcmp(p, "EEENEEEN"), "3:1 over 8 layers: %s", p);
    CHECK(build(&c, "--layers 8 --ratio 1:3 --efficient swa", err) == 0, "%.400s", err);
    pattern(p, &c);
    CHECK(!strcmp(p, "ENNNENNN") && c.layers[0].mixers[0].type == HS_SWA && c.layers[0].mixers[0].window == 128,
          "1:3: %s", p);
    CHECK(build(&c, "--layers 6 --ratio 1:0 --efficient gdn", err) == 0, "%.400s", err);
    pattern(p, &c);
    CHECK(!strcmp(p, "EEEEEE"), "1:0: %s", p);
    CHECK(build(&c, "--layers 4 --efficient nope", err) == 0, "%.400s", err);
    pattern(p, &c);
    CHECK(!strcmp(p, "NNNN"), "nope: %s", p);
}

TEST(preset_hh_splits_heads) {
    hs_config c;
    char err[HS_ERR_LEN];
    CHECK(build(&c, "--layout HH --heads 8 --ratio 3:1 --efficient rope", err) == 0, "%.400s", err);
    for (int i = 0; i < c.num_layers; i++)
        CHECK(c.layers[i].n_mixers == 2 && c.layers[i].mixers[0].type == HS_ROPE &&
              c.layers[i].mixers[0].num_heads == 6 && c.layers[i].mixers[1].type == HS_NOPE &&
              c.layers[i].mixers[1].num_heads == 2, "layer %d split", i);
    CHECK(build(&c, "--layout HH --heads 4 --ratio 1:0", err) == 0, "%.400s", err);
    CHECK(c.layers[0].n_mixers == 1 && c.layers[0].mixers[0].type == HS_GLA && c.layers[0].mixers[0].num_heads == 4, "1:0 HH");
    CHECK(build(&c, "--layout HH --heads 6 --ratio 3:1", err) == -1, "6 heads cannot split 3:1");
    CHECK(strstr(err, "--ratio 3:1") && strstr(err, "6 heads"), "%.400s", err);
}

TEST(preset_flags_override_in_any_order) {
    hs_config c;
    char err[HS_ERR_LEN];
    CHECK(build(&c, "--hidden 96 --preset tiny --layers 2", err) == 0, "%.400s", err);
    CHECK(c.hidden_size == 96 && c.num_layers == 2 && c.head_dim == 16 && c.intermediate_size == 128 &&
          c.train_context == 1024, "tiny + overrides");
    CHECK(build(&c, "--preset 1b --train-context 8k --window 64 --efficient swa", err) == 0, "%.400s", err);
    CHECK(c.hidden_size == 2048 && c.num_layers == 16 && c.layers[0].mixers[0].num_heads == 16 &&
          c.intermediate_size == 7168 && c.vocab_size == 128256 && c.train_context == 8192 &&
          c.layers[0].mixers[0].window == 64, "1b + overrides");
}

TEST(preset_paper_shapes) {
    const char *names[] = { "376m", "776m", "1b", "3b" };
    int hidden[] = { 1024, 1536, 2048, 3072 }, layers[] = { 8, 12, 16, 24 }, heads[] = { 8, 12, 16, 24 },
        ffn[] = { 3584, 5376, 7168, 10752 };
    for (int k = 0; k < 4; k++) {
        hs_config c;
        char err[HS_ERR_LEN], flags[64];
        snprintf(flags, sizeof flags, "--preset %s", names[k]);
        CHECK(build(&c, flags, err) == 0, "%.400s", err);
        CHECK(c.hidden_size == hidden[k] && c.num_layers == layers[k] && c.layers[0].mixers[0].num_heads == heads[k] &&
              c.intermediate_size == ffn[k] && c.vocab_size == 128256 && c.head_dim == 128 && c.train_context == 4096,
              "%s shape", names[k]);
    }
}

TEST(preset_bad_flags_named) {
    hs_config c;
    char err[HS_ERR_LEN];
    CHECK(build(&c, "--ratio 3-1", err) == -1 && strstr(err, "--ratio"), "%.400s", err);
    /* values that overflowed strtoll * 1024 and sscanf's %d before the shared count grammar */
    CHECK(build(&c, "--ratio 99999999999:1", err) == -1 && strstr(err, "--ratio"), "%.400s", err);
    CHECK(build(&c, "--ratio 3:-1", err) == -1 && strstr(err, "--ratio"), "%.400s", err);
    CHECK(build(&c, "--ratio 3:1x", err) == -1 && strstr(err, "--ratio"), "%.400s", err);
    CHECK(build(&c, "--hidden 99999999999999999m", err) == -1 && strstr(err, "--hidden"), "%.400s", err);
    CHECK(build(&c, "--ffn 9007199254740993k", err) == -1 && strstr(err, "--ffn"), "%.400s", err);
    CHECK(build(&c, "--hidden -64", err) == -1 && strstr(err, "--hidden"), "%.400s", err);
    CHECK(build(&c, "--efficient lstm", err) == -1 && strstr(err, "--efficient") && strstr(err, "lstm"), "%.400s", err);
    CHECK(build(&c, "--layout XY", err) == -1 && strstr(err, "--layout"), "%.400s", err);
    CHECK(build(&c, "--hidden 0", err) == -1 && strstr(err, "--hidden"), "%.400s", err);
    CHECK(build(&c, "--preset 7b", err) == -1 && strstr(err, "--preset") && strstr(err, "7b"), "%.400s", err);
    CHECK(build(&c, "--kv-heads 3", err) == -1 && strstr(err, "--kv-heads"), "%.400s", err);
    CHECK(build(&c, "--layers", err) == -1 && strstr(err, "--layers needs a value"), "%.400s", err);
    CHECK(build(&c, "--head-dim 3 --efficient rope", err) == -1 && strstr(err, "even"), "%.400s", err);
}

/* ---- fla dialects ---------------------------------------------------------------------- */

TEST(config_fla_gla_with_attn_layers) {
    hs_config c;
    char err[HS_ERR_LEN], warn[4096];
    const char *j = "{\"model_type\":\"gla\",\"hidden_size\":64,\"num_hidden_layers\":4,\"num_heads\":4,"
                    "\"expand_k\":0.5,\"expand_v\":1,\"vocab_size\":300,\"max_position_embeddings\":512,"
                    "\"use_short_conv\":true,\"feature_map\":null,\"architectures\":[\"GLAForCausalLM\"],"
                    "\"fuse_norm\":true,\"bos_token_id\":1,\"eos_token_id\":2,\"mystery\":3,"
                    "\"attn\":{\"layers\":[1,3],\"num_heads\":2,\"num_kv_heads\":1,\"window_size\":null,\"rope_theta\":500.0}}";
    CHECK(parse_capture(&c, j, err, warn, sizeof warn) == 0, "%.400s", err);
    CHECK(c.num_layers == 4 && c.hidden_size == 64 && c.vocab_size == 300 && c.train_context == 512, "top");
    /* fla GatedMLP: 256 * ceil(int(64 * 4 * 2/3) / 256) = 256 */
    CHECK(c.intermediate_size == 256, "intermediate %d", c.intermediate_size);
    const hs_mixer_config *g = &c.layers[0].mixers[0], *a = &c.layers[1].mixers[0];
    CHECK(g->type == HS_GLA && g->num_heads == 4 && g->head_k_dim == 8 && g->head_v_dim == 16 &&
          g->use_short_conv == 1 && g->norm_eps == 1e-6f && g->gate_low_rank_dim == 16, "gla mixer");
    CHECK(a->type == HS_ROPE && a->num_heads == 2 && a->num_kv_heads == 1 && a->head_k_dim == 32 &&
          a->rope_theta == 500.0f, "attn mixer");
    CHECK(c.layers[2].mixers[0].type == HS_GLA && c.layers[3].mixers[0].type == HS_ROPE, "layer pattern");
    CHECK(strstr(warn, "unknown key 'mystery'") && !strstr(warn, "architectures") && !strstr(warn, "fuse_norm"),
          "warnings: %.300s", warn);
}

TEST(config_fla_gdn_defaults_and_window_nope) {
    hs_config c;
    char err[HS_ERR_LEN];
    const char *j = "{\"model_type\":\"gated_deltanet\",\"hidden_size\":128,\"num_hidden_layers\":3,\"head_dim\":32,"
                    "\"num_heads\":2,\"intermediate_size\":200,\"allow_neg_eigval\":true,"
                    "\"attn\":{\"layers\":[0],\"num_heads\":4,\"window_size\":64}}";
    CHECK(parse(&c, j, err) == 0, "%.400s", err);
    const hs_mixer_config *s = &c.layers[0].mixers[0], *g = &c.layers[1].mixers[0];
    CHECK(s->type == HS_SWA && s->window == 64 && s->rope_theta == 10000.0f && s->head_k_dim == 32, "swa layer");
    CHECK(g->type == HS_GDN && g->head_k_dim == 32 && g->head_v_dim == 64 && g->use_short_conv == 1 &&
          g->allow_neg_eigval == 1 && g->conv_size == 4, "gdn mixer (expand_v 2)");
    CHECK(c.intermediate_size == 200 && c.train_context == 2048 && c.vocab_size == 32000, "fla defaults");
    CHECK(parse(&c, "{\"model_type\":\"gated_deltanet\",\"hidden_size\":64,\"num_hidden_layers\":2,\"head_dim\":16,"
                    "\"attn\":{\"layers\":[1],\"num_heads\":4,\"rope_theta\":null}}", err) == 0, "%.400s", err);
    CHECK(c.layers[1].mixers[0].type == HS_NOPE, "rope_theta null is NoPE");
}

TEST(config_fla_rejects_unsupported) {
    EXPECT_ERR("{\"model_type\":\"gla\",\"feature_map\":\"relu\"}", "'feature_map' is not supported");
    EXPECT_ERR("{\"model_type\":\"gla\",\"use_output_gate\":false}", "'use_output_gate' false");
    EXPECT_ERR("{\"model_type\":\"gla\",\"num_heads\":4,\"num_kv_heads\":2}", "'num_kv_heads' != num_heads");
    EXPECT_ERR("{\"model_type\":\"gated_deltanet\",\"num_v_heads\":12}", "'num_v_heads' != num_heads");
    EXPECT_ERR("{\"model_type\":\"gated_deltanet\",\"use_gate\":false}", "'use_gate' false");
    EXPECT_ERR("{\"model_type\":\"gla\",\"num_hidden_layers\":2,\"attn\":{\"layers\":[5],\"num_heads\":2}}",
               "attn: layers: 5 is not a layer index");
    EXPECT_ERR("{\"model_type\":\"gla\",\"attn\":{\"layers\":[0],\"num_heads\":2,\"qkv_bias\":true}}", "qkv_bias");
    EXPECT_ERR("{\"model_type\":\"gla\",\"hidden_act\":\"gelu\"}", "hidden_act");
    /* expand factors whose product overflowed the int conversion (fuzz_config, UBSan) */
    EXPECT_ERR("{\"model_type\":\"gated_deltanet\",\"expand_v\":1e300}", "'expand_v' = 1e+300 gives a size");
    EXPECT_ERR("{\"model_type\":\"gla\",\"expand_k\":-1e30}", "'expand_k' = -1e+30 gives a size");
}
