/* `hybridscope init OUT_DIR`: writes a randomly initialised checkpoint from a preset and/or
 * shape flags. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_util.h"
#include "commands.h"
#include "model.h"
#include "presets.h"

static const char *CMD = "init";

static void help(void) {
    printf("usage: hybridscope init OUT_DIR [--preset NAME] [flags] [--force]\n\n"
           "Writes OUT_DIR/config.json and OUT_DIR/model.safetensors: a hybrid model with random\n"
           "weights (deterministic from --seed) whose scales keep activations finite at 64K tokens.\n\n"
           "%s"
           "  --force                overwrite a checkpoint already in OUT_DIR\n\n"
           "examples:\n"
           "  hybridscope init /tmp/m --preset tiny --efficient gdn --layout HH --ratio 1:1\n"
           "  hybridscope init /tmp/m376 --preset 376m\n",
           hs_preset_help);
}

static int exists(const char *dir, const char *name) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat st;
    return stat(p, &st) == 0;
}

static void on_progress(void *ctx, double f) { hs_progress_update(ctx, f); }

/* "LH gla:nope 3:1" style summary of the layout. */
static void describe(char *out, size_t n, const hs_config *c) {
    int hh = 0;
    for (int i = 0; i < c->num_layers; i++) hh |= c->layers[i].n_mixers == 2;
    int biased, nope;
    hs_config_total_heads(c, &biased, &nope);
    const char *eff = "nope";
    for (int i = 0; i < c->num_layers; i++)
        if (c->layers[i].mixers[0].type != HS_NOPE) { eff = hs_mixer_type_name(c->layers[i].mixers[0].type); break; }
    snprintf(out, n, "%d layers, %s, %s+nope, heads %d:%d", c->num_layers, hh ? "HH" : "LH",
             eff, biased, nope);
}

static int cmd_init(int argc, char **argv) {
    const char *out = NULL;
    int force = 0;
    hs_preset_args a;
    hs_preset_args_init(&a);
    char err[HS_ERR_LEN];
    for (int i = 1; i < argc; i++) {
        if (hs_cli_is_help(argv[i])) { help(); return 0; }
        if (!strcmp(argv[i], "--force")) { force = 1; continue; }
        int r = hs_preset_parse_arg(&a, argc, argv, &i, err, sizeof err);
        if (r < 0) hs_cli_die(CMD, "%s", err);
        if (r > 0) continue;
        if (argv[i][0] == '-' && argv[i][1]) hs_cli_die(CMD, "unknown flag '%s' (see --help)", argv[i]);
        if (out) hs_cli_die(CMD, "one OUT_DIR expected, got '%s' and '%s'", out, argv[i]);
        out = argv[i];
    }
    if (!out) hs_cli_die(CMD, "missing OUT_DIR (see --help)");
    struct stat st;
    if (stat(out, &st) == 0 && !S_ISDIR(st.st_mode)) hs_cli_die(CMD, "%s: exists and is not a directory", out);
    if (!force && (exists(out, "config.json") || exists(out, "model.safetensors") ||
                   exists(out, "model.safetensors.index.json")))
        hs_cli_die(CMD, "%s: already holds a checkpoint (use --force to overwrite)", out);

    hs_model *m = calloc(1, sizeof *m);
    if (!m) hs_cli_fail(CMD, "out of memory");
    if (hs_preset_build(&m->cfg, &a, err, sizeof err) < 0) hs_cli_die(CMD, "%s", err);
    if (hs_model_alloc(m, err, sizeof err) < 0) hs_cli_fail(CMD, "%s", err);

    hs_progress p;
    hs_model_set_progress(on_progress, &p);
    hs_progress_begin(&p, "init: random weights");
    hs_model_init_random(m, hs_preset_seed(&a));
    hs_progress_done(&p);
    int bf16 = hs_preset_bf16(&a);
    /* A sharded or stale index would shadow the new single file. */
    char idx[4200];
    snprintf(idx, sizeof idx, "%s/model.safetensors.index.json", out);
    if (force) remove(idx);
    hs_progress_begin(&p, "init: writing");
    int rc = hs_model_save(m, out, bf16, NULL, err, sizeof err);
    hs_progress_done(&p);
    hs_model_set_progress(NULL, NULL);
    if (rc < 0) hs_cli_fail(CMD, "%s", err);

    char params[32], size[32], layout[128];
    long long pc = hs_config_param_count(&m->cfg);
    hs_cli_format_count(params, sizeof params, (double)pc);
    hs_cli_format_bytes(size, sizeof size, (double)pc * (bf16 ? 2 : 4));
    describe(layout, sizeof layout, &m->cfg);
    printf("wrote %s/config.json and %s/model.safetensors (%s, %s): %s parameters (%lld), %s, seed %llu\n",
           out, out, bf16 ? "bf16" : "f32", size, params, pc, layout,
           (unsigned long long)hs_preset_seed(&a));
    hs_model_free(m);
    free(m);
    return 0;
}

HS_COMMAND("init", "write a randomly initialised hybrid checkpoint (presets: tiny .. 3b)", cmd_init, 10)
