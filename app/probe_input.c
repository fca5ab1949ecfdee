/* Input flags shared by `probe` and `map`. */
#include "probe_input.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "assets.h"
#include "cuda_backend.h"
#include "cli_util.h"
#include "flag_values.h"
#include "needle.h"
#include "npy.h"
#include "tokenizer.h"

const char hs_input_help[] =
    "input (one of):\n"
    "  --task sk1|sk2|sk3        a needle prompt (model-spec section 8) with\n"
    "    --length L              prompt tokens, BOS included (default train_context; 4k = 4096)\n"
    "    --depth D               needle depth in percent, 0..100 (default 50)\n"
    "    --seed S                sample seed (default 0)\n"
    "  --text S                  UTF-8 text (BOS is prepended)\n"
    "  --text-file F             the text of a file (BOS is prepended)\n"
    "  --tokens F.npy            token ids (int32/int64, shape [T] or [1,T]) used as given\n"
    "  --probe-positions LIST    query positions: a:b (half-open range) or t, comma separated\n"
    "                            (task default: the final question through the end of the prompt)\n"
    "  --span a:b                the needle span, half-open (task default: the needle's value)\n";

static const char *value_of(const char *cmd, int argc, char **argv, int *i) {
    return hs_cli_str_flag(cmd, argc, argv, i);
}

int hs_input_parse_arg(hs_input_args *a, const char *cmd, int argc, char **argv, int *i) {
    const char *f = argv[*i];
    if (!strcmp(f, "--task")) a->task = value_of(cmd, argc, argv, i);
    else if (!strcmp(f, "--text")) a->text = value_of(cmd, argc, argv, i);
    else if (!strcmp(f, "--text-file")) a->text_file = value_of(cmd, argc, argv, i);
    else if (!strcmp(f, "--tokens")) a->tokens_file = value_of(cmd, argc, argv, i);
    else if (!strcmp(f, "--probe-positions")) a->probe_spec = value_of(cmd, argc, argv, i);
    else if (!strcmp(f, "--span")) a->span_spec = value_of(cmd, argc, argv, i);
    else if (!strcmp(f, "--length")) a->length = hs_cli_int_flag(cmd, argc, argv, i, 1, INT_MAX);
    else if (!strcmp(f, "--seed")) a->seed = (unsigned long long)hs_cli_int_flag(cmd, argc, argv, i, 0, LLONG_MAX);
    else if (!strcmp(f, "--depth")) {
        const char *v = value_of(cmd, argc, argv, i);
        double d = hs_value_percent(v);
        if (d < 0) hs_cli_die(cmd, "--depth: expected a percentage in [0, 100], got '%s'", v);
        a->depth = d;
        a->have_depth = 1;
    } else return 0;
    return 1;
}

/* "a:b" (half-open) -> [a, b); "a" -> [a, a+1). Returns 0 or -1. */
static int parse_range(const char *s, size_t n, long long *a, long long *b) {
    char buf[64];
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *colon = strchr(buf, ':');
    if (colon) {
        *colon = 0;
        if (hs_cli_parse_int(buf, a) || hs_cli_parse_int(colon + 1, b)) return -1;
    } else {
        if (hs_cli_parse_int(buf, a)) return -1;
        *b = *a + 1;
    }
    return *a >= 0 && *b > *a ? 0 : -1;
}

static void parse_probe(hs_input *in, const char *spec, const char *cmd) {
    int cap = 0;
    for (const char *p = spec;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        long long a, b;
        if (parse_range(p, n, &a, &b))
            hs_cli_die(cmd, "--probe-positions: bad entry '%.*s' in '%s' (expected a:b or t, "
                       "non-negative, a < b)", (int)n, p, spec);
        if (b > in->T)
            hs_cli_die(cmd, "--probe-positions: %.*s is outside the input [0, %d)", (int)n, p, in->T);
        for (long long t = a; t < b; t++) {
            if (in->n_probe == cap) {
                cap = cap ? 2 * cap : 64;
                if (cap > 4 * in->T + 64) hs_cli_die(cmd, "--probe-positions: too many positions");
                int *np = realloc(in->probe, sizeof(int) * (size_t)cap);
                if (!np) hs_cli_fail(cmd, "out of memory");
                in->probe = np;
            }
            in->probe[in->n_probe++] = (int)t;
        }
        if (!end) break;
        p = end + 1;
    }
}

static char *read_file(const char *path, size_t *len, const char *cmd) {
    FILE *f = fopen(path, "rb");
    if (!f) hs_cli_die(cmd, "--text-file %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (!buf) hs_cli_fail(cmd, "out of memory");
    for (;;) {
        if (n == cap) {
            if (cap > (size_t)1 << 30) hs_cli_die(cmd, "--text-file %s: larger than 1 GB", path);
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) hs_cli_fail(cmd, "out of memory");
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) hs_cli_die(cmd, "--text-file %s: read error", path);
    fclose(f);
    *len = n;
    return buf;
}

void hs_input_build(hs_input *in, const hs_input_args *a, const hs_model *m, const char *cmd) {
    memset(in, 0, sizeof *in);
    in->span_start = in->span_end = -1;
    int sources = !!a->task + !!a->text + !!a->text_file + !!a->tokens_file;
    if (sources != 1)
        hs_cli_die(cmd, "give exactly one input: --task, --text, --text-file or --tokens (see --help)");
    if (!a->task && (a->length || a->have_depth || a->seed))
        hs_cli_die(cmd, "--length, --depth and --seed go with --task");
    char err[HS_ERR_LEN];
    if (a->task) {
        int task = hs_needle_task_parse(a->task);
        if (task < 0) hs_cli_die(cmd, "--task: unknown task '%s' (sk1, sk2 or sk3)", a->task);
        if (strcmp(m->cfg.tokenizer_type, "bytes"))
            hs_cli_die(cmd, "--task needs the byte tokenizer (the model has '%s')", m->cfg.tokenizer_type);
        char dir[1024];
        hs_assets assets;
        if (hs_assets_find(dir, sizeof dir, NULL, err, sizeof err)) hs_cli_die(cmd, "%s", err);
        if (hs_assets_load(&assets, dir, err, sizeof err)) hs_cli_die(cmd, "%s", err);
        int length = a->length ? (int)a->length : m->cfg.train_context;
        int rc = hs_needle_generate(&in->sample, &assets, (hs_needle_task)task, length,
                                    a->have_depth ? a->depth : 50.0, a->seed, err, sizeof err);
        hs_assets_free(&assets);
        if (rc) hs_cli_die(cmd, "--task %s --length %d --depth %g: %s", a->task, length,
                           a->have_depth ? a->depth : 50.0, err);
        in->is_task = 1;
        in->T = in->sample.length;
        in->tokens = malloc(sizeof(int32_t) * (size_t)in->T);
        if (!in->tokens) hs_cli_fail(cmd, "out of memory");
        memcpy(in->tokens, in->sample.tokens, sizeof(int32_t) * (size_t)in->T);
        for (int t = 0; t < in->T; t++)
            if (in->tokens[t] >= m->cfg.vocab_size)
                hs_cli_die(cmd, "--task: token %d does not fit the model's vocabulary of %d",
                           in->tokens[t], m->cfg.vocab_size);
        in->span_start = in->sample.span_start;
        in->span_end = in->sample.span_end;
    } else if (a->tokens_file) {
        if (hs_npy_read_tokens(&in->tokens, &in->T, a->tokens_file, m->cfg.vocab_size, err, sizeof err))
            hs_cli_die(cmd, "--tokens: %s", err);
        if (in->T < 1) hs_cli_die(cmd, "--tokens %s: no tokens", a->tokens_file);
    } else {
        hs_tokenizer tk;
        if (hs_tokenizer_init(&tk, &m->cfg, err, sizeof err)) hs_cli_die(cmd, "%s", err);
        size_t len;
        char *text = a->text ? NULL : read_file(a->text_file, &len, cmd);
        if (a->text) len = strlen(a->text);
        if (len >= INT_MAX - 1) hs_cli_die(cmd, "input too long");
        in->tokens = hs_tokenizer_encode_alloc(&tk, a->text ? a->text : text, len, &in->T);
        free(text);
        if (!in->tokens) hs_cli_fail(cmd, "out of memory");
    }
    if (a->probe_spec) {
        parse_probe(in, a->probe_spec, cmd);
    } else if (in->is_task) {
        in->n_probe = in->sample.probe_end - in->sample.probe_start;
        in->probe = malloc(sizeof(int) * (size_t)(in->n_probe > 0 ? in->n_probe : 1));
        if (!in->probe) hs_cli_fail(cmd, "out of memory");
        for (int i = 0; i < in->n_probe; i++) in->probe[i] = in->sample.probe_start + i;
    }
    if (a->span_spec) {
        long long s0, s1;
        if (parse_range(a->span_spec, strlen(a->span_spec), &s0, &s1) || !strchr(a->span_spec, ':'))
            hs_cli_die(cmd, "--span: expected a:b with 0 <= a < b, got '%s'", a->span_spec);
        if (s1 > in->T) hs_cli_die(cmd, "--span %s: outside the input [0, %d)", a->span_spec, in->T);
        in->span_start = (int)s0;
        in->span_end = (int)s1;
    }
}

void hs_input_free(hs_input *in) {
    free(in->tokens);
    free(in->probe);
    if (in->is_task) hs_needle_sample_free(&in->sample);
    memset(in, 0, sizeof *in);
}

struct cJSON *hs_knobs_to_json(const hs_knobs *k, const hs_config *c) {
    hs_knobs_resolved r;
    hs_knobs_resolve(&r, k, c);
    cJSON *o = cJSON_CreateObject();
    char desc[256];
    hs_knobs_describe(desc, sizeof desc, k);
    cJSON_AddStringToObject(o, "description", desc);
    cJSON_AddBoolToObject(o, "log_scale", k->log_scale);
    cJSON_AddNumberToObject(o, "log_scale_L0", k->log_scale ? (k->log_scale_L0 > 0 ? k->log_scale_L0 : c->train_context) : 0);
    cJSON_AddStringToObject(o, "swla", r.swla == HS_SWLA_EXACT ? "exact" : r.swla == HS_SWLA_OVERLAP ? "overlap" : "off");
    cJSON_AddNumberToObject(o, "swla_window", r.swla_window);
    cJSON_AddNumberToObject(o, "swla_stride", r.swla == HS_SWLA_OVERLAP ? r.swla_stride : 0);
    cJSON_AddNumberToObject(o, "swa_window", r.swa_window);
    cJSON_AddNumberToObject(o, "rope_window", r.rope_window);
    cJSON *ab = cJSON_AddArrayToObject(o, "ablate");
    for (int i = 0; i < k->n_ablate; i++) {
        char s[48];
        snprintf(s, sizeof s, "%d.%d.%d", k->ablate[i].layer, k->ablate[i].mixer, k->ablate[i].head);
        cJSON_AddItemToArray(ab, cJSON_CreateString(s));
    }
    return o;
}

int hs_input_device(const char *cmd, const char *value, int cpu_only) {
    int d = hs_device_parse(value);
    if (d < 0) hs_cli_die(cmd, "--device: expected cpu, cuda or auto, got '%s'", value);
    char err[HS_ERR_LEN];
    int r = hs_device_resolve(d, err, sizeof err);
    if (r < 0) hs_cli_die(cmd, "%s", err);   /* err names the flag */
    if (cpu_only && r == HS_DEVICE_CUDA && d == HS_DEVICE_CUDA)
        fprintf(stderr, "hybridscope %s: note: the analysis runs on the CPU (its capture hooks "
                "read the CPU forward's activations)\n", cmd);
    return cpu_only ? HS_DEVICE_CPU : r;
}

int hs_input_progress(void *ctx, double fraction) {
    hs_progress_update(ctx, fraction);
    return 0;
}
