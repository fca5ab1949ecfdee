/* The whole CPU forward pass against the naive double-precision reference (tests/ref_model.c)
 * on small random models: every mixer type, GQA, LH and HH layers, tied and untied heads, and
 * every knob against its definition. Tolerance: relative error <= 1e-4 (max abs error over
 * max |reference|). */
#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forward.h"
#include "mixer_internal.h" /* HS_ROW_BLOCK */
#include "model.h"
#include "ref_model.h"

#define HD 16      /* head_dim of the test models */
#define DM 32      /* hidden size */
#define FF 48      /* intermediate size */
#define VOC 260    /* vocabulary (bytes + bos + eos + 2) */
#define TOL 1e-4

/* ---- building small random models ---- */

static void cfg_init(hs_config *c, int train_context, int tied) {
    memset(c, 0, sizeof *c);
    c->vocab_size = VOC;
    c->hidden_size = DM;
    c->intermediate_size = FF;
    c->head_dim = HD;
    c->norm_eps = 1e-6f;
    c->tie_word_embeddings = tied;
    c->train_context = train_context;
    c->bos_id = 256;
    c->eos_id = 257;
    snprintf(c->tokenizer_type, sizeof c->tokenizer_type, "bytes");
}

static hs_mixer_config mx(hs_mixer_type t, int H) {
    hs_mixer_config m;
    hs_mixer_config_defaults(&m, t, HD);
    m.num_heads = H;
    m.num_kv_heads = H;
    if (t == HS_SWA) m.window = 37;
    return m;
}

static void add_layer(hs_config *c, hs_mixer_config a, const hs_mixer_config *b) {
    hs_layer_config *L = &c->layers[c->num_layers++];
    L->n_mixers = b ? 2 : 1;
    L->mixers[0] = a;
    if (b) L->mixers[1] = *b;
}

/* Weights with unit-scale signal everywhere (so every path visibly matters): linears
 * N(0, 1/fan_in), norms 1 +- 0.2, gates spread over a useful range. */
static void fill_weights(hs_model *m, uint64_t seed) {
    hs_test_rng r = {seed * 2654435761ULL + 1};
    int n = hs_model_tensor_specs(m, NULL, 0);
    hs_tensor_spec *sp = malloc((size_t)n * sizeof *sp);
    hs_model_tensor_specs(m, sp, n);
    for (int i = 0; i < n; i++) {
        size_t numel = 1;
        for (int j = 0; j < sp[i].ndim; j++) numel *= (size_t)sp[i].shape[j];
        float *p = *sp[i].slot;
        double fan = sp[i].fan_in > 0 ? sp[i].fan_in : 1;
        for (size_t j = 0; j < numel; j++) {
            double z = hs_test_normal(&r);
            switch (sp[i].kind) {
            case HS_TK_NORM: p[j] = (float)(1.0 + 0.2 * z); break;
            case HS_TK_EMBED: p[j] = (float)z; break;
            case HS_TK_GK_BIAS: p[j] = (float)(1.0 + z); break;
            case HS_TK_A_LOG: p[j] = (float)log(1.0 + 4.0 * hs_test_uniform(&r)); break;
            case HS_TK_DT_BIAS: p[j] = (float)(0.5 * z); break;
            case HS_TK_CONV: p[j] = (float)(0.5 * z); break;
            default: p[j] = (float)(z / sqrt(fan)); break;
            }
        }
    }
    free(sp);
}

static int build(hs_model *m, const hs_config *c, uint64_t seed) {
    memset(m, 0, sizeof *m);
    m->cfg = *c;
    char err[256];
    if (hs_model_alloc(m, err, sizeof err)) { fprintf(stderr, "alloc: %s\n", err); return -1; }
    hs_model_init_random(m, seed);
    fill_weights(m, seed);
    return 0;
}

static int32_t *random_tokens(int T, uint64_t seed) {
    hs_test_rng r = {seed};
    int32_t *t = malloc((size_t)T * sizeof *t);
    for (int i = 0; i < T; i++) t[i] = (int32_t)(hs_test_uniform(&r) * VOC) % VOC;
    return t;
}

/* Engine logits [T,V] (all rows). Returns NULL on failure (message printed). */
static float *engine_logits(const hs_model *m, const int32_t *tok, int T, const hs_knobs *k,
                            int recurrent, int chunk) {
    float *lg = malloc((size_t)T * VOC * sizeof *lg);
    hs_forward_opts o = {0};
    o.logits = lg;
    o.n_logit_rows = T;
    o.use_recurrent = recurrent;
    o.chunk = chunk;
    char err[256];
    if (hs_forward(m, tok, T, k, &o, err, sizeof err)) {
        fprintf(stderr, "hs_forward: %s\n", err);
        free(lg);
        return NULL;
    }
    return lg;
}

/* Relative error of the engine's logits against the reference for model c. */
static double model_vs_ref(const hs_config *c, int T, const hs_knobs *k, int recurrent,
                           uint64_t seed) {
    hs_model m;
    if (build(&m, c, seed)) return 1e9;
    int32_t *tok = random_tokens(T, seed + 7);
    float *lg = engine_logits(&m, tok, T, k, recurrent, 0);
    double *ref = malloc((size_t)T * VOC * sizeof *ref);
    ref_forward(ref, NULL, NULL, &m, tok, T, k);
    double e = lg ? hs_test_rel_err(lg, ref, (size_t)T * VOC, 1e-6) : 1e9;
    free(lg); free(ref); free(tok);
    hs_model_free(&m);
    return e;
}

/* One mixer alone on random h: engine vs reference. */
static double mixer_vs_ref(const hs_config *c, int layer, int mixer, int T, const hs_knobs *k,
                           int recurrent, uint64_t seed) {
    hs_model m;
    if (build(&m, c, seed)) return 1e9;
    hs_test_rng r = {seed + 3};
    size_t n = (size_t)T * DM;
    float *h = malloc(n * sizeof *h), *y = calloc(n, sizeof *y);
    double *hd = malloc(n * sizeof *hd), *yd = calloc(n, sizeof *yd);
    hs_test_fill_normal(h, n, 1.0, &r);
    for (size_t i = 0; i < n; i++) hd[i] = h[i];
    hs_forward_opts o = {0};
    o.use_recurrent = recurrent;
    int rc = hs_mixer_forward(y, &m, layer, mixer, h, T, k, &o);
    ref_mixer_forward(yd, NULL, &m, layer, mixer, hd, T, k);
    double e = rc ? 1e9 : hs_test_rel_err(y, yd, n, 1e-6);
    free(h); free(y); free(hd); free(yd);
    hs_model_free(&m);
    return e;
}

/* ---- each mixer type ---- */

static double one_mixer(hs_mixer_config mc, int T, int recurrent) {
    hs_config c;
    cfg_init(&c, 128, 1);
    add_layer(&c, mc, NULL);
    return mixer_vs_ref(&c, 0, 0, T, NULL, recurrent, 11);
}

TEST(forward_mixer_softmax_types) {
    hs_mixer_type ts[3] = {HS_NOPE, HS_ROPE, HS_SWA};
    int Ts[3] = {1, 77, 300};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double e = one_mixer(mx(ts[i], 3), Ts[j], 0);
            CHECK(e <= TOL, "%s T=%d rel err %.3g", hs_mixer_type_name(ts[i]), Ts[j], e);
        }
}

TEST(forward_mixer_gqa) {
    hs_mixer_type ts[3] = {HS_NOPE, HS_ROPE, HS_SWA};
    for (int i = 0; i < 3; i++) {
        hs_mixer_config mc = mx(ts[i], 4);
        mc.num_kv_heads = 2;
        double e = one_mixer(mc, 200, 0);
        CHECK(e <= TOL, "%s GQA 4/2 rel err %.3g", hs_mixer_type_name(ts[i]), e);
        mc.num_kv_heads = 1;
        e = one_mixer(mc, 130, 0);
        CHECK(e <= TOL, "%s GQA 4/1 rel err %.3g", hs_mixer_type_name(ts[i]), e);
    }
}

TEST(forward_mixer_gla) {
    for (int conv = 0; conv < 2; conv++)
        for (int rec = 0; rec < 2; rec++) {
            hs_mixer_config mc = mx(HS_GLA, 2);
            mc.use_short_conv = conv;
            double e = one_mixer(mc, 300, rec);
            CHECK(e <= TOL, "gla conv=%d recurrent=%d rel err %.3g", conv, rec, e);
        }
    hs_mixer_config mc = mx(HS_GLA, 2);
    mc.head_v_dim = 8; /* dk != dv */
    mc.gate_low_rank_dim = 5;
    double e = one_mixer(mc, 131, 0);
    CHECK(e <= TOL, "gla dk=16 dv=8 rel err %.3g", e);
}

TEST(forward_mixer_gdn) {
    for (int conv = 0; conv < 2; conv++)
        for (int neg = 0; neg < 2; neg++)
            for (int rec = 0; rec < 2; rec++) {
                hs_mixer_config mc = mx(HS_GDN, 2);
                mc.use_short_conv = conv;
                mc.allow_neg_eigval = neg;
                double e = one_mixer(mc, 300, rec);
                CHECK(e <= TOL, "gdn conv=%d neg=%d recurrent=%d rel err %.3g", conv, neg, rec, e);
            }
    hs_mixer_config mc = mx(HS_GDN, 2);
    mc.head_v_dim = 8;
    mc.conv_size = 3;
    double e = one_mixer(mc, 131, 0);
    CHECK(e <= TOL, "gdn dk=16 dv=8 K=3 rel err %.3g", e);
}

/* ---- whole models ---- */

/* An 8-layer-style 3:1 layout shrunk to 4 layers: three efficient LH layers then NoPE. */
static void lh_model(hs_config *c, hs_mixer_type eff, int tied, int L0) {
    cfg_init(c, L0, tied);
    for (int i = 0; i < 3; i++) add_layer(c, mx(eff, 2), NULL);
    add_layer(c, mx(HS_NOPE, 2), NULL);
}

static void hh_model(hs_config *c, hs_mixer_type eff, int tied, int L0) {
    cfg_init(c, L0, tied);
    hs_mixer_config nope = mx(HS_NOPE, 1);
    add_layer(c, mx(eff, 3), &nope);
    add_layer(c, mx(eff, 3), &nope);
}

TEST(forward_model_lh_all_types) {
    hs_mixer_type ts[4] = {HS_GLA, HS_GDN, HS_SWA, HS_ROPE};
    for (int i = 0; i < 4; i++)
        for (int tied = 0; tied < 2; tied++) {
            hs_config c;
            lh_model(&c, ts[i], tied, 128);
            double e = model_vs_ref(&c, 203, NULL, 0, 21 + i);
            CHECK(e <= TOL, "LH %s tied=%d rel err %.3g", hs_mixer_type_name(ts[i]), tied, e);
        }
}

TEST(forward_model_hh_all_types) {
    hs_mixer_type ts[4] = {HS_GLA, HS_GDN, HS_SWA, HS_ROPE};
    for (int i = 0; i < 4; i++) {
        hs_config c;
        hh_model(&c, ts[i], i % 2, 128);
        double e = model_vs_ref(&c, 190, NULL, 0, 31 + i);
        CHECK(e <= TOL, "HH %s rel err %.3g", hs_mixer_type_name(ts[i]), e);
    }
}

TEST(forward_model_t512_mixed) {
    /* every mixer type in one model, GQA and conv variants, T = 512 */
    hs_config c;
    cfg_init(&c, 256, 0);
    hs_mixer_config gqa = mx(HS_ROPE, 4);
    gqa.num_kv_heads = 2;
    hs_mixer_config glac = mx(HS_GLA, 2);
    glac.use_short_conv = 1;
    hs_mixer_config gdnneg = mx(HS_GDN, 2);
    gdnneg.allow_neg_eigval = 1;
    hs_mixer_config nope = mx(HS_NOPE, 1);
    add_layer(&c, glac, NULL);
    add_layer(&c, gdnneg, &nope);
    add_layer(&c, gqa, NULL);
    add_layer(&c, mx(HS_SWA, 2), &nope);
    add_layer(&c, mx(HS_NOPE, 2), NULL);
    double e = model_vs_ref(&c, 512, NULL, 0, 41);
    CHECK(e <= TOL, "mixed model T=512 rel err %.3g", e);
}

/* The staged projections (short conv with history rows, gates, MLP, logits) run in blocks of
 * HS_ROW_BLOCK rows: cross a block boundary with conv mixers and an HH layer. */
TEST(forward_model_crosses_row_block) {
    hs_config c;
    cfg_init(&c, 256, 0);
    hs_mixer_config glac = mx(HS_GLA, 2);
    glac.use_short_conv = 1;
    hs_mixer_config nope = mx(HS_NOPE, 1);
    add_layer(&c, glac, &nope);
    add_layer(&c, mx(HS_GDN, 2), NULL); /* gdn: conv on by default */
    int T = HS_ROW_BLOCK + 77;
    double e = model_vs_ref(&c, T, NULL, 0, 45);
    CHECK(e <= TOL, "T=%d (row block %d) rel err %.3g", T, HS_ROW_BLOCK, e);
}

TEST(forward_chunked_equals_recurrent) {
    hs_mixer_type ts[2] = {HS_GLA, HS_GDN};
    hs_knobs ks[3] = {{0}};
    ks[1].swla = HS_SWLA_EXACT; ks[1].swla_window = 45;
    ks[2].swla = HS_SWLA_OVERLAP; ks[2].swla_window = 40; ks[2].swla_stride = 9;
    int chunks[3] = {64, 16, 37};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
            hs_config c;
            hh_model(&c, ts[i], 1, 128);
            hs_model m;
            CHECK(!build(&m, &c, 51), "build");
            int T = 211;
            int32_t *tok = random_tokens(T, 5);
            float *a = engine_logits(&m, tok, T, &ks[j], 1, 0);
            float *b = engine_logits(&m, tok, T, &ks[j], 0, chunks[j]);
            double e = a && b ? hs_test_rel_err_ff(b, a, (size_t)T * VOC, 1e-6) : 1e9;
            free(a); free(b); free(tok);
            hs_model_free(&m);
            CHECK(e <= TOL, "%s knobs#%d chunk=%d: chunked vs recurrent rel err %.3g",
                  hs_mixer_type_name(ts[i]), j, chunks[j], e);
        }
}

/* HH layer == residual + the sum of its two mixers on the same normed h. Built from the
 * engine's own hs_mixer_forward and compared with hs_forward's final hidden state. */
TEST(forward_hh_is_sum_of_mixers) {
    hs_config c;
    cfg_init(&c, 128, 1);
    hs_mixer_config nope = mx(HS_NOPE, 1);
    add_layer(&c, mx(HS_GLA, 3), &nope);
    hs_model m;
    CHECK(!build(&m, &c, 61), "build");
    int T = 150;
    size_t n = (size_t)T * DM;
    int32_t *tok = random_tokens(T, 9);
    float *x = malloc(n * sizeof *x), *hidden = malloc(n * sizeof *hidden);
    double *xd = malloc(n * sizeof *xd), *hd = malloc(n * sizeof *hd), *want = malloc(n * sizeof *want);
    float *h = malloc(n * sizeof *h);
    for (int t = 0; t < T; t++)
        for (int i = 0; i < DM; i++) xd[(size_t)t * DM + i] = m.embed[(size_t)tok[t] * DM + i];
    ref_rms(hd, xd, m.layers[0].attn_norm, T, DM, c.norm_eps);
    for (size_t i = 0; i < n; i++) { h[i] = (float)hd[i]; x[i] = (float)xd[i]; }
    int rc = hs_mixer_forward(x, &m, 0, 0, h, T, NULL, NULL);
    rc |= hs_mixer_forward(x, &m, 0, 1, h, T, NULL, NULL);
    /* the rest of the layer (MLP) and the final norm in double */
    for (size_t i = 0; i < n; i++) xd[i] = x[i];
    ref_rms(hd, xd, m.layers[0].mlp_norm, T, DM, c.norm_eps);
    double *g = malloc((size_t)T * FF * sizeof *g), *u = malloc((size_t)T * FF * sizeof *u);
    ref_linear(g, hd, m.layers[0].gate_proj, T, DM, FF);
    ref_linear(u, hd, m.layers[0].up_proj, T, DM, FF);
    for (size_t i = 0; i < (size_t)T * FF; i++) g[i] = g[i] / (1 + exp(-g[i])) * u[i];
    ref_linear(want, g, m.layers[0].down_proj, T, FF, DM);
    for (size_t i = 0; i < n; i++) xd[i] += want[i];
    ref_rms(want, xd, m.norm, T, DM, c.norm_eps);
    hs_forward_opts o = {0};
    o.hidden = hidden;
    char err[256];
    rc |= hs_forward(&m, tok, T, NULL, &o, err, sizeof err);
    double e = hs_test_rel_err(hidden, want, n, 1e-6);
    free(x); free(hidden); free(xd); free(hd); free(want); free(h); free(g); free(u); free(tok);
    hs_model_free(&m);
    CHECK(!rc, "forward failed");
    CHECK(e <= TOL, "HH hidden vs x + gla(h) + nope(h): rel err %.3g", e);
}

TEST(forward_nll_matches_reference) {
    hs_config c;
    lh_model(&c, HS_GDN, 0, 128);
    hs_model m;
    CHECK(!build(&m, &c, 71), "build");
    int T = 140;
    int32_t *tok = random_tokens(T, 13);
    float *nll = malloc((size_t)(T - 1) * sizeof *nll), *last = malloc((size_t)5 * VOC * sizeof *last);
    double *nref = malloc((size_t)(T - 1) * sizeof *nref), *lref = malloc((size_t)T * VOC * sizeof *lref);
    hs_forward_opts o = {0};
    o.nll = nll;
    o.logits = last;
    o.n_logit_rows = 5;
    char err[256];
    int rc = hs_forward(&m, tok, T, NULL, &o, err, sizeof err);
    ref_forward(lref, nref, NULL, &m, tok, T, NULL);
    double e = hs_test_rel_err(nll, nref, (size_t)T - 1, 1e-6);
    double el = hs_test_rel_err(last, lref + (size_t)(T - 5) * VOC, (size_t)5 * VOC, 1e-6);
    free(nll); free(last); free(nref); free(lref); free(tok);
    hs_model_free(&m);
    CHECK(!rc, "forward: %s", err);
    CHECK(e <= TOL, "nll rel err %.3g", e);
    CHECK(el <= TOL, "last-5 logits rel err %.3g", el);
}

/* ---- knobs ---- */

TEST(forward_knob_swla_exact_and_overlap) {
    hs_mixer_type ts[2] = {HS_GLA, HS_GDN};
    for (int i = 0; i < 2; i++)
        for (int mode = 1; mode <= 2; mode++)
            for (int rec = 0; rec < 2; rec++) {
                hs_config c;
                lh_model(&c, ts[i], 1, 48);
                c.layers[0].mixers[0].use_short_conv = 1; /* the conv is not restarted */
                hs_knobs k = {0};
                k.swla = (hs_swla_mode)mode;
                if (mode == HS_SWLA_OVERLAP) { k.swla_window = 30; k.swla_stride = 7; }
                double e = model_vs_ref(&c, 170, &k, rec, 81 + mode);
                CHECK(e <= TOL, "%s swla=%d recurrent=%d rel err %.3g", hs_mixer_type_name(ts[i]),
                      mode, rec, e);
            }
}

/* SWLA overlap: query t sees exactly the tokens from max(0, (t/S+1)S - W) on, i.e. between
 * W-S+1 and W of them. Checked by perturbing one input token in a one-layer gla model
 * without conv (so a token reaches t only through the mixer's state). The recurrence restarts
 * from an exact zero state, so an invisible token changes nothing at all; the chunked form
 * works with gate cumsums from the chunk start, so there an invisible token may move the
 * logits by rounding (~1e-6 relative) while a visible one moves them by far more than 1e-3. */
TEST(forward_knob_swla_overlap_visibility) {
    hs_config c;
    cfg_init(&c, 64, 1);
    add_layer(&c, mx(HS_GLA, 2), NULL);
    hs_model m;
    CHECK(!build(&m, &c, 91), "build");
    int T = 90, W = 20, S = 6;
    hs_knobs k = {0};
    k.swla = HS_SWLA_OVERLAP; k.swla_window = W; k.swla_stride = S;
    int32_t *tok = random_tokens(T, 17);
    int probes[4] = {25, 41, 59, 89}, fail_t = -1, fail_s = -1, fail_rec = 0;
    double fail_diff = 0;
    for (int rec = 1; rec >= 0 && fail_t < 0; rec--) {
        float *base = engine_logits(&m, tok, T, &k, rec, 0);
        CHECK(base, "forward");
        for (int p = 0; p < 4 && fail_t < 0; p++) {
            int t = probes[p];
            int start = (t / S + 1) * S - W;
            if (start < 0) start = 0;
            int seen = t - start + 1;
            CHECK(seen >= W - S + 1 && seen <= W, "t=%d sees %d tokens", t, seen);
            double scale = 0;
            for (int v = 0; v < VOC; v++) scale = fmax(scale, fabs(base[(size_t)t * VOC + v]));
            for (int s = start - 2; s <= start + 1; s++) {
                int32_t save = tok[s];
                tok[s] = (tok[s] + 1) % VOC;
                float *alt = engine_logits(&m, tok, T, &k, rec, 0);
                tok[s] = save;
                double diff = 0;
                for (int v = 0; v < VOC; v++)
                    diff = fmax(diff, fabs(alt[(size_t)t * VOC + v] - base[(size_t)t * VOC + v]));
                free(alt);
                int visible = rec ? diff > 0 : diff > 1e-3 * scale;
                if (visible != (s >= start)) { fail_t = t; fail_s = s; fail_rec = rec; fail_diff = diff / scale; break; }
            }
        }
        free(base);
    }
    free(tok);
    hs_model_free(&m);
    CHECK(fail_t < 0, "recurrent=%d t=%d s=%d: relative change %.3g disagrees with the overlap definition",
          fail_rec, fail_t, fail_s, fail_diff);
}

TEST(forward_knob_windows) {
    hs_config c;
    cfg_init(&c, 40, 1);
    hs_mixer_config nope = mx(HS_NOPE, 1);
    add_layer(&c, mx(HS_ROPE, 2), NULL);
    add_layer(&c, mx(HS_SWA, 2), &nope);
    add_layer(&c, mx(HS_ROPE, 2), &nope);
    hs_knobs k = {0};
    k.rope_window = 23;
    double e = model_vs_ref(&c, 160, &k, 0, 101);
    CHECK(e <= TOL, "rope_window=23 rel err %.3g", e);
    k.rope_window = HS_KNOB_L0;
    e = model_vs_ref(&c, 160, &k, 0, 102);
    CHECK(e <= TOL, "rope_window=L0 rel err %.3g", e);
    memset(&k, 0, sizeof k);
    k.swa_window = 11;
    e = model_vs_ref(&c, 160, &k, 0, 103);
    CHECK(e <= TOL, "swa_window=11 rel err %.3g", e);
    /* the knobs change the output (they are not silently ignored) */
    hs_model m;
    CHECK(!build(&m, &c, 104), "build");
    int32_t *tok = random_tokens(160, 3);
    float *a = engine_logits(&m, tok, 160, NULL, 0, 0), *b = engine_logits(&m, tok, 160, &k, 0, 0);
    double d = a && b ? hs_test_rel_err_ff(a, b, (size_t)160 * VOC, 1e-6) : 0;
    free(a); free(b); free(tok);
    hs_model_free(&m);
    CHECK(d > 1e-3, "swa_window had no visible effect (%.3g)", d);
}

TEST(forward_knob_log_scale) {
    int L0 = 64, T = 200;
    hs_config c;
    lh_model(&c, HS_GLA, 1, L0);
    hs_mixer_config nope = mx(HS_NOPE, 1);
    add_layer(&c, mx(HS_SWA, 2), &nope);
    hs_knobs k = {0};
    k.log_scale = 1;
    double e = model_vs_ref(&c, T, &k, 0, 111);
    CHECK(e <= TOL, "log_scale vs reference rel err %.3g", e);
    hs_knobs k2 = k;
    k2.log_scale_L0 = 20;
    e = model_vs_ref(&c, T, &k2, 0, 112);
    CHECK(e <= TOL, "log_scale L0=20 vs reference rel err %.3g", e);

    hs_model m;
    CHECK(!build(&m, &c, 113), "build");
    int32_t *tok = random_tokens(T, 19);
    float *off = engine_logits(&m, tok, T, NULL, 0, 0), *on = engine_logits(&m, tok, T, &k, 0, 0);
    double early = 0, late = 0;
    for (size_t i = 0; i < (size_t)T * VOC; i++) {
        double d = fabs(off[i] - on[i]);
        if (i < (size_t)L0 * VOC) early = fmax(early, d);
        else late = fmax(late, d);
    }
    free(off); free(on); free(tok);
    hs_model_free(&m);
    CHECK(early == 0, "log_scale changed a row t < L0 (max diff %.3g)", early);
    CHECK(late > 1e-3, "log_scale did not change rows t >= L0 (max diff %.3g)", late);
}

/* Ablating a head equals zeroing that head's columns of o_proj. */
static double ablation_gap(hs_config *c, int layer, int mixer, int head, uint64_t seed) {
    hs_model a, b;
    if (build(&a, c, seed) || build(&b, c, seed)) return 1e9;
    const hs_mixer_config *mc = &c->layers[layer].mixers[mixer];
    int dv = mc->head_v_dim, H = mc->num_heads;
    float *wo = b.layers[layer].mix[mixer].o_proj;
    for (int r = 0; r < DM; r++) memset(wo + (size_t)r * H * dv + (size_t)head * dv, 0, (size_t)dv * sizeof *wo);
    hs_knobs k = {0};
    k.n_ablate = 1;
    k.ablate[0] = (hs_head_ref){layer, mixer, head};
    int T = 120;
    int32_t *tok = random_tokens(T, seed);
    float *x = engine_logits(&a, tok, T, &k, 0, 0), *y = engine_logits(&b, tok, T, NULL, 0, 0);
    float *z = engine_logits(&a, tok, T, NULL, 0, 0);
    double e = x && y ? hs_test_rel_err_ff(x, y, (size_t)T * VOC, 1e-6) : 1e9;
    double moved = x && z ? hs_test_rel_err_ff(x, z, (size_t)T * VOC, 1e-6) : 0;
    free(x); free(y); free(z); free(tok);
    hs_model_free(&a); hs_model_free(&b);
    return moved > 1e-4 ? e : 1e9; /* an ablation that changes nothing proves nothing */
}

TEST(forward_knob_ablation) {
    hs_config c;
    cfg_init(&c, 128, 0);
    hs_mixer_config nope = mx(HS_NOPE, 2);
    hs_mixer_config gqa = mx(HS_ROPE, 4);
    gqa.num_kv_heads = 2;
    add_layer(&c, mx(HS_GLA, 2), &nope);
    add_layer(&c, mx(HS_GDN, 2), NULL);
    add_layer(&c, gqa, NULL);
    int cases[5][3] = {{0, 0, 1}, {0, 1, 0}, {1, 0, 1}, {2, 0, 3}, {2, 0, 0}};
    for (int i = 0; i < 5; i++) {
        double e = ablation_gap(&c, cases[i][0], cases[i][1], cases[i][2], 121 + i);
        CHECK(e <= 1e-5, "ablate %d.%d.%d vs zeroed o_proj columns: rel err %.3g", cases[i][0],
              cases[i][1], cases[i][2], e);
    }
}

/* ---- capture hook ---- */

typedef struct {
    int calls, bad;
    int seen[8][2];
    char why[200];
    const hs_model *m;
    const int32_t *tok;
} capture_log;

static void on_capture(void *ctx, const hs_mixer_acts *a) {
    capture_log *lg = ctx;
    lg->calls++;
    if (a->layer < 0 || a->layer >= 8 || a->mixer < 0 || a->mixer > 1) { lg->bad = 1; return; }
    lg->seen[a->layer][a->mixer]++;
    const hs_mixer_config *mc = &lg->m->cfg.layers[a->layer].mixers[a->mixer];
    int ok = a->mc == mc && a->T == 97 && a->q && a->k && a->v && a->out && a->knobs;
    ok &= (a->gk != NULL) == (mc->type == HS_GLA);
    ok &= (a->beta != NULL) == (mc->type == HS_GDN) && (a->log_alpha != NULL) == (mc->type == HS_GDN);
    ok &= (a->row_scale != NULL) == (mc->type == HS_NOPE); /* log scaling is on in this test */
    if (mc->type == HS_SWA) ok &= a->window == mc->window;
    if (mc->type == HS_ROPE) ok &= a->window == 0;
    if (!ok && !lg->bad) {
        lg->bad = 1;
        snprintf(lg->why, sizeof lg->why, "layer %d mixer %d (%s): bad fields", a->layer, a->mixer,
                 hs_mixer_type_name(mc->type));
    }
    /* layer 0's input is known exactly: compare q and the raw output with the reference */
    if (a->layer == 0 && !lg->bad) {
        int T = a->T, d = lg->m->cfg.hidden_size;
        double *x = malloc((size_t)T * d * sizeof *x), *h = malloc((size_t)T * d * sizeof *h);
        double *y = calloc((size_t)T * d, sizeof *y);
        for (int t = 0; t < T; t++)
            for (int i = 0; i < d; i++) x[(size_t)t * d + i] = lg->m->embed[(size_t)lg->tok[t] * d + i];
        ref_rms(h, x, lg->m->layers[0].attn_norm, T, d, lg->m->cfg.norm_eps);
        ref_trace tr;
        hs_knobs k = {0};
        k.log_scale = 1;
        ref_mixer_forward(y, &tr, lg->m, 0, a->mixer, h, T, &k);
        double eo = hs_test_rel_err(a->out, tr.raw, (size_t)T * tr.H * tr.dv, 1e-6);
        double eq = hs_test_rel_err(a->q, tr.q, (size_t)T * tr.H * tr.dk, 1e-6);
        double ek = hs_test_rel_err(a->k, tr.k, (size_t)T * tr.Hkv * tr.dk, 1e-6);
        if (!(eo <= TOL && eq <= TOL && ek <= TOL)) { /* a NaN error fails too */
            lg->bad = 1;
            snprintf(lg->why, sizeof lg->why, "layer 0 mixer %d: out/q/k rel err %.3g/%.3g/%.3g",
                     a->mixer, eo, eq, ek);
        }
        ref_trace_free(&tr);
        free(x); free(h); free(y);
    }
}

TEST(forward_capture_hook) {
    hs_config c;
    cfg_init(&c, 32, 1);
    hs_mixer_config nope = mx(HS_NOPE, 1);
    add_layer(&c, mx(HS_GDN, 2), &nope);
    add_layer(&c, mx(HS_GLA, 2), NULL);
    add_layer(&c, mx(HS_SWA, 2), &nope);
    add_layer(&c, mx(HS_ROPE, 2), NULL);
    add_layer(&c, mx(HS_NOPE, 2), NULL);
    hs_model m;
    CHECK(!build(&m, &c, 131), "build");
    int T = 97;
    int32_t *tok = random_tokens(T, 23);
    capture_log lg = {0};
    lg.m = &m;
    lg.tok = tok;
    hs_forward_opts o = {0};
    o.capture = on_capture;
    o.capture_ctx = &lg;
    hs_knobs k = {0};
    k.log_scale = 1;
    char err[256];
    int rc = hs_forward(&m, tok, T, &k, &o, err, sizeof err);
    free(tok);
    hs_model_free(&m);
    CHECK(!rc, "forward: %s", err);
    CHECK(!lg.bad, "%s", lg.why);
    CHECK(lg.calls == 7, "capture called %d times, want 7 (one per mixer)", lg.calls);
    for (int l = 0; l < c.num_layers; l++)
        for (int j = 0; j < c.layers[l].n_mixers; j++)
            CHECK(lg.seen[l][j] == 1, "layer %d mixer %d captured %d times", l, j, lg.seen[l][j]);
}

/* ---- progress, cancellation and bad input ---- */

static int cancel_at_half(void *ctx, double f) {
    int *calls = ctx;
    (*calls)++;
    return f >= 0.5;
}

TEST(forward_progress_cancel_and_errors) {
    hs_config c;
    lh_model(&c, HS_GLA, 1, 64);
    hs_model m;
    CHECK(!build(&m, &c, 141), "build");
    int T = 50;
    int32_t *tok = random_tokens(T, 1);
    int calls = 0;
    hs_forward_opts o = {0};
    o.progress = cancel_at_half;
    o.progress_ctx = &calls;
    char err[256] = "";
    int rc = hs_forward(&m, tok, T, NULL, &o, err, sizeof err);
    CHECK(rc == HS_CANCELLED, "cancel: rc=%d", rc);
    CHECK(calls >= 1 && calls < c.num_layers + 1, "progress called %d times before cancelling", calls);
    tok[7] = VOC;
    rc = hs_forward(&m, tok, T, NULL, NULL, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "position 7"), "bad token: rc=%d err=%s", rc, err);
    tok[7] = -1;
    rc = hs_forward(&m, tok, T, NULL, NULL, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "vocabulary"), "negative token: rc=%d err=%s", rc, err);
    tok[7] = 3;
    hs_knobs k = {0};
    k.n_ablate = 1;
    k.ablate[0] = (hs_head_ref){9, 0, 0};
    rc = hs_forward(&m, tok, T, &k, NULL, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "--ablate"), "bad ablation: rc=%d err=%s", rc, err);
    rc = hs_forward(&m, tok, 0, NULL, NULL, err, sizeof err);
    CHECK(rc == -1, "T=0 accepted");
    free(tok);
    hs_model_free(&m);
}
