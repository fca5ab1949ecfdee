/* Knob parsing, validation, resolution and description (engine/knobs.c). */
#include "test.h"

#include <string.h>

#include "knobs.h"

/* Parses a space-separated command line; returns the last parse_arg result (1 = all
 * consumed as knobs, 0 = a non-knob seen, -1 = error). */
static int parse(hs_knobs *k, const char *line, char *err, size_t errlen) {
    char buf[512], *argv[32];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", line);
    for (char *p = strtok(buf, " "); p && argc < 32; p = strtok(NULL, " ")) argv[argc++] = p;
    memset(k, 0, sizeof *k);
    int i = 0, rc = 1;
    while (i < argc) {
        rc = hs_knobs_parse_arg(k, argc, argv, &i, err, errlen);
        if (rc != 1) return rc;
    }
    return rc;
}

static void small_cfg(hs_config *c) {
    memset(c, 0, sizeof *c);
    c->num_layers = 2;
    c->train_context = 1024;
    c->layers[0].n_mixers = 2;
    c->layers[0].mixers[0].type = HS_SWA;
    c->layers[0].mixers[0].num_heads = 3;
    c->layers[0].mixers[0].window = 128;
    c->layers[0].mixers[1].type = HS_NOPE;
    c->layers[0].mixers[1].num_heads = 1;
    c->layers[1].n_mixers = 1;
    c->layers[1].mixers[0].type = HS_ROPE;
    c->layers[1].mixers[0].num_heads = 4;
}

TEST(knobs_parse_all_flags) {
    hs_knobs k;
    char err[256];
    CHECK(parse(&k, "--log-scale", err, sizeof err) == 1 && k.log_scale && !k.log_scale_L0, "--log-scale");
    CHECK(parse(&k, "--log-scale=4096", err, sizeof err) == 1 && k.log_scale_L0 == 4096, "--log-scale=4096");
    CHECK(parse(&k, "--log-scale 512", err, sizeof err) == 1 && k.log_scale_L0 == 512, "--log-scale 512");
    CHECK(parse(&k, "--swla", err, sizeof err) == 1 && k.swla == HS_SWLA_EXACT, "--swla");
    CHECK(parse(&k, "--swla=overlap --swla-window 64 --swla-stride=8", err, sizeof err) == 1 &&
          k.swla == HS_SWLA_OVERLAP && k.swla_window == 64 && k.swla_stride == 8, "overlap");
    CHECK(parse(&k, "--swla exact", err, sizeof err) == 1 && k.swla == HS_SWLA_EXACT, "--swla exact");
    CHECK(parse(&k, "--swa-window 16", err, sizeof err) == 1 && k.swa_window == 16, "--swa-window");
    CHECK(parse(&k, "--rope-window", err, sizeof err) == 1 && k.rope_window == HS_KNOB_L0, "--rope-window");
    CHECK(parse(&k, "--rope-window=300", err, sizeof err) == 1 && k.rope_window == 300, "--rope-window=300");
    CHECK(parse(&k, "--ablate 0.1.0,1.0.3 --ablate=0.0.2", err, sizeof err) == 1 && k.n_ablate == 3 &&
          k.ablate[1].layer == 1 && k.ablate[1].head == 3 && k.ablate[2].head == 2, "--ablate");
    int i = 0;
    char *argv[] = {"--out", "x.npy"};
    CHECK(hs_knobs_parse_arg(&k, 2, argv, &i, err, sizeof err) == 0 && i == 0, "non-knob consumed");
}

TEST(knobs_parse_errors_name_the_flag) {
    hs_knobs k;
    char err[256];
    const char *bad[][2] = {
        {"--swla-window", "--swla-window"}, {"--swla-window x", "--swla-window"},
        {"--swla-stride 0", "--swla-stride"}, {"--swa-window -3", "--swa-window"},
        {"--swla=sideways", "--swla"}, {"--rope-window=abc", "--rope-window"},
        {"--log-scale=1", "--log-scale"}, {"--ablate 1.2", "--ablate"}, {"--ablate 1.2.3.4", "--ablate"},
        {"--ablate a.b.c", "--ablate"}, {"--ablate", "--ablate"}, {"--ablate 1.0.0,,2.0.0", "--ablate"},
    };
    for (size_t j = 0; j < sizeof bad / sizeof bad[0]; j++) {
        err[0] = 0;
        int rc = parse(&k, bad[j][0], err, sizeof err);
        CHECK(rc == -1, "'%s' accepted", bad[j][0]);
        CHECK(!strncmp(err, bad[j][1], strlen(bad[j][1])), "'%s': message '%s' does not name %s",
              bad[j][0], err, bad[j][1]);
    }
}

TEST(knobs_validate_and_resolve) {
    hs_config c;
    small_cfg(&c);
    hs_knobs k;
    char err[256];
    hs_knobs_resolved r;
    CHECK(parse(&k, "--swla=overlap", err, sizeof err) == 1, "parse");
    CHECK(!hs_knobs_validate(&k, &c, err, sizeof err), "%s", err);
    hs_knobs_resolve(&r, &k, &c);
    CHECK(r.swla_window == 1024 && r.swla_stride == 256, "overlap defaults W=%d S=%d", r.swla_window, r.swla_stride);
    CHECK(parse(&k, "--swla=overlap --swla-window 3", err, sizeof err) == 1, "parse");
    hs_knobs_resolve(&r, &k, &c);
    CHECK(r.swla_stride == 1, "S = max(1, W/4) gave %d", r.swla_stride);
    CHECK(parse(&k, "--swla=overlap --swla-window 8 --swla-stride 9", err, sizeof err) == 1, "parse");
    CHECK(hs_knobs_validate(&k, &c, err, sizeof err) && strstr(err, "--swla-stride"), "S > W accepted");
    CHECK(parse(&k, "--swla-stride 2", err, sizeof err) == 1, "parse");
    CHECK(hs_knobs_validate(&k, &c, err, sizeof err) && strstr(err, "--swla-stride"), "stride without overlap");
    CHECK(parse(&k, "--swla-window 2", err, sizeof err) == 1, "parse");
    CHECK(hs_knobs_validate(&k, &c, err, sizeof err) && strstr(err, "--swla-window"), "window without swla");
    CHECK(parse(&k, "--ablate 0.1.1", err, sizeof err) == 1, "parse");
    CHECK(hs_knobs_validate(&k, &c, err, sizeof err) && strstr(err, "--ablate"), "head 1 of a 1-head mixer");
    CHECK(parse(&k, "--ablate 1.1.0", err, sizeof err) == 1, "parse");
    CHECK(hs_knobs_validate(&k, &c, err, sizeof err) && strstr(err, "mixer"), "mixer 1 of an LH layer");
    CHECK(parse(&k, "--ablate 2.0.0", err, sizeof err) == 1, "parse");
    CHECK(hs_knobs_validate(&k, &c, err, sizeof err) && strstr(err, "layer"), "layer 2 of 2");
    CHECK(parse(&k, "--ablate 0.0.2,1.0.3", err, sizeof err) == 1, "parse");
    CHECK(!hs_knobs_validate(&k, &c, err, sizeof err), "%s", err);
    CHECK(hs_knobs_is_ablated(&k, 1, 0, 3) && !hs_knobs_is_ablated(&k, 1, 0, 2), "is_ablated");

    /* windows: swa_window replaces swa windows only; rope_window applies to rope only */
    CHECK(parse(&k, "--rope-window --swa-window 5", err, sizeof err) == 1, "parse");
    hs_knobs_resolve(&r, &k, &c);
    CHECK(hs_knobs_mixer_window(&r, &c.layers[0].mixers[0]) == 5, "swa window");
    CHECK(hs_knobs_mixer_window(&r, &c.layers[0].mixers[1]) == 0, "nope window");
    CHECK(hs_knobs_mixer_window(&r, &c.layers[1].mixers[0]) == 1024, "rope window = L0");
    memset(&k, 0, sizeof k);
    hs_knobs_resolve(&r, &k, &c);
    CHECK(hs_knobs_mixer_window(&r, &c.layers[0].mixers[0]) == 128, "swa own window");
    CHECK(hs_knobs_mixer_window(&r, &c.layers[1].mixers[0]) == 0, "rope full by default");

    /* log scale: c_t = max(1, ln(t+1)/ln L0) */
    CHECK(hs_knobs_log_scale(&r, 5000) == 1.0f, "off must be 1");
    CHECK(parse(&k, "--log-scale", err, sizeof err) == 1, "parse");
    hs_knobs_resolve(&r, &k, &c);
    CHECK(hs_knobs_log_scale(&r, 1023) == 1.0f && hs_knobs_log_scale(&r, 0) == 1.0f, "t < L0 must be 1");
    double want = log(4096.0) / log(1024.0);
    CHECK(fabs(hs_knobs_log_scale(&r, 4095) - want) < 1e-6, "c(4096) = %g, want %g", hs_knobs_log_scale(&r, 4095), want);
}

TEST(knobs_describe) {
    hs_knobs k;
    char err[256], d[256];
    memset(&k, 0, sizeof k);
    hs_knobs_describe(d, sizeof d, &k);
    CHECK(!strcmp(d, "off"), "'%s'", d);
    CHECK(parse(&k, "--swla=exact --swla-window 1024 --log-scale=1024", err, sizeof err) == 1, "parse");
    hs_knobs_describe(d, sizeof d, &k);
    CHECK(strstr(d, "swla=exact W=1024") && strstr(d, "log(L0=1024)"), "'%s'", d);
    CHECK(parse(&k, "--ablate 1.0.2,3.1.0 --rope-window", err, sizeof err) == 1, "parse");
    hs_knobs_describe(d, sizeof d, &k);
    CHECK(strstr(d, "ablate=1.0.2,3.1.0") && strstr(d, "rope_window=L0"), "'%s'", d);
    char tiny[8];
    hs_knobs_describe(tiny, sizeof tiny, &k);
    CHECK(strlen(tiny) < sizeof tiny, "overflow");
    CHECK(strstr(hs_knobs_help, "--swla-stride") && strstr(hs_knobs_help, "--ablate"), "help text");
}
