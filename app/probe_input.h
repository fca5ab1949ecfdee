/* The input flags `probe` and `map` share: a needle task (--task/--length/--depth/--seed) or
 * any text or token ids (--text, --text-file, --tokens), with --probe-positions and --span. */
#ifndef HS_PROBE_INPUT_H
#define HS_PROBE_INPUT_H

#include <stdint.h>
#include "analysis.h"
#include "model.h"
#include "knobs.h"

typedef struct {
    const char *task, *text, *text_file, *tokens_file;
    const char *probe_spec, *span_spec;
    long long length;
    double depth;
    int have_depth;
    unsigned long long seed;
} hs_input_args;

typedef struct {
    int32_t *tokens;
    int T;
    int *probe;                /* NULL => command default */
    int n_probe;
    int span_start, span_end;  /* -1 => none */
    int is_task;
    hs_needle_sample sample;   /* when is_task (tokens point into it) */
} hs_input;

/* Consumes argv[*i] when it is one of the input flags (advancing *i past its value) and
 * returns 1; 0 otherwise. Dies (exit 2) on a bad value. */
int hs_input_parse_arg(hs_input_args *a, const char *cmd, int argc, char **argv, int *i);
/* Help text for the input flags. */
extern const char hs_input_help[];
/* Builds the token sequence, probe positions and span; dies with one line on bad input. */
void hs_input_build(hs_input *in, const hs_input_args *a, const hs_model *m, const char *cmd);
void hs_input_free(hs_input *in);

/* The knobs as a JSON object (every field, resolved against the config, plus the one-line
 * description), for the --json outputs. */
struct cJSON;
struct cJSON *hs_knobs_to_json(const hs_knobs *k, const hs_config *c);

/* --device: validates the choice and returns HS_DEVICE_CPU or HS_DEVICE_CUDA. cpu_only: the
 * command's analysis runs on the CPU (its capture hooks read the CPU forward's activations),
 * so a CUDA choice gets a note on stderr. Dies on a bad value. */
int hs_input_device(const char *cmd, const char *value, int cpu_only);

/* A progress callback (hs_progress_fn) drawing an hs_progress bar (ctx). */
int hs_input_progress(void *ctx, double fraction);

#endif
