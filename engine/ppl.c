/* Perplexity by position. */
#include "ppl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hs_ppl_documents(int32_t **out, const char *stream, size_t len, int L, int want, int bos_id,
                     char *err, size_t errlen) {
    *out = NULL;
    if (L < 2) {
        snprintf(err, errlen, "--length %d: documents need at least 2 tokens", L);
        return -1;
    }
    long long W = (long long)(len / (size_t)(L - 1));
    if (W < 1) {
        snprintf(err, errlen, "the corpus has %zu bytes, fewer than one document of %d tokens "
                 "needs (%d)", len, L, L - 1);
        return -1;
    }
    long long n = want > 0 && want < W ? want : W;
    int32_t *d = malloc((size_t)n * (size_t)L * sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory for %lld documents of %d tokens", n, L);
        return -1;
    }
    for (long long k = 0; k < n; k++) {
        long long w = n == W ? k : k * W / n;
        const unsigned char *src = (const unsigned char *)stream + (size_t)w * (size_t)(L - 1);
        int32_t *doc = d + (size_t)k * (size_t)L;
        doc[0] = bos_id;
        for (int t = 1; t < L; t++) doc[t] = src[t - 1];
    }
    *out = d;
    return (int)n;
}

int hs_ppl_result_init(hs_ppl_result *r, int L, int n_buckets, hs_ppl_spacing spacing,
                       char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    if (L < 2 || n_buckets < 1) {
        snprintf(err, errlen, "perplexity needs L >= 2 and at least one bucket");
        return -1;
    }
    if (n_buckets > L - 1) n_buckets = L - 1;
    int *edges = malloc((size_t)(n_buckets + 1) * sizeof *edges);
    r->bucket_start = malloc((size_t)n_buckets * sizeof *r->bucket_start);
    r->bucket_end = malloc((size_t)n_buckets * sizeof *r->bucket_end);
    r->ppl = malloc((size_t)n_buckets * sizeof *r->ppl);
    if (!edges || !r->bucket_start || !r->bucket_end || !r->ppl) {
        free(edges);
        hs_ppl_result_free(r);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* Positions 1 .. L-1: edges from 1 to L. */
    int n = 0;
    for (int i = 0; i <= n_buckets; i++) {
        int e;
        if (i == 0) e = 1;
        else if (i == n_buckets) e = L;
        else if (spacing == HS_PPL_LOG) e = (int)lround(exp(log((double)L) * i / n_buckets));
        else e = 1 + (int)((long long)i * (L - 1) / n_buckets);
        if (n > 0 && e <= edges[n - 1]) continue;   /* merge rounded duplicates */
        edges[n++] = e;
    }
    r->n_buckets = n - 1;
    for (int b = 0; b < r->n_buckets; b++) {
        r->bucket_start[b] = edges[b];
        r->bucket_end[b] = edges[b + 1];
        r->ppl[b] = NAN;
    }
    free(edges);
    r->length = L;
    r->overall = NAN;
    return 0;
}

void hs_ppl_result_free(hs_ppl_result *r) {
    free(r->bucket_start);
    free(r->bucket_end);
    free(r->ppl);
    memset(r, 0, sizeof *r);
}

int hs_ppl_accum_init(hs_ppl_accum *acc, const hs_ppl_result *r) {
    memset(acc, 0, sizeof *acc);
    acc->sum = calloc((size_t)r->n_buckets, sizeof *acc->sum);
    acc->count = calloc((size_t)r->n_buckets, sizeof *acc->count);
    if (!acc->sum || !acc->count) { hs_ppl_accum_free(acc); return -1; }
    return 0;
}

void hs_ppl_accum_add(hs_ppl_accum *acc, const hs_ppl_result *r, const float *nll) {
    for (int b = 0; b < r->n_buckets; b++) {
        double s = 0;
        for (int p = r->bucket_start[b]; p < r->bucket_end[b]; p++) s += nll[p - 1];
        acc->sum[b] += s;
        acc->count[b] += r->bucket_end[b] - r->bucket_start[b];
        acc->total += s;
        acc->total_count += r->bucket_end[b] - r->bucket_start[b];
    }
}

void hs_ppl_accum_finish(hs_ppl_result *r, const hs_ppl_accum *acc, int n_docs) {
    for (int b = 0; b < r->n_buckets; b++)
        r->ppl[b] = acc->count[b] ? exp(acc->sum[b] / (double)acc->count[b]) : NAN;
    r->overall = acc->total_count ? exp(acc->total / (double)acc->total_count) : NAN;
    r->n_docs = n_docs;
}

void hs_ppl_accum_free(hs_ppl_accum *acc) {
    free(acc->sum);
    free(acc->count);
    memset(acc, 0, sizeof *acc);
}

typedef struct { const hs_model *m; const hs_knobs *k; } cpu_forward_ctx;

static int cpu_forward(void *ctx, const int32_t *tokens, int T, const hs_forward_opts *opts,
                       char *err, size_t errlen) {
    const cpu_forward_ctx *c = ctx;
    return hs_forward(c->m, tokens, T, c->k, opts, err, errlen);
}

int hs_ppl_run(hs_ppl_result *r, const hs_model *m, const hs_knobs *k, const int32_t *docs,
               int n_docs, const hs_forward_opts *base, hs_ppl_forward_fn forward,
               void *forward_ctx, hs_ppl_doc_fn on_doc, void *ctx, char *err, size_t errlen) {
    int L = r->length;
    hs_knobs none;
    memset(&none, 0, sizeof none);
    cpu_forward_ctx cpu = {m, k ? k : &none};
    if (!forward) { forward = cpu_forward; forward_ctx = &cpu; }
    float *nll = malloc((size_t)(L - 1) * sizeof *nll);
    hs_ppl_accum acc;
    if (!nll || hs_ppl_accum_init(&acc, r)) {
        free(nll);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    hs_forward_opts opts;
    if (base) opts = *base;
    else memset(&opts, 0, sizeof opts);
    opts.nll = nll;
    opts.logits = NULL;
    opts.n_logit_rows = 0;
    opts.hidden = NULL;
    int rc = 0, done = 0;
    for (int d = 0; d < n_docs && !rc; d++) {
        rc = forward(forward_ctx, docs + (size_t)d * (size_t)L, L, &opts, err, errlen);
        if (rc) break;
        hs_ppl_accum_add(&acc, r, nll);
        done++;
        if (on_doc && on_doc(ctx, done, n_docs)) rc = HS_CANCELLED;
    }
    if (rc != -1) hs_ppl_accum_finish(r, &acc, done);
    hs_knobs off;
    memset(&off, 0, sizeof off);
    hs_knobs_describe(r->label, sizeof r->label, k ? k : &off);
    hs_ppl_accum_free(&acc);
    free(nll);
    return rc;
}
