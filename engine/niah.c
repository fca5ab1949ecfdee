/* Running needle samples on a model: greedy answer + score, and the NIAH sweep over
 * tasks x lengths x depths x samples that fills hs_niah_result live. */
#include "needle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode.h"
#include "decode_device.h"

int hs_needle_run(hs_needle_outcome *out, const hs_model *m, const hs_knobs *k,
                  const hs_needle_sample *s, const hs_forward_opts *opts,
                  hs_needle_forward_fn forward, hs_needle_generate_fn generate, void *forward_ctx,
                  char *err, size_t errlen) {
    int max_new = hs_needle_max_new(s), n_out = 0;
    int32_t gen[HS_NEEDLE_MAX_NEW];
    memset(out, 0, sizeof *out);
    if (max_new > HS_NEEDLE_MAX_NEW) max_new = HS_NEEDLE_MAX_NEW;
    /* The sample is built with BOS 256; a model with another BOS id gets its own. */
    int32_t *prompt = s->tokens, *own = NULL;
    if (m->cfg.bos_id != s->tokens[0]) {
        own = malloc((size_t)s->length * sizeof *own);
        if (!own) { snprintf(err, errlen, "out of memory"); return -1; }
        memcpy(own, s->tokens, (size_t)s->length * sizeof *own);
        own[0] = m->cfg.bos_id;
        prompt = own;
    }
    int rc = generate ? generate(forward_ctx, prompt, s->length, max_new, gen, &n_out, opts, err, errlen)
             : forward ? hs_generate_greedy_by_forward(m, forward, forward_ctx, prompt, s->length,
                                                       max_new, gen, &n_out, opts, err, errlen)
                       : hs_generate_greedy(m, k, prompt, s->length, max_new, gen, &n_out, NULL,
                                            NULL, opts, err, errlen);
    free(own);
    if (rc) return rc;
    out->correct = hs_needle_score(s->value, gen, n_out);
    hs_needle_render(out->answer, sizeof out->answer, gen, n_out);
    return 0;
}

/* ---- sweep ---- */

int hs_niah_result_init(hs_niah_result *r, const hs_needle_task *tasks, int n_tasks,
                        const int *lengths, int n_lengths, const double *depths, int n_depths,
                        int samples, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    if (n_tasks < 1 || n_tasks > HS_NEEDLE_TASKS || n_lengths < 1 || n_depths < 1 || samples < 1) {
        snprintf(err, errlen, "niah: needs 1..3 tasks, at least one length, depth and sample");
        return -1;
    }
    int cells = n_tasks * n_lengths * n_depths;
    r->n_tasks = n_tasks; r->n_lengths = n_lengths; r->n_depths = n_depths; r->samples = samples;
    memcpy(r->tasks, tasks, (size_t)n_tasks * sizeof *tasks);
    r->lengths = malloc((size_t)n_lengths * sizeof *r->lengths);
    r->depths = malloc((size_t)n_depths * sizeof *r->depths);
    r->correct = calloc((size_t)cells, sizeof *r->correct);
    r->done = calloc((size_t)cells, sizeof *r->done);
    r->shown = calloc((size_t)cells, sizeof *r->shown);
    r->shown_outcome = calloc((size_t)cells, sizeof *r->shown_outcome);
    if (!r->lengths || !r->depths || !r->correct || !r->done || !r->shown || !r->shown_outcome) {
        hs_niah_result_free(r);
        snprintf(err, errlen, "niah: out of memory");
        return -1;
    }
    memcpy(r->lengths, lengths, (size_t)n_lengths * sizeof *lengths);
    memcpy(r->depths, depths, (size_t)n_depths * sizeof *depths);
    return 0;
}

void hs_niah_result_free(hs_niah_result *r) {
    if (r->shown) {
        int cells = r->n_tasks * r->n_lengths * r->n_depths;
        for (int i = 0; i < cells; i++) hs_needle_sample_free(&r->shown[i]);
    }
    free(r->lengths); free(r->depths); free(r->correct); free(r->done);
    free(r->shown); free(r->shown_outcome);
    memset(r, 0, sizeof *r);
}

static double ratio(long c, long d) { return d ? (double)c / (double)d : NAN; }

double hs_niah_cell_accuracy(const hs_niah_result *r, int i, int j, int k) {
    int c = hs_niah_cell(r, i, j, k);
    return ratio(r->correct[c], r->done[c]);
}

double hs_niah_task_length_accuracy(const hs_niah_result *r, int i, int j) {
    long c = 0, d = 0;
    for (int k = 0; k < r->n_depths; k++) {
        c += r->correct[hs_niah_cell(r, i, j, k)];
        d += r->done[hs_niah_cell(r, i, j, k)];
    }
    return ratio(c, d);
}

double hs_niah_length_accuracy(const hs_niah_result *r, int j) {
    long c = 0, d = 0;
    for (int i = 0; i < r->n_tasks; i++)
        for (int k = 0; k < r->n_depths; k++) {
            c += r->correct[hs_niah_cell(r, i, j, k)];
            d += r->done[hs_niah_cell(r, i, j, k)];
        }
    return ratio(c, d);
}

double hs_niah_task_accuracy(const hs_niah_result *r, int i) {
    long c = 0, d = 0;
    for (int j = 0; j < r->n_lengths; j++)
        for (int k = 0; k < r->n_depths; k++) {
            c += r->correct[hs_niah_cell(r, i, j, k)];
            d += r->done[hs_niah_cell(r, i, j, k)];
        }
    return ratio(c, d);
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int hs_niah_sweep(hs_niah_result *r, const hs_model *m, const hs_knobs *k, const hs_assets *a,
                  uint64_t seed, const hs_forward_opts *opts, hs_needle_forward_fn forward,
                  hs_needle_generate_fn generate, void *forward_ctx, hs_niah_sample_fn on_sample,
                  void *ctx, char *err, size_t errlen) {
    for (int s = 0; s < r->samples; s++)
        for (int i = 0; i < r->n_tasks; i++)
            for (int j = 0; j < r->n_lengths; j++)
                for (int d = 0; d < r->n_depths; d++) {
                    double t0 = now_seconds();
                    hs_needle_sample smp;
                    hs_needle_outcome o;
                    if (hs_needle_generate(&smp, a, r->tasks[i], r->lengths[j], r->depths[d],
                                           seed + (uint64_t)s, err, errlen))
                        return -1;
                    int rc = hs_needle_run(&o, m, k, &smp, opts, forward, generate, forward_ctx,
                                           err, errlen);
                    if (rc) { hs_needle_sample_free(&smp); return rc; }
                    int c = hs_niah_cell(r, i, j, d);
                    r->done[c]++;
                    r->correct[c] += o.correct;
                    if (s == 0) {
                        r->shown[c] = smp;
                        r->shown[c].tokens = NULL;
                        r->shown_outcome[c] = o;
                    }
                    int stop = on_sample &&
                               on_sample(ctx, r, i, j, d, s, &smp, &o, now_seconds() - t0);
                    hs_needle_sample_free(&smp);
                    if (stop) return HS_CANCELLED;
                }
    return 0;
}
