/* Incremental decoding on the GPU: the CUDA counterpart of engine/decode.c, so greedy
 * generation costs one token's work per step instead of a forward of the whole sequence.
 *
 * Caches (one cudaMalloc, sized by max_tokens at decoder_new, zeroed; fp32):
 *   softmax mixers  post-rope K and V, [cap, Hkv*dk] and [cap, Hkv*dv], position s in row
 *                   s % cap; cap = the mixer's window when it has one shorter than max_tokens
 *                   (a ring), else max_tokens;
 *   gla/gdn         the recurrent state S [H][dv][dk] (a value channel's column contiguous,
 *                   so the one warp that owns it reads coalesced rows); with SWLA instead
 *                   rings of the last W positions' k, v and gates, and each step walks its
 *                   window's value path, o_t = sum_{lo<=s<=t} c_{t,s} v_s (what
 *                   cu_linattn_window does for the whole sequence);
 *   short conv      the last K-1 pre-convolution projections, oldest first.
 * Prefill runs the ordinary forward (cu_forward) with a mixer hook that fills the caches from
 * the workspace right after each mixer ran: K/V rows copied, the state by running the
 * recurrence over the prompt's k, v and gates (cu_linattn_state_run), the conv tails by
 * projecting the last K-1 rows of the layer's normed input again.
 * A step is the forward's sequence of launches for one row, with the same GEMM precision
 * (bf16 inputs, fp32 accumulation) and the same elementwise kernels at T = 1, so its logits
 * agree with the full forward of the longer sequence to bf16 tolerance. */
#include "cuda_model.cuh"
#include "check.cuh"
#include "kernels/cuda/kernels.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAUNCH(call) CUDA_CHECK(call)

typedef struct {
    int lin, H, Hkv, dk, dv, K;
    int window;                /* softmax: effective window, 0 = full causal */
    int cap;                   /* ring rows (softmax cache, SWLA history) */
    float *kc, *vc;            /* softmax */
    float *S;                  /* gla/gdn without SWLA */
    float *hk, *hv, *hg, *hbeta, *hla; /* gla/gdn with SWLA: hg (gla) or hbeta/hla (gdn) */
    float *cq, *ck, *cv;       /* short conv tails [K-1, C] (K > 1) */
} dec_mix;

struct hs_cuda_decoder {
    hs_cuda_model *cm;
    hs_knobs knobs;
    cu_knobs kn;
    int swla;                  /* SWLA of gla/gdn in effect (off when every window covers max_tokens) */
    int max_tokens, pos, broken;
    dec_mix mix[HS_MAX_LAYERS][2];
    /* one-token scratch */
    float *x, *q, *k, *v, *o, *g, *gk, *pre, *lr, *beta, *la, *gu, *logits, *att_part;
    bf16 *hb, *lrb, *mb, *ob;
    uint8_t *mask;             /* [total heads]; NULL when nothing is ablated */
    void *arena;
};

static size_t align_up(size_t n) { return (n + 255) / 256 * 256; }

/* Two passes over the same layout: the first (base NULL) only sums sizes. */
typedef struct {
    char *base;
    size_t off;
} carve;

static void *take(carve *c, size_t bytes) {
    size_t at = c->off;
    c->off += align_up(bytes ? bytes : 1);
    return c->base ? c->base + at : NULL;
}

static int max_i(int a, int b) { return a > b ? a : b; }

static void layout(hs_cuda_decoder *d, carve *c) {
    const hs_cuda_model *cm = d->cm;
    const hs_config *cfg = &cm->cfg;
    size_t dmod = (size_t)cfg->hidden_size, F = (size_t)cfg->intermediate_size, V = (size_t)cfg->vocab_size;
    size_t W = cm->width;
    int dv_max = 1;
    for (int l = 0; l < cfg->num_layers; l++)
        for (int j = 0; j < cfg->layers[l].n_mixers; j++) {
            dec_mix *dm = &d->mix[l][j];
            size_t cap = (size_t)dm->cap, ck = (size_t)dm->H * dm->dk, cv = (size_t)dm->H * dm->dv;
            dv_max = max_i(dv_max, dm->dv);
            if (!dm->lin) {
                dm->kc = (float *)take(c, cap * dm->Hkv * dm->dk * 4);
                dm->vc = (float *)take(c, cap * dm->Hkv * dm->dv * 4);
                continue;
            }
            if (d->swla) {
                dm->hk = (float *)take(c, cap * ck * 4);
                dm->hv = (float *)take(c, cap * cv * 4);
                if (cfg->layers[l].mixers[j].type == HS_GLA) {
                    dm->hg = (float *)take(c, cap * ck * 4);
                } else {
                    dm->hbeta = (float *)take(c, cap * dm->H * 4);
                    dm->hla = (float *)take(c, cap * dm->H * 4);
                }
            } else {
                dm->S = (float *)take(c, ck * dm->dv * 4);
            }
            if (dm->K > 1) {
                dm->cq = (float *)take(c, (size_t)(dm->K - 1) * ck * 4);
                dm->ck = (float *)take(c, (size_t)(dm->K - 1) * ck * 4);
                dm->cv = (float *)take(c, (size_t)(dm->K - 1) * cv * 4);
            }
        }
    d->x = (float *)take(c, dmod * 4);
    d->hb = (bf16 *)take(c, dmod * 2);
    d->q = (float *)take(c, W * 4);
    d->k = (float *)take(c, W * 4);
    d->v = (float *)take(c, W * 4);
    d->o = (float *)take(c, W * 4);
    d->g = (float *)take(c, W * 4);
    d->gk = (float *)take(c, W * 4);
    d->pre = (float *)take(c, W * 4);
    d->ob = (bf16 *)take(c, W * 2);
    d->lr = (float *)take(c, cm->rank * 4);
    d->lrb = (bf16 *)take(c, cm->rank * 2);
    d->beta = (float *)take(c, cm->hmax * 4);
    d->la = (float *)take(c, cm->hmax * 4);
    d->gu = (float *)take(c, 2 * F * 4);
    d->mb = (bf16 *)take(c, F * 2);
    d->logits = (float *)take(c, V * 4);
    d->att_part = (float *)take(c, cu_decode_attention_scratch_floats((int)cm->hmax, dv_max) * 4);
    d->mask = d->knobs.n_ablate > 0 ? (uint8_t *)take(c, (size_t)cm->total_heads) : NULL;
}

/* out[n, out_dim] (fp32, += when accumulate) = in[n, in_dim] (bf16) @ w[out_dim, in_dim]^T:
 * forward.cu's GEMM, restated (it is static there). One row (every step after the prefill)
 * goes to the warp-per-output kernel where its shape allows: cuBLAS at n = 1 costs more than
 * reading the weights. */
static int gemv_enabled(void) {
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("HS_CUDA_GEMV");
        v = !(e && !strcmp(e, "0"));   /* on unless HS_CUDA_GEMV=0 (cuBLAS for every step, to compare) */
    }
    return v;
}

static int gemm(hs_cuda_model *cm, float *out, const bf16 *in, const bf16 *w, int n, int in_dim, int out_dim,
                int accumulate, char *err, size_t errlen) {
    if (n == 1 && gemv_enabled() && in_dim % 8 == 0 && ((uintptr_t)in | (uintptr_t)w) % 16 == 0) {
        LAUNCH(cu_dec_gemv(out, in, w, in_dim, out_dim, accumulate, cm->st));
        return 0;
    }
    const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
    CUBLAS_CHECK(cublasGemmEx(cm->blas, CUBLAS_OP_T, CUBLAS_OP_N, out_dim, n, in_dim, &alpha, w, CUDA_R_16BF,
                              in_dim, in, CUDA_R_16BF, in_dim, &beta, out, CUDA_R_32F, out_dim, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
    return 0;
}

/* The head mask of the ablation knob (forward.cu builds the same one per forward). */
static int upload_mask(hs_cuda_decoder *d, char *err, size_t errlen) {
    const hs_cuda_model *cm = d->cm;
    const hs_config *c = &cm->cfg;
    uint8_t *host = (uint8_t *)malloc((size_t)cm->total_heads);
    if (!host) { snprintf(err, errlen, "decoder: out of host memory"); return -1; }
    memset(host, 1, (size_t)cm->total_heads);
    for (int i = 0; i < d->knobs.n_ablate; i++) {
        const hs_head_ref *r = &d->knobs.ablate[i];
        if (r->layer < 0 || r->layer >= c->num_layers || r->mixer < 0 || r->mixer >= c->layers[r->layer].n_mixers ||
            r->head < 0 || r->head >= c->layers[r->layer].mixers[r->mixer].num_heads) {
            snprintf(err, errlen, "--ablate %d.%d.%d: no such head", r->layer, r->mixer, r->head);
            free(host);
            return -1;
        }
        host[cm->mask_off[r->layer][r->mixer] + r->head] = 0;
    }
    /* on the model's stream (non-blocking: it does not wait for the legacy default stream) */
    cudaError_t e = cudaMemcpyAsync(d->mask, host, (size_t)cm->total_heads, cudaMemcpyHostToDevice, cm->st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(cm->st);
    free(host);
    CUDA_CHECK(e);
    return 0;
}

static int decoder_setup(hs_cuda_decoder *d, char *err, size_t errlen) {
    hs_cuda_model *cm = d->cm;
    const hs_config *c = &cm->cfg;
    if (cu_resolve_knobs(&d->kn, &d->knobs, c, err, errlen)) return -1;
    if (d->knobs.n_ablate < 0 || d->knobs.n_ablate > HS_MAX_ABLATE) {
        snprintf(err, errlen, "--ablate: bad head count");
        return -1;
    }
    /* windows that cover every position the decoder will hold are the plain recurrence */
    const long long T = d->max_tokens, W = d->kn.swla_window, S = d->kn.swla_stride;
    d->swla = d->kn.swla;
    if (d->swla == HS_SWLA_EXACT && W >= T) d->swla = HS_SWLA_OFF;
    if (d->swla == HS_SWLA_OVERLAP && ((T - 1) / S + 1) * S <= W) d->swla = HS_SWLA_OFF;
    for (int l = 0; l < c->num_layers; l++)
        for (int j = 0; j < c->layers[l].n_mixers; j++) {
            const hs_mixer_config *mc = &c->layers[l].mixers[j];
            dec_mix *dm = &d->mix[l][j];
            dm->lin = mc->type == HS_GLA || mc->type == HS_GDN;
            dm->H = mc->num_heads;
            dm->Hkv = mc->num_kv_heads > 0 ? mc->num_kv_heads : mc->num_heads;
            dm->dk = mc->head_k_dim;
            dm->dv = mc->head_v_dim;
            if (dm->dk > CU_MAX_HEAD_DIM || dm->dv > CU_MAX_HEAD_DIM || dm->Hkv < 1 || dm->H % dm->Hkv) {
                snprintf(err, errlen, "decoder: layer %d mixer %d has head dims %d/%d or heads %d/%d the GPU "
                         "decoder does not take (dims up to %d, heads a multiple of kv heads)",
                         l, j, dm->dk, dm->dv, dm->H, dm->Hkv, CU_MAX_HEAD_DIM);
                return -1;
            }
            if (dm->lin) {
                dm->K = mc->use_short_conv ? mc->conv_size : 0;
                dm->cap = d->swla ? (int)(W < T ? W : T) : 0;
            } else {
                dm->window = cu_mixer_window(&d->kn, mc);
                dm->cap = dm->window > 0 && dm->window < d->max_tokens ? dm->window : d->max_tokens;
            }
        }
    carve sizing = {NULL, 0};
    layout(d, &sizing);
    CUDA_CHECK(cudaSetDevice(cm->device));
    cudaError_t e = cudaMalloc(&d->arena, sizing.off);
    if (e != cudaSuccess) {
        d->arena = NULL;
        snprintf(err, errlen, "decoder: out of GPU memory for %d tokens (caches %zu MB): %s", d->max_tokens,
                 (sizing.off >> 20) + 1, cudaGetErrorString(e));
        return -1;
    }
    /* zero caches: a decoder stepped from position 0 without a prefill starts from S = 0 and
     * empty conv tails, as the forward does */
    CUDA_CHECK(cudaMemsetAsync(d->arena, 0, sizing.off, cm->st));
    carve place = {(char *)d->arena, 0};
    layout(d, &place);
    if (d->mask && upload_mask(d, err, errlen)) return -1;
    return 0;
}

hs_cuda_decoder *cu_decoder_new(hs_cuda_model *cm, const hs_knobs *k, int max_tokens, char *err, size_t errlen) {
    static const hs_knobs no_knobs = {};
    if (max_tokens < 1) {
        snprintf(err, errlen, "decoder: max_tokens must be at least 1");
        return NULL;
    }
    hs_cuda_decoder *d = (hs_cuda_decoder *)calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "decoder: out of host memory");
        return NULL;
    }
    d->cm = cm;
    d->knobs = k ? *k : no_knobs;
    d->max_tokens = max_tokens;
    if (decoder_setup(d, err, errlen)) {
        cu_decoder_free(d);
        return NULL;
    }
    return d;
}

void cu_decoder_free(hs_cuda_decoder *d) {
    if (!d) return;
    if (d->arena) {
        cudaStreamSynchronize(d->cm->st);
        cudaFree(d->arena);
    }
    free(d);
}

/* ---------------------------------------------------------------- prefill ---- */

/* Rows [max(0, T-cap), T) of src [T, width] to ring rows s % cap of dst. */
static int ring_put(float *dst, int cap, size_t width, const float *src, int T, cudaStream_t st, char *err,
                    size_t errlen) {
    const int s0 = T > cap ? T - cap : 0, a = s0 % cap;
    const int n1 = T - s0 < cap - a ? T - s0 : cap - a, n2 = T - s0 - n1;
    CUDA_CHECK(cudaMemcpyAsync(dst + (size_t)a * width, src + (size_t)s0 * width, (size_t)n1 * width * 4,
                               cudaMemcpyDeviceToDevice, st));
    if (n2 > 0)
        CUDA_CHECK(cudaMemcpyAsync(dst, src + (size_t)(s0 + n1) * width, (size_t)n2 * width * 4,
                                   cudaMemcpyDeviceToDevice, st));
    return 0;
}

/* The conv tail: the pre-convolution projections of the last K-1 rows of the layer's normed
 * input (still in ws.hb), zeros before position 0. */
static int conv_tail(hs_cuda_model *cm, float *hist, const bf16 *w, int C, int K, int T, char *err,
                     size_t errlen) {
    const int d = cm->cfg.hidden_size, n = T < K - 1 ? T : K - 1;
    CUDA_CHECK(cudaMemsetAsync(hist, 0, (size_t)(K - 1) * C * 4, cm->st));
    return gemm(cm, hist + (size_t)(K - 1 - n) * C, cm->ws.hb + (size_t)(T - n) * d, w, n, d, C, 0, err, errlen);
}

static int prefill_hook(void *ctx, int l, int j, int T, char *err, size_t errlen) {
    hs_cuda_decoder *d = (hs_cuda_decoder *)ctx;
    hs_cuda_model *cm = d->cm;
    const cu_workspace *ws = &cm->ws;
    const dec_mix *dm = &d->mix[l][j];
    const cu_mixer_w *w = &cm->layers[l].mix[j];
    const size_t ck = (size_t)dm->H * dm->dk, cv = (size_t)dm->H * dm->dv;
    if (!dm->lin)
        return ring_put(dm->kc, dm->cap, (size_t)dm->Hkv * dm->dk, ws->k, T, cm->st, err, errlen) ||
               ring_put(dm->vc, dm->cap, (size_t)dm->Hkv * dm->dv, ws->v, T, cm->st, err, errlen);
    const int gla = cm->cfg.layers[l].mixers[j].type == HS_GLA;
    if (d->swla) {
        if (ring_put(dm->hk, dm->cap, ck, ws->k, T, cm->st, err, errlen) ||
            ring_put(dm->hv, dm->cap, cv, ws->v, T, cm->st, err, errlen))
            return -1;
        if (gla && ring_put(dm->hg, dm->cap, ck, ws->gk, T, cm->st, err, errlen)) return -1;
        if (!gla && (ring_put(dm->hbeta, dm->cap, (size_t)dm->H, ws->beta, T, cm->st, err, errlen) ||
                     ring_put(dm->hla, dm->cap, (size_t)dm->H, ws->la, T, cm->st, err, errlen)))
            return -1;
    } else {
        LAUNCH(cu_linattn_state_run(dm->S, NULL, NULL, ws->k, ws->v, gla ? ws->gk : NULL, gla ? NULL : ws->beta,
                                    gla ? NULL : ws->la, T, dm->H, dm->dk, dm->dv, 0, cm->st));
    }
    if (dm->K > 1 &&
        (conv_tail(cm, dm->cq, w->q, (int)ck, dm->K, T, err, errlen) ||
         conv_tail(cm, dm->ck, w->k, (int)ck, dm->K, T, err, errlen) ||
         conv_tail(cm, dm->cv, w->v, (int)cv, dm->K, T, err, errlen)))
        return -1;
    return 0;
}

int cu_decoder_prefill(hs_cuda_decoder *d, const int32_t *tokens, int n, float *logits,
                       const hs_forward_opts *opts, char *err, size_t errlen) {
    hs_cuda_model *cm = d->cm;
    if (d->pos != 0 || d->broken) {
        snprintf(err, errlen, "decoder: prefill must come first, on a fresh decoder");
        return -1;
    }
    if (n < 1 || n > d->max_tokens) {
        snprintf(err, errlen, "decoder: prompt of %d tokens does not fit %d", n, d->max_tokens);
        return -1;
    }
    hs_forward_opts o;
    memset(&o, 0, sizeof o);
    o.logits = logits;
    o.n_logit_rows = logits ? 1 : 0;
    if (opts) {
        o.progress = opts->progress;
        o.progress_ctx = opts->progress_ctx;
    }
    cm->mixer_hook = prefill_hook;
    cm->mixer_hook_ctx = d;
    int rc = cu_forward(cm, tokens, n, &d->knobs, &o, err, errlen);
    cm->mixer_hook = NULL;
    cm->mixer_hook_ctx = NULL;
    if (rc) {
        d->broken = 1;
        return rc;
    }
    d->pos = n;
    return 0;
}

/* ------------------------------------------------------------------- step ---- */

/* A gla/gdn projection for one row: GEMM, then the conv step and silu where the mixer has
 * them (forward.cu's project_conv). */
static int project_step(hs_cuda_decoder *d, float *dst, const bf16 *w, float *hist, const float *conv, int C,
                        int K, int silu, char *err, size_t errlen) {
    hs_cuda_model *cm = d->cm;
    const int dm = cm->cfg.hidden_size;
    if (!conv && !silu) return gemm(cm, dst, d->hb, w, 1, dm, C, 0, err, errlen);
    if (gemm(cm, d->pre, d->hb, w, 1, dm, C, 0, err, errlen)) return -1;
    LAUNCH(cu_conv_step(dst, hist, d->pre, conv, C, K, silu, cm->st));
    return 0;
}

static int softmax_step(hs_cuda_decoder *d, int l, int j, int t, char *err, size_t errlen) {
    hs_cuda_model *cm = d->cm;
    const hs_mixer_config *mc = &cm->cfg.layers[l].mixers[j];
    const cu_mixer_w *w = &cm->layers[l].mix[j];
    const dec_mix *dm = &d->mix[l][j];
    const int dmod = cm->cfg.hidden_size, H = dm->H, Hkv = dm->Hkv, dk = dm->dk, dv = dm->dv;
    const size_t slot = (size_t)(t % dm->cap);
    float *kr = dm->kc + slot * Hkv * dk, *vr = dm->vc + slot * Hkv * dv;
    if (gemm(cm, d->q, d->hb, w->q, 1, dmod, H * dk, 0, err, errlen) ||
        gemm(cm, kr, d->hb, w->k, 1, dmod, Hkv * dk, 0, err, errlen) ||
        gemm(cm, vr, d->hb, w->v, 1, dmod, Hkv * dv, 0, err, errlen))
        return -1;
    if (mc->type == HS_ROPE || mc->type == HS_SWA) {
        LAUNCH(cu_rope_at(d->q, t, H, dk, mc->rope_theta, cm->st));
        LAUNCH(cu_rope_at(kr, t, Hkv, dk, mc->rope_theta, cm->st));
    }
    const int lo = dm->window > 0 && t - dm->window + 1 > 0 ? t - dm->window + 1 : 0;
    /* the row factor c_t as forward.cu computes it, and attention.cu's q scaling */
    float rs = 1.0f;
    if (mc->type == HS_NOPE && d->kn.log_L0 > 0) {
        double v = log((double)t + 1.0) / d->kn.log_L0;
        rs = v > 1.0 ? (float)v : 1.0f;
    }
    const float qscale = 1.0f / sqrtf((float)dk) * rs;
    LAUNCH(cu_decode_attention(d->o, d->q, dm->kc, dm->vc, dm->cap, lo, t, H, Hkv, dk, dv, qscale, d->att_part,
                               cm->st));
    return 0;
}

/* First visible source position of query t under SWLA (model-spec section 6). */
static int swla_start(const cu_knobs *kn, int t) {
    long long lo = kn->swla == HS_SWLA_EXACT ? (long long)t - kn->swla_window + 1
                                             : ((long long)(t / kn->swla_stride) + 1) * kn->swla_stride - kn->swla_window;
    return lo > 0 ? (int)lo : 0;
}

static int linear_step(hs_cuda_decoder *d, int l, int j, int t, char *err, size_t errlen) {
    hs_cuda_model *cm = d->cm;
    const hs_mixer_config *mc = &cm->cfg.layers[l].mixers[j];
    const cu_mixer_w *w = &cm->layers[l].mix[j];
    const dec_mix *dm = &d->mix[l][j];
    const int dmod = cm->cfg.hidden_size, H = dm->H, dk = dm->dk, dv = dm->dv, K = dm->K;
    const int gla = mc->type == HS_GLA, silu = gla ? mc->use_short_conv : 1;
    /* with SWLA this position's k, v and gates go straight into the history rings */
    const size_t slot = d->swla ? (size_t)(t % dm->cap) : 0;
    float *kp = d->swla ? dm->hk + slot * H * dk : d->k, *vp = d->swla ? dm->hv + slot * H * dv : d->v;
    float *gp = d->swla && gla ? dm->hg + slot * H * dk : d->gk;
    float *bp = d->swla && !gla ? dm->hbeta + slot * H : d->beta, *lp = d->swla && !gla ? dm->hla + slot * H : d->la;
    if (project_step(d, d->q, w->q, dm->cq, K ? w->q_conv : NULL, H * dk, K, silu, err, errlen) ||
        project_step(d, kp, w->k, dm->ck, K ? w->k_conv : NULL, H * dk, K, silu, err, errlen) ||
        project_step(d, vp, w->v, dm->cv, K ? w->v_conv : NULL, H * dv, K, silu, err, errlen))
        return -1;
    if (gla) {
        const int r = mc->gate_low_rank_dim;
        if (gemm(cm, d->lr, d->hb, w->gk0, 1, dmod, r, 0, err, errlen)) return -1;
        LAUNCH(cu_to_bf16(d->lrb, d->lr, (size_t)r, cm->st));
        if (gemm(cm, gp, d->lrb, w->gk1, 1, r, H * dk, 0, err, errlen)) return -1;
        LAUNCH(cu_gla_gate(gp, w->gk_bias, 1, H * dk, mc->gate_logit_normalizer, cm->st));
    } else {
        LAUNCH(cu_l2norm_heads(d->q, 1, H, dk, 1e-6f, cm->st));
        LAUNCH(cu_l2norm_heads(kp, 1, H, dk, 1e-6f, cm->st));
        if (gemm(cm, bp, d->hb, w->b, 1, dmod, H, 0, err, errlen) ||
            gemm(cm, lp, d->hb, w->a, 1, dmod, H, 0, err, errlen))
            return -1;
        LAUNCH(cu_gdn_gates(bp, lp, w->A_log, w->dt_bias, 1, H, mc->allow_neg_eigval ? 2.0f : 1.0f, cm->st));
    }
    if (d->swla)
        LAUNCH(cu_linattn_window_step(d->o, d->q, dm->hk, dm->hv, gla ? dm->hg : NULL, gla ? NULL : dm->hbeta,
                                      gla ? NULL : dm->hla, dm->cap, t, swla_start(&d->kn, t), H, dk, dv, cm->st));
    else
        LAUNCH(cu_linattn_state_run(dm->S, d->o, d->q, kp, vp, gla ? gp : NULL, gla ? NULL : bp, gla ? NULL : lp, 1,
                                    H, dk, dv, 1, cm->st));
    return gemm(cm, d->g, d->hb, w->g, 1, dmod, H * dv, 0, err, errlen);
}

static int step_layers(hs_cuda_decoder *d, int32_t token, int t, char *err, size_t errlen) {
    hs_cuda_model *cm = d->cm;
    const hs_config *c = &cm->cfg;
    const int dmod = c->hidden_size, F = c->intermediate_size;
    LAUNCH(cu_embed_token(d->x, cm->embed, token, dmod, cm->st));
    for (int l = 0; l < c->num_layers; l++) {
        const cu_layer_w *lw = &cm->layers[l];
        /* both mixers of an HH layer read the same normed h; their projections add into x */
        LAUNCH(cu_rmsnorm(d->hb, NULL, d->x, lw->attn_norm, 1, dmod, c->norm_eps, cm->st));
        for (int j = 0; j < c->layers[l].n_mixers; j++) {
            const hs_mixer_config *mc = &c->layers[l].mixers[j];
            const dec_mix *dm = &d->mix[l][j];
            if (dm->lin ? linear_step(d, l, j, t, err, errlen) : softmax_step(d, l, j, t, err, errlen)) return -1;
            const uint8_t *mask = d->mask ? d->mask + cm->mask_off[l][j] : NULL;
            LAUNCH(cu_head_norm_gate(d->ob, d->o, dm->lin ? d->g : NULL, dm->lin ? lw->mix[j].g_norm : NULL, mask, 1,
                                     dm->H, dm->dv, mc->norm_eps, cm->st));
            if (gemm(cm, d->x, d->ob, lw->mix[j].o, 1, dm->H * dm->dv, dmod, 1, err, errlen)) return -1;
        }
        LAUNCH(cu_rmsnorm(d->hb, NULL, d->x, lw->mlp_norm, 1, dmod, c->norm_eps, cm->st));
        if (gemm(cm, d->gu, d->hb, lw->gate_up, 1, dmod, 2 * F, 0, err, errlen)) return -1;
        LAUNCH(cu_swiglu(d->mb, d->gu, 1, F, cm->st));
        if (gemm(cm, d->x, d->mb, lw->down, 1, F, dmod, 1, err, errlen)) return -1;
    }
    LAUNCH(cu_rmsnorm(d->hb, NULL, d->x, cm->norm, 1, dmod, c->norm_eps, cm->st));
    return gemm(cm, d->logits, d->hb, cm->lm_head, 1, dmod, c->vocab_size, 0, err, errlen);
}

int cu_decoder_step(hs_cuda_decoder *d, int32_t token, float *logits, char *err, size_t errlen) {
    hs_cuda_model *cm = d->cm;
    const int t = d->pos, V = cm->cfg.vocab_size;
    if (d->broken) {
        snprintf(err, errlen, "decoder: an earlier call failed; its caches are not usable");
        return -1;
    }
    if (t >= d->max_tokens) {
        snprintf(err, errlen, "decoder: full (%d tokens)", d->max_tokens);
        return -1;
    }
    if (token < 0 || token >= V) {
        snprintf(err, errlen, "decoder: token %d is outside the vocabulary [0, %d)", token, V);
        return -1;
    }
    CUDA_CHECK(cudaSetDevice(cm->device));
    /* a failure part-way leaves some caches a position ahead of others */
    d->broken = 1;
    if (step_layers(d, token, t, err, errlen)) {
        cudaStreamSynchronize(cm->st);
        return -1;
    }
    if (logits)
        CUDA_CHECK(cudaMemcpyAsync(logits, d->logits, (size_t)V * sizeof(float), cudaMemcpyDeviceToHost, cm->st));
    CUDA_CHECK(cudaStreamSynchronize(cm->st));
    d->broken = 0;
    d->pos = t + 1;
    return 0;
}
