/* probe / map / diff --json: every document parses with cJSON and carries every field, with
 * values consistent with the request (run against $HS_BIN on small saved models). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "analysis_api.h"
#include "test.h"

/* Saves a 2-layer byte-vocabulary model (gla LH layer + swa/nope HH layer). */
static int save_model(const char *dir, uint64_t seed, int hidden, char *err) {
    char json[2048];
    snprintf(json, sizeof json,
             "{\"model_type\":\"hybrid\",\"vocab_size\":258,\"hidden_size\":%d,"
             "\"intermediate_size\":48,\"num_hidden_layers\":2,\"head_dim\":8,"
             "\"train_context\":64,\"layers\":[{\"mixers\":[{\"type\":\"gla\",\"num_heads\":2,"
             "\"gate_low_rank_dim\":4}]},{\"mixers\":[{\"type\":\"swa\",\"num_heads\":2,"
             "\"num_kv_heads\":1,\"window\":16},{\"type\":\"nope\",\"num_heads\":2}]}]}", hidden);
    hs_model *m = calloc(1, sizeof *m);
    if (!m) return -1;
    int rc = hs_config_parse(&m->cfg, json, strlen(json), "test.json", err, HS_ERR_LEN);
    if (!rc) rc = hs_model_alloc(m, err, HS_ERR_LEN);
    if (!rc) { hs_model_init_random(m, seed); rc = hs_model_save(m, dir, 0, NULL, err, HS_ERR_LEN); }
    hs_model_free(m);
    free(m);
    return rc;
}

/* Runs cmd, returns its stdout (malloc'd) and exit status. */
static char *run(const char *cmd, int *status) {
    FILE *p = popen(cmd, "r");
    if (!p) { *status = -1; return NULL; }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n + 1 >= cap) { cap *= 2; buf = realloc(buf, cap); }
        size_t got = fread(buf + n, 1, cap - n - 1, p);
        if (!got) break;
        n += got;
    }
    buf[n] = 0;
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return buf;
}

static int is_num(const cJSON *o, const char *k) { return cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, k)); }
static double num(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k)->valuedouble; }
static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static const char *check_knobs(const cJSON *k) {
    if (!cJSON_IsObject(k)) return "knobs missing";
    const char *str[] = { "description", "swla" }, *nums[] = { "log_scale_L0", "swla_window", "swla_stride", "swa_window", "rope_window" };
    for (int i = 0; i < 2; i++) if (!cJSON_IsString(get(k, str[i]))) return str[i];
    for (int i = 0; i < 5; i++) if (!is_num(k, nums[i])) return nums[i];
    if (!cJSON_IsBool(get(k, "log_scale"))) return "log_scale";
    if (!cJSON_IsArray(get(k, "ablate"))) return "ablate";
    return NULL;
}

static const char *check_heads(const cJSON *hs, int expect) {
    if (!cJSON_IsArray(hs) || cJSON_GetArraySize(hs) != expect) return "heads count";
    const cJSON *h;
    cJSON_ArrayForEach(h, hs) {
        const char *f[] = { "layer", "mixer", "head", "entropy", "hit_rate", "retrieval" };
        for (int i = 0; i < 6; i++) if (!is_num(h, f[i])) return f[i];
        if (!cJSON_IsString(get(h, "type"))) return "type";
        if (num(h, "entropy") < 0 || num(h, "entropy") > 1 + 1e-9) return "entropy range";
        if (num(h, "hit_rate") < 0 || num(h, "hit_rate") > 1) return "hit_rate range";
    }
    return NULL;
}

static const char *bin(void) { return getenv("HS_BIN"); }

TEST(cli_probe_json_free_text) {
    if (!bin()) SKIP("HS_BIN not set (run through tests/run.sh)");
    const char *dir = hs_test_tmpdir();
    char err[HS_ERR_LEN], cmd[2048];
    CHECK(save_model(dir, 3, 16, err) == 0, "save: %.300s", err);
    snprintf(cmd, sizeof cmd, "'%s' probe '%s' --text 'the cat sat on the mat' --span 1:4 "
             "--probe-positions 5:9,12 --gen 3 --topk 2 --swla --swla-window 8 --json 2>/dev/null",
             bin(), dir);
    int st;
    char *out = run(cmd, &st);
    cJSON *j = cJSON_Parse(out);
    free(out);
    CHECK(st == 0 && j, "probe exited %d or printed no JSON", st);
    const char *why = NULL;
    const cJSON *tok = get(j, "tokens"), *pp = get(j, "probe_positions"), *sp = get(j, "span");
    if (!cJSON_IsString(get(j, "model"))) why = "model";
    else if (!is_num(j, "T") || num(j, "T") != 23) why = "T";
    else if (!cJSON_IsNull(get(j, "task"))) why = "task should be null";
    else if (!cJSON_IsArray(tok) || cJSON_GetArraySize(tok) != 23 || cJSON_GetArrayItem(tok, 0)->valueint != 256) why = "tokens";
    else if (!cJSON_IsArray(pp) || cJSON_GetArraySize(pp) != 5 || cJSON_GetArrayItem(pp, 4)->valueint != 12) why = "probe_positions";
    else if (!cJSON_IsArray(sp) || cJSON_GetArraySize(sp) != 2 || cJSON_GetArrayItem(sp, 1)->valueint != 4) why = "span";
    else if (!is_num(j, "topk") || num(j, "topk") != 2) why = "topk";
    else if ((why = check_knobs(get(j, "knobs")))) {}
    else if (strcmp(get(get(j, "knobs"), "swla")->valuestring, "exact") || num(get(j, "knobs"), "swla_window") != 8) why = "knob values";
    else if (!cJSON_IsArray(get(j, "generated_tokens")) || cJSON_GetArraySize(get(j, "generated_tokens")) > 3) why = "generated_tokens";
    else if (!cJSON_IsString(get(j, "answer"))) why = "answer";
    else if (!cJSON_IsNull(get(j, "correct"))) why = "correct should be null without --expect";
    else why = check_heads(get(j, "heads"), 6);
    cJSON_Delete(j);
    CHECK(!why, "probe --json: bad field: %s", why);
}

TEST(cli_probe_json_task) {
    if (!bin()) SKIP("HS_BIN not set (run through tests/run.sh)");
    const char *dir = hs_test_tmpdir();
    char err[HS_ERR_LEN], cmd[2048];
    CHECK(save_model(dir, 4, 16, err) == 0, "save: %.300s", err);
    snprintf(cmd, sizeof cmd, "'%s' probe '%s' --task sk1 --length 400 --depth 30 --seed 2 --json 2>&1",
             bin(), dir);
    int st;
    char *out = run(cmd, &st);
    cJSON *j = cJSON_Parse(out);
    CHECK(st == 0 && j, "probe --task exited %d: %.200s", st, out);
    free(out);
    const cJSON *t = get(j, "task"), *sp = get(j, "span"), *pp = get(j, "probe_positions");
    const char *why = NULL;
    if (!cJSON_IsObject(t)) why = "task";
    else if (strcmp(get(t, "name")->valuestring, "sk1") || num(t, "length") != 400 || num(t, "depth") != 30 ||
             num(t, "seed") != 2 || !cJSON_IsString(get(t, "key")) || !cJSON_IsString(get(t, "value")) ||
             !is_num(t, "needle_start") || !is_num(t, "needle_end")) why = "task fields";
    else if (num(j, "T") != 400 || cJSON_GetArraySize(get(j, "tokens")) != 400) why = "length";
    else if (!cJSON_IsArray(sp) || cJSON_GetArrayItem(sp, 1)->valueint - cJSON_GetArrayItem(sp, 0)->valueint !=
             (int)strlen(get(t, "value")->valuestring)) why = "span is the value's tokens";
    else if (!cJSON_IsArray(pp) || cJSON_GetArrayItem(pp, cJSON_GetArraySize(pp) - 1)->valueint != 399) why = "probe positions end at the prompt end";
    else if (!cJSON_IsBool(get(j, "correct"))) why = "correct";
    else if (cJSON_GetArraySize(get(j, "generated_tokens")) > 7 + 8) why = "generated length";
    else if (num(j, "topk") != hs_topk_default(400)) why = "default topk";
    else why = check_heads(get(j, "heads"), 6);
    cJSON_Delete(j);
    CHECK(!why, "probe --task --json: bad field: %s", why);
}

TEST(cli_map_json_and_npy) {
    if (!bin()) SKIP("HS_BIN not set (run through tests/run.sh)");
    const char *dir = hs_test_tmpdir();
    char err[HS_ERR_LEN], cmd[2048], npy[1024];
    CHECK(save_model(dir, 5, 16, err) == 0, "save: %.300s", err);
    snprintf(npy, sizeof npy, "%s/map.npy", dir);
    snprintf(cmd, sizeof cmd, "'%s' map '%s' --text 'abcdefghijklmnopqrstuvwxyz0123456789' --head 1.0.1 "
             "--bins 8,6 --zoom 4:37,0:30 --agg max --out '%s' --json 2>/dev/null", bin(), dir, npy);
    int st;
    char *out = run(cmd, &st);
    cJSON *j = cJSON_Parse(out);
    free(out);
    CHECK(st == 0 && j, "map exited %d or printed no JSON", st);
    const char *why = NULL;
    const cJSON *b = get(j, "bins"), *z = get(j, "zoom");
    if (strcmp(get(j, "head")->valuestring, "1.0.1") || strcmp(get(j, "type")->valuestring, "swa")) why = "head/type";
    else if (num(j, "T") != 37) why = "T";
    else if (!cJSON_IsArray(b) || cJSON_GetArrayItem(b, 0)->valueint != 8 || cJSON_GetArrayItem(b, 1)->valueint != 6) why = "bins";
    else if (!cJSON_IsArray(z) || cJSON_GetArrayItem(z, 0)->valueint != 4 || cJSON_GetArrayItem(z, 3)->valueint != 30) why = "zoom";
    else if (strcmp(get(j, "agg")->valuestring, "max") || !cJSON_IsBool(get(j, "exact")) || !cJSON_IsTrue(get(j, "exact"))) why = "agg/exact";
    else if (!is_num(j, "rows_per_bin") || !is_num(j, "rows_computed") || num(j, "rows_computed") != 33) why = "rows";
    else if (!is_num(j, "nan_cells") || !is_num(j, "min") || !is_num(j, "max") || !is_num(j, "mean")) why = "summary";
    else if ((why = check_knobs(get(j, "knobs")))) {}
    else if (!cJSON_IsString(get(j, "out"))) why = "out";
    cJSON_Delete(j);
    CHECK(!why, "map --json: bad field: %s", why);
    /* the .npy: float32 [8, 6] */
    FILE *f = fopen(npy, "rb");
    CHECK(f, "map.npy not written");
    char hdr[256] = { 0 };
    size_t got = fread(hdr, 1, sizeof hdr - 1, f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    CHECK(got > 10 && !memcmp(hdr, "\x93NUMPY", 6) && strstr(hdr + 10, "'<f4'") && strstr(hdr + 10, "(8, 6)"),
          "npy header: %.100s", hdr + 10);
    int hl = (unsigned char)hdr[8] | ((unsigned char)hdr[9] << 8);
    CHECK(size == 10 + hl + 8 * 6 * 4, "npy size %ld", size);
}

TEST(cli_diff_json_and_shape_error) {
    if (!bin()) SKIP("HS_BIN not set (run through tests/run.sh)");
    char a[512], b[512], c[512], err[HS_ERR_LEN], cmd[2048];
    snprintf(a, sizeof a, "%s", hs_test_tmpdir());
    snprintf(b, sizeof b, "%s", hs_test_tmpdir());
    snprintf(c, sizeof c, "%s", hs_test_tmpdir());
    CHECK(save_model(a, 6, 16, err) == 0 && save_model(b, 7, 16, err) == 0 && save_model(c, 6, 24, err) == 0,
          "save: %.300s", err);
    snprintf(cmd, sizeof cmd, "'%s' diff '%s' '%s' --json 2>/dev/null", bin(), a, b);
    int st;
    char *out = run(cmd, &st);
    cJSON *j = cJSON_Parse(out);
    free(out);
    CHECK(st == 0 && j, "diff exited %d or printed no JSON", st);
    const char *why = NULL;
    const cJSON *hs = get(j, "heads"), *h;
    if (!cJSON_IsString(get(j, "model_a")) || !cJSON_IsString(get(j, "model_b"))) why = "models";
    else if (!cJSON_IsArray(hs) || cJSON_GetArraySize(hs) != 6) why = "heads";
    else if (!cJSON_IsObject(get(j, "mean_by_type")) || !cJSON_IsObject(get(get(j, "mean_by_type"), "gla"))) why = "mean_by_type";
    else {
        cJSON_ArrayForEach(h, hs) {
            if (!is_num(h, "layer") || !is_num(h, "mixer") || !is_num(h, "head") || !cJSON_IsString(get(h, "type")) ||
                !is_num(h, "r_q") || !is_num(h, "r_k") || !(num(h, "r_q") > 0.1) || !(num(h, "r_k") > 0.1)) { why = "head fields"; break; }
        }
    }
    cJSON_Delete(j);
    CHECK(!why, "diff --json: bad field: %s", why);
    snprintf(cmd, sizeof cmd, "'%s' diff '%s' '%s' --json 2>/dev/null", bin(), a, a);
    out = run(cmd, &st);
    j = cJSON_Parse(out);
    free(out);
    CHECK(st == 0 && j, "diff A A");
    int zero = 1;
    cJSON_ArrayForEach(h, get(j, "heads")) if (num(h, "r_q") != 0 || num(h, "r_k") != 0) zero = 0;
    cJSON_Delete(j);
    CHECK(zero, "a model against itself has r_Q = r_K = 0");
    snprintf(cmd, sizeof cmd, "'%s' diff '%s' '%s' 2>&1", bin(), a, c);
    out = run(cmd, &st);
    int one_line = out && strchr(out, '\n') == out + strlen(out) - 1 && strstr(out, "differ");
    free(out);
    CHECK(st == 2 && one_line, "shape mismatch: exit %d, expected 2 with one line naming the difference", st);
}
