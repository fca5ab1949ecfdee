/* Command-line settings shared by the explorer's front ends and export (controller.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/cuda_backend.h"
#include "../engine/flag_values.h"
#include "controller.h"

const char hs_settings_help[] =
    "  --device cpu|cuda|auto   where the model runs (default auto)\n"
    "  --task sk1|sk2|sk3       needle task of the probe prompt (default sk1)\n"
    "  --length N               probe prompt length in tokens, 256 and up; k suffix = x1024\n"
    "                           (default: the model's train_context L0)\n"
    "  --depth PCT              needle depth in percent (default 50)\n"
    "  --seed N                 needle sample seed (default 1)\n"
    "  --topk K                 top-k of the hit rate (default min(64, T/64))\n"
    "  --head L.M.H             selected head (layer.mixer.head)\n"
    "  --zoom t0:t1,s0:s1       head view window in token positions\n"
    "  --bins B                 bins per side of each small map (default 32)\n"
    "  --head-bins B            bins per side of the large head map (default 256)\n"
    "  --tasks sk1,sk2,sk3      needle sweep tasks\n"
    "  --lengths 1k,2k,...      needle sweep lengths (default L0, 2L0, 4L0)\n"
    "  --depths 0:100:25|a,b,.. needle sweep depths in percent (default 0:100:25)\n"
    "  --samples N              needle samples per cell (default 1)\n"
    "  --ppl-length N           perplexity document length (default 4 L0)\n"
    "  --theme light|dark       colours (default light)\n"
    "  --log-color              log colour scale for the head map\n";

long hs_parse_count(const char *s) {
    long long v = hs_value_count(s);
    return v <= 1000000000 ? (long)v : -1;   /* every caller stores an int */
}

static int parse_task(const char *s) {
    if (!strcmp(s, "sk1")) return HS_SK1;
    if (!strcmp(s, "sk2")) return HS_SK2;
    if (!strcmp(s, "sk3")) return HS_SK3;
    return -1;
}

/* The flag's value: "--flag=V" or the next argument. */
static const char *flag_value(const char *flag, int argc, char **argv, int *i) {
    const char *a = argv[*i];
    size_t n = strlen(flag);
    if (!strncmp(a, flag, n) && a[n] == '=') return a + n + 1;
    if (!strcmp(a, flag) && *i + 1 < argc) { (*i)++; return argv[*i]; }
    return NULL;
}

static int is_flag(const char *a, const char *flag) {
    size_t n = strlen(flag);
    return !strncmp(a, flag, n) && (a[n] == 0 || a[n] == '=');
}

#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

int hs_settings_parse_arg(hs_settings *s, int argc, char **argv, int *i, char *err, size_t errlen) {
    int j = *i;
    int r = hs_knobs_parse_arg(&s->knobs, argc, argv, &j, err, errlen);
    if (r < 0) return r;
    if (r > 0) { *i = j - 1; return 1; }   /* the knob parser steps past what it read */
    const char *a = argv[*i], *v;
    long x;
    if (is_flag(a, "--device")) {
        if (!(v = flag_value("--device", argc, argv, i))) BAD("--device: needs cpu, cuda or auto");
        int d = hs_device_parse(v);
        if (d < 0) BAD("--device: '%s' is not cpu, cuda or auto", v);
        s->device = d;
    } else if (is_flag(a, "--task")) {
        if (!(v = flag_value("--task", argc, argv, i)) || parse_task(v) < 0)
            BAD("--task: needs sk1, sk2 or sk3");
        s->task = (hs_needle_task)parse_task(v);
    } else if (is_flag(a, "--length")) {
        v = flag_value("--length", argc, argv, i);
        if ((x = hs_parse_count(v)) < HS_CTL_MIN_LENGTH)
            BAD("--length: needs a token count of at least %d (e.g. 4096 or 4k)", HS_CTL_MIN_LENGTH);
        s->length = (int)x;
    } else if (is_flag(a, "--depth")) {
        v = flag_value("--depth", argc, argv, i);
        if ((x = hs_parse_count(v)) < 0 || x > 100) BAD("--depth: needs a percentage 0..100");
        s->depth_pct = (int)x;
        s->depth_given = 1;
    } else if (is_flag(a, "--seed")) {
        v = flag_value("--seed", argc, argv, i);
        if ((x = hs_parse_count(v)) < 0) BAD("--seed: needs a non-negative integer");
        s->seed = (uint64_t)x;
    } else if (is_flag(a, "--topk")) {
        v = flag_value("--topk", argc, argv, i);
        if ((x = hs_parse_count(v)) < 1) BAD("--topk: needs a positive integer");
        s->topk = (int)x;
    } else if (is_flag(a, "--head")) {
        v = flag_value("--head", argc, argv, i);
        if (hs_value_head(&s->head_ref, v)) BAD("--head: needs L.M.H (layer.mixer.head), e.g. 3.0.1");
        s->head_given = 1;
    } else if (is_flag(a, "--zoom")) {
        v = flag_value("--zoom", argc, argv, i);
        int z[4];
        if (hs_value_zoom(z, v)) BAD("--zoom: needs t0:t1,s0:s1 with t0 < t1 and s0 < s1");
        s->zoom_t0 = z[0]; s->zoom_t1 = z[1]; s->zoom_s0 = z[2]; s->zoom_s1 = z[3];
    } else if (is_flag(a, "--bins")) {
        v = flag_value("--bins", argc, argv, i);
        if ((x = hs_parse_count(v)) < 2 || x > 1024) BAD("--bins: needs 2..1024");
        s->bins = (int)x;
    } else if (is_flag(a, "--head-bins")) {
        v = flag_value("--head-bins", argc, argv, i);
        if ((x = hs_parse_count(v)) < 2 || x > 1024) BAD("--head-bins: needs 2..1024");
        s->head_bins = (int)x;
    } else if (is_flag(a, "--tasks")) {
        if (!(v = flag_value("--tasks", argc, argv, i))) BAD("--tasks: needs a list like sk1,sk2");
        char buf[128];
        if (strlen(v) >= sizeof buf) BAD("--tasks: needs a list like sk1,sk2");
        strcpy(buf, v);
        s->n_sweep_tasks = 0;
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            int t = parse_task(tok);
            if (t < 0) BAD("--tasks: '%s' is not sk1, sk2 or sk3", tok);
            if (s->n_sweep_tasks >= HS_NEEDLE_TASKS) BAD("--tasks: at most 3 tasks");
            s->sweep_tasks[s->n_sweep_tasks++] = (hs_needle_task)t;
        }
        if (!s->n_sweep_tasks) BAD("--tasks: empty list");
    } else if (is_flag(a, "--lengths")) {
        if (!(v = flag_value("--lengths", argc, argv, i))) BAD("--lengths: needs a list like 1k,2k");
        int n = hs_value_counts(s->sweep_lengths, HS_CTL_MAX_SWEEP, v, HS_CTL_MIN_LENGTH, 1000000000,
                                "--lengths", err, errlen);
        if (n < 0) return -1;
        s->n_sweep_lengths = n;
    } else if (is_flag(a, "--depths")) {
        if (!(v = flag_value("--depths", argc, argv, i))) BAD("--depths: needs FROM:TO:STEP or a list");
        int n = hs_value_depths(s->sweep_depths, HS_CTL_MAX_SWEEP, v, "--depths", err, errlen);
        if (n < 0) return -1;
        s->n_sweep_depths = n;
    } else if (is_flag(a, "--samples")) {
        v = flag_value("--samples", argc, argv, i);
        if ((x = hs_parse_count(v)) < 1 || x > 10000) BAD("--samples: needs 1..10000");
        s->sweep_samples = (int)x;
    } else if (is_flag(a, "--ppl-length")) {
        v = flag_value("--ppl-length", argc, argv, i);
        if ((x = hs_parse_count(v)) < HS_CTL_MIN_LENGTH) BAD("--ppl-length: needs at least %d tokens", HS_CTL_MIN_LENGTH);
        s->ppl_length = (int)x;
    } else if (is_flag(a, "--theme")) {
        v = flag_value("--theme", argc, argv, i);
        if (!v || (strcmp(v, "light") && strcmp(v, "dark"))) BAD("--theme: needs light or dark");
        s->dark = !strcmp(v, "dark");
    } else if (!strcmp(a, "--log-color")) {
        s->log_color = 1;
    } else {
        return 0;
    }
    return 1;
}
