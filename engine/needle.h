/* Needle-in-a-haystack tasks (model-spec section 8): the SK1/SK2/SK3 prompt generator, the
 * scorer and the sweep over tasks x lengths x depths. The generator's exact rules are in
 * assets/NEEDLE.md (the training recipe mirrors them in Python). */
#ifndef HS_NEEDLE_H
#define HS_NEEDLE_H

#include <stddef.h>
#include <stdint.h>
#include "analysis.h"
#include "assets.h"

const char *hs_needle_task_name(hs_needle_task t);        /* "sk1", "sk2", "sk3" */
int hs_needle_task_parse(const char *s);                  /* -1 if unknown */

/* The smallest prompt length L (tokens, BOS included) that every sample of the task fits. */
int hs_needle_min_length(const hs_assets *a, hs_needle_task task);

/* Builds the sample for (task, length, depth, seed): out->tokens is malloc'd [length].
 * Returns 0, or -1 with one line in err (length too small, depth outside [0,100], ...). */
int hs_needle_generate(hs_needle_sample *out, const hs_assets *a, hs_needle_task task,
                       int length, double depth, uint64_t seed, char *err, size_t errlen);
void hs_needle_sample_free(hs_needle_sample *s);
/* The prompt text (without BOS) of a sample; malloc'd, NUL-terminated. */
char *hs_needle_prompt_text(const hs_needle_sample *s);

/* Tokens to generate for a sample: |value| + 8. */
int hs_needle_max_new(const hs_needle_sample *s);
/* 1 when value occurs in the bytes of the generated tokens (ids >= 256 skipped). */
int hs_needle_score(const char *value, const int32_t *gen, int n);
/* Printable rendering of generated tokens: bytes outside 0x20..0x7e as '.', ids >= 256
 * skipped; truncated to fit out. */
void hs_needle_render(char *out, size_t n, const int32_t *gen, int n_gen);

/* A forward on some backend that fills opts->logits (same contract as hs_forward). */
typedef int (*hs_needle_forward_fn)(void *ctx, const int32_t *tokens, int T,
                                    const hs_forward_opts *opts, char *err, size_t errlen);

/* Greedy generation on some backend with its own decoder (hs_generate_greedy's contract: up
 * to max_new tokens after prompt into out, stopping before eos; opts as for the prefill). */
typedef int (*hs_needle_generate_fn)(void *ctx, const int32_t *prompt, int T, int max_new,
                                     int32_t *out, int *n_out, const hs_forward_opts *opts,
                                     char *err, size_t errlen);

#define HS_NEEDLE_MAX_NEW 64   /* |value| + 8 is at most 44 */

/* Generates greedily after the sample's prompt and scores the answer: through generate when
 * it is not NULL (e.g. the GPU decoder, app/device_forward.h); else through forward, one full
 * forward per generated token (a backend without incremental decoding); else with the CPU
 * decoder (hs_generate_greedy with knobs k). Both callbacks get forward_ctx. opts may be NULL. */
int hs_needle_run(hs_needle_outcome *out, const hs_model *m, const hs_knobs *k,
                  const hs_needle_sample *s, const hs_forward_opts *opts,
                  hs_needle_forward_fn forward, hs_needle_generate_fn generate, void *forward_ctx,
                  char *err, size_t errlen);

/* ---- sweep ---- */

/* Allocates the result grid (counts zero). depths in percent. */
int hs_niah_result_init(hs_niah_result *r, const hs_needle_task *tasks, int n_tasks,
                        const int *lengths, int n_lengths, const double *depths, int n_depths,
                        int samples, char *err, size_t errlen);
/* Index of cell (task i, length j, depth k) in the result arrays. */
static inline int hs_niah_cell(const hs_niah_result *r, int i, int j, int k) {
    return (i * r->n_lengths + j) * r->n_depths + k;
}
/* Accuracy (correct / done) of a cell, of a length over every task and depth, of a task
 * over everything, and overall; NaN where nothing is done yet. */
double hs_niah_cell_accuracy(const hs_niah_result *r, int i, int j, int k);
double hs_niah_length_accuracy(const hs_niah_result *r, int j);
double hs_niah_task_length_accuracy(const hs_niah_result *r, int i, int j);
double hs_niah_task_accuracy(const hs_niah_result *r, int i);

/* Called after every sample, with the grid already updated. Return nonzero to cancel. */
typedef int (*hs_niah_sample_fn)(void *ctx, const hs_niah_result *r, int task_i,
                                 int length_i, int depth_i, int sample,
                                 const hs_needle_sample *s, const hs_needle_outcome *o,
                                 double seconds);

/* Runs every sample: the i-th sample (i < samples) of each cell uses seed + i. Samples run
 * in the order sample, task, length, depth, so the whole grid fills in early. forward,
 * generate: as for hs_needle_run. Each cell
 * keeps its first sample (without tokens) and outcome in shown/shown_outcome.
 * Returns 0, HS_CANCELLED, or -1 with a message in err. */
int hs_niah_sweep(hs_niah_result *r, const hs_model *m, const hs_knobs *k, const hs_assets *a,
                  uint64_t seed, const hs_forward_opts *opts, hs_needle_forward_fn forward,
                  hs_needle_generate_fn generate, void *forward_ctx, hs_niah_sample_fn on_sample,
                  void *ctx, char *err, size_t errlen);

#endif
