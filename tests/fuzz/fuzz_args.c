/* libFuzzer entry point for the command-line value parsers: the input's lines become argv for
 * the explorer's settings parser (hs_settings_parse_arg, which takes the knob flags first), and
 * the first line is also given to each shared grammar of flag_values.h directly; the same argv
 * goes to `init`'s model flags (hs_preset_parse_arg, then hs_preset_build). Whatever is
 * accepted must be in range (lengths, depths, windows, head references, zoom), a rejection must
 * leave a one-line message, and the knob summary must stay terminated in any buffer size. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/controller.h"
#include "engine/flag_values.h"
#include "engine/presets.h"

#define MAX_ARGS 24

static void check_settings(const hs_settings *s) {
    if (s->length && s->length < HS_CTL_MIN_LENGTH) __builtin_trap();
    if (s->n_sweep_lengths < 0 || s->n_sweep_lengths > HS_CTL_MAX_SWEEP) __builtin_trap();
    for (int i = 0; i < s->n_sweep_lengths; i++)
        if (s->sweep_lengths[i] < HS_CTL_MIN_LENGTH) __builtin_trap();
    if (s->n_sweep_depths < 0 || s->n_sweep_depths > HS_CTL_MAX_SWEEP) __builtin_trap();
    for (int i = 0; i < s->n_sweep_depths; i++)
        if (!(s->sweep_depths[i] >= 0 && s->sweep_depths[i] <= 100)) __builtin_trap();
    if (s->n_sweep_tasks < 0 || s->n_sweep_tasks > HS_NEEDLE_TASKS) __builtin_trap();
    for (int i = 0; i < s->n_sweep_tasks; i++)
        if ((int)s->sweep_tasks[i] < 0 || (int)s->sweep_tasks[i] >= HS_NEEDLE_TASKS) __builtin_trap();
    if (s->depth_pct < 0 || s->depth_pct > 100) __builtin_trap();
    if (s->zoom_t1 && (s->zoom_t0 < 0 || s->zoom_t1 <= s->zoom_t0 || s->zoom_s0 < 0 || s->zoom_s1 <= s->zoom_s0))
        __builtin_trap();
    if (s->head_given && (s->head_ref.layer < 0 || s->head_ref.mixer < 0 || s->head_ref.head < 0)) __builtin_trap();
    if ((s->bins && (s->bins < 2 || s->bins > 1024)) || (s->head_bins && (s->head_bins < 2 || s->head_bins > 1024)))
        __builtin_trap();
    const hs_knobs *k = &s->knobs;
    if (k->n_ablate < 0 || k->n_ablate > HS_MAX_ABLATE || k->swla_window < 0 || k->swla_stride < 0 ||
        k->swa_window < 0 || k->log_scale_L0 < 0 || (k->log_scale_L0 && k->log_scale_L0 < 2) ||
        (k->rope_window < 0 && k->rope_window != HS_KNOB_L0))
        __builtin_trap();
    for (int i = 0; i < k->n_ablate; i++)
        if (k->ablate[i].layer < 0 || k->ablate[i].mixer < 0 || k->ablate[i].head < 0) __builtin_trap();
    char d[160];
    for (size_t n = 1; n <= sizeof d; n += 37) {
        memset(d, 'x', sizeof d);
        hs_knobs_describe(d, n, k);
        if (!memchr(d, 0, n)) __builtin_trap();
    }
}

static void check_message(int r, const char *err) {
    if (r < 0 && (!err[0] || strchr(err, '\n'))) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    for (char *p = buf; argc < MAX_ARGS;) {
        argv[argc++] = p;
        char *nl = memchr(p, '\n', strlen(p));
        if (!nl) break;
        *nl = 0;
        p = nl + 1;
    }
    argv[argc] = NULL;

    char err[512];
    /* the grammars on their own */
    long long c = hs_value_count(argv[0]);
    if (c < -1 || c > HS_VALUE_COUNT_MAX) __builtin_trap();
    double pc = hs_value_percent(argv[0]);
    if (pc != -1 && !(pc >= 0 && pc <= 100)) __builtin_trap();
    hs_head_ref h = { -7, -7, -7 };
    if (hs_value_head(&h, argv[0]) == 0) {
        if (h.layer < 0 || h.mixer < 0 || h.head < 0 || h.layer > HS_VALUE_HEAD_MAX ||
            h.mixer > HS_VALUE_HEAD_MAX || h.head > HS_VALUE_HEAD_MAX) __builtin_trap();
    } else if (h.layer != -7) __builtin_trap();
    int z[4];
    if (hs_value_zoom(z, argv[0]) == 0 && (z[0] < 0 || z[1] <= z[0] || z[2] < 0 || z[3] <= z[2])) __builtin_trap();
    int counts[8];
    err[0] = 0;
    int n = hs_value_counts(counts, 8, argv[0], 3, 1 << 20, "--x", err, sizeof err);
    check_message(n, err);
    if (n == 0 || n > 8) __builtin_trap();
    for (int i = 0; i < n; i++) {
        if (counts[i] < 3 || counts[i] > (1 << 20)) __builtin_trap();
        for (int j = 0; j < i; j++) if (counts[i] == counts[j]) __builtin_trap();
    }
    double depths[8];
    err[0] = 0;
    n = hs_value_depths(depths, 8, argv[0], "--x", err, sizeof err);
    check_message(n, err);
    if (n == 0 || n > 8) __builtin_trap();
    for (int i = 0; i < n; i++) {
        if (!(depths[i] >= 0 && depths[i] <= 100)) __builtin_trap();
        for (int j = 0; j < i; j++) if (depths[i] == depths[j]) __builtin_trap();
    }

    /* the settings parser as the front ends run it */
    hs_settings s;
    memset(&s, 0, sizeof s);
    for (int i = 0; i < argc; i++) {
        int before = i;
        err[0] = 0;
        int r = hs_settings_parse_arg(&s, argc, argv, &i, err, sizeof err);
        check_message(r, err);
        if (r < 0) break;
        if (i < before || i >= argc) __builtin_trap();
        check_settings(&s);
    }
    /* init's model flags: a built config passed the checkpoint validation, so it is sane */
    hs_preset_args pa;
    hs_preset_args_init(&pa);
    int ok = 1;
    for (int i = 0; i < argc && ok; i++) {
        int before = i;
        err[0] = 0;
        int r = hs_preset_parse_arg(&pa, argc, argv, &i, err, sizeof err);
        check_message(r, err);
        if (r <= 0) ok = 0;
        else if (i < before || i >= argc) __builtin_trap();
    }
    if (ok) {
        static hs_config c;
        err[0] = 0;
        int r = hs_preset_build(&c, &pa, err, sizeof err);
        check_message(r, err);
        if (r == 0 && (c.num_layers < 1 || c.num_layers > HS_MAX_LAYERS || c.hidden_size < 1 || c.vocab_size < 258))
            __builtin_trap();
    }
    free(buf);
    return 0;
}
