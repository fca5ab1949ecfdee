/* Needle generator (assets/NEEDLE.md) and scorer. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "needle.h"
#include "presets.h"

static int load_assets(hs_assets *a, char *msg, size_t n) {
    char dir[1024];
    if (hs_assets_find(dir, sizeof dir, NULL, msg, n)) return -1;
    return hs_assets_load(a, dir, msg, n);
}

/* Decodes tokens [s, e) into text. */
static void span_text(char *out, size_t n, const hs_needle_sample *s, int a, int b) {
    size_t k = 0;
    for (int i = a; i < b && k + 1 < n; i++) out[k++] = (char)s->tokens[i];
    out[k] = 0;
}

static int count_in(const char *text, const char *v) {
    int c = 0;
    for (const char *p = strstr(text, v); p; p = strstr(p + 1, v)) c++;
    return c;
}

static const char *kind(hs_needle_task t) { return t == HS_SK3 ? "uuid" : "number"; }

/* Every structural promise of one sample; returns NULL or what is wrong. */
static const char *check_sample(const hs_needle_sample *s, char *why, size_t n) {
    char buf[512], want[512];
    if (s->tokens[0] != 256) return "first token is not BOS";
    for (int i = 1; i < s->length; i++)
        if (s->tokens[i] < 1 || s->tokens[i] > 255) return "a non-byte token after BOS";
    char *text = hs_needle_prompt_text(s);
    if ((int)strlen(text) != s->length - 1) { free(text); return "prompt text length != L-1"; }
    int occ = count_in(text, s->value);
    free(text);
    if (occ != 1) { snprintf(why, n, "value occurs %d times", occ); return why; }
    span_text(buf, sizeof buf, s, s->span_start, s->span_end);
    if (strcmp(buf, s->value)) { snprintf(why, n, "span decodes to '%.200s'", buf); return why; }
    span_text(buf, sizeof buf, s, s->needle_start, s->needle_end);
    snprintf(want, sizeof want, "One of the special magic %ss for %s is: %s.", kind(s->task),
             s->key, s->value);
    if (strcmp(buf, want)) { snprintf(why, n, "needle decodes to '%.200s'", buf); return why; }
    if (s->probe_end != s->length) return "probe_end != L";
    span_text(buf, sizeof buf, s, s->probe_start - 1, s->probe_end);
    snprintf(want, sizeof want, "\nWhat is the special magic %s for %s mentioned in the "
             "provided text? The special magic %s for %s mentioned in the provided text is",
             kind(s->task), s->key, kind(s->task), s->key);
    if (strcmp(buf, want)) { snprintf(why, n, "probe region is '%.200s'", buf); return why; }
    if (!(s->span_start > s->needle_start && s->span_end < s->needle_end &&
          s->needle_end < s->probe_start))
        return "positions out of order";
    return NULL;
}

TEST(needle_exact_lengths_and_regions) {
    hs_assets a;
    char msg[512], why[512];
    if (load_assets(&a, msg, sizeof msg)) CHECK(0, "%.300s", msg);
    static const double depths[] = {0, 7.5, 33, 50, 91, 100};
    for (int task = 0; task < HS_NEEDLE_TASKS; task++) {
        int lmin = hs_needle_min_length(&a, (hs_needle_task)task);
        int lengths[40], nl = 0;
        for (int L = lmin; L < lmin + 260; L += 13) lengths[nl++] = L;
        lengths[nl++] = 1000; lengths[nl++] = 1024; lengths[nl++] = 2048; lengths[nl++] = 3001;
        for (int li = 0; li < nl; li++)
            for (int di = 0; di < 6; di++)
                for (uint64_t seed = 0; seed < 3; seed++) {
                    hs_needle_sample s;
                    int rc = hs_needle_generate(&s, &a, (hs_needle_task)task, lengths[li],
                                                depths[di], seed * 977 + 3, msg, sizeof msg);
                    if (rc) { hs_assets_free(&a); CHECK(0, "L=%d: %.300s", lengths[li], msg); }
                    const char *bad = s.length == lengths[li] ? check_sample(&s, why, sizeof why)
                                                              : "length != L";
                    hs_needle_sample_free(&s);
                    if (bad) {
                        hs_assets_free(&a);
                        CHECK(0, "%s L=%d D=%g seed=%llu: %.200s", hs_needle_task_name(task),
                              lengths[li], depths[di], (unsigned long long)(seed * 977 + 3), bad);
                    }
                }
    }
    hs_assets_free(&a);
}

TEST(needle_rejects_bad_requests) {
    hs_assets a;
    char msg[512];
    if (load_assets(&a, msg, sizeof msg)) CHECK(0, "%.300s", msg);
    hs_needle_sample s;
    int lmin = hs_needle_min_length(&a, HS_SK3);
    int rc = hs_needle_generate(&s, &a, HS_SK3, lmin - 1, 50, 1, msg, sizeof msg);
    int rc2 = hs_needle_generate(&s, &a, HS_SK1, 100, 50, 1, msg, sizeof msg);
    int too_small = strstr(msg, "too small") != NULL;
    int rc3 = hs_needle_generate(&s, &a, HS_SK1, 1024, 101, 1, msg, sizeof msg);
    int rc4 = hs_needle_generate(&s, &a, HS_SK1, 1024, -1, 1, msg, sizeof msg);
    int rc5 = hs_needle_generate(&s, &a, HS_SK3, lmin, 50, 1, msg, sizeof msg);
    if (!rc5) hs_needle_sample_free(&s);
    hs_assets_free(&a);
    CHECK(rc == -1 && rc2 == -1 && too_small, "short lengths must be rejected");
    CHECK(rc3 == -1 && rc4 == -1, "depth outside [0,100] must be rejected");
    CHECK(rc5 == 0, "the reported minimum length must work: %.300s", msg);
}

TEST(needle_deterministic_and_seeded) {
    hs_assets a;
    char msg[512];
    if (load_assets(&a, msg, sizeof msg)) CHECK(0, "%.300s", msg);
    int same = 1, differ = 0;
    for (int task = 0; task < HS_NEEDLE_TASKS; task++)
        for (uint64_t seed = 10; seed < 20; seed++) {
            hs_needle_sample s1, s2, s3;
            hs_needle_generate(&s1, &a, (hs_needle_task)task, 1500, 40, seed, msg, sizeof msg);
            hs_needle_generate(&s2, &a, (hs_needle_task)task, 1500, 40, seed, msg, sizeof msg);
            hs_needle_generate(&s3, &a, (hs_needle_task)task, 1500, 40, seed + 1, msg, sizeof msg);
            if (memcmp(s1.tokens, s2.tokens, 1500 * sizeof(int32_t)) || strcmp(s1.key, s2.key) ||
                s1.span_start != s2.span_start)
                same = 0;
            if (strcmp(s1.value, s3.value) && strcmp(s1.key, s3.key)) differ++;
            hs_needle_sample_free(&s1); hs_needle_sample_free(&s2); hs_needle_sample_free(&s3);
        }
    hs_assets_free(&a);
    CHECK(same, "same (task, L, D, seed) gave different prompts");
    CHECK(differ >= 28, "a new seed changed key and value in only %d of 30 cases", differ);
}

/* Filler offset of the needle and the filler's joined length, read back from the tokens. */
static void needle_offsets(const hs_needle_sample *s, int *b, int *J) {
    int hay0 = 1 + (s->task == HS_SK3 ? 126 : 130); /* len(PREFIX) */
    int h_end = s->probe_start - 1;                 /* the '\n' before "What" */
    int pad = 0;
    while (h_end - 1 - pad >= hay0 && s->tokens[h_end - 1 - pad] == ' ') pad++;
    int ln = s->needle_end - s->needle_start;
    int h = h_end - hay0;
    int filler = h - pad - ln;                      /* J + 1 when there is any filler */
    *J = filler > 0 ? filler - 1 : 0;
    *b = s->needle_start - hay0 - (s->needle_start > hay0 ? 1 : 0);
}

/* 1 when the bytes before token index `end` (exclusive) end with a whole source sentence
 * that itself starts right after a space. */
static int ends_with_sentence(const hs_assets *a, int task, const hs_needle_sample *s, int end) {
    static const char *const noise[] = {"The grass is green.", "The sky is blue.",
                                        "The sun is yellow.", "Here we go.", "There and back again."};
    int n = task == HS_SK1 ? 5 : a->n_sentences;
    for (int i = 0; i < n; i++) {
        const char *t = task == HS_SK1 ? noise[i] : a->sentences[i];
        int len = (int)strlen(t);
        if (end - 1 - len < 1) continue;
        int before = s->tokens[end - 1 - len];
        if (before != ' ' && before != '\n') continue;
        int k = 0;
        while (k < len && s->tokens[end - 1 - len + 1 + k] == (unsigned char)t[k]) k++;
        if (k == len) return 1;
    }
    return 0;
}

TEST(needle_depth_placement) {
    hs_assets a;
    char msg[512];
    if (load_assets(&a, msg, sizeof msg)) CHECK(0, "%.300s", msg);
    int maxlen = 0;
    for (int i = 0; i < a.n_sentences; i++)
        if (a.sentence_len[i] > maxlen) maxlen = a.sentence_len[i];
    for (int task = 0; task < HS_NEEDLE_TASKS; task++)
        for (uint64_t seed = 0; seed < 4; seed++) {
            double prev = -1;
            for (int d = 0; d <= 100; d += 10) {
                hs_needle_sample s;
                if (hs_needle_generate(&s, &a, (hs_needle_task)task, 4096, d, seed, msg, sizeof msg)) {
                    hs_assets_free(&a);
                    CHECK(0, "%.300s", msg);
                }
                int b, J;
                needle_offsets(&s, &b, &J);
                /* A boundary: the filler start or end (after a word-cut fragment), or right
                 * after a whole sentence of the source. */
                int at_boundary = b == 0 || b == J ||
                                  ends_with_sentence(&a, task, &s, s.needle_start - 1);
                double t = d / 100.0 * J;
                int slack = (task == HS_SK1 ? 22 : maxlen + 1) / 2 + 1;
                double rel = J ? (double)b / J : 0;
                hs_needle_sample_free(&s);
                if (!at_boundary || b < t - slack || b > t + slack || (task == HS_SK1 && rel < prev)) {
                    hs_assets_free(&a);
                    CHECK(0, "%s seed %llu depth %d: needle at %d of %d (target %.0f, boundary %d)",
                          hs_needle_task_name(task), (unsigned long long)seed, d, b, J, t, at_boundary);
                }
                prev = rel;
            }
        }
    hs_assets_free(&a);
}

TEST(needle_scorer) {
    int32_t a[] = {' ', '1', '2', '3', '4', '5', '6', '7', '.'};
    int32_t b[] = {'1', '2', '3', 257, '4', '5', '6', '7'};
    int32_t c[] = {'1', '2', '3', '4', '5', '6', ' ', '7'};
    int32_t d[] = {0, 0, '1', '2', '3', '4', '5', '6', '7'};
    int32_t e[] = {'x'};
    CHECK(hs_needle_score("1234567", a, 9) == 1, "value inside the answer");
    CHECK(hs_needle_score("1234567", b, 8) == 1, "special tokens are skipped");
    CHECK(hs_needle_score("1234567", c, 8) == 0, "broken value must not count");
    CHECK(hs_needle_score("1234567", d, 9) == 1, "NUL bytes before the value");
    CHECK(hs_needle_score("1234567", a, 7) == 0, "truncated answer must not count");
    CHECK(hs_needle_score("1234567", e, 0) == 0, "empty answer");
    CHECK(hs_needle_score("", a, 9) == 0, "empty value never matches");
    char r[16];
    int32_t f[] = {'a', '\n', 300, 'b', 200};
    hs_needle_render(r, sizeof r, f, 5);
    CHECK(!strcmp(r, "a.b."), "render gave '%s'", r);
    hs_needle_render(r, 3, a, 9);
    CHECK(!strcmp(r, " 1"), "render truncates: '%s'", r);
}

/* ---- running samples on a model ---- */

static int tiny_model(hs_model *m, char *err, size_t n) {
    hs_preset_args a;
    hs_preset_args_init(&a);
    a.preset = "tiny";
    a.hidden = 32; a.layers = 2; a.heads = 2; a.head_dim = 16; a.ffn = 48;
    a.train_context = 256;
    memset(m, 0, sizeof *m);
    if (hs_preset_build(&m->cfg, &a, err, n) || hs_model_alloc(m, err, n)) return -1;
    hs_model_init_random(m, 99);
    return 0;
}

static int cpu_forward(void *ctx, const int32_t *tokens, int T, const hs_forward_opts *opts,
                       char *err, size_t errlen) {
    hs_knobs off;
    memset(&off, 0, sizeof off);
    return hs_forward(ctx, tokens, T, &off, opts, err, errlen);
}

/* The decoder and one full forward per token must choose the same answer. */
TEST(needle_run_decoder_matches_full_forwards) {
    hs_assets a;
    char msg[512];
    if (load_assets(&a, msg, sizeof msg)) CHECK(0, "%.300s", msg);
    hs_model *m = calloc(1, sizeof *m);
    if (!m || tiny_model(m, msg, sizeof msg)) { hs_assets_free(&a); free(m); CHECK(0, "%.300s", msg); }
    hs_knobs off;
    memset(&off, 0, sizeof off);
    /* ~100 forwards of a 32-wide model: thread start-up would cost more than the work. */
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    int same = 1, ran = 0;
    /* SK2 takes the same path as SK1 (7-digit value); SK3 has the longest answers. */
    static const hs_needle_task tasks[] = {HS_SK1, HS_SK3};
    for (int ti = 0; ti < 2 && same; ti++) {
        hs_needle_task task = tasks[ti];
        hs_needle_sample s;
        if (hs_needle_generate(&s, &a, task, 420, 30, 5, msg, sizeof msg)) break;
        hs_needle_outcome o1, o2;
        int r1 = hs_needle_run(&o1, m, &off, &s, NULL, NULL, NULL, NULL, msg, sizeof msg);
        int r2 = hs_needle_run(&o2, m, &off, &s, NULL, cpu_forward, NULL, m, msg, sizeof msg);
        same = r1 == 0 && r2 == 0 && !strcmp(o1.answer, o2.answer) && o1.correct == o2.correct &&
               o1.correct == (strstr(o1.answer, s.value) != NULL);
        ran++;
        hs_needle_sample_free(&s);
    }
    omp_set_num_threads(threads);
    hs_model_free(m); free(m); hs_assets_free(&a);
    CHECK(ran == 2 && same, "decoder and full-forward greedy answers differ (%.300s)", msg);
}

/* A backend with its own decoder: hs_needle_run hands generation to it (and not to the
 * forward callback next to it). This one answers the sample's value. */
typedef struct { const char *value; int calls; } gen_oracle;

static int oracle_generate(void *ctx, const int32_t *prompt, int T, int max_new, int32_t *out,
                           int *n_out, const hs_forward_opts *opts, char *err, size_t errlen) {
    (void)prompt; (void)opts; (void)err; (void)errlen;
    gen_oracle *g = ctx;
    g->calls++;
    int n = 0;
    out[n++] = ' ';
    for (const char *c = g->value; *c && n < max_new; c++) out[n++] = (unsigned char)*c;
    *n_out = n;
    return T > 0 ? 0 : -1;
}

static int failing_forward(void *ctx, const int32_t *tokens, int T, const hs_forward_opts *opts,
                           char *err, size_t errlen) {
    (void)ctx; (void)tokens; (void)T; (void)opts;
    snprintf(err, errlen, "the forward callback was called");
    return -1;
}

TEST(needle_run_prefers_the_generate_callback) {
    hs_assets a;
    char msg[512];
    if (load_assets(&a, msg, sizeof msg)) CHECK(0, "%.300s", msg);
    hs_model *m = calloc(1, sizeof *m);      /* only the config is read on this path */
    CHECK(m, "alloc");
    m->cfg.vocab_size = 258; m->cfg.bos_id = 256; m->cfg.eos_id = 257;
    hs_needle_sample s;
    int rc = hs_needle_generate(&s, &a, HS_SK1, 500, 50, 3, msg, sizeof msg);
    hs_needle_outcome o;
    gen_oracle g = { rc ? "" : s.value, 0 };
    if (!rc) rc = hs_needle_run(&o, m, NULL, &s, NULL, failing_forward, oracle_generate, &g, msg, sizeof msg);
    char want[80];
    snprintf(want, sizeof want, " %s", rc ? "" : s.value);
    hs_needle_sample_free(&s);
    free(m);
    hs_assets_free(&a);
    CHECK(rc == 0, "%.300s", msg);
    CHECK(g.calls == 1 && o.correct == 1 && !strcmp(o.answer, want), "calls %d correct %d answer '%s'",
          g.calls, o.correct, o.answer);
}

typedef struct { int calls, cancel_at, bad; } sweep_probe;

static int count_sample(void *ctx, const hs_niah_result *r, int ti, int li, int di, int sample,
                        const hs_needle_sample *s, const hs_needle_outcome *o, double seconds) {
    sweep_probe *p = ctx;
    int c = hs_niah_cell(r, ti, li, di);
    /* the grid is already updated and the sample is the one of this cell */
    if (r->done[c] != sample + 1 || s->length != r->lengths[li] || s->task != r->tasks[ti] ||
        s->depth != r->depths[di] || seconds < 0 || (o->correct != 0 && o->correct != 1))
        p->bad = 1;
    return ++p->calls == p->cancel_at;
}

TEST(needle_sweep_fills_grid_and_cancels) {
    hs_assets a;
    char msg[512];
    if (load_assets(&a, msg, sizeof msg)) CHECK(0, "%.300s", msg);
    hs_model *m = calloc(1, sizeof *m);
    if (!m || tiny_model(m, msg, sizeof msg)) { hs_assets_free(&a); free(m); CHECK(0, "%.300s", msg); }
    hs_knobs off;
    memset(&off, 0, sizeof off);
    int threads = omp_get_max_threads();   /* a 32-wide model: see above */
    omp_set_num_threads(1);
    hs_needle_task tasks[] = {HS_SK1, HS_SK3};
    int lengths[] = {400, 450};
    double depths[] = {0, 100};
    hs_niah_result r;
    sweep_probe p = {0, 0, 0};
    /* 2 tasks x 2 lengths x 1 depth x 2 samples; then 1 length x 2 depths for cancelling */
    int rc = hs_niah_result_init(&r, tasks, 2, lengths, 2, depths, 1, 2, msg, sizeof msg);
    if (!rc) rc = hs_niah_sweep(&r, m, &off, &a, 11, NULL, NULL, NULL, NULL, count_sample, &p, msg, sizeof msg);
    int full = rc == 0 && p.calls == 8 && !p.bad;
    for (int c = 0; c < 4 && full; c++)
        full = r.done[c] == 2 && r.correct[c] <= 2 && r.shown[c].seed == 11 &&
               r.shown[c].tokens == NULL && r.shown[c].length == lengths[c % 2];
    hs_niah_result_free(&r);
    /* cancelling after the 3rd of 8 samples: 3 done, HS_CANCELLED */
    sweep_probe q = {0, 3, 0};
    int rc2 = hs_niah_result_init(&r, tasks, 2, lengths, 1, depths, 2, 2, msg, sizeof msg);
    if (!rc2) rc2 = hs_niah_sweep(&r, m, &off, &a, 11, NULL, NULL, NULL, NULL, count_sample, &q, msg, sizeof msg);
    int done = 0;
    for (int c = 0; c < 4; c++) done += r.done[c];
    hs_niah_result_free(&r);
    omp_set_num_threads(threads);
    hs_model_free(m); free(m); hs_assets_free(&a);
    CHECK(full, "sweep grid wrong (rc %d, %d calls, bad %d): %.300s", rc, p.calls, p.bad, msg);
    CHECK(rc2 == HS_CANCELLED && done == 3 && q.calls == 3, "cancel: rc %d, %d done", rc2, done);
}

/* An oracle "model" for the full-forward path: it reads the needle's value out of the prompt
 * and answers " VALUE." one token at a time, or a wrong value when the needle sits in the
 * second half of the prompt. So scoring and per-cell counting are checked with answers that
 * are right in some cells and wrong in others. */
static int oracle_forward(void *ctx, const int32_t *tokens, int T, const hs_forward_opts *opts,
                          char *err, size_t errlen) {
    (void)ctx; (void)err; (void)errlen;
    static const char end_mark[] = "mentioned in the provided text is";
    int ml = (int)strlen(end_mark), prompt_end = -1, value_at = -1;
    for (int t = ml; t <= T; t++) {
        int k = 0;
        while (k < ml && tokens[t - ml + k] == (unsigned char)end_mark[k]) k++;
        if (k == ml) prompt_end = t;
    }
    for (int t = 0; t + 4 < T && value_at < 0; t++)
        if (tokens[t] == ' ' && tokens[t + 1] == 'i' && tokens[t + 2] == 's' &&
            tokens[t + 3] == ':' && tokens[t + 4] == ' ')
            value_at = t + 5;
    char answer[80];
    int n = 0;
    answer[n++] = ' ';
    for (int t = value_at; t >= 0 && t < T && tokens[t] != '.' && n < 70; t++)
        answer[n++] = (char)tokens[t];
    answer[n++] = '.';
    if (value_at > prompt_end / 2) answer[1] = answer[1] == '9' ? '8' : '9';   /* wrong */
    int i = T - prompt_end;
    int next = i < n ? (unsigned char)answer[i] : 257;
    for (int v = 0; v < 258; v++) opts->logits[v] = v == next ? 1.0f : 0.0f;
    return 0;
}

TEST(needle_sweep_counts_right_and_wrong_answers) {
    hs_assets a;
    char msg[512];
    if (load_assets(&a, msg, sizeof msg)) CHECK(0, "%.300s", msg);
    hs_model *m = calloc(1, sizeof *m);      /* only the config is read on this path */
    CHECK(m, "alloc");
    m->cfg.vocab_size = 258; m->cfg.bos_id = 256; m->cfg.eos_id = 257;
    hs_needle_task tasks[] = {HS_SK2, HS_SK3};
    int lengths[] = {500, 900};
    double depths[] = {0, 100};
    hs_niah_result r;
    int rc = hs_niah_result_init(&r, tasks, 2, lengths, 2, depths, 2, 3, msg, sizeof msg);
    if (!rc) rc = hs_niah_sweep(&r, m, NULL, &a, 4, NULL, oracle_forward, NULL, NULL, NULL, NULL, msg, sizeof msg);
    int ok = rc == 0;
    for (int i = 0; i < 2 && ok; i++)
        for (int j = 0; j < 2 && ok; j++)
            for (int d = 0; d < 2 && ok; d++) {
                int c = hs_niah_cell(&r, i, j, d);
                int want = d == 0 ? 3 : 0;
                char expect[80];
                snprintf(expect, sizeof expect, " %s.", r.shown[c].value);
                ok = r.done[c] == 3 && r.correct[c] == want &&
                     r.shown_outcome[c].correct == (d == 0) &&
                     (d != 0 || !strcmp(r.shown_outcome[c].answer, expect)) &&
                     fabs(hs_niah_cell_accuracy(&r, i, j, d) - want / 3.0) < 1e-12;
            }
    ok = ok && fabs(hs_niah_length_accuracy(&r, 0) - 0.5) < 1e-12 &&
         fabs(hs_niah_task_accuracy(&r, 1) - 0.5) < 1e-12 &&
         fabs(hs_niah_task_length_accuracy(&r, 1, 1) - 0.5) < 1e-12;
    hs_niah_result_free(&r);
    free(m);
    hs_assets_free(&a);
    CHECK(ok, "oracle answers counted wrong (rc %d: %.300s)", rc, msg);
}
