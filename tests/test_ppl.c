/* Perplexity by position: windowing, buckets, accumulation, and the whole run against a
 * naive double-precision forward (tests/ref_model). */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "ppl.h"
#include "presets.h"
#include "ref_model.h"

TEST(ppl_documents_windows) {
    char stream[1000];
    for (int i = 0; i < 1000; i++) stream[i] = (char)('a' + i % 26);
    char err[256];
    int32_t *d = NULL;
    /* L = 101: 100 bytes a window, 10 windows; 4 wanted -> windows 0, 2, 5, 7. */
    int n = hs_ppl_documents(&d, stream, 1000, 101, 4, 256, err, sizeof err);
    CHECK(n == 4, "got %d documents", n);
    static const int want[] = {0, 2, 5, 7};
    for (int k = 0; k < 4; k++) {
        const int32_t *doc = d + k * 101;
        int ok = doc[0] == 256;
        for (int t = 1; t < 101; t++) ok &= doc[t] == (unsigned char)stream[want[k] * 100 + t - 1];
        if (!ok) { free(d); CHECK(0, "document %d is not window %d", k, want[k]); }
    }
    free(d);
    n = hs_ppl_documents(&d, stream, 1000, 101, 0, 7, err, sizeof err);
    int ok = n == 10 && d[9 * 101] == 7 && d[9 * 101 + 100] == (unsigned char)stream[999];
    free(d);
    CHECK(ok, "all windows: n=%d", n);
    n = hs_ppl_documents(&d, stream, 1000, 100, 50, 256, err, sizeof err);
    free(d);
    CHECK(n == 10, "asking for more than exist gives every window (%d)", n);
    n = hs_ppl_documents(&d, stream, 99, 101, 1, 256, err, sizeof err);
    CHECK(n == -1 && d == NULL && strstr(err, "fewer than"), "too short a corpus: %s", err);
}

TEST(ppl_buckets_cover_positions) {
    char err[256];
    static const int Ls[] = {2, 3, 17, 100, 1024, 4097};
    for (int li = 0; li < 6; li++)
        for (int sp = 0; sp < 2; sp++)
            for (int K = 1; K <= 40; K += 13) {
                hs_ppl_result r;
                int L = Ls[li];
                CHECK(hs_ppl_result_init(&r, L, K, (hs_ppl_spacing)sp, err, sizeof err) == 0, "%s", err);
                int ok = r.n_buckets >= 1 && r.n_buckets <= K && r.bucket_start[0] == 1 &&
                         r.bucket_end[r.n_buckets - 1] == L;
                for (int b = 0; b < r.n_buckets; b++) {
                    ok &= r.bucket_start[b] < r.bucket_end[b];
                    if (b) ok &= r.bucket_start[b] == r.bucket_end[b - 1];
                }
                /* log spacing: bucket widths never shrink (up to rounding) */
                if (sp == HS_PPL_LOG)
                    for (int b = 2; b < r.n_buckets; b++)
                        ok &= r.bucket_end[b] - r.bucket_start[b] + 1 >=
                              r.bucket_end[b - 1] - r.bucket_start[b - 1];
                int nb = r.n_buckets;
                hs_ppl_result_free(&r);
                CHECK(ok, "L=%d K=%d spacing=%d: bad buckets (%d)", L, K, sp, nb);
            }
    hs_ppl_result r;
    CHECK(hs_ppl_result_init(&r, 1, 4, HS_PPL_LOG, err, sizeof err) == -1, "L=1 must fail");
}

TEST(ppl_accumulation_matches_naive) {
    char err[256];
    hs_ppl_result r;
    int L = 300, docs = 3;
    CHECK(hs_ppl_result_init(&r, L, 7, HS_PPL_LOG, err, sizeof err) == 0, "%s", err);
    hs_ppl_accum acc;
    CHECK(hs_ppl_accum_init(&acc, &r) == 0, "alloc");
    hs_test_rng rng = {42};
    float nll[3][299];
    for (int d = 0; d < docs; d++) {
        for (int t = 0; t < L - 1; t++) nll[d][t] = (float)(5.0 * hs_test_uniform(&rng));
        hs_ppl_accum_add(&acc, &r, nll[d]);
    }
    hs_ppl_accum_finish(&r, &acc, docs);
    hs_ppl_accum_free(&acc);
    double worst = 0, all = 0;
    for (int b = 0; b < r.n_buckets; b++) {
        double s = 0;
        int c = 0;
        for (int d = 0; d < docs; d++)
            for (int p = r.bucket_start[b]; p < r.bucket_end[b]; p++) { s += nll[d][p - 1]; c++; }
        double e = fabs(r.ppl[b] - exp(s / c)) / exp(s / c);
        if (worst == worst && !(e <= worst)) worst = e; /* a NaN sticks */
    }
    for (int d = 0; d < docs; d++)
        for (int t = 0; t < L - 1; t++) all += nll[d][t];
    double ov = exp(all / (docs * (L - 1)));
    double ove = fabs(r.overall - ov) / ov;
    int nd = r.n_docs;
    hs_ppl_result_free(&r);
    CHECK(worst < 1e-12 && ove < 1e-12 && nd == docs, "bucket err %g overall err %g", worst, ove);
}

/* ---- the whole run against the naive double-precision forward ---- */

/* -ln softmax(logits)[y] in double. */
static double ref_nll_from_logits(const double *logits, int V, int y) {
    double mx = logits[0];
    for (int v = 1; v < V; v++) if (logits[v] > mx) mx = logits[v];
    double s = 0;
    for (int v = 0; v < V; v++) s += exp(logits[v] - mx);
    return mx + log(s) - logits[y];
}

static int small_model(hs_model *m, int efficient, int hh, int window, char *err, size_t n) {
    hs_preset_args a;
    hs_preset_args_init(&a);
    a.preset = "tiny";
    a.efficient = efficient;
    a.layout_hh = hh;
    a.hidden = 32; a.layers = 2; a.heads = 4; a.head_dim = 8; a.ffn = 48;
    a.train_context = 48;
    if (window > 0) a.window = window;
    memset(m, 0, sizeof *m);
    if (hs_preset_build(&m->cfg, &a, err, n) || hs_model_alloc(m, err, n)) return -1;
    hs_model_init_random(m, 1234 + (uint64_t)efficient);
    return 0;
}

TEST(ppl_matches_reference_forward) {
    static const struct { int type, hh, window, knob; } cases[] = {
        {HS_GLA, 0, 0, 0}, {HS_SWA, 1, 16, 1}, {HS_GDN, 0, 0, 2}, {HS_ROPE, 1, 0, 0},
    };
    char err[512];
    const int L = 90, want_docs = 2;
    char stream[400];
    hs_test_rng rng = {7};
    for (int i = 0; i < (int)sizeof stream; i++) stream[i] = (char)(32 + (int)(95 * hs_test_uniform(&rng)));
    for (int c = 0; c < 4; c++) {
        hs_model *m = calloc(1, sizeof *m);
        CHECK(m, "alloc");
        if (small_model(m, cases[c].type, cases[c].hh, cases[c].window, err, sizeof err)) {
            free(m);
            CHECK(0, "model: %.300s", err);
        }
        hs_knobs k;
        memset(&k, 0, sizeof k);
        if (cases[c].knob == 1) { k.log_scale = 1; k.swa_window = 8; }
        if (cases[c].knob == 2) { k.swla = HS_SWLA_OVERLAP; k.swla_window = 32; k.swla_stride = 8; }
        int32_t *docs = NULL;
        int nd = hs_ppl_documents(&docs, stream, sizeof stream, L, want_docs, m->cfg.bos_id, err, sizeof err);
        hs_ppl_result r;
        int rc = nd == want_docs ? hs_ppl_result_init(&r, L, 5, HS_PPL_LOG, err, sizeof err) : -1;
        if (!rc) rc = hs_ppl_run(&r, m, &k, docs, nd, NULL, NULL, NULL, NULL, NULL, err, sizeof err);
        if (rc) { free(docs); hs_model_free(m); free(m); CHECK(0, "case %d: %.300s", c, err); }

        int V = m->cfg.vocab_size;
        double *logits = malloc(sizeof(double) * (size_t)L * (size_t)V);
        double *sum = calloc((size_t)r.n_buckets, sizeof *sum), total = 0;
        for (int d = 0; d < nd; d++) {
            const int32_t *tok = docs + d * L;
            ref_forward(logits, NULL, NULL, m, tok, L, &k);
            for (int b = 0; b < r.n_buckets; b++)
                for (int p = r.bucket_start[b]; p < r.bucket_end[b]; p++) {
                    double x = ref_nll_from_logits(logits + (size_t)(p - 1) * V, V, tok[p]);
                    sum[b] += x;
                    total += x;
                }
        }
        double worst = 0;
        for (int b = 0; b < r.n_buckets; b++) {
            double want = exp(sum[b] / (nd * (r.bucket_end[b] - r.bucket_start[b])));
            double e = fabs(r.ppl[b] - want) / want;
            if (worst == worst && !(e <= worst)) worst = e; /* a NaN sticks */
        }
        double want_all = exp(total / (nd * (L - 1)));
        double e_all = fabs(r.overall - want_all) / want_all;
        free(logits); free(sum); free(docs);
        hs_ppl_result_free(&r);
        hs_model_free(m);
        free(m);
        CHECK(worst < 1e-4 && e_all < 1e-4, "case %d: bucket rel err %g, overall %g", c, worst, e_all);
    }
}
