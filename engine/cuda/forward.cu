/* The whole-model forward on the GPU, the same semantics as hs_forward (engine/forward.h):
 * every knob, logits rows, NLL, final hidden state, the capture hook and progress.
 * Projections are cuBLAS GEMMs with bf16 inputs and fp32 accumulation/outputs; the output
 * projections and the MLP's down projection accumulate straight into the fp32 residual. */
#include "cuda_model.cuh"
#include "check.cuh"
#include "forward_analysis.cuh"
#include "kernels/cuda/kernels.cuh"
#include "kernels/cuda/linattn_chunk.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAUNCH(call) CUDA_CHECK(call)

/* The plugin is loaded with RTLD_LOCAL and cannot call the engine's C functions, so the knob
 * resolution rules of engine/knobs.c (model-spec section 6) are restated here (cu_knobs:
 * cuda_model.cuh; the decoder, decode.cu, resolves its knobs here too). */
static int l0_of(const hs_config *c, int v) { return v > 0 ? v : c->train_context; }

int cu_resolve_knobs(cu_knobs *o, const hs_knobs *k, const hs_config *c, char *err, size_t errlen) {
    memset(o, 0, sizeof *o);
    if (k->log_scale) {
        int l0 = l0_of(c, k->log_scale_L0);
        if (l0 < 2) { snprintf(err, errlen, "--log-scale: L0 must be at least 2 (got %d)", l0); return -1; }
        o->log_L0 = log((double)l0);
    }
    o->swla = (int)k->swla;
    if (k->swla != HS_SWLA_OFF) {
        o->swla_window = l0_of(c, k->swla_window);
        if (o->swla_window < 1) { snprintf(err, errlen, "--swla-window: must be at least 1"); return -1; }
        if (k->swla == HS_SWLA_OVERLAP) {
            int s = k->swla_stride > 0 ? k->swla_stride : o->swla_window / 4;
            o->swla_stride = s < 1 ? 1 : s;
            if (o->swla_stride > o->swla_window) {
                snprintf(err, errlen, "--swla-stride %d: must be at most the window %d", o->swla_stride, o->swla_window);
                return -1;
            }
        } else {
            o->swla_stride = o->swla_window;
        }
    }
    o->swa_window = k->swa_window;
    o->rope_window = k->rope_window == HS_KNOB_L0 ? c->train_context : k->rope_window;
    if (k->n_ablate < 0 || k->n_ablate > HS_MAX_ABLATE) { snprintf(err, errlen, "--ablate: bad head count"); return -1; }
    return 0;
}

int cu_mixer_window(const cu_knobs *k, const hs_mixer_config *m) {
    switch (m->type) {
    case HS_SWA:  return k->swa_window > 0 ? k->swa_window : m->window;
    case HS_ROPE: return k->rope_window > 0 ? k->rope_window : 0;
    default:      return 0;
    }
}

int cu_la_env_is(const char *name, const char *value);   /* kernels/cuda/linattn_chunk.cu */

/* out[n, out_dim] (of type ot, += when accumulate) = in[n, in_dim] (bf16) @ w[out_dim, in_dim]^T
 * (bf16), accumulated in fp32 */
static int gemm_to(hs_cuda_model *cm, void *out, cudaDataType ot, const bf16 *in, const bf16 *w, int n,
                   int in_dim, int out_dim, int accumulate, char *err, size_t errlen) {
    const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
    CUBLAS_CHECK(cublasGemmEx(cm->blas, CUBLAS_OP_T, CUBLAS_OP_N, out_dim, n, in_dim, &alpha, w,
                              CUDA_R_16BF, in_dim, in, CUDA_R_16BF, in_dim, &beta, out, ot,
                              out_dim, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return 0;
}

static int gemm(hs_cuda_model *cm, float *out, const bf16 *in, const bf16 *w, int n, int in_dim,
                int out_dim, int accumulate, char *err, size_t errlen) {
    return gemm_to(cm, out, CUDA_R_32F, in, w, n, in_dim, out_dim, accumulate, err, errlen);
}

/* HS_CUDA_QKV_BATCH=0: q, k and v projected by three GEMMs (the A/B and a suspect's switch) */
static int qkv_batch_enabled(void) {
    static const int v = !cu_la_env_is("HS_CUDA_QKV_BATCH", "0");
    return v;
}

/* q, k and v of a mixer in one strided-batched GEMM (fp32 out[b] = hb @ w[b]^T for b = 0, 1, 2)
 * where the three are alike: one launch where there were three, and at 4K tokens a d x d
 * projection's ~128 output tiles fill one wave of the 132 SMs poorly where three fill ~3
 * (session 13: 368 TFLOP/s a projection at 4K against ~700 for the 7168-wide gate/up). The
 * weights lie q, k, v in one arena at equal spacing (model_upload.cu packs them in that order)
 * and so do the outputs (the workspace's q, k, v and o, gk, g); returns 1 when it did the
 * work, 0 when the shapes or spacings differ (the caller projects one by one), -1 on error. */
static int project_qkv_batched(hs_cuda_model *cm, float *out0, float *out1, float *out2, const cu_mixer_w *w,
                               int T, int rows_q, int rows_k, int rows_v, char *err, size_t errlen) {
    const int d = cm->cfg.hidden_size;
    if (!qkv_batch_enabled() || rows_q != rows_k || rows_k != rows_v || w->k - w->q != w->v - w->k ||
        out1 - out0 != out2 - out1 || out1 <= out0)
        return 0;
    const float alpha = 1.0f, beta = 0.0f;
    CUBLAS_CHECK(cublasGemmStridedBatchedEx(cm->blas, CUBLAS_OP_T, CUBLAS_OP_N, rows_q, T, d, &alpha, w->q,
                                            CUDA_R_16BF, d, (long long)(w->k - w->q), cm->ws.hb, CUDA_R_16BF, d,
                                            0, &beta, out0, CUDA_R_32F, rows_q, (long long)(out1 - out0), 3,
                                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return 1;
}

/* The FFN's gate/up product is written in bf16 (half the bytes written and read back by SwiGLU,
 * ~1.9 GB a layer at 64K in the 376m preset; g and u carry one more bf16 rounding, as in a bf16
 * PyTorch model). Measured on the H200 (2026-12-05): 376m GDN-NoPE 107.18 -> 104.50 ms at 64K,
 * 5.50 -> 5.36 ms at 4K; parity within the usual tolerance. HS_CUDA_FFN_BF16=0: the fp32 product
 * (the A/B). */

static int ffn_bf16(void) {
    static const int v = !cu_la_env_is("HS_CUDA_FFN_BF16", "0");
    return v;
}

/* q, k, v projections of a gla/gdn mixer: GEMM into tmp, then conv (if any) and silu, then
 * with l2_dim > 0 (gdn's q and k) the l2 norm of every head of that dim, fused with the conv
 * where a row fits the fused kernel's shared memory. */
/* dst = the short conv / SiLU / per-head l2 norm of a projection src (each where asked) */
static int conv_post(hs_cuda_model *cm, float *dst, const float *src, const float *conv, int T, int C, int K,
                     int silu, int l2_dim, char *err, size_t errlen) {
    if (conv || silu) {
        if (l2_dim > 0 && C <= CU_CONV_L2NORM_MAX_C) {
            LAUNCH(cu_conv_silu_l2norm(dst, src, conv, T, C, K, silu, l2_dim, 1e-6f, cm->st));
            return 0;
        }
        LAUNCH(cu_conv_silu(dst, src, conv, T, C, K, silu, cm->st));
    }
    if (l2_dim > 0) LAUNCH(cu_l2norm_heads(dst, T, C / l2_dim, l2_dim, 1e-6f, cm->st));
    return 0;
}

static int project_conv(hs_cuda_model *cm, float *dst, const bf16 *w, const float *conv, int T, int C,
                        int K, int silu, int l2_dim, char *err, size_t errlen) {
    const int post = conv || silu;
    if (gemm(cm, post ? cm->ws.tmp : dst, cm->ws.hb, w, T, cm->cfg.hidden_size, C, 0, err, errlen)) return -1;
    return conv_post(cm, dst, cm->ws.tmp, conv, T, C, K, silu, l2_dim, err, errlen);
}

/* The gla gate from its low-rank factor in one pass (cu_gla_gate_lowrank) instead of the second
 * low-rank GEMM and the gate's own pass: the default since the H100 bench of 2026-12-07 (GLA 376m
 * prefill 3.91-3.92 against 3.93 ms at 4K, 83.45-84.06 against 84.48 ms at 64K, ~1% faster;
 * parity.sh rel_rms 1.89e-2 as unfused, rel_max 0.167 against 0.216). HS_CUDA_GLA_GATE_FUSE=0
 * keeps the unfused gate for A/Bs. (The first low-rank GEMM folded in too, one kernel from the
 * normed input, was slower at both lengths, 4.07-4.09 and 85.3-85.6 ms, and was removed.) */
static int gla_gate_fused(void) {
    static const int v = !cu_la_env_is("HS_CUDA_GLA_GATE_FUSE", "0");
    return v;
}

/* The output gate's projection g written in bf16 by cuBLAS (its fp32 accumulators rounded to
 * nearest) and read so by the head norm (cu_head_norm_gate_bg): g only enters silu(g) as a factor,
 * as the FFN's gate/up product (bf16 by default) enters SwiGLU. Half of g's write and read: ~0.1
 * ms a GLA/GDN layer at 64K by bytes moved (untimed, session 24). HS_CUDA_G_BF16=0 is the A/B. */
static int g_bf16(void) {
    static const int v = !cu_la_env_is("HS_CUDA_G_BF16", "0");
    return v;
}

static int linear_mixer(hs_cuda_model *cm, int l, int j, int T, const cu_knobs *kn, char *err,
                        size_t errlen) {
    const hs_mixer_config *mc = &cm->cfg.layers[l].mixers[j];
    const cu_mixer_w *w = &cm->layers[l].mix[j];
    cu_workspace *ws = &cm->ws;
    const int d = cm->cfg.hidden_size, H = mc->num_heads, dk = mc->head_k_dim, dv = mc->head_v_dim;
    const int K = mc->conv_size, gla = mc->type == HS_GLA;
    /* gla: silu only with the short conv; gdn: silu always */
    const int silu = gla ? mc->use_short_conv : 1;
    const float *qc = mc->use_short_conv ? w->q_conv : NULL, *kc = mc->use_short_conv ? w->k_conv : NULL;
    const float *vc = mc->use_short_conv ? w->v_conv : NULL;
    const int l2 = gla ? 0 : dk, post = qc || silu;
    /* batched: the raw projections into o, gk and g (free until the mixer writes them) when a
     * conv or SiLU follows, else straight into q, k, v */
    float *rq = post ? ws->o : ws->q, *rk = post ? ws->gk : ws->k, *rv = post ? ws->g : ws->v;
    const int batched = project_qkv_batched(cm, rq, rk, rv, w, T, H * dk, H * dk, H * dv, err, errlen);
    if (batched < 0) return -1;
    if (batched ? conv_post(cm, ws->q, rq, qc, T, H * dk, K, silu, l2, err, errlen) ||
                      conv_post(cm, ws->k, rk, kc, T, H * dk, K, silu, l2, err, errlen) ||
                      conv_post(cm, ws->v, rv, vc, T, H * dv, K, silu, 0, err, errlen)
                : project_conv(cm, ws->q, w->q, qc, T, H * dk, K, silu, l2, err, errlen) ||
                      project_conv(cm, ws->k, w->k, kc, T, H * dk, K, silu, l2, err, errlen) ||
                      project_conv(cm, ws->v, w->v, vc, T, H * dv, K, silu, 0, err, errlen))
        return -1;
    int swla = kn->swla, W = kn->swla_window, S = kn->swla_stride;
    /* a window that covers every query's whole prefix is the plain recurrence */
    if (swla == HS_SWLA_EXACT && W >= T) swla = HS_SWLA_OFF;
    if (swla == HS_SWLA_OVERLAP && ((long)(T - 1) / S + 1) * S <= W) swla = HS_SWLA_OFF;
    /* the chunked kernels (HS_CUDA_LINATTN=chunk; gdn: no SWLA, or chunk-aligned overlap) */
    const int chunk = cu_la_chunk_enabled() && cu_la_chunk_fits(dk, dv);
    if (gla) {
        const int r = mc->gate_low_rank_dim;
        /* the low-rank product straight to bf16 (cuBLAS rounds its fp32 accumulators to nearest,
         * as cu_to_bf16 did), which the fused pass or the second product reads */
        if (gemm_to(cm, ws->lrb, CUDA_R_16BF, ws->hb, w->gk0, T, d, r, 0, err, errlen)) return -1;
        if (gla_gate_fused() && r <= 32) {
            LAUNCH(cu_gla_gate_lowrank(ws->gk, ws->lrb, w->gk1, w->gk_bias, T, H * dk, r, mc->gate_logit_normalizer,
                                       cm->st));
        } else {
            if (gemm(cm, ws->gk, ws->lrb, w->gk1, T, r, H * dk, 0, err, errlen)) return -1;
            LAUNCH(cu_gla_gate(ws->gk, w->gk_bias, T, H * dk, mc->gate_logit_normalizer, cm->st));
        }
        if (chunk) {
            const int mode = swla == HS_SWLA_EXACT ? CU_SWLA_EXACT : swla == HS_SWLA_OVERLAP ? CU_SWLA_OVERLAP : CU_SWLA_OFF;
            LAUNCH(cu_gla_chunk(ws->o, ws->q, ws->k, ws->v, ws->gk, T, H, dk, dv, mode, W, S, ws->la_work,
                                ws->la_work_bytes, cm->st));
        } else if (swla == HS_SWLA_OVERLAP) {
            LAUNCH(cu_linattn_window(ws->o, ws->q, ws->k, ws->v, ws->gk, NULL, NULL, T, H, dk, dv,
                                     CU_SWLA_OVERLAP, W, S, cm->st));
        } else {
            LAUNCH(cu_gla_scan(ws->o, ws->q, ws->k, ws->v, ws->gk, T, H, dk, dv,
                               swla == HS_SWLA_EXACT ? CU_SWLA_EXACT : CU_SWLA_OFF, W, cm->st));
        }
    } else {
        if (gemm(cm, ws->beta, ws->hb, w->b, T, d, H, 0, err, errlen) ||
            gemm(cm, ws->la, ws->hb, w->a, T, d, H, 0, err, errlen))
            return -1;
        LAUNCH(cu_gdn_gates(ws->beta, ws->la, w->A_log, w->dt_bias, T, H, mc->allow_neg_eigval ? 2.0f : 1.0f,
                            cm->st));
        const int mode = swla == HS_SWLA_EXACT ? CU_SWLA_EXACT : swla == HS_SWLA_OVERLAP ? CU_SWLA_OVERLAP : CU_SWLA_OFF;
        if (chunk && cu_gdn_chunk_supports(T, mode, W, S))
            LAUNCH(cu_gdn_chunk(ws->o, ws->q, ws->k, ws->v, ws->beta, ws->la, T, H, dk, dv, mode, W, S, ws->la_work,
                                ws->la_work_bytes, cm->st));
        else if (swla == HS_SWLA_OFF)
            LAUNCH(cu_gdn_scan(ws->o, ws->q, ws->k, ws->v, ws->beta, ws->la, T, H, dk, dv, cm->st));
        else
            LAUNCH(cu_linattn_window(ws->o, ws->q, ws->k, ws->v, NULL, ws->beta, ws->la, T, H, dk, dv,
                                     swla == HS_SWLA_EXACT ? CU_SWLA_EXACT : CU_SWLA_OVERLAP, W, S, cm->st));
    }
    if (g_bf16()) return gemm_to(cm, ws->g, CUDA_R_16BF, ws->hb, w->g, T, d, H * dv, 0, err, errlen);
    return gemm(cm, ws->g, ws->hb, w->g, T, d, H * dv, 0, err, errlen);
}

/* HS_CUDA_FUSE_ROPE=0: RoPE always as its own pass over q and k (the A/B and a suspect's switch) */
static int rope_fusion_enabled(void) {
    static const int v = !cu_la_env_is("HS_CUDA_FUSE_ROPE", "0");
    return v;
}

/* fuse_rope: nothing after the attention reads the rotated q and k (no capture hook, head
 * statistics, pooled maps or mixer hook), so the TMA-fed kernel may rotate them as it loads */
static int softmax_mixer(hs_cuda_model *cm, int l, int j, int T, const cu_knobs *kn, int fuse_rope, int *window_out,
                         char *err, size_t errlen) {
    const hs_mixer_config *mc = &cm->cfg.layers[l].mixers[j];
    const cu_mixer_w *w = &cm->layers[l].mix[j];
    cu_workspace *ws = &cm->ws;
    const int d = cm->cfg.hidden_size, H = mc->num_heads, dk = mc->head_k_dim, dv = mc->head_v_dim;
    const int Hkv = mc->num_kv_heads > 0 ? mc->num_kv_heads : H;
    const int batched = project_qkv_batched(cm, ws->q, ws->k, ws->v, w, T, H * dk, Hkv * dk, Hkv * dv, err, errlen);
    if (batched < 0 || (!batched && (gemm(cm, ws->q, ws->hb, w->q, T, d, H * dk, 0, err, errlen) ||
                                     gemm(cm, ws->k, ws->hb, w->k, T, d, Hkv * dk, 0, err, errlen) ||
                                     gemm(cm, ws->v, ws->hb, w->v, T, d, Hkv * dv, 0, err, errlen))))
        return -1;
    int window = cu_mixer_window(kn, mc);
    *window_out = window;
    const float *rs = mc->type == HS_NOPE && kn->log_L0 > 0 ? ws->row_scale : NULL;
    /* ws->tmp ((T + 128) x width fp32, unused by softmax mixers) holds the tensor-core kernels'
     * bf16 K/V copies: Hkv*(dk+dv) bf16 per token is at most 2*width*2 bytes, plus the wgmma
     * kernels' padding (V^T to a multiple of 8 tokens, the TMA-fed kernel's tiles to 128) */
    const size_t sbytes = ((size_t)T + 128) * cm->width * sizeof(float);
    if (mc->type == HS_ROPE || mc->type == HS_SWA) {
        if (fuse_rope && rope_fusion_enabled() && cu_attention_runs_wgt(T, Hkv, dk, dv, sbytes)) {
            /* the angles, T x dk/2 (cos, sin), in ws->gk (a gla mixer's [T, width] fp32): the
             * kernel rotates q and k as it loads them, two passes over q and k fewer */
            float2 *cs = (float2 *)ws->gk;
            LAUNCH(cu_rope_table(cs, T, dk, mc->rope_theta, cm->st));
            LAUNCH(cu_attention_wgt_rope(ws->o, ws->q, ws->k, ws->v, rs, T, H, Hkv, dk, dv, window, cs, ws->tmp, sbytes,
                                         cm->st));
            return 0;
        }
        LAUNCH(cu_rope(ws->q, T, H, dk, mc->rope_theta, cm->st));
        LAUNCH(cu_rope(ws->k, T, Hkv, dk, mc->rope_theta, cm->st));
    }
    LAUNCH(cu_attention(ws->o, ws->q, ws->k, ws->v, rs, T, H, Hkv, dk, dv, window, ws->tmp, sbytes, cm->st));
    return 0;
}

/* Logits in row blocks: the requested rows copied out, the NLL of every next token. */
static int head_forward(hs_cuda_model *cm, int T, const hs_forward_opts *opts, char *err, size_t errlen) {
    const int d = cm->cfg.hidden_size, V = cm->cfg.vocab_size;
    cu_workspace *ws = &cm->ws;
    int n_rows = opts->logits ? opts->n_logit_rows : 0;
    int first = T - n_rows, lo = opts->nll ? 0 : first, hi = n_rows ? T : T - 1;
    for (int r0 = lo; r0 < hi; r0 += ws->logit_rows) {
        int nb = hi - r0 < ws->logit_rows ? hi - r0 : ws->logit_rows;
        if (gemm(cm, ws->logits, ws->hb + (size_t)r0 * d, cm->lm_head, nb, d, V, 0, err, errlen)) return -1;
        if (opts->nll && r0 < T - 1) {
            int nn = (T - 1 - r0) < nb ? T - 1 - r0 : nb;
            LAUNCH(cu_nll_rows(ws->nll + r0, ws->logits, ws->tokens + r0 + 1, nn, V, cm->st));
        }
        if (n_rows && r0 + nb > first) {
            int a = r0 > first ? r0 : first;
            CUDA_CHECK(cudaMemcpyAsync(opts->logits + (size_t)(a - first) * V, ws->logits + (size_t)(a - r0) * V,
                                       (size_t)(r0 + nb - a) * V * sizeof(float), cudaMemcpyDeviceToHost, cm->st));
            CUDA_CHECK(cudaStreamSynchronize(cm->st));
        }
    }
    if (opts->nll && T > 1) {
        CUDA_CHECK(cudaMemcpyAsync(opts->nll, ws->nll, (size_t)(T - 1) * sizeof(float), cudaMemcpyDeviceToHost, cm->st));
        CUDA_CHECK(cudaStreamSynchronize(cm->st));
    }
    return 0;
}

static int forward_layers(hs_cuda_model *cm, int T, const hs_knobs *knobs, const cu_knobs *kn,
                          const hs_knobs_resolved *kr, const float *row_scale_host,
                          const hs_forward_opts *opts, capture_bufs *cb, stats_dev *sd, char *err,
                          size_t errlen) {
    const hs_config *c = &cm->cfg;
    const int d = c->hidden_size, F = c->intermediate_size;
    cu_workspace *ws = &cm->ws;
    const uint8_t *mask_all = knobs->n_ablate > 0 ? ws->mask : NULL;
    const int fuse_rope = !opts->capture && !sd->block && !sd->map_scratch && !cm->mixer_hook;
    for (int l = 0; l < c->num_layers; l++) {
        const cu_layer_w *lw = &cm->layers[l];
        /* both mixers of an HH layer read the same normed h; their projections add into x */
        LAUNCH(cu_rmsnorm(ws->hb, NULL, ws->x, lw->attn_norm, T, d, c->norm_eps, cm->st));
        for (int j = 0; j < c->layers[l].n_mixers; j++) {
            const hs_mixer_config *mc = &c->layers[l].mixers[j];
            const int H = mc->num_heads, dv = mc->head_v_dim, lin = mc->type == HS_GLA || mc->type == HS_GDN;
            int window = 0;
            if (lin ? linear_mixer(cm, l, j, T, kn, err, errlen)
                    : softmax_mixer(cm, l, j, T, kn, fuse_rope, &window, err, errlen))
                return -1;
            if (cm->mixer_hook && cm->mixer_hook(cm->mixer_hook_ctx, l, j, T, err, errlen)) return -1;
            if (opts->capture &&
                cu_run_capture(cm, cb, l, j, T, kn, kr, row_scale_host, window, opts, err, errlen))
                return -1;
            if (sd->block && cu_run_stats(cm, sd, l, j, T, kn, window, err, errlen)) return -1;
            if (sd->map_scratch && cu_run_maps(cm, sd, l, j, T, kn, window, err, errlen)) return -1;
            const uint8_t *mask = mask_all ? mask_all + cm->mask_off[l][j] : NULL;
            if (lin && g_bf16())
                LAUNCH(cu_head_norm_gate_bg(ws->ob, ws->o, (const bf16 *)ws->g, lw->mix[j].g_norm, mask, T, H, dv,
                                            mc->norm_eps, cm->st));
            else
                LAUNCH(cu_head_norm_gate(ws->ob, ws->o, lin ? ws->g : NULL, lin ? lw->mix[j].g_norm : NULL, mask, T,
                                         H, dv, mc->norm_eps, cm->st));
            if (gemm(cm, ws->x, ws->ob, lw->mix[j].o, T, H * dv, d, 1, err, errlen)) return -1;
        }
        LAUNCH(cu_rmsnorm(ws->hb, NULL, ws->x, lw->mlp_norm, T, d, c->norm_eps, cm->st));
        if (ffn_bf16()) {
            bf16 *gub = (bf16 *)ws->gu;                 /* the fp32 buffer holds it twice over */
            if (gemm_to(cm, gub, CUDA_R_16BF, ws->hb, lw->gate_up, T, d, 2 * F, 0, err, errlen)) return -1;
            LAUNCH(cu_swiglu_bf16(ws->mb, gub, T, F, cm->st));
        } else {
            if (gemm(cm, ws->gu, ws->hb, lw->gate_up, T, d, 2 * F, 0, err, errlen)) return -1;
            LAUNCH(cu_swiglu(ws->mb, ws->gu, T, F, cm->st));
        }
        if (gemm(cm, ws->x, ws->mb, lw->down, T, F, d, 1, err, errlen)) return -1;
        if (opts->progress) {
            CUDA_CHECK(cudaStreamSynchronize(cm->st));
            if (opts->progress(opts->progress_ctx, (double)(l + 1) / (c->num_layers + 1))) {
                snprintf(err, errlen, "cancelled");
                return HS_CANCELLED;
            }
        }
    }
    return 0;
}

/* The layer stack as a CUDA graph: at 4K tokens a 376m forward is ~400 launches, enough launch
 * overhead to matter. The first forward of a kind runs eagerly (kernels do their one-time
 * set-up there, outside any capture); a second one alike is captured and replayed, and so are
 * later ones while nothing in the key changes. The key holds everything the launches depend
 * on: T, the resolved knobs, whether heads are ablated (the mask's contents and the log-scale
 * row factors are read from device buffers at run time) and the workspace's address and size.
 * Never with a progress callback (it synchronises per layer) or the capture hook (host copies).
 * On by default since `tests/gpu/device_run.sh graph` passed on the H200 (bit-identical to eager);
 * HS_CUDA_GRAPH=0 turns it off. A failed capture falls back to eager launches for good. */
typedef struct {
    int T, ws_T, ablate;
    cu_knobs kn;
    const void *ws_arena;
} graph_key;

static int graphs_enabled(void) {
    static const int v = !cu_la_env_is("HS_CUDA_GRAPH", "0");   /* on unless HS_CUDA_GRAPH=0 */
    return v;
}

static int layers_forward(hs_cuda_model *cm, int T, const hs_knobs *knobs, const cu_knobs *kn,
                          const hs_knobs_resolved *kr, const float *row_scale_host,
                          const hs_forward_opts *opts, capture_bufs *cb, stats_dev *sd, char *err,
                          size_t errlen) {
    cu_fwd_graph *g = &cm->graph;
    if (opts->progress || opts->capture || sd->block || sd->map_scratch || cm->mixer_hook || !graphs_enabled() || g->broken)
        return forward_layers(cm, T, knobs, kn, kr, row_scale_host, opts, cb, sd, err, errlen);
    unsigned char key[sizeof g->key];
    graph_key k;
    memset(&k, 0, sizeof k);   /* padding too: keys compare as bytes */
    k.T = T;
    k.ws_T = cm->ws.T;
    k.ablate = knobs->n_ablate > 0;
    k.kn = *kn;
    k.ws_arena = cm->ws_arena;
    static_assert(sizeof k <= sizeof key, "graph key too large");
    memset(key, 0, sizeof key);
    memcpy(key, &k, sizeof k);
    if (g->exec && !memcmp(key, g->key, sizeof key)) {
        CUDA_CHECK(cudaGraphLaunch(g->exec, cm->st));
        return 0;
    }
    if (memcmp(key, g->seen, sizeof key)) {
        memcpy(g->seen, key, sizeof key);
        return forward_layers(cm, T, knobs, kn, kr, row_scale_host, opts, cb, sd, err, errlen);
    }
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaError_t e = cudaStreamBeginCapture(cm->st, cudaStreamCaptureModeThreadLocal);
    int rc = 0;
    if (e == cudaSuccess) {
        rc = forward_layers(cm, T, knobs, kn, kr, row_scale_host, opts, cb, sd, err, errlen);
        e = cudaStreamEndCapture(cm->st, &graph);
    }
    if (!rc && e == cudaSuccess) e = cudaGraphInstantiate(&exec, graph, 0);
    if (graph) cudaGraphDestroy(graph);
    if (rc || e != cudaSuccess) {
        fprintf(stderr, "hybridscope: CUDA graph capture failed (%s); the forward runs without graphs\n",
                rc ? err : cudaGetErrorString(e));
        (void)cudaGetLastError();
        g->broken = 1;
        err[0] = 0;
        return forward_layers(cm, T, knobs, kn, kr, row_scale_host, opts, cb, sd, err, errlen);
    }
    if (g->exec) cudaGraphExecDestroy(g->exec);
    g->exec = exec;
    memcpy(g->key, key, sizeof key);
    CUDA_CHECK(cudaGraphLaunch(g->exec, cm->st));
    return 0;
}

int cu_forward(hs_cuda_model *cm, const int32_t *tokens, int T, const hs_knobs *knobs,
               const hs_forward_opts *opts, char *err, size_t errlen) {
    static const hs_knobs no_knobs = {};
    static const hs_forward_opts no_opts = {};
    const hs_config *c = &cm->cfg;
    if (!knobs) knobs = &no_knobs;
    if (!opts) opts = &no_opts;
    if (T < 1) { snprintf(err, errlen, "empty input (T=%d)", T); return -1; }
    for (int t = 0; t < T; t++)
        if (tokens[t] < 0 || tokens[t] >= c->vocab_size) {
            snprintf(err, errlen, "token %d at position %d is outside the vocabulary [0, %d)", tokens[t], t,
                     c->vocab_size);
            return -1;
        }
    if (opts->logits && (opts->n_logit_rows < 1 || opts->n_logit_rows > T)) {
        snprintf(err, errlen, "logit rows %d outside 1..T=%d", opts->n_logit_rows, T);
        return -1;
    }
    cu_knobs kn;
    if (cu_resolve_knobs(&kn, knobs, c, err, errlen)) return -1;
    /* the resolved knobs as the CPU engine states them, for the capture hook */
    hs_knobs_resolved kr;
    memset(&kr, 0, sizeof kr);
    kr.log_L0 = (float)kn.log_L0;
    kr.swla = (hs_swla_mode)kn.swla;
    kr.swla_window = kn.swla_window;
    kr.swla_stride = kn.swla_stride;
    kr.swa_window = kn.swa_window;
    kr.rope_window = kn.rope_window;

    CUDA_CHECK(cudaSetDevice(cm->device));
    if (cu_workspace_ensure(cm, T, err, errlen)) return -1;
    cu_workspace *ws = &cm->ws;
    CUDA_CHECK(cudaMemcpyAsync(ws->tokens, tokens, (size_t)T * sizeof(int32_t), cudaMemcpyHostToDevice, cm->st));

    float *row_scale_host = NULL;
    uint8_t *mask_host = NULL;
    capture_bufs cb;
    memset(&cb, 0, sizeof cb);
    int rc = 0;
    if (kn.log_L0 > 0) {
        row_scale_host = (float *)malloc((size_t)T * sizeof(float));
        if (!row_scale_host) { snprintf(err, errlen, "out of host memory"); return -1; }
        for (int t = 0; t < T; t++) {
            double v = log((double)t + 1.0) / kn.log_L0;
            row_scale_host[t] = v > 1.0 ? (float)v : 1.0f;
        }
    }
    if (knobs->n_ablate > 0) {
        mask_host = (uint8_t *)malloc((size_t)cm->total_heads);
        if (!mask_host) { free(row_scale_host); snprintf(err, errlen, "out of host memory"); return -1; }
        memset(mask_host, 1, (size_t)cm->total_heads);
        for (int i = 0; i < knobs->n_ablate; i++) {
            const hs_head_ref *r = &knobs->ablate[i];
            if (r->layer < 0 || r->layer >= c->num_layers || r->mixer < 0 || r->mixer >= c->layers[r->layer].n_mixers ||
                r->head < 0 || r->head >= c->layers[r->layer].mixers[r->mixer].num_heads) {
                snprintf(err, errlen, "--ablate %d.%d.%d: no such head", r->layer, r->mixer, r->head);
                rc = -1;
                break;
            }
            mask_host[cm->mask_off[r->layer][r->mixer] + r->head] = 0;
        }
    }
    /* synchronous copies: the host arrays are freed right after */
    if (!rc && row_scale_host) {
        cudaError_t e = cudaMemcpy(ws->row_scale, row_scale_host, (size_t)T * sizeof(float), cudaMemcpyHostToDevice);
        if (e != cudaSuccess) { snprintf(err, errlen, "CUDA error at %s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e)); rc = -1; }
    }
    if (!rc && mask_host) {
        cudaError_t e = cudaMemcpy(ws->mask, mask_host, (size_t)cm->total_heads, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) { snprintf(err, errlen, "CUDA error at %s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e)); rc = -1; }
    }
    if (!rc) {
        cudaError_t e = cu_embedding(ws->x, cm->embed, ws->tokens, T, c->hidden_size, cm->st);
        if (e != cudaSuccess) { snprintf(err, errlen, "CUDA error at %s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e)); rc = -1; }
    }
    stats_dev sd;
    if (!rc) rc = cu_stats_open(&sd, cm, opts->stats, T, err, errlen);
    else memset(&sd, 0, sizeof sd);
    if (!rc) rc = cu_maps_open(&sd, cm, opts->maps, opts->n_maps, T, err, errlen);
    if (!rc) rc = layers_forward(cm, T, knobs, &kn, &kr, row_scale_host, opts, &cb, &sd, err, errlen);
    if (!rc) {
        cudaError_t e = cu_rmsnorm(ws->hb, ws->hf, ws->x, cm->norm, T, c->hidden_size, c->norm_eps, cm->st);
        if (e != cudaSuccess) { snprintf(err, errlen, "CUDA error at %s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e)); rc = -1; }
    }
    if (!rc && opts->hidden) {
        cudaError_t e = cudaMemcpyAsync(opts->hidden, ws->hf, (size_t)T * c->hidden_size * sizeof(float),
                                        cudaMemcpyDeviceToHost, cm->st);
        if (e == cudaSuccess) e = cudaStreamSynchronize(cm->st);
        if (e != cudaSuccess) { snprintf(err, errlen, "CUDA error at %s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e)); rc = -1; }
    }
    if (!rc && (opts->logits || opts->nll)) rc = head_forward(cm, T, opts, err, errlen);
    if (!rc) {
        cudaError_t e = cudaStreamSynchronize(cm->st);
        if (e != cudaSuccess) { snprintf(err, errlen, "CUDA error at %s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e)); rc = -1; }
    }
    if (!rc && opts->progress) (void)opts->progress(opts->progress_ctx, 1.0);
    if (rc) cudaStreamSynchronize(cm->st);
    if (cu_stats_close(&sd, cm, rc == 0, err, errlen)) rc = -1;
    if (cu_maps_close(&sd, rc == 0, err, errlen)) rc = -1;
    free(row_scale_host);
    free(mask_host);
    cu_capture_free(&cb);
    return rc;
}
