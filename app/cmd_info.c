/* `hybridscope info MODEL`: layout, parameter count and cache/state sizes of a checkpoint,
 * after validating it the way every loading command does. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "model.h"
#include "safetensors.h"

static const char *CMD = "info";

static void help(void) {
    printf("usage: hybridscope info MODEL [--length T] [--json]\n\n"
           "Validates the checkpoint (config.json + safetensors) and prints its layout: per layer\n"
           "its mixers (type, heads, kv heads, key/value head dims, window, RoPE theta, short conv),\n"
           "layer-wise (LH) or head-wise (HH) hybrid, the ratio of position-biased to NoPE heads,\n"
           "the parameter count, the training record where config.json has one (steps, phases,\n"
           "the last phase's data shares), and the KV-cache / recurrent-state bytes (fp32) per\n"
           "layer and per token at a context of T tokens.\n\n"
           "  MODEL        a checkpoint directory, or the name of a sample model (sample-models/NAME)\n"
           "  --length T   context length for the cache sizes (default: train_context; 64K = 65536)\n"
           "  --json       one JSON document on stdout instead of the table\n");
}

static long long gcd(long long a, long long b) {
    while (b) { long long t = a % b; a = b; b = t; }
    return a;
}

static const char *layout_name(const hs_config *c) {
    int two = 0;
    for (int i = 0; i < c->num_layers; i++) two += c->layers[i].n_mixers == 2;
    return two == 0 ? "LH" : two == c->num_layers ? "HH" : "mixed";
}

static void ratio_str(char *out, size_t n, const hs_config *c) {
    int b, z;
    hs_config_total_heads(c, &b, &z);
    long long g = gcd(b, z);
    snprintf(out, n, "%lld:%lld", g ? b / g : 0, g ? z / g : 0);
}

static void mixer_str(char *out, size_t n, const hs_mixer_config *m) {
    int p = snprintf(out, n, "%s h%d", hs_mixer_type_label(m->type), m->num_heads);
    if (hs_mixer_is_softmax(m->type)) p += snprintf(out + p, n - (size_t)p, " kv%d", m->num_kv_heads);
    p += snprintf(out + p, n - (size_t)p, " dk%d dv%d", m->head_k_dim, m->head_v_dim);
    if (m->type == HS_SWA) p += snprintf(out + p, n - (size_t)p, " window %d", m->window);
    if (m->type == HS_ROPE || m->type == HS_SWA) p += snprintf(out + p, n - (size_t)p, " theta %g", m->rope_theta);
    if (m->type == HS_GLA)
        p += snprintf(out + p, n - (size_t)p, " r%d norm%g", m->gate_low_rank_dim, m->gate_logit_normalizer);
    if (m->type == HS_GDN && m->allow_neg_eigval) p += snprintf(out + p, n - (size_t)p, " neg-eig");
    if ((m->type == HS_GLA || m->type == HS_GDN) && m->use_short_conv)
        snprintf(out + p, n - (size_t)p, " conv%d", m->conv_size);
}

static cJSON *mixer_json(const hs_mixer_config *m) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", hs_mixer_type_name(m->type));
    cJSON_AddNumberToObject(o, "num_heads", m->num_heads);
    cJSON_AddNumberToObject(o, "num_kv_heads", m->num_kv_heads);
    cJSON_AddNumberToObject(o, "head_k_dim", m->head_k_dim);
    cJSON_AddNumberToObject(o, "head_v_dim", m->head_v_dim);
    if (m->type == HS_SWA) cJSON_AddNumberToObject(o, "window", m->window);
    if (m->type == HS_ROPE || m->type == HS_SWA) cJSON_AddNumberToObject(o, "rope_theta", m->rope_theta);
    if (m->type == HS_GLA) {
        cJSON_AddNumberToObject(o, "gate_low_rank_dim", m->gate_low_rank_dim);
        cJSON_AddNumberToObject(o, "gate_logit_normalizer", m->gate_logit_normalizer);
    }
    if (m->type == HS_GDN) cJSON_AddBoolToObject(o, "allow_neg_eigval", m->allow_neg_eigval);
    if (m->type == HS_GLA || m->type == HS_GDN) {
        cJSON_AddBoolToObject(o, "use_short_conv", m->use_short_conv);
        if (m->use_short_conv) cJSON_AddNumberToObject(o, "conv_size", m->conv_size);
    }
    return o;
}

typedef struct {
    int n_files;
    long long n_tensors, bytes;
    int dtype_count[3];
} weights_info;

static void weights_summary(weights_info *w, const char *dir) {
    memset(w, 0, sizeof *w);
    hs_st_archive ar;
    memset(&ar, 0, sizeof ar);
    char err[HS_ERR_LEN];
    if (hs_st_open_dir(&ar, dir, err, sizeof err) < 0) return;   /* already validated */
    w->n_files = ar.n_files;
    w->n_tensors = ar.n_tensors;
    for (int i = 0; i < ar.n_tensors; i++) {
        w->bytes += (long long)ar.tensors[i].nbytes;
        w->dtype_count[ar.tensors[i].dtype]++;
    }
    hs_st_close(&ar);
}

static void dtypes_str(char *out, size_t n, const weights_info *w) {
    size_t p = 0;
    out[0] = 0;
    for (int d = 0; d < 3; d++)
        if (w->dtype_count[d] && p < n)
            p += (size_t)snprintf(out + p, n - p, "%s%s", p ? "+" : "", hs_dtype_name((hs_dtype)d));
}

static int cmd_info(int argc, char **argv) {
    const char *arg = NULL;
    long long T = 0;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (hs_cli_is_help(argv[i])) { help(); return 0; }
        if (!strcmp(argv[i], "--length")) T = hs_cli_int_flag(CMD, argc, argv, &i, 1, 1LL << 40);
        else if (!strcmp(argv[i], "--json")) json = 1;
        else if (argv[i][0] == '-' && argv[i][1]) hs_cli_die(CMD, "unknown flag '%s' (see --help)", argv[i]);
        else if (arg) hs_cli_die(CMD, "one MODEL expected, got '%s' and '%s'", arg, argv[i]);
        else arg = argv[i];
    }
    if (!arg) hs_cli_die(CMD, "missing MODEL (see --help)");
    char dir[4096], err[HS_ERR_LEN];
    if (hs_cli_resolve_model(dir, sizeof dir, arg, err, sizeof err) < 0) hs_cli_die(CMD, "%s", err);
    hs_config *c = malloc(sizeof *c);
    if (!c) hs_cli_fail(CMD, "out of memory");
    if (hs_model_check(dir, c, err, sizeof err) < 0) hs_cli_die(CMD, "%s", err);
    if (T == 0) T = c->train_context;

    weights_info w;
    weights_summary(&w, dir);
    char dts[32], ratio[32];
    dtypes_str(dts, sizeof dts, &w);
    ratio_str(ratio, sizeof ratio, c);
    int biased, nope;
    hs_config_total_heads(c, &biased, &nope);
    long long params = hs_config_param_count(c), total = 0;
    for (int i = 0; i < c->num_layers; i++) total += hs_layer_cache_bytes(c, i, T);

    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", dir);
        cJSON_AddStringToObject(o, "layout", layout_name(c));
        cJSON_AddStringToObject(o, "ratio", ratio);
        cJSON_AddNumberToObject(o, "position_biased_heads", biased);
        cJSON_AddNumberToObject(o, "nope_heads", nope);
        cJSON_AddNumberToObject(o, "num_layers", c->num_layers);
        cJSON_AddNumberToObject(o, "hidden_size", c->hidden_size);
        cJSON_AddNumberToObject(o, "intermediate_size", c->intermediate_size);
        cJSON_AddNumberToObject(o, "vocab_size", c->vocab_size);
        cJSON_AddBoolToObject(o, "tie_word_embeddings", c->tie_word_embeddings);
        cJSON_AddNumberToObject(o, "train_context", c->train_context);
        cJSON_AddNumberToObject(o, "param_count", (double)params);
        cJSON *wj = cJSON_AddObjectToObject(o, "weights");
        cJSON_AddNumberToObject(wj, "files", w.n_files);
        cJSON_AddNumberToObject(wj, "tensors", (double)w.n_tensors);
        cJSON_AddStringToObject(wj, "dtype", dts);
        cJSON_AddNumberToObject(wj, "bytes", (double)w.bytes);
        const hs_training_info *tr = &c->training;
        if (tr->present && (tr->has_steps || tr->shares)) {
            cJSON *tj = cJSON_AddObjectToObject(o, "training");
            if (tr->has_steps) cJSON_AddNumberToObject(tj, "steps", (double)tr->steps);
            if (tr->phases) cJSON_AddNumberToObject(tj, "phases", tr->phases);
            const char *keys[3] = { "p_needle", "p_kv", "p_copy" };
            const double v[3] = { tr->p_needle, tr->p_kv, tr->p_copy };
            for (int i = 0; i < 3; i++)
                if (tr->shares >> i & 1) cJSON_AddNumberToObject(tj, keys[i], v[i]);
        }
        cJSON_AddNumberToObject(o, "length", (double)T);
        cJSON_AddNumberToObject(o, "cache_bytes", (double)total);
        cJSON_AddNumberToObject(o, "cache_bytes_per_token", (double)total / (double)T);
        cJSON *layers = cJSON_AddArrayToObject(o, "layers");
        for (int i = 0; i < c->num_layers; i++) {
            cJSON *l = cJSON_CreateObject();
            cJSON_AddNumberToObject(l, "index", i);
            cJSON *ms = cJSON_AddArrayToObject(l, "mixers");
            for (int k = 0; k < c->layers[i].n_mixers; k++) cJSON_AddItemToArray(ms, mixer_json(&c->layers[i].mixers[k]));
            long long b = hs_layer_cache_bytes(c, i, T);
            cJSON_AddNumberToObject(l, "cache_bytes", (double)b);
            cJSON_AddNumberToObject(l, "cache_bytes_per_token", (double)b / (double)T);
            cJSON_AddItemToArray(layers, l);
        }
        char *s = cJSON_Print(o);
        printf("%s\n", s);
        free(s);
        cJSON_Delete(o);
        free(c);
        return 0;
    }

    char pc[32], wb[32], tb[32], tt[32];
    hs_cli_format_count(pc, sizeof pc, (double)params);
    hs_cli_format_bytes(wb, sizeof wb, (double)w.bytes);
    printf("%s\n", dir);
    /* a baseline with one kind of head (rope-full, nope-full) is not a hybrid of any layout */
    char kind[48];
    if (nope == 0) snprintf(kind, sizeof kind, "not hybrid (no NoPE heads)");
    else if (biased == 0) snprintf(kind, sizeof kind, "not hybrid (NoPE heads only)");
    else snprintf(kind, sizeof kind, "hybrid %s", layout_name(c));
    printf("  %s, %d layers, hidden %d, ffn %d, vocab %d, %s embeddings, L0 (train_context) %d\n",
           kind, c->num_layers, c->hidden_size, c->intermediate_size, c->vocab_size,
           c->tie_word_embeddings ? "tied" : "untied", c->train_context);
    printf("  heads: %d position-biased, %d NoPE (ratio %s)\n", biased, nope, ratio);
    printf("  parameters: %lld (%s)\n", params, pc);
    printf("  weights: %d file%s, %lld tensors, %s, %s\n", w.n_files, w.n_files == 1 ? "" : "s",
           w.n_tensors, dts, wb);
    char trl[160];
    if (hs_training_describe(trl, sizeof trl, &c->training)) printf("  %s\n", trl);
    printf("\n  layer  %-58s %12s %12s\n", "mixers", "cache@T", "per token");
    for (int i = 0; i < c->num_layers; i++) {
        char ms[256] = "";
        size_t p = 0;
        for (int k = 0; k < c->layers[i].n_mixers; k++) {
            char one[128];
            mixer_str(one, sizeof one, &c->layers[i].mixers[k]);
            p += (size_t)snprintf(ms + p, sizeof ms - p, "%s%s", k ? " + " : "", one);
            if (p >= sizeof ms) p = sizeof ms - 1;
        }
        long long b = hs_layer_cache_bytes(c, i, T);
        hs_cli_format_bytes(tb, sizeof tb, (double)b);
        hs_cli_format_bytes(tt, sizeof tt, (double)b / (double)T);
        printf("  %5d  %-58s %12s %12s\n", i, ms, tb, tt);
    }
    hs_cli_format_bytes(tb, sizeof tb, (double)total);
    hs_cli_format_bytes(tt, sizeof tt, (double)total / (double)T);
    printf("\n  cache/state at T = %lld: %s in total (%lld bytes), %s per token\n", T, tb, total, tt);
    free(c);
    return 0;
}

HS_COMMAND("info", "print a checkpoint's layout, parameter count and cache sizes", cmd_info, 20)
