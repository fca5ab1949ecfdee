/* Softmax mixers (nope, rope, swa): projections, rotary embedding, tiled causal attention
 * with the knob-resolved window and log scaling, output projection. */
#include "mixer_internal.h"

#include "cpu/kernels.h"

int hs_mixer_run_softmax(float *y, const hs_model *m, int layer, int mixer, const float *h,
                         int T, const hs_knobs *knobs, const hs_knobs_resolved *kr,
                         const hs_forward_opts *opts, hs_mixer_ws *ws) {
    const hs_config *c = &m->cfg;
    const hs_mixer_config *mc = &c->layers[layer].mixers[mixer];
    const hs_mixer_weights *w = &m->layers[layer].mix[mixer];
    int d = c->hidden_size, H = mc->num_heads;
    int Hkv = mc->num_kv_heads > 0 ? mc->num_kv_heads : H;
    int dk = mc->head_k_dim, dv = mc->head_v_dim;

    matmul_forward(ws->q, h, w->q_proj, T, d, H * dk);
    matmul_forward(ws->k, h, w->k_proj, T, d, Hkv * dk);
    matmul_forward(ws->v, h, w->v_proj, T, d, Hkv * dv);
    if (mc->type == HS_ROPE || mc->type == HS_SWA) {
        rope_forward(ws->q, T, H, dk, mc->rope_theta, 0);
        rope_forward(ws->k, T, Hkv, dk, mc->rope_theta, 0);
    }
    int window = hs_knobs_mixer_window(kr, mc);
    const float *row_scale = NULL;
    if (mc->type == HS_NOPE && kr->log_L0 > 0) {
        for (int t = 0; t < T; t++) ws->row_scale[t] = hs_knobs_log_scale(kr, t);
        row_scale = ws->row_scale;
    }
    int tile = opts->tile > 0 ? opts->tile : 64;
    attention_forward(ws->o, ws->q, ws->k, ws->v, row_scale, T, H, Hkv, dk, dv, window, tile);

    hs_mixer_acts acts = {.layer = layer, .mixer = mixer, .mc = mc, .T = T, .q = ws->q,
                          .k = ws->k, .v = ws->v, .row_scale = row_scale, .window = window,
                          .knobs = kr, .out = ws->o};
    hs_capture(opts, &acts);

    hs_ablate_heads(ws->o, knobs, layer, mixer, T, H, dv);
    matmul_accumulate(y, ws->o, w->o_proj, T, H * dv, d);
    return 0;
}
