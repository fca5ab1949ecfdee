/* hybridscope logits: one forward pass, logits written as a float32 .npy [rows, V]. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "commands.h"
#include "cuda_backend.h"
#include "forward.h"
#include "forward_device.h"
#include "knobs.h"
#include "model.h"
#include "npy.h"
#include "tokenizer.h"

static const char *CMD = "logits";

static void usage(FILE *f) {
    fprintf(f,
            "usage: hybridscope logits MODEL (--text S | --text-file F | --tokens F.npy) [knobs]\n"
            "                          [--last N] [--chunk C] [--recurrent] [--device cpu|cuda|auto]\n"
            "                          --out X.npy\n\n"
            "Runs the model on one input and writes its logits as a float32 NumPy array of shape\n"
            "[T, V] (or [N, V] with --last N: the rows of the last N positions).\n\n"
            "  MODEL              checkpoint directory (config.json + model.safetensors) or sample name\n"
            "  --text S           input text; the tokenizer's BOS is prepended\n"
            "  --text-file F      input text from a file (BOS prepended)\n"
            "  --tokens F.npy     token ids, int32 or int64, shape [T] or [1, T], used as given\n"
            "  --last N           only the last N rows (1 <= N <= T)\n"
            "  --chunk C          gla/gdn chunk size (default 64)\n"
            "  --recurrent        plain recurrence for gla/gdn instead of the chunked form\n"
            "  --device D         cpu, cuda or auto (default auto: cuda when a device exists)\n"
            "  --out X.npy        output file (written to X.npy.tmp, then renamed)\n\n%s",
            hs_knobs_help);
}

static int on_progress(void *ctx, double f) {
    hs_progress_update(ctx, f);
    return 0;
}

static char *read_text_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) hs_cli_die(CMD, "--text-file %s: cannot open", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (!buf) hs_cli_fail(CMD, "out of memory reading %s", path);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            if (cap > ((size_t)1 << 31)) hs_cli_die(CMD, "--text-file %s: larger than 2 GB", path);
            char *nb = realloc(buf, cap *= 2);
            if (!nb) hs_cli_fail(CMD, "out of memory reading %s", path);
            buf = nb;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) hs_cli_die(CMD, "--text-file %s: read error (a directory?)", path);
    *len = n;
    return buf;
}

static int cmd_logits(int argc, char **argv) {
    const char *model_arg = NULL, *text = NULL, *text_file = NULL, *tokens_path = NULL;
    const char *out_path = NULL, *device_arg = "auto";
    long long last = 0, chunk = 0;
    int recurrent = 0;
    hs_knobs knobs;
    memset(&knobs, 0, sizeof knobs);
    char err[HS_ERR_LEN];

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (hs_cli_is_help(a)) { usage(stdout); return 0; }
        if (hs_cli_knob_flag(CMD, &knobs, argc, argv, &i)) continue;
        if (!strcmp(a, "--text")) text = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--text-file")) text_file = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--tokens")) tokens_path = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--out")) out_path = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--device")) device_arg = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--last")) last = hs_cli_int_flag(CMD, argc, argv, &i, 1, INT32_MAX);
        else if (!strcmp(a, "--chunk")) chunk = hs_cli_int_flag(CMD, argc, argv, &i, 1, 4096);
        else if (!strcmp(a, "--recurrent")) recurrent = 1;
        else if (a[0] == '-' && a[1]) hs_cli_die(CMD, "unknown flag %s (see 'hybridscope logits --help')", a);
        else if (!model_arg) model_arg = a;
        else hs_cli_die(CMD, "unexpected argument '%s' (MODEL is already %s)", a, model_arg);
    }
    if (!model_arg) hs_cli_die(CMD, "missing MODEL (see 'hybridscope logits --help')");
    if (!!text + !!text_file + !!tokens_path != 1)
        hs_cli_die(CMD, "give exactly one of --text, --text-file, --tokens");
    if (!out_path) hs_cli_die(CMD, "missing --out X.npy");
    int requested = hs_device_parse(device_arg);
    if (requested < 0) hs_cli_die(CMD, "--device: expected cpu, cuda or auto, got '%s'", device_arg);

    char dir[4096];
    if (hs_cli_resolve_model(dir, sizeof dir, model_arg, err, sizeof err)) hs_cli_die(CMD, "%s", err);
    hs_model m;
    memset(&m, 0, sizeof m);
    if (hs_model_load(&m, dir, err, sizeof err)) hs_cli_die(CMD, "%s", err);
    const hs_config *c = &m.cfg;
    if (hs_knobs_validate(&knobs, c, err, sizeof err)) hs_cli_die(CMD, "%s", err);

    int32_t *tok = NULL;
    int T = 0;
    if (tokens_path) {
        if (hs_npy_read_tokens(&tok, &T, tokens_path, c->vocab_size, err, sizeof err))
            hs_cli_die(CMD, "--tokens %s", err);
    } else {
        hs_tokenizer tk;
        if (hs_tokenizer_init(&tk, c, err, sizeof err)) hs_cli_die(CMD, "%s: %s", dir, err);
        size_t len = strlen(text ? text : "");
        char *buf = text_file ? read_text_file(text_file, &len) : NULL;
        if (len > 0x7ffffff0) hs_cli_die(CMD, "input too long (%zu bytes)", len);
        tok = hs_tokenizer_encode_alloc(&tk, buf ? buf : text, len, &T);
        free(buf);
        if (!tok) hs_cli_fail(CMD, "out of memory tokenizing %zu bytes", len);
    }
    if (last > T) hs_cli_die(CMD, "--last %lld: the input has only %d tokens", last, T);
    int rows = last ? (int)last : T;

    int device = hs_device_resolve(requested, err, sizeof err);
    if (device < 0) hs_cli_fail(CMD, "%s", err);

    size_t n_out = (size_t)rows * (size_t)c->vocab_size;
    float *logits = malloc(n_out * sizeof *logits);
    if (!logits)
        hs_cli_fail(CMD, "out of memory for %d x %d logits (%zu MB); use --last N", rows,
                    c->vocab_size, (n_out * sizeof *logits >> 20) + 1);

    hs_progress bar;
    hs_progress_begin(&bar, "forward");
    hs_forward_opts o;
    memset(&o, 0, sizeof o);
    o.chunk = (int)chunk;
    o.use_recurrent = recurrent;
    o.logits = logits;
    o.n_logit_rows = rows;
    o.progress = on_progress;
    o.progress_ctx = &bar;
    double t0 = hs_cli_now_s();
    int rc = hs_forward_on(device, &m, tok, T, &knobs, &o, err, sizeof err);
    double secs = hs_cli_now_s() - t0;
    hs_progress_done(&bar);
    if (rc) hs_cli_fail(CMD, "%s", err);

    int64_t shape[2] = {rows, c->vocab_size};
    if (hs_npy_write_f32(out_path, logits, 2, shape, err, sizeof err)) hs_cli_fail(CMD, "%s", err);
    char kd[256];
    hs_knobs_describe(kd, sizeof kd, &knobs);
    printf("wrote %s: float32 [%d, %d] (T=%d, device %s, knobs %s, %.2f s, %.0f tokens/s)\n",
           out_path, rows, c->vocab_size, T, hs_device_name(device), kd, secs,
           secs > 0 ? T / secs : 0.0);
    free(logits);
    free(tok);
    hs_forward_device_release(&m);
    hs_model_free(&m);
    return 0;
}

HS_COMMAND("logits", "run the model on an input and write its logits (.npy)", cmd_logits, 30)
