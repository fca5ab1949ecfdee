/* `hybridscope ppl`: perplexity by position (model-spec section 9) over the assets prose or
 * a file. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assets.h"
#include "cli_util.h"
#include "commands.h"
#include "device_forward.h"
#include "ppl.h"

static const char *CMD = "ppl";

static void help(void) {
    printf("usage: hybridscope ppl MODEL [--length L] [--buckets log|linear] [--n-buckets K]\n"
           "                      [--docs N] [--split heldout|all | --file F] [knobs]\n"
           "                      [--device cpu|cuda|auto]\n"
           "                      [--assets DIR] [--json | --csv]\n\n"
           "Perplexity by position: documents of L tokens (BOS, then L-1 bytes) cut from the\n"
           "public-domain prose in assets/ (or from F), non-overlapping and spread evenly over\n"
           "the corpus; the next-token NLL at every position, averaged over documents, reported\n"
           "as exp(mean NLL) in position buckets and overall. Position p is the predicted token's\n"
           "index (p tokens of context, BOS included), 1 <= p < L.\n\n"
           "  MODEL            a checkpoint directory or a sample model name\n"
           "  --length L       document length in tokens (default train_context; 16k = 16384)\n"
           "  --buckets S      log (default) or linear position buckets\n"
           "  --n-buckets K    number of buckets (default 16; log buckets that round to the\n"
           "                   same position merge)\n"
           "  --docs N         documents (default 8; fewer when the corpus is shorter)\n"
           "  --split S        heldout (default): the last 10%% of the assets prose, which the\n"
           "                   sample models never trained on; all: the whole prose\n"
           "  --file F         corpus file instead of the assets prose (bytes as they are)\n"
           "  --device D       cpu, cuda or auto (default auto)\n"
           "  --assets DIR     the assets directory (default: found next to the program)\n"
           "  --json           one JSON document on stdout;  --csv  one row per bucket\n\n"
           "%s", hs_knobs_help);
}

typedef struct { hs_progress bar; int done, total; } run_state;

static int on_doc(void *ctx, int done, int total) {
    run_state *st = ctx;
    st->done = done;
    hs_progress_update(&st->bar, (double)done / total);
    return 0;
}

/* Progress inside one document's forward (a 64K document takes a while). */
static int on_forward(void *ctx, double fraction) {
    run_state *st = ctx;
    hs_progress_update(&st->bar, (st->done + fraction) / st->total);
    return 0;
}

static char *read_corpus(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) hs_cli_die(CMD, "--file %s: %s", path, strerror(errno));
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    if (!buf) hs_cli_fail(CMD, "out of memory");
    for (;;) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        cap *= 2;
        char *nb = realloc(buf, cap);
        if (!nb) hs_cli_fail(CMD, "out of memory reading %s", path);
        buf = nb;
    }
    if (ferror(f)) hs_cli_die(CMD, "--file %s: read error", path);
    fclose(f);
    *len = n;
    return buf;
}

static int cmd_ppl(int argc, char **argv) {
    const char *model_arg = NULL, *assets_arg = NULL, *file = NULL;
    int length = 0, n_buckets = 16, docs = 8, json = 0, csv = 0, device = HS_DEVICE_AUTO;
    int heldout = 1, split_given = 0;
    hs_ppl_spacing spacing = HS_PPL_LOG;
    hs_knobs knobs;
    memset(&knobs, 0, sizeof knobs);
    char err[HS_ERR_LEN];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (hs_cli_knob_flag(CMD, &knobs, argc, argv, &i)) continue;
        if (hs_cli_is_help(a)) { help(); return 0; }
        else if (!strcmp(a, "--length")) length = (int)hs_cli_int_flag(CMD, argc, argv, &i, 2, 1 << 24);
        else if (!strcmp(a, "--n-buckets")) n_buckets = (int)hs_cli_int_flag(CMD, argc, argv, &i, 1, 100000);
        else if (!strcmp(a, "--docs")) docs = (int)hs_cli_int_flag(CMD, argc, argv, &i, 1, 1000000);
        else if (!strcmp(a, "--buckets")) {
            const char *s = hs_cli_str_flag(CMD, argc, argv, &i);
            if (!strcmp(s, "log")) spacing = HS_PPL_LOG;
            else if (!strcmp(s, "linear")) spacing = HS_PPL_LINEAR;
            else hs_cli_die(CMD, "--buckets: '%s' is not log or linear", s);
        }
        else if (!strcmp(a, "--file")) file = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--split")) {
            const char *s = hs_cli_str_flag(CMD, argc, argv, &i);
            if (!strcmp(s, "heldout")) heldout = 1;
            else if (!strcmp(s, "all")) heldout = 0;
            else hs_cli_die(CMD, "--split: '%s' is not heldout or all", s);
            split_given = 1;
        }
        else if (!strcmp(a, "--assets")) assets_arg = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(a, "--device")) {
            const char *d = hs_cli_str_flag(CMD, argc, argv, &i);
            device = hs_device_parse(d);
            if (device < 0) hs_cli_die(CMD, "--device: '%s' is not cpu, cuda or auto", d);
        }
        else if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--csv")) csv = 1;
        else if (a[0] == '-' && a[1]) hs_cli_die(CMD, "unknown flag '%s' (see --help)", a);
        else if (model_arg) hs_cli_die(CMD, "one MODEL expected, got '%s' and '%s'", model_arg, a);
        else model_arg = a;
    }
    if (json && csv) hs_cli_die(CMD, "--json and --csv exclude each other");
    if (file && split_given) hs_cli_die(CMD, "--split applies to the assets prose, not to --file %s", file);
    if (!model_arg) hs_cli_die(CMD, "missing MODEL (see --help)");

    /* The corpus first: a bad --file is reported before the model is loaded. */
    size_t len = 0;
    char *stream;
    if (file) {
        stream = read_corpus(file, &len);
    } else {
        char adir[4096];
        hs_assets a;
        if (hs_assets_find(adir, sizeof adir, assets_arg, err, sizeof err)) hs_cli_die(CMD, "%s", err);
        if (hs_assets_load(&a, adir, err, sizeof err)) hs_cli_die(CMD, "%s", err);
        stream = hs_assets_prose_stream(&a, &len);
        hs_assets_free(&a);
        if (!stream) hs_cli_fail(CMD, "out of memory");
    }
    const size_t from = !file && heldout ? hs_assets_heldout_start(len) : 0;
    const char *corpus = file ? file : heldout ? "assets/prose (held-out 10%)" : "assets/prose";

    char dir[4096];
    hs_model *m = hs_cli_load_model(CMD, model_arg, &knobs, dir, sizeof dir);
    if (!length) length = m->cfg.train_context;

    int32_t *doc_tokens = NULL;
    int n_docs = hs_ppl_documents(&doc_tokens, stream + from, len - from, length, docs, m->cfg.bos_id, err, sizeof err);
    free(stream);
    if (n_docs < 0) hs_cli_die(CMD, "%s%s%s%s", file ? "--file " : "", file ? file : "", err,
                               !file && heldout ? " (the held-out prose; --split all takes the whole)" : "");
    if (n_docs < docs)
        fprintf(stderr, "hybridscope ppl: the corpus holds only %d document%s of %d tokens\n",
                n_docs, n_docs == 1 ? "" : "s", length);

    hs_ppl_result r;
    if (hs_ppl_result_init(&r, length, n_buckets, spacing, err, sizeof err)) hs_cli_fail(CMD, "%s", err);
    snprintf(r.corpus, sizeof r.corpus, "%s", corpus);
    hs_device_forward dev;
    if (hs_device_forward_open(&dev, device, m, &knobs, err, sizeof err) < 0) hs_cli_die(CMD, "%s", err);
    run_state st = {.done = 0, .total = n_docs};
    hs_progress_begin(&st.bar, "ppl");
    hs_forward_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.progress = on_forward;
    opts.progress_ctx = &st;
    int rc = hs_ppl_run(&r, m, &knobs, doc_tokens, n_docs, &opts, hs_device_forward_run, &dev,
                        on_doc, &st, err, sizeof err);
    hs_progress_done(&st.bar);
    if (rc) hs_cli_fail(CMD, "%s", err);

    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", dir);
        cJSON_AddStringToObject(o, "corpus", file ? file : "assets/prose");
        if (!file) cJSON_AddStringToObject(o, "split", heldout ? "heldout" : "all");
        cJSON_AddNumberToObject(o, "length", r.length);
        cJSON_AddNumberToObject(o, "docs", r.n_docs);
        cJSON_AddStringToObject(o, "buckets", spacing == HS_PPL_LOG ? "log" : "linear");
        cJSON_AddStringToObject(o, "knobs", r.label);
        cJSON_AddStringToObject(o, "device", hs_device_name(dev.device));
        cJSON_AddNumberToObject(o, "overall", r.overall);
        cJSON *b = cJSON_AddArrayToObject(o, "by_position");
        for (int i = 0; i < r.n_buckets; i++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "start", r.bucket_start[i]);
            cJSON_AddNumberToObject(e, "end", r.bucket_end[i]);
            cJSON_AddNumberToObject(e, "ppl", r.ppl[i]);
            cJSON_AddItemToArray(b, e);
        }
        char *s = cJSON_PrintUnformatted(o);
        if (!s) hs_cli_fail(CMD, "out of memory");
        printf("%s\n", s);
        free(s);
        cJSON_Delete(o);
    } else if (csv) {
        printf("start,end,ppl\n");
        for (int i = 0; i < r.n_buckets; i++)
            printf("%d,%d,%.6g\n", r.bucket_start[i], r.bucket_end[i], r.ppl[i]);
    } else {
        printf("ppl %s  L=%d  docs=%d  corpus: %s  knobs: %s  device: %s\n", dir, r.length,
               r.n_docs, corpus, r.label, hs_device_name(dev.device));
        printf("  positions            ppl\n");
        for (int i = 0; i < r.n_buckets; i++)
            printf("  %6d-%-6d %12.4f\n", r.bucket_start[i], r.bucket_end[i] - 1, r.ppl[i]);
        printf("  overall       %12.4f\n", r.overall);
    }
    hs_ppl_result_free(&r);
    hs_device_forward_close(&dev);
    free(doc_tokens);
    hs_cli_free_model(m);
    return 0;
}

HS_COMMAND("ppl", "perplexity by position over the assets prose or a file", cmd_ppl, 70)
