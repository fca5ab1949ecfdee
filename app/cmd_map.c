/* `hybridscope map`: the pooled a~ map of one head (model-spec section 7) as a float32 .npy. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_api.h"
#include "cuda_backend.h"
#include "cli_util.h"
#include "commands.h"
#include "flag_values.h"
#include "npy.h"
#include "probe_input.h"

static const char *CMD = "map";

static void help(void) {
    printf("usage: hybridscope map MODEL INPUT --head L.M.H --out MAP.npy [--bins B | --bins Bt,Bs]\n"
           "                      [--zoom t0:t1,s0:s1] [--agg mean|max] [--rows-per-bin N|exact]\n"
           "                      [knobs] [--json] [--device cpu|cuda|auto]\n\n"
           "Pools head L.M.H's distribution a~_{t,s} (softmax probabilities, or gla/gdn normalised\n"
           "Jacobian weights; knobs applied) into a grid: row bin i covers queries\n"
           "[t0 + floor(i n/B), t0 + floor((i+1) n/B)), columns likewise over sources. Each cell is\n"
           "the mean (or max) of a~ over its causal entries s <= t, zeros outside a window counted;\n"
           "a cell with no causal entry is NaN. Only the layers up to the head's layer run, and no\n"
           "T x T matrix is held: rows are computed one at a time (O(visible * head_dim) each).\n\n"
           "Exact and sampled: by default every query row is computed (exact) when the query\n"
           "range is at most %d tokens or a row bin holds at most %d rows; otherwise %d evenly\n"
           "spaced rows of each row bin are computed (always including the bin's last row, so the\n"
           "NaN cells stay exact; mean cells are then the mean over those rows' entries, max cells\n"
           "the max over them). --rows-per-bin exact forces every row; N samples N rows per bin.\n\n"
           "  MODEL          checkpoint directory or sample model name\n%s"
           "                 (--probe-positions and --span are accepted and ignored here)\n"
           "  --head L.M.H   layer, mixer (0 first, 1 the HH nope mixer), head\n"
           "  --out F.npy    float32 [Bt, Bs]; NaN = no causal entry (written via a temp file)\n"
           "  --bins B       grid size, B or Bt,Bs (default 256; at most 1024; clamped to the range)\n"
           "  --zoom t0:t1,s0:s1  half-open query and source ranges (default the whole input)\n"
           "  --agg A        mean (default) or max\n"
           "  --json         a JSON summary on stdout (grid, exactness, rows computed, value range,\n"
           "                 device, seconds of the forward and the pooling)\n"
           "  --device D     cpu (default), cuda or auto: where the forward and the pooling run\n"
           "                 (same rules and defaults on both; add --rows-per-bin exact for\n"
           "                 exact maps of long inputs, which the GPU makes affordable)\n\n%s",
           HS_MAP_EXACT_T, HS_MAP_SAMPLE_ROWS, HS_MAP_SAMPLE_ROWS, hs_input_help, hs_knobs_help);
}

static void parse_head(hs_head_ref *h, const char *s) {
    if (hs_value_head(h, s))
        hs_cli_die(CMD, "--head: expected L.M.H (three non-negative integers), got '%s'", s);
}

static void parse_bins(hs_map_opts *o, const char *s) {
    long long a, b;
    const char *comma = strchr(s, ',');
    char first[32];
    size_t n = comma ? (size_t)(comma - s) : strlen(s);
    if (n == 0 || n >= sizeof first) hs_cli_die(CMD, "--bins: expected B or Bt,Bs, got '%s'", s);
    memcpy(first, s, n);
    first[n] = 0;
    if (hs_cli_parse_int(first, &a) || (comma && hs_cli_parse_int(comma + 1, &b)))
        hs_cli_die(CMD, "--bins: expected B or Bt,Bs, got '%s'", s);
    if (!comma) b = a;
    if (a < 1 || a > 1024 || b < 1 || b > 1024) hs_cli_die(CMD, "--bins: must be between 1 and 1024, got '%s'", s);
    o->bins_t = (int)a;
    o->bins_s = (int)b;
}

static void parse_zoom(hs_map_opts *o, const char *s) {
    int z[4];
    if (hs_value_zoom(z, s))
        hs_cli_die(CMD, "--zoom: expected t0:t1,s0:s1 with t0 < t1 and s0 < s1 (counts), got '%s'", s);
    o->t0 = z[0]; o->t1 = z[1]; o->s0 = z[2]; o->s1 = z[3];
}

static int cmd_map(int argc, char **argv) {
    const char *arg = NULL, *out_path = NULL;
    hs_input_args ia;
    memset(&ia, 0, sizeof ia);
    static hs_knobs *k;
    k = calloc(1, sizeof *k);
    if (!k) hs_cli_fail(CMD, "out of memory");
    hs_map_opts o;
    memset(&o, 0, sizeof o);
    int have_head = 0, json = 0, device = HS_DEVICE_CPU;
    char err[HS_ERR_LEN];
    for (int i = 1; i < argc; i++) {
        if (hs_cli_is_help(argv[i])) { help(); free(k); return 0; }
        if (hs_cli_knob_flag(CMD, k, argc, argv, &i)) continue;
        if (hs_input_parse_arg(&ia, CMD, argc, argv, &i)) continue;
        if (!strcmp(argv[i], "--head")) { parse_head(&o.head, hs_cli_str_flag(CMD, argc, argv, &i)); have_head = 1; }
        else if (!strcmp(argv[i], "--out")) out_path = hs_cli_str_flag(CMD, argc, argv, &i);
        else if (!strcmp(argv[i], "--bins")) parse_bins(&o, hs_cli_str_flag(CMD, argc, argv, &i));
        else if (!strcmp(argv[i], "--zoom")) parse_zoom(&o, hs_cli_str_flag(CMD, argc, argv, &i));
        else if (!strcmp(argv[i], "--agg")) {
            const char *v = hs_cli_str_flag(CMD, argc, argv, &i);
            if (!strcmp(v, "mean")) o.agg = HS_POOL_MEAN;
            else if (!strcmp(v, "max")) o.agg = HS_POOL_MAX;
            else hs_cli_die(CMD, "--agg: expected mean or max, got '%s'", v);
        } else if (!strcmp(argv[i], "--rows-per-bin")) {
            if (i + 1 < argc && !strcmp(argv[i + 1], "exact")) { o.rows_per_bin = -1; i++; }
            else o.rows_per_bin = (int)hs_cli_int_flag(CMD, argc, argv, &i, 1, INT_MAX);
        }
        else if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--device")) device = hs_input_device(CMD, hs_cli_str_flag(CMD, argc, argv, &i), 0);
        else if (argv[i][0] == '-' && argv[i][1]) hs_cli_die(CMD, "unknown flag '%s' (see --help)", argv[i]);
        else if (arg) hs_cli_die(CMD, "one MODEL expected, got '%s' and '%s'", arg, argv[i]);
        else arg = argv[i];
    }
    if (!arg) hs_cli_die(CMD, "missing MODEL (see --help)");
    if (!have_head) hs_cli_die(CMD, "missing --head L.M.H");
    if (!out_path) hs_cli_die(CMD, "missing --out MAP.npy");
    char dir[4096];
    hs_model *m = hs_cli_load_model(CMD, arg, k, dir, sizeof dir);
    /* function-scope static: an exit on bad input after building leaves it reachable */
    static hs_input in;
    hs_input_build(&in, &ia, m, CMD);
    const hs_config *c = &m->cfg;
    if (o.head.layer >= c->num_layers || o.head.mixer >= c->layers[o.head.layer].n_mixers ||
        o.head.head >= c->layers[o.head.layer].mixers[o.head.mixer].num_heads)
        hs_cli_die(CMD, "--head %d.%d.%d: no such head in %s", o.head.layer, o.head.mixer, o.head.head, dir);
    /* Flag problems first (exit 2), before any work. */
    hs_map_opts check = o;
    if (hs_map_opts_resolve(&check, in.T, err, sizeof err)) hs_cli_die(CMD, "%s", err);

    hs_progress bar;
    hs_progress_begin(&bar, "map");
    hs_pooled_map pm;
    long long rows = 0;
    double t0 = hs_cli_now_s();
    int rc = device == HS_DEVICE_CUDA
                 ? hs_pooled_maps_cuda(&pm, m, k, in.tokens, in.T, &o, 1, &rows, hs_input_progress, &bar, err, sizeof err)
                 : hs_pooled_map_compute(&pm, m, k, in.tokens, in.T, &o, &rows, hs_input_progress, &bar,
                                         err, sizeof err);
    double secs = hs_cli_now_s() - t0;
    hs_progress_done(&bar);
    if (rc) hs_cli_fail(CMD, "%s", err);
    int64_t shape[2] = { pm.bins_t, pm.bins_s };
    if (hs_npy_write_f32(out_path, pm.cells, 2, shape, err, sizeof err)) hs_cli_fail(CMD, "%s", err);

    long long nan_cells = 0, n = (long long)pm.bins_t * pm.bins_s;
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    for (long long i = 0; i < n; i++) {
        float v = pm.cells[i];
        if (isnan(v)) { nan_cells++; continue; }
        if (v < lo) lo = v;
        if (v > hi) hi = v;
        sum += v;
    }
    int R = hs_map_rows_per_bin(&o);
    char head[48];
    snprintf(head, sizeof head, "%d.%d.%d", o.head.layer, o.head.mixer, o.head.head);
    if (json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "model", dir);
        cJSON_AddStringToObject(j, "head", head);
        cJSON_AddStringToObject(j, "type", hs_mixer_type_name(pm.type));
        cJSON_AddNumberToObject(j, "T", pm.T);
        int zoom[4] = { pm.t0, pm.t1, pm.s0, pm.s1 };
        cJSON_AddItemToObject(j, "zoom", cJSON_CreateIntArray(zoom, 4));
        int bins[2] = { pm.bins_t, pm.bins_s };
        cJSON_AddItemToObject(j, "bins", cJSON_CreateIntArray(bins, 2));
        cJSON_AddStringToObject(j, "agg", pm.agg == HS_POOL_MAX ? "max" : "mean");
        cJSON_AddBoolToObject(j, "exact", R == 0);
        cJSON_AddNumberToObject(j, "rows_per_bin", R);
        cJSON_AddNumberToObject(j, "rows_computed", (double)rows);
        cJSON_AddStringToObject(j, "device", device == HS_DEVICE_CUDA ? "cuda" : "cpu");
        cJSON_AddNumberToObject(j, "seconds", secs);
        cJSON_AddNumberToObject(j, "nan_cells", (double)nan_cells);
        if (nan_cells < n) {
            cJSON_AddNumberToObject(j, "min", lo);
            cJSON_AddNumberToObject(j, "max", hi);
            cJSON_AddNumberToObject(j, "mean", sum / (double)(n - nan_cells));
        } else {
            cJSON_AddNullToObject(j, "min");
            cJSON_AddNullToObject(j, "max");
            cJSON_AddNullToObject(j, "mean");
        }
        cJSON_AddItemToObject(j, "knobs", hs_knobs_to_json(k, c));
        cJSON_AddStringToObject(j, "out", out_path);
        char *s = cJSON_PrintUnformatted(j);
        if (!s) hs_cli_fail(CMD, "out of memory");
        printf("%s\n", s);
        free(s);
        cJSON_Delete(j);
    } else {
        printf("head %s (%s), T = %d, queries %d:%d x sources %d:%d, %d x %d bins, %s, %s",
               head, hs_mixer_type_name(pm.type), pm.T, pm.t0, pm.t1, pm.s0, pm.s1, pm.bins_t,
               pm.bins_s, pm.agg == HS_POOL_MAX ? "max" : "mean", R == 0 ? "exact" : "sampled");
        if (R) printf(" (%d rows per bin)", R);
        printf("\n%lld query rows computed; %lld of %lld cells have no causal entry (NaN)\n", rows,
               nan_cells, n);
        if (nan_cells < n) printf("values: min %.6g, max %.6g, mean %.6g\n", lo, hi, sum / (double)(n - nan_cells));
        printf("wrote %s\n", out_path);
    }
    hs_pooled_map_free(&pm);
    hs_input_free(&in);
    hs_cli_free_model(m);
    free(k);
    return 0;
}

HS_COMMAND("map", "pooled attention / Jacobian map of one head, written as .npy", cmd_map, 50)
