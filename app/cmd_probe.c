/* `hybridscope probe`: one forward over a prompt with every head analysed in the capture hook
 * (entropy, top-k hit rate), then greedy decoding of the answer (retrieval score). */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_api.h"
#include "cuda_backend.h"
#include "cli_util.h"
#include "commands.h"
#include "needle.h"
#include "probe_input.h"

static const char *CMD = "probe";

static void help(void) {
    printf("usage: hybridscope probe MODEL INPUT [--topk K] [--gen N] [--expect S] [knobs]\n"
           "                        [--json | --csv] [--device cpu|cuda|auto]\n\n"
           "Runs the model once over the input and, inside that forward, computes for every head\n"
           "of every layer the distribution a~ over source positions of each probe position\n"
           "(softmax heads: attention probabilities; gla/gdn heads: normalised Jacobian weights\n"
           "|c_ts| of the value path; knobs applied), then greedily generates the answer.\n"
           "Per head it reports (model-spec section 7):\n"
           "  entropy    normalised entropy, mean over the probe positions (ln(t+1) denominator)\n"
           "  hit_rate   share of probe positions whose top-k a~ reaches the span (ties count)\n"
           "  retrieval  sum over generated tokens y of 1/|span| when the head's argmax lies in\n"
           "             the span on a token equal to y (argmax ties: earliest position)\n\n"
           "  MODEL        checkpoint directory or sample model name\n%s"
           "  --topk K     k of the hit rate (default min(64, max(1, T/64)); always reported)\n"
           "  --gen N      tokens to generate (task default |value| + 8; text default 0)\n"
           "  --expect S   free text: the answer is correct when it contains S\n"
           "  --json       one JSON document (tokens, probe positions, span, k, knobs, heads)\n"
           "  --csv        one CSV row per head (with the k used)\n"
           "  --device D   cpu (default), cuda or auto: where the forward and the head statistics run\n"
           "Free-text input without --probe-positions probes the last token.\n\n%s",
           hs_input_help, hs_knobs_help);
}

static void print_json(const char *dir, const hs_model *m, const hs_knobs *k, const hs_input *in,
                       const hs_probe_result *r, const int32_t *gen, int n_gen, int have_expect) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", dir);
    cJSON_AddNumberToObject(o, "T", r->T);
    if (in->is_task) {
        cJSON *t = cJSON_AddObjectToObject(o, "task");
        cJSON_AddStringToObject(t, "name", hs_needle_task_name(in->sample.task));
        cJSON_AddNumberToObject(t, "length", in->sample.length);
        cJSON_AddNumberToObject(t, "depth", in->sample.depth);
        cJSON_AddNumberToObject(t, "seed", (double)in->sample.seed);
        cJSON_AddStringToObject(t, "key", in->sample.key);
        cJSON_AddStringToObject(t, "value", in->sample.value);
        cJSON_AddNumberToObject(t, "needle_start", in->sample.needle_start);
        cJSON_AddNumberToObject(t, "needle_end", in->sample.needle_end);
    } else {
        cJSON_AddNullToObject(o, "task");
    }
    cJSON_AddItemToObject(o, "tokens", cJSON_CreateIntArray((const int *)r->tokens, r->T));
    cJSON_AddItemToObject(o, "probe_positions", cJSON_CreateIntArray(r->probe_pos, r->n_probe));
    if (r->span_start >= 0) {
        int sp[2] = { r->span_start, r->span_end };
        cJSON_AddItemToObject(o, "span", cJSON_CreateIntArray(sp, 2));
    } else {
        cJSON_AddNullToObject(o, "span");
    }
    cJSON_AddNumberToObject(o, "topk", r->topk);
    cJSON_AddItemToObject(o, "knobs", hs_knobs_to_json(k, &m->cfg));
    cJSON_AddItemToObject(o, "generated_tokens", cJSON_CreateIntArray((const int *)gen, n_gen));
    if (r->has_answer) cJSON_AddStringToObject(o, "answer", r->answer);
    else cJSON_AddNullToObject(o, "answer");
    if (r->has_answer && have_expect) cJSON_AddBoolToObject(o, "correct", r->correct);
    else cJSON_AddNullToObject(o, "correct");
    cJSON *heads = cJSON_AddArrayToObject(o, "heads");
    for (int h = 0; h < r->n_heads; h++) {
        const hs_head_stat *s = &r->heads[h];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "layer", s->layer);
        cJSON_AddNumberToObject(j, "mixer", s->mixer);
        cJSON_AddNumberToObject(j, "head", s->head);
        cJSON_AddStringToObject(j, "type", hs_mixer_type_name(s->type));
        cJSON_AddNumberToObject(j, "entropy", s->entropy);
        cJSON_AddNumberToObject(j, "hit_rate", s->hit_rate);
        cJSON_AddNumberToObject(j, "retrieval", s->retrieval);
        cJSON_AddItemToArray(heads, j);
    }
    char *s = cJSON_PrintUnformatted(o);
    if (!s) hs_cli_fail(CMD, "out of memory");
    printf("%s\n", s);
    free(s);
    cJSON_Delete(o);
}

static int cmd_probe(int argc, char **argv) {
    const char *arg = NULL, *expect = NULL;
    hs_input_args ia;
    memset(&ia, 0, sizeof ia);
    static hs_knobs *k;
    k = calloc(1, sizeof *k);
    if (!k) hs_cli_fail(CMD, "out of memory");
    long long topk = 0, gen_n = -1;
    int json = 0, csv = 0, device = HS_DEVICE_CPU;
    char err[HS_ERR_LEN];
    for (int i = 1; i < argc; i++) {
        if (hs_cli_is_help(argv[i])) { help(); free(k); return 0; }
        if (hs_cli_knob_flag(CMD, k, argc, argv, &i)) continue;
        if (hs_input_parse_arg(&ia, CMD, argc, argv, &i)) continue;
        if (!strcmp(argv[i], "--topk")) topk = hs_cli_int_flag(CMD, argc, argv, &i, 1, INT_MAX);
        else if (!strcmp(argv[i], "--gen")) gen_n = hs_cli_int_flag(CMD, argc, argv, &i, 0, 1 << 20);
        else if (!strcmp(argv[i], "--expect")) expect = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--csv")) csv = 1;
        else if (!strcmp(argv[i], "--device")) device = hs_input_device(CMD, hs_cli_str_flag(CMD, argc, argv, &i), 0);
        else if (argv[i][0] == '-' && argv[i][1]) hs_cli_die(CMD, "unknown flag '%s' (see --help)", argv[i]);
        else if (arg) hs_cli_die(CMD, "one MODEL expected, got '%s' and '%s'", arg, argv[i]);
        else arg = argv[i];
    }
    if (!arg) hs_cli_die(CMD, "missing MODEL (see --help)");
    if (json && csv) hs_cli_die(CMD, "--json and --csv exclude each other");
    char dir[4096];
    hs_model *m = hs_cli_load_model(CMD, arg, k, dir, sizeof dir);
    /* function-scope static: an exit on bad input after building leaves it reachable */
    static hs_input in;
    hs_input_build(&in, &ia, m, CMD);
    if (in.is_task && expect) hs_cli_die(CMD, "--expect goes with free text (a task knows its value)");

    hs_probe_opts po;
    memset(&po, 0, sizeof po);
    po.tokens = in.tokens;
    po.T = in.T;
    po.probe_pos = in.probe;
    po.n_probe = in.n_probe;
    po.span_start = in.span_start;
    po.span_end = in.span_end;
    po.topk = (int)topk;
    po.max_new = gen_n >= 0 ? (int)gen_n : in.is_task ? hs_needle_max_new(&in.sample) : 0;
    po.expect = in.is_task ? in.sample.value : expect;
    hs_progress bar;
    hs_progress_begin(&bar, "probe");
    po.progress = hs_input_progress;
    po.progress_ctx = &bar;
    po.use_cuda = device == HS_DEVICE_CUDA;
    int32_t *gen = malloc(sizeof(int32_t) * (size_t)(po.max_new > 0 ? po.max_new : 1));
    if (!gen) hs_cli_fail(CMD, "out of memory");
    int n_gen = 0;
    hs_probe_result r;
    int rc = hs_probe_run(&r, m, k, &po, gen, &n_gen, err, sizeof err);
    hs_progress_done(&bar);
    if (rc) {
        /* Input problems were checked above; what is left is a runtime failure. */
        hs_cli_fail(CMD, "%s", err);
    }
    if (in.is_task && r.has_answer) r.correct = hs_needle_score(in.sample.value, gen, n_gen);
    int have_expect = po.expect != NULL;

    if (json) {
        print_json(dir, m, k, &in, &r, gen, n_gen, have_expect);
    } else if (csv) {
        /* k on every row: the hit rate means nothing without it */
        printf("layer,mixer,head,type,entropy,hit_rate,retrieval,topk\n");
        for (int h = 0; h < r.n_heads; h++) {
            const hs_head_stat *s = &r.heads[h];
            printf("%d,%d,%d,%s,%.9g,%.9g,%.9g,%d\n", s->layer, s->mixer, s->head,
                   hs_mixer_type_name(s->type), s->entropy, s->hit_rate, s->retrieval, r.topk);
        }
    } else {
        char kd[256];
        hs_knobs_describe(kd, sizeof kd, k);
        if (in.is_task)
            printf("input: %s, %d tokens, depth %g%%, seed %llu, key \"%s\", value \"%s\"\n",
                   hs_needle_task_name(in.sample.task), r.T, in.sample.depth,
                   (unsigned long long)in.sample.seed, in.sample.key, in.sample.value);
        else
            printf("input: %d tokens\n", r.T);
        if (r.span_start >= 0) printf("span: %d:%d\n", r.span_start, r.span_end);
        else printf("span: none (hit rate and retrieval are 0)\n");
        printf("probe positions: %d (%d..%d), top-k k = %d, knobs: %s\n", r.n_probe, r.probe_pos[0],
               r.probe_pos[r.n_probe - 1], r.topk, kd);
        if (r.has_answer) {
            printf("answer: \"%s\"", r.answer);
            if (have_expect) printf(" (%s)", r.correct ? "correct" : "wrong");
            printf("\n");
        }
        printf("\n  layer mixer head type  entropy  hit_rate  retrieval\n");
        for (int h = 0; h < r.n_heads; h++) {
            const hs_head_stat *s = &r.heads[h];
            printf("  %5d %5d %4d %-4s  %7.4f  %8.4f  %9.4f\n", s->layer, s->mixer, s->head,
                   hs_mixer_type_name(s->type), s->entropy, s->hit_rate, s->retrieval);
        }
    }
    free(gen);
    hs_probe_result_free(&r);
    hs_input_free(&in);
    hs_cli_free_model(m);
    free(k);
    return 0;
}

HS_COMMAND("probe", "per-head entropy, top-k hit rate and retrieval score on one input", cmd_probe, 40)
