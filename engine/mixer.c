/* Mixer plumbing shared by the three mixer families: workspace, staged projections with the
 * short convolution, per-head norm and gate, ablation, the capture hook, dispatch. */
#include "mixer_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/kernels.h"

/* Widest per-token activation of any mixer (q, k, v, o and their staging share it). */
static void widths(const hs_config *c, size_t *width, size_t *rank, size_t *heads, int *conv) {
    *width = *rank = *heads = 1;
    *conv = 1;
    for (int l = 0; l < c->num_layers; l++)
        for (int j = 0; j < c->layers[l].n_mixers; j++) {
            const hs_mixer_config *mc = &c->layers[l].mixers[j];
            size_t H = (size_t)mc->num_heads, Hkv = (size_t)(mc->num_kv_heads > 0 ? mc->num_kv_heads : mc->num_heads);
            size_t w[4] = {H * (size_t)mc->head_k_dim, Hkv * (size_t)mc->head_k_dim,
                           Hkv * (size_t)mc->head_v_dim, H * (size_t)mc->head_v_dim};
            for (int i = 0; i < 4; i++) if (w[i] > *width) *width = w[i];
            if (H > *heads) *heads = H;
            if (mc->type == HS_GLA && (size_t)mc->gate_low_rank_dim > *rank) *rank = (size_t)mc->gate_low_rank_dim;
            if ((mc->type == HS_GLA || mc->type == HS_GDN) && mc->use_short_conv && mc->conv_size > *conv)
                *conv = mc->conv_size;
        }
}

/* Float counts of each buffer, in allocation order. */
static void ws_layout(const hs_config *c, int T, size_t n[9]) {
    size_t width, rank, heads;
    int conv;
    widths(c, &width, &rank, &heads, &conv);
    size_t t = (size_t)T;
    n[0] = n[1] = n[2] = n[3] = t * width;     /* q k v o */
    int any_gla = 0;
    for (int l = 0; l < c->num_layers; l++)
        for (int j = 0; j < c->layers[l].n_mixers; j++) any_gla |= c->layers[l].mixers[j].type == HS_GLA;
    n[4] = any_gla ? t * width : 0;             /* gk */
    n[5] = (size_t)(HS_ROW_BLOCK + conv - 1) * width; /* stage */
    n[6] = any_gla ? t * rank : 0;              /* lowrank */
    n[7] = t * heads * 2;                       /* beta, log_alpha */
    n[8] = t;                                   /* row_scale */
}

size_t hs_mixer_ws_bytes(const hs_config *c, int T) {
    size_t n[9], total = 0;
    ws_layout(c, T, n);
    for (int i = 0; i < 9; i++) total += (n[i] + 15) / 16 * 16;
    return total * sizeof(float);
}

int hs_mixer_ws_alloc(hs_mixer_ws *ws, const hs_config *c, int T, char *err, size_t errlen) {
    memset(ws, 0, sizeof *ws);
    size_t n[9];
    ws_layout(c, T, n);
    ws->bytes = hs_mixer_ws_bytes(c, T);
    ws->block = malloc(ws->bytes);
    if (!ws->block) {
        snprintf(err, errlen, "out of memory for T=%d (need %zu MB of mixer workspace)", T,
                 (ws->bytes >> 20) + 1);
        return -1;
    }
    float *p = ws->block;
    float **slots[9] = {&ws->q, &ws->k, &ws->v, &ws->o, &ws->gk, &ws->stage, &ws->lowrank,
                        &ws->beta, &ws->row_scale};
    for (int i = 0; i < 9; i++) {
        *slots[i] = p;
        p += (n[i] + 15) / 16 * 16;
    }
    ws->log_alpha = ws->beta + n[7] / 2;
    ws->T = T;
    return 0;
}

void hs_mixer_ws_free(hs_mixer_ws *ws) {
    free(ws->block);
    memset(ws, 0, sizeof *ws);
}

void hs_project_conv(float *out, const float *h, const float *W, const float *conv_w, int T,
                     int d, int C, int K, float *stage) {
    if (!conv_w) {
        matmul_forward(out, h, W, T, d, C);
        return;
    }
    /* stage holds [K-1 rows of history; block rows]: the conv of a block reads the raw
     * projections of the K-1 rows before it. */
    size_t hist = (size_t)(K - 1) * (size_t)C;
    float *cur = stage + hist;
    for (int r0 = 0; r0 < T; r0 += HS_ROW_BLOCK) {
        int nb = T - r0 < HS_ROW_BLOCK ? T - r0 : HS_ROW_BLOCK;
        matmul_forward(cur, h + (size_t)r0 * d, W, nb, d, C);
        conv1d_causal_forward(out + (size_t)r0 * C, cur, conv_w, nb, C, K, r0 ? stage : NULL);
        if (hist) memmove(stage, stage + (size_t)nb * C, hist * sizeof *stage);
    }
}

void hs_head_norm_gate(float *o, const float *h, const float *Wg, const float *norm_w, int T,
                       int d, int H, int dv, float eps, float *stage) {
    size_t C = (size_t)H * dv;
    for (int r0 = 0; r0 < T; r0 += HS_ROW_BLOCK) {
        int nb = T - r0 < HS_ROW_BLOCK ? T - r0 : HS_ROW_BLOCK;
        float *ob = o + (size_t)r0 * C;
        matmul_forward(stage, h + (size_t)r0 * d, Wg, nb, d, (int)C);
        rmsnorm_forward(ob, ob, norm_w, nb * H, dv, eps);
        /* o *= silu(g): the SwiGLU kernel with o as its "up" operand (the same product,
         * vectorised; a loop written here ran scalar) */
        swiglu_forward(ob, stage, ob, (size_t)nb * C);
    }
}

void hs_ablate_heads(float *o, const hs_knobs *knobs, int layer, int mixer, int T, int H, int dv) {
    for (int hd = 0; hd < H; hd++) {
        if (!hs_knobs_is_ablated(knobs, layer, mixer, hd)) continue;
        for (int t = 0; t < T; t++) memset(o + (size_t)t * H * dv + (size_t)hd * dv, 0, (size_t)dv * sizeof *o);
    }
}

void hs_capture(const hs_forward_opts *opts, const hs_mixer_acts *acts) {
    if (opts && opts->capture) opts->capture(opts->capture_ctx, acts);
}

int hs_mixer_run(float *y, const hs_model *m, int layer, int mixer, const float *h, int T,
                 const hs_knobs *knobs, const hs_knobs_resolved *kr,
                 const hs_forward_opts *opts, hs_mixer_ws *ws) {
    switch (m->cfg.layers[layer].mixers[mixer].type) {
    case HS_GLA: return hs_mixer_run_gla(y, m, layer, mixer, h, T, knobs, kr, opts, ws);
    case HS_GDN: return hs_mixer_run_gdn(y, m, layer, mixer, h, T, knobs, kr, opts, ws);
    default:     return hs_mixer_run_softmax(y, m, layer, mixer, h, T, knobs, kr, opts, ws);
    }
}

int hs_mixer_forward(float *y, const hs_model *m, int layer, int mixer, const float *h, int T,
                     const hs_knobs *knobs, const hs_forward_opts *opts) {
    static const hs_knobs no_knobs;
    static const hs_forward_opts no_opts;
    if (!knobs) knobs = &no_knobs;
    if (!opts) opts = &no_opts;
    if (layer < 0 || layer >= m->cfg.num_layers || mixer < 0 ||
        mixer >= m->cfg.layers[layer].n_mixers || T < 1)
        return -1;
    hs_knobs_resolved kr;
    hs_knobs_resolve(&kr, knobs, &m->cfg);
    hs_mixer_ws ws;
    char err[HS_ERR_LEN];
    if (hs_mixer_ws_alloc(&ws, &m->cfg, T, err, sizeof err)) return -1;
    int rc = hs_mixer_run(y, m, layer, mixer, h, T, knobs, &kr, opts, &ws);
    hs_mixer_ws_free(&ws);
    return rc;
}
