/* hybridscope generate: greedy generation after an input with the chosen device's incremental
 * decoder (engine/decode_device.h); the generated ids, text and optionally the logits each
 * token was picked from. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "commands.h"
#include "cuda_backend.h"
#include "decode_device.h"
#include "forward_device.h"
#include "npy.h"
#include "tokenizer.h"

static const char *CMD = "generate";

static void usage(FILE *f) {
    fprintf(f,
            "usage: hybridscope generate MODEL (--text S | --tokens F.npy) [--max-new N] [knobs]\n"
            "                            [--device cpu|cuda|auto] [--logits-out X.npy]\n"
            "                            [--tokens-out Y.npy] [--json]\n\n"
            "Greedy generation (argmax, stopping at the eos token) after the input, with the\n"
            "incremental decoder of the device: KV caches for softmax heads, recurrent states for\n"
            "gla/gdn heads, on the CPU or on the GPU (where the GPU decoder cannot run, one forward\n"
            "per token; HS_CUDA_DECODER=0 asks for that). Prints the generated ids and text.\n\n"
            "  MODEL            checkpoint directory or sample model name\n"
            "  --text S         input text; the tokenizer's BOS is prepended\n"
            "  --tokens F.npy   input token ids, int32 or int64, shape [T] or [1, T], used as given\n"
            "  --max-new N      tokens to generate, at most (default 32)\n"
            "  --device D       cpu, cuda or auto (default auto)\n"
            "  --logits-out X   float32 [R, V]: row i holds the logits token i was picked from\n"
            "                   (R = generated tokens, plus one when generation stopped at eos)\n"
            "  --tokens-out Y   int32 [T + n]: the input followed by the n generated tokens\n"
            "  --json           one JSON object instead of text\n\n%s",
            hs_knobs_help);
}

static void print_json(const char *dir, const char *device, const char *knobs, int T, const int32_t *gen,
                       int n, int at_eos, const char *text, double secs) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", dir);
    cJSON_AddStringToObject(o, "device", device);
    cJSON_AddStringToObject(o, "knobs", knobs);
    cJSON_AddNumberToObject(o, "prompt_tokens", T);
    cJSON *ids = cJSON_AddArrayToObject(o, "tokens");
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(ids, cJSON_CreateNumber(gen[i]));
    cJSON_AddStringToObject(o, "text", text);
    cJSON_AddBoolToObject(o, "stopped_at_eos", at_eos);
    cJSON_AddNumberToObject(o, "seconds", secs);
    char *s = cJSON_PrintUnformatted(o);
    if (!s) hs_cli_fail(CMD, "out of memory");
    printf("%s\n", s);
    free(s);
    cJSON_Delete(o);
}

static int cmd_generate(int argc, char **argv) {
    const char *model_arg = NULL, *text = NULL, *tokens_path = NULL, *device_arg = "auto";
    const char *logits_path = NULL, *seq_path = NULL;
    long long max_new = 32;
    int json = 0;
    hs_knobs knobs;
    memset(&knobs, 0, sizeof knobs);
    char err[HS_ERR_LEN];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (hs_cli_is_help(a)) { usage(stdout); return 0; }
        if (hs_cli_knob_flag(CMD, &knobs, argc, argv, &i)) continue;
        if (!strcmp(a, "--text")) text = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--tokens")) tokens_path = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--max-new")) max_new = hs_cli_int_flag(CMD, argc, argv, &i, 1, 1 << 20);
        else if (!strcmp(a, "--device")) device_arg = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--logits-out")) logits_path = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--tokens-out")) seq_path = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--json")) json = 1;
        else if (a[0] == '-' && a[1]) hs_cli_die(CMD, "unknown flag %s (see 'hybridscope generate --help')", a);
        else if (!model_arg) model_arg = a;
        else hs_cli_die(CMD, "unexpected argument '%s' (MODEL is already %s)", a, model_arg);
    }
    if (!model_arg) hs_cli_die(CMD, "missing MODEL (see 'hybridscope generate --help')");
    if (!!text + !!tokens_path != 1) hs_cli_die(CMD, "give exactly one of --text, --tokens");
    int requested = hs_device_parse(device_arg);
    if (requested < 0) hs_cli_die(CMD, "--device: expected cpu, cuda or auto, got '%s'", device_arg);

    char dir[4096];
    hs_model *m = hs_cli_load_model(CMD, model_arg, &knobs, dir, sizeof dir);
    const hs_config *c = &m->cfg;
    hs_tokenizer tk;
    if (hs_tokenizer_init(&tk, c, err, sizeof err)) hs_cli_die(CMD, "%s: %s", dir, err);
    int32_t *tok = NULL;
    int T = 0;
    if (tokens_path) {
        if (hs_npy_read_tokens(&tok, &T, tokens_path, c->vocab_size, err, sizeof err))
            hs_cli_die(CMD, "--tokens %s", err);
    } else {
        tok = hs_tokenizer_encode_alloc(&tk, text, strlen(text), &T);
        if (!tok) hs_cli_fail(CMD, "out of memory tokenizing the input");
    }
    if (T < 1) hs_cli_die(CMD, "the input is empty");
    int device = hs_device_resolve(requested, err, sizeof err);
    if (device < 0) hs_cli_fail(CMD, "%s", err);

    const int n_max = (int)max_new, V = c->vocab_size;
    int32_t *seq = malloc(sizeof(int32_t) * ((size_t)T + (size_t)n_max));
    float *logits = logits_path ? malloc(sizeof(float) * (size_t)n_max * (size_t)V) : NULL;
    if (!seq || (logits_path && !logits)) hs_cli_fail(CMD, "out of memory for %d tokens", n_max);
    memcpy(seq, tok, sizeof(int32_t) * (size_t)T);
    int32_t *gen = seq + T;
    int n = 0;
    double t0 = hs_cli_now_s();
    if (hs_generate_greedy_on(device, m, &knobs, tok, T, n_max, gen, &n, logits, NULL, err, sizeof err))
        hs_cli_fail(CMD, "%s", err);
    double secs = hs_cli_now_s() - t0;
    const int at_eos = n < n_max;

    if (logits_path) {
        int64_t shape[2] = {at_eos ? n + 1 : n, V};
        if (hs_npy_write_f32(logits_path, logits, 2, shape, err, sizeof err)) hs_cli_fail(CMD, "%s", err);
    }
    if (seq_path) {
        int64_t shape[1] = {T + n};
        if (hs_npy_write_i32(seq_path, seq, 1, shape, err, sizeof err)) hs_cli_fail(CMD, "%s", err);
    }
    char *out_text = hs_tokenizer_decode_alloc(&tk, gen, n);
    if (!out_text) hs_cli_fail(CMD, "out of memory");
    char kd[256];
    hs_knobs_describe(kd, sizeof kd, &knobs);
    if (json) {
        print_json(dir, hs_device_name(device), kd, T, gen, n, at_eos, out_text, secs);
    } else {
        printf("generated %d tokens%s (prompt %d tokens, device %s, knobs %s, %.2f s)\nids:", n,
               at_eos ? ", then eos" : "", T, hs_device_name(device), kd, secs);
        for (int i = 0; i < n; i++) printf(" %d", gen[i]);
        printf("\ntext: %s\n", out_text);
    }
    free(out_text);
    free(logits);
    free(seq);
    free(tok);
    hs_forward_device_release(m);
    hs_cli_free_model(m);
    return 0;
}

HS_COMMAND("generate", "greedy generation with the incremental decoder (cpu or cuda)", cmd_generate, 35)
