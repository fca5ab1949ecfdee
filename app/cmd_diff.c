/* `hybridscope diff MODEL_A MODEL_B`: per-head parameter displacement r_Q, r_K (the paper's
 * measure of how far continued training moved each head's query and key projections). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_api.h"
#include "cli_util.h"
#include "commands.h"

static const char *CMD = "diff";

static void help(void) {
    printf("usage: hybridscope diff MODEL_A MODEL_B [--json | --csv]\n\n"
           "Per head: r_Q = ||W_Q^B - W_Q^A||_2 / ||W_Q^A||_2 over that head's rows of q_proj, and\n"
           "r_K likewise over k_proj (the head's kv head for GQA mixers); ||.||_2 is the spectral\n"
           "norm, computed by power iteration in double. MODEL_B is usually MODEL_A after\n"
           "continued training. Also prints the mean per mixer type (a head with a zero original\n"
           "norm has r = inf when its weights changed). The two models must have the same shape.\n\n"
           "  MODEL_A, MODEL_B  checkpoint directories or sample model names\n"
           "  --json            one JSON document\n"
           "  --csv             one CSV row per head\n");
}

/* Models loaded so far: reachable (not leaked) if a later load exits on bad input. */
static hs_model *held[2];
static int n_held;

static hs_model *load(const char *arg, char *dir, size_t n) {
    char err[HS_ERR_LEN];
    if (hs_cli_resolve_model(dir, n, arg, err, sizeof err) < 0) hs_cli_die(CMD, "%s", err);
    hs_model *m = calloc(1, sizeof *m);
    if (!m) hs_cli_fail(CMD, "out of memory");
    held[n_held++ & 1] = m;   /* reachable if the second load exits on bad input */
    if (hs_model_load(m, dir, err, sizeof err)) hs_cli_die(CMD, "%s", err);
    return m;
}

static cJSON *num_or_null(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

static int cmd_diff(int argc, char **argv) {
    const char *args[2] = { NULL, NULL };
    int n_args = 0, json = 0, csv = 0;
    for (int i = 1; i < argc; i++) {
        if (hs_cli_is_help(argv[i])) { help(); return 0; }
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--csv")) csv = 1;
        else if (argv[i][0] == '-' && argv[i][1]) hs_cli_die(CMD, "unknown flag '%s' (see --help)", argv[i]);
        else if (n_args == 2) hs_cli_die(CMD, "two models expected, got a third: '%s'", argv[i]);
        else args[n_args++] = argv[i];
    }
    if (n_args < 2) hs_cli_die(CMD, "need MODEL_A and MODEL_B (see --help)");
    if (json && csv) hs_cli_die(CMD, "--json and --csv exclude each other");
    char dir_a[4096], dir_b[4096], err[HS_ERR_LEN];
    /* statics: an exit on mismatched shapes after loading leaves them reachable */
    static hs_model *a, *b;
    a = load(args[0], dir_a, sizeof dir_a);
    b = load(args[1], dir_b, sizeof dir_b);
    int n = hs_config_head_count(&a->cfg);
    hs_head_displacement *d = calloc((size_t)(n > 0 ? n : 1), sizeof *d);
    if (!d) hs_cli_fail(CMD, "out of memory");
    if (hs_model_displacement(d, a, b, err, sizeof err)) {
        if (strstr(err, "out of memory")) hs_cli_fail(CMD, "%s", err);
        hs_cli_die(CMD, "%s (%s vs %s)", err, dir_a, dir_b);
    }
    /* Mean per mixer type. */
    double sq[HS_MIXER_TYPES] = { 0 }, sk[HS_MIXER_TYPES] = { 0 };
    int cnt[HS_MIXER_TYPES] = { 0 };
    for (int i = 0; i < n; i++) { sq[d[i].type] += d[i].r_q; sk[d[i].type] += d[i].r_k; cnt[d[i].type]++; }

    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model_a", dir_a);
        cJSON_AddStringToObject(o, "model_b", dir_b);
        cJSON *hs = cJSON_AddArrayToObject(o, "heads");
        for (int i = 0; i < n; i++) {
            cJSON *h = cJSON_CreateObject();
            cJSON_AddNumberToObject(h, "layer", d[i].layer);
            cJSON_AddNumberToObject(h, "mixer", d[i].mixer);
            cJSON_AddNumberToObject(h, "head", d[i].head);
            cJSON_AddStringToObject(h, "type", hs_mixer_type_name(d[i].type));
            cJSON_AddItemToObject(h, "r_q", num_or_null(d[i].r_q));
            cJSON_AddItemToObject(h, "r_k", num_or_null(d[i].r_k));
            cJSON_AddItemToArray(hs, h);
        }
        cJSON *by = cJSON_AddObjectToObject(o, "mean_by_type");
        for (int t = 0; t < HS_MIXER_TYPES; t++) {
            if (!cnt[t]) continue;
            cJSON *e = cJSON_AddObjectToObject(by, hs_mixer_type_name((hs_mixer_type)t));
            cJSON_AddNumberToObject(e, "heads", cnt[t]);
            cJSON_AddItemToObject(e, "r_q", num_or_null(sq[t] / cnt[t]));
            cJSON_AddItemToObject(e, "r_k", num_or_null(sk[t] / cnt[t]));
        }
        char *s = cJSON_PrintUnformatted(o);
        if (!s) hs_cli_fail(CMD, "out of memory");
        printf("%s\n", s);
        free(s);
        cJSON_Delete(o);
    } else if (csv) {
        printf("layer,mixer,head,type,r_q,r_k\n");
        for (int i = 0; i < n; i++)
            printf("%d,%d,%d,%s,%.9g,%.9g\n", d[i].layer, d[i].mixer, d[i].head,
                   hs_mixer_type_name(d[i].type), d[i].r_q, d[i].r_k);
    } else {
        printf("A: %s\nB: %s\n\n  layer mixer head type        r_Q        r_K\n", dir_a, dir_b);
        for (int i = 0; i < n; i++)
            printf("  %5d %5d %4d %-4s  %9.6f  %9.6f\n", d[i].layer, d[i].mixer, d[i].head,
                   hs_mixer_type_name(d[i].type), d[i].r_q, d[i].r_k);
        printf("\n  mean by type:\n");
        for (int t = 0; t < HS_MIXER_TYPES; t++)
            if (cnt[t])
                printf("  %-4s %3d heads  r_Q %9.6f  r_K %9.6f\n", hs_mixer_type_name((hs_mixer_type)t),
                       cnt[t], sq[t] / cnt[t], sk[t] / cnt[t]);
    }
    free(d);
    hs_model_free(a); free(a);
    hs_model_free(b); free(b);
    return 0;
}

HS_COMMAND("diff", "per-head parameter displacement r_Q, r_K between two checkpoints", cmd_diff, 80)
