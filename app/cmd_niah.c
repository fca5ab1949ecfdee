/* `hybridscope niah`: needle-in-a-haystack accuracy over tasks x lengths x depths
 * (model-spec section 8), and `niah --show` to print one generated prompt. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "commands.h"
#include "device_forward.h"
#include "flag_values.h"
#include "needle.h"

static const char *CMD = "niah";

#define MAX_LENGTHS 64
#define MAX_DEPTHS 1001

static void help(void) {
    printf("usage: hybridscope niah MODEL [--task sk1,sk2,sk3] [--lengths 1k,2k,4k]\n"
           "                       [--depths 0:100:10] [--samples N] [--seed S] [knobs]\n"
           "                       [--device cpu|cuda|auto] [--assets DIR] [--json | --csv]\n"
           "       hybridscope niah --show [--task T] [--length L] [--depth D] [--seed S]\n"
           "                       [--assets DIR] [--json]\n\n"
           "Needle-in-a-haystack accuracy (RULER single-needle SK1/SK2/SK3, model-spec section 8):\n"
           "for every task, prompt length and needle depth, N prompts (sample i uses seed S+i),\n"
           "greedy answers of up to |value|+8 tokens, correct when the value occurs in the answer.\n"
           "Prints accuracy per (task, length, depth), per length and per task, and the throughput\n"
           "in samples per second per length. The generator rules are in assets/NEEDLE.md.\n\n"
           "  MODEL            a checkpoint directory or a sample model name\n"
           "  --task LIST      sk1 (noise haystack), sk2 (prose, 7-digit value), sk3 (prose, UUID);\n"
           "                   default sk1\n"
           "  --lengths LIST   prompt lengths in tokens, BOS included (1k = 1024); default the\n"
           "                   model's train_context\n"
           "  --depths SPEC    percent: a:b:step inclusive (0:100:10 = 11 depths) or a list\n"
           "                   0,50,100; default 0:100:10\n"
           "  --samples N      prompts per cell (default 5)\n"
           "  --seed S         base seed (default 0)\n"
           "  --device D       cpu or cuda (incremental decoders: KV cache and recurrent state),\n"
           "                   auto\n"
           "  --assets DIR     the assets directory (default: found next to the program)\n"
           "  --json           one JSON document on stdout;  --csv  one row per cell\n"
           "  --show           print one prompt (--length, --depth; no MODEL needed) and exit\n\n"
           "%s", hs_knobs_help);
}

/* "sk1,sk3" -> task list without duplicates. */
static int parse_tasks(hs_needle_task *out, const char *s) {
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int v = hs_needle_task_parse(t);
        if (v < 0) hs_cli_die(CMD, "--task: unknown task '%s' (sk1, sk2, sk3)", t);
        int dup = 0;
        for (int i = 0; i < n; i++) dup |= out[i] == (hs_needle_task)v;
        if (!dup) out[n++] = (hs_needle_task)v;
    }
    if (n == 0) hs_cli_die(CMD, "--task: empty list");
    return n;
}

static int parse_lengths(int *out, const char *s) {
    char err[256];
    int n = hs_value_counts(out, MAX_LENGTHS, s, 2, 1 << 24, "--lengths", err, sizeof err);
    if (n < 0) hs_cli_die(CMD, "%s", err);
    return n;
}

static int parse_depths(double *out, const char *s) {
    char err[256];
    int n = hs_value_depths(out, MAX_DEPTHS, s, "--depths", err, sizeof err);
    if (n < 0) hs_cli_die(CMD, "%s", err);
    return n;
}

static uint64_t parse_seed(const char *s) {
    char *end;
    if (!*s || *s == '-') hs_cli_die(CMD, "--seed: '%s' is not a non-negative integer", s);
    unsigned long long v = strtoull(s, &end, 10);
    if (*end) hs_cli_die(CMD, "--seed: '%s' is not a non-negative integer", s);
    return (uint64_t)v;
}

static cJSON *sample_json(const hs_needle_sample *s, int with_text) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "task", hs_needle_task_name(s->task));
    cJSON_AddNumberToObject(o, "length", s->length);
    cJSON_AddNumberToObject(o, "depth", s->depth);
    cJSON_AddNumberToObject(o, "seed", (double)s->seed);
    cJSON_AddStringToObject(o, "key", s->key);
    cJSON_AddStringToObject(o, "value", s->value);
    cJSON_AddNumberToObject(o, "needle_start", s->needle_start);
    cJSON_AddNumberToObject(o, "needle_end", s->needle_end);
    cJSON_AddNumberToObject(o, "span_start", s->span_start);
    cJSON_AddNumberToObject(o, "span_end", s->span_end);
    cJSON_AddNumberToObject(o, "probe_start", s->probe_start);
    cJSON_AddNumberToObject(o, "probe_end", s->probe_end);
    if (with_text && s->tokens) {
        char *t = hs_needle_prompt_text(s);
        if (!t) hs_cli_fail(CMD, "out of memory");
        cJSON_AddStringToObject(o, "text", t);
        free(t);
        cJSON *tok = cJSON_AddArrayToObject(o, "tokens");
        for (int i = 0; i < s->length; i++) cJSON_AddItemToArray(tok, cJSON_CreateNumber(s->tokens[i]));
    }
    return o;
}

static void print_json(cJSON *o) {
    char *s = cJSON_PrintUnformatted(o);
    if (!s) hs_cli_fail(CMD, "out of memory");
    printf("%s\n", s);
    free(s);
    cJSON_Delete(o);
}

static int show(const hs_assets *a, hs_needle_task task, int length, double depth, uint64_t seed,
                int json) {
    hs_needle_sample s;
    char err[HS_ERR_LEN];
    if (hs_needle_generate(&s, a, task, length, depth, seed, err, sizeof err))
        hs_cli_die(CMD, "%s", err);
    if (json) {
        print_json(sample_json(&s, 1));
    } else {
        char *t = hs_needle_prompt_text(&s);
        if (!t) hs_cli_fail(CMD, "out of memory");
        printf("%s L=%d depth=%g seed=%llu key=%s value=%s\nneedle tokens [%d,%d) value "
               "[%d,%d) probe [%d,%d)\n---\n%s\n", hs_needle_task_name(task), length, depth,
               (unsigned long long)seed, s.key, s.value, s.needle_start, s.needle_end,
               s.span_start, s.span_end, s.probe_start, s.probe_end, t);
        free(t);
    }
    hs_needle_sample_free(&s);
    return 0;
}

typedef struct {
    hs_progress bar;
    double total_weight, done_weight, current_weight;
    double seconds[MAX_LENGTHS];
    int count[MAX_LENGTHS];
} sweep_state;

static int on_sample(void *ctx, const hs_niah_result *r, int task_i, int length_i, int depth_i,
                     int sample, const hs_needle_sample *s, const hs_needle_outcome *o,
                     double seconds) {
    (void)task_i; (void)sample; (void)s; (void)o;
    sweep_state *st = ctx;
    st->seconds[length_i] += seconds;
    st->count[length_i]++;
    st->done_weight += r->lengths[length_i];
    hs_progress_update(&st->bar, st->done_weight / st->total_weight);
    /* The next sample's length, for the within-sample progress below; hs_niah_sweep runs
     * depth innermost, then length, then task, then sample. */
    int next = depth_i + 1 < r->n_depths ? length_i : length_i + 1 < r->n_lengths ? length_i + 1 : 0;
    st->current_weight = r->lengths[next];
    return 0;
}

/* Progress inside one sample's prefill (long prompts take seconds each). */
static int on_prefill(void *ctx, double fraction) {
    sweep_state *st = ctx;
    hs_progress_update(&st->bar, (st->done_weight + fraction * st->current_weight) / st->total_weight);
    return 0;
}

static double pct(double x) { return x * 100.0; }

static void print_text(const hs_niah_result *r, const sweep_state *st, const char *model,
                       const char *knobs, uint64_t seed, const char *device) {
    printf("niah %s  knobs: %s  device: %s  samples/cell: %d  seed: %llu\n", model, knobs,
           device, r->samples, (unsigned long long)seed);
    for (int i = 0; i < r->n_tasks; i++) {
        printf("\n%s accuracy (%%): depth x length\n  depth", hs_needle_task_name(r->tasks[i]));
        for (int j = 0; j < r->n_lengths; j++) printf(" %8d", r->lengths[j]);
        printf("\n");
        for (int d = 0; d < r->n_depths; d++) {
            printf(" %5.1f%%", r->depths[d]);
            for (int j = 0; j < r->n_lengths; j++) printf(" %8.1f", pct(hs_niah_cell_accuracy(r, i, j, d)));
            printf("\n");
        }
        printf("    all");
        for (int j = 0; j < r->n_lengths; j++) printf(" %8.1f", pct(hs_niah_task_length_accuracy(r, i, j)));
        printf("\n  %s overall: %.1f%%\n", hs_needle_task_name(r->tasks[i]), pct(hs_niah_task_accuracy(r, i)));
    }
    printf("\nper length (all tasks):\n  length  accuracy%%  samples/s\n");
    for (int j = 0; j < r->n_lengths; j++)
        printf("  %6d  %9.1f  %9.3f\n", r->lengths[j], pct(hs_niah_length_accuracy(r, j)),
               st->seconds[j] > 0 ? st->count[j] / st->seconds[j] : 0.0);
}

static void print_csv(const hs_niah_result *r) {
    printf("task,length,depth,correct,done,accuracy\n");
    for (int i = 0; i < r->n_tasks; i++)
        for (int j = 0; j < r->n_lengths; j++)
            for (int d = 0; d < r->n_depths; d++) {
                int c = hs_niah_cell(r, i, j, d);
                printf("%s,%d,%g,%d,%d,%.6g\n", hs_needle_task_name(r->tasks[i]), r->lengths[j],
                       r->depths[d], r->correct[c], r->done[c], hs_niah_cell_accuracy(r, i, j, d));
            }
}

static void print_result_json(const hs_niah_result *r, const sweep_state *st, const char *model,
                              const char *knobs, uint64_t seed, const char *device) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", model);
    cJSON_AddStringToObject(o, "knobs", knobs);
    cJSON_AddStringToObject(o, "device", device);
    cJSON_AddNumberToObject(o, "seed", (double)seed);
    cJSON_AddNumberToObject(o, "samples", r->samples);
    cJSON *tasks = cJSON_AddArrayToObject(o, "tasks");
    for (int i = 0; i < r->n_tasks; i++)
        cJSON_AddItemToArray(tasks, cJSON_CreateString(hs_needle_task_name(r->tasks[i])));
    cJSON *lengths = cJSON_AddArrayToObject(o, "lengths");
    for (int j = 0; j < r->n_lengths; j++) cJSON_AddItemToArray(lengths, cJSON_CreateNumber(r->lengths[j]));
    cJSON *depths = cJSON_AddArrayToObject(o, "depths");
    for (int d = 0; d < r->n_depths; d++) cJSON_AddItemToArray(depths, cJSON_CreateNumber(r->depths[d]));
    cJSON *cells = cJSON_AddArrayToObject(o, "cells");
    for (int i = 0; i < r->n_tasks; i++)
        for (int j = 0; j < r->n_lengths; j++)
            for (int d = 0; d < r->n_depths; d++) {
                int c = hs_niah_cell(r, i, j, d);
                cJSON *e = cJSON_CreateObject();
                cJSON_AddStringToObject(e, "task", hs_needle_task_name(r->tasks[i]));
                cJSON_AddNumberToObject(e, "length", r->lengths[j]);
                cJSON_AddNumberToObject(e, "depth", r->depths[d]);
                cJSON_AddNumberToObject(e, "correct", r->correct[c]);
                cJSON_AddNumberToObject(e, "done", r->done[c]);
                cJSON_AddNumberToObject(e, "accuracy", hs_niah_cell_accuracy(r, i, j, d));
                if (r->done[c]) {
                    cJSON *ex = sample_json(&r->shown[c], 0);
                    cJSON_AddStringToObject(ex, "answer", r->shown_outcome[c].answer);
                    cJSON_AddBoolToObject(ex, "correct", r->shown_outcome[c].correct);
                    cJSON_AddItemToObject(e, "example", ex);
                }
                cJSON_AddItemToArray(cells, e);
            }
    cJSON *pl = cJSON_AddArrayToObject(o, "per_length");
    for (int j = 0; j < r->n_lengths; j++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "length", r->lengths[j]);
        cJSON_AddNumberToObject(e, "accuracy", hs_niah_length_accuracy(r, j));
        cJSON_AddNumberToObject(e, "seconds", st->seconds[j]);
        cJSON_AddNumberToObject(e, "samples_per_second",
                                st->seconds[j] > 0 ? st->count[j] / st->seconds[j] : 0.0);
        cJSON_AddItemToArray(pl, e);
    }
    cJSON *pt = cJSON_AddArrayToObject(o, "per_task");
    for (int i = 0; i < r->n_tasks; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "task", hs_needle_task_name(r->tasks[i]));
        cJSON_AddNumberToObject(e, "accuracy", hs_niah_task_accuracy(r, i));
        cJSON *byl = cJSON_AddArrayToObject(e, "per_length");
        for (int j = 0; j < r->n_lengths; j++) {
            cJSON *x = cJSON_CreateObject();
            cJSON_AddNumberToObject(x, "length", r->lengths[j]);
            cJSON_AddNumberToObject(x, "accuracy", hs_niah_task_length_accuracy(r, i, j));
            cJSON_AddItemToArray(byl, x);
        }
        cJSON_AddItemToArray(pt, e);
    }
    long c = 0, d = 0;
    int cells_n = r->n_tasks * r->n_lengths * r->n_depths;
    for (int x = 0; x < cells_n; x++) { c += r->correct[x]; d += r->done[x]; }
    cJSON_AddNumberToObject(o, "accuracy", d ? (double)c / (double)d : NAN);
    print_json(o);
}

static int cmd_niah(int argc, char **argv) {
    const char *model_arg = NULL, *assets_arg = NULL, *task_s = "sk1", *lengths_s = NULL;
    const char *depths_s = "0:100:10";
    int samples = 5, json = 0, csv = 0, show_only = 0, device = HS_DEVICE_AUTO;
    int show_length = 0;
    double show_depth = 50;
    uint64_t seed = 0;
    hs_knobs knobs;
    memset(&knobs, 0, sizeof knobs);
    char err[HS_ERR_LEN];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (hs_cli_knob_flag(CMD, &knobs, argc, argv, &i)) continue;
        if (hs_cli_is_help(a)) { help(); return 0; }
        else if (!strcmp(a, "--task") || !strcmp(a, "--tasks")) task_s = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--lengths")) lengths_s = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--length")) {
            lengths_s = hs_cli_str_flag(CMD, argc, argv, &i);
            long long v;
            if (hs_cli_parse_int(lengths_s, &v) < 0 || v < 2 || v > (1 << 24))
                hs_cli_die(CMD, "--length: '%s' is not a length in tokens (2 .. 16M)", lengths_s);
            show_length = (int)v;
        }
        else if (!strcmp(a, "--depths")) depths_s = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--depth")) {
            depths_s = hs_cli_str_flag(CMD, argc, argv, &i);
            if ((show_depth = hs_value_percent(depths_s)) < 0)
                hs_cli_die(CMD, "--depth: '%s' is not a percentage in [0, 100]", depths_s);
        }
        else if (!strcmp(a, "--samples")) samples = (int)hs_cli_int_flag(CMD, argc, argv, &i, 1, 1000000);
        else if (!strcmp(a, "--seed")) seed = parse_seed(hs_cli_str_flag(CMD, argc, argv, &i));
        else if (!strcmp(a, "--device")) {
            const char *d = hs_cli_str_flag(CMD, argc, argv, &i);
            device = hs_device_parse(d);
            if (device < 0) hs_cli_die(CMD, "--device: '%s' is not cpu, cuda or auto", d);
        }
        else if (!strcmp(a, "--assets")) assets_arg = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--csv")) csv = 1;
        else if (!strcmp(a, "--show")) show_only = 1;
        else if (a[0] == '-' && a[1]) hs_cli_die(CMD, "unknown flag '%s' (see --help)", a);
        else if (model_arg) hs_cli_die(CMD, "one MODEL expected, got '%s' and '%s'", model_arg, a);
        else model_arg = a;
    }
    if (json && csv) hs_cli_die(CMD, "--json and --csv exclude each other");

    hs_needle_task tasks[HS_NEEDLE_TASKS];
    int n_tasks = parse_tasks(tasks, task_s);
    char adir[4096];
    hs_assets assets;
    if (hs_assets_find(adir, sizeof adir, assets_arg, err, sizeof err)) hs_cli_die(CMD, "%s", err);
    if (hs_assets_load(&assets, adir, err, sizeof err)) hs_cli_die(CMD, "%s", err);

    if (show_only) {
        if (n_tasks != 1) hs_cli_die(CMD, "--show takes one --task");
        if (!show_length) hs_cli_die(CMD, "--show needs --length L");
        int rc = show(&assets, tasks[0], show_length, show_depth, seed, json);
        hs_assets_free(&assets);
        return rc;
    }
    if (!model_arg) hs_cli_die(CMD, "missing MODEL (see --help)");

    static double depths[MAX_DEPTHS];
    int lengths[MAX_LENGTHS], n_lengths = 0;
    int n_depths = parse_depths(depths, depths_s);
    if (lengths_s) n_lengths = parse_lengths(lengths, lengths_s);
    char dir[4096];
    hs_model *m = hs_cli_load_model(CMD, model_arg, &knobs, dir, sizeof dir);
    if (!n_lengths) lengths[n_lengths++] = m->cfg.train_context;
    for (int i = 0; i < n_tasks; i++)
        for (int j = 0; j < n_lengths; j++) {
            int need = hs_needle_min_length(&assets, tasks[i]);
            if (lengths[j] < need)
                hs_cli_die(CMD, "--lengths: %d is too small for %s (its prompts need at least %d "
                           "tokens)", lengths[j], hs_needle_task_name(tasks[i]), need);
        }
    if (m->cfg.vocab_size < 258 || m->cfg.bos_id < 256)
        hs_cli_die(CMD, "%s: niah needs the byte tokenizer (vocab >= 258, bos >= 256)", dir);

    hs_device_forward dev;
    if (hs_device_forward_open(&dev, device, m, &knobs, err, sizeof err) < 0) hs_cli_die(CMD, "%s", err);
    hs_niah_result r;
    if (hs_niah_result_init(&r, tasks, n_tasks, lengths, n_lengths, depths, n_depths, samples,
                            err, sizeof err))
        hs_cli_fail(CMD, "%s", err);
    sweep_state *st = calloc(1, sizeof *st);
    if (!st) hs_cli_fail(CMD, "out of memory");
    for (int j = 0; j < n_lengths; j++) st->total_weight += (double)lengths[j];
    st->total_weight *= (double)samples * n_tasks * n_depths;
    hs_progress_begin(&st->bar, "niah");
    st->current_weight = lengths[0];
    hs_forward_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.progress = on_prefill;
    opts.progress_ctx = st;
    int rc = hs_niah_sweep(&r, m, &knobs, &assets, seed, &opts, NULL,
                           dev.device == HS_DEVICE_CUDA ? hs_device_forward_generate : NULL, &dev,
                           on_sample, st, err, sizeof err);
    hs_progress_done(&st->bar);
    if (rc) hs_cli_fail(CMD, "%s", err);

    char kd[256];
    hs_knobs_describe(kd, sizeof kd, &knobs);
    const char *dname = hs_device_name(dev.device);
    if (json) print_result_json(&r, st, dir, kd, seed, dname);
    else if (csv) print_csv(&r);
    else print_text(&r, st, dir, kd, seed, dname);
    hs_niah_result_free(&r);
    hs_device_forward_close(&dev);
    hs_cli_free_model(m);
    free(st);
    hs_assets_free(&assets);
    return 0;
}

HS_COMMAND("niah", "needle-in-a-haystack accuracy by task, length and depth", cmd_niah, 60)
