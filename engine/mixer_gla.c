/* Gated linear attention mixer: projections (optionally short conv + silu), the low-rank
 * log-sigmoid forget gate, chunked (or recurrent) scan with SWLA, per-head norm and gate. */
#include "mixer_internal.h"

#include <math.h>

#include "cpu/kernels.h"
#include "cpu/vexp.h"

/* x[c] = logsigmoid(x[c] + b[c]) * scale over one row: min(z, 0) - log1p(exp(-|z|)), both
 * factors vectorised (hs_expf, hs_log1pf_unit); libm's log1pf per element was ~5% of a
 * 16K-token gla-nope-lh forward on one core. */
static HS_VEC_CLONES void hs_logsigmoid_rows(float *x, const float *b, int n, float scale) {
    #pragma omp simd
    for (int c = 0; c < n; c++) {
        float z = x[c] + b[c];
        x[c] = ((z < 0 ? z : 0.0f) - hs_log1pf_unit(hs_expf(-fabsf(z)))) * scale;
    }
}

int hs_mixer_run_gla(float *y, const hs_model *m, int layer, int mixer, const float *h, int T,
                     const hs_knobs *knobs, const hs_knobs_resolved *kr,
                     const hs_forward_opts *opts, hs_mixer_ws *ws) {
    const hs_config *c = &m->cfg;
    const hs_mixer_config *mc = &c->layers[layer].mixers[mixer];
    const hs_mixer_weights *w = &m->layers[layer].mix[mixer];
    int d = c->hidden_size, H = mc->num_heads, dk = mc->head_k_dim, dv = mc->head_v_dim;
    int conv = mc->use_short_conv, K = mc->conv_size;
    size_t nk = (size_t)T * H * dk, nv = (size_t)T * H * dv;

    hs_project_conv(ws->q, h, w->q_proj, conv ? w->q_conv : NULL, T, d, H * dk, K, ws->stage);
    hs_project_conv(ws->k, h, w->k_proj, conv ? w->k_conv : NULL, T, d, H * dk, K, ws->stage);
    hs_project_conv(ws->v, h, w->v_proj, conv ? w->v_conv : NULL, T, d, H * dv, K, ws->stage);
    if (conv) {
        silu_forward(ws->q, ws->q, nk);
        silu_forward(ws->k, ws->k, nk);
        silu_forward(ws->v, ws->v, nv);
    }

    /* gk = logsigmoid((h Wgk0^T) Wgk1^T + b) / normalizer */
    int r = mc->gate_low_rank_dim, C = H * dk;
    matmul_forward(ws->lowrank, h, w->gk_proj0, T, d, r);
    matmul_forward(ws->gk, ws->lowrank, w->gk_proj1, T, r, C);
    float inv_norm = 1.0f / mc->gate_logit_normalizer;
    const float *b = w->gk_bias;
    #pragma omp parallel for schedule(static)
    for (int t = 0; t < T; t++)
        hs_logsigmoid_rows(ws->gk + (size_t)t * C, b, C, inv_norm);

    int swla = (int)kr->swla;
    if (opts->use_recurrent)
        gla_forward_recurrent(ws->o, ws->q, ws->k, ws->v, ws->gk, T, H, dk, dv, swla,
                              kr->swla_window, kr->swla_stride);
    else
        gla_forward_chunked(ws->o, ws->q, ws->k, ws->v, ws->gk, T, H, dk, dv,
                            opts->chunk > 0 ? opts->chunk : 64, swla, kr->swla_window,
                            kr->swla_stride);

    hs_mixer_acts acts = {.layer = layer, .mixer = mixer, .mc = mc, .T = T, .q = ws->q,
                          .k = ws->k, .v = ws->v, .gk = ws->gk, .knobs = kr, .out = ws->o};
    hs_capture(opts, &acts);

    hs_head_norm_gate(ws->o, h, w->g_proj, w->g_norm, T, d, H, dv, mc->norm_eps, ws->stage);
    hs_ablate_heads(ws->o, knobs, layer, mixer, T, H, dv);
    matmul_accumulate(y, ws->o, w->o_proj, T, H * dv, d);
    return 0;
}
