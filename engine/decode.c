/* Incremental decoding (model-spec sections 4 and 6).
 *
 * Prefill (decode_prefill.c) runs the layers over the whole prompt with hs_mixer_forward and
 * fills the caches from each mixer's capture hook:
 *   softmax mixers  K/V cache (after rope), a ring of `window` slots for windowed heads;
 *   gla/gdn         the recurrent state S (dk x dv per head, double) when SWLA is off, and a
 *                   ring of the last W positions' k, v and gates when SWLA is on: a windowed
 *                   query then sums its value path o_t = sum_{lo<=s<=t} c_{t,s} v_s exactly
 *                   (exact: lo = t-W+1; overlap: the block start of spec section 6), which is
 *                   the same as restarting the recurrence there;
 *   short conv      the last K-1 pre-convolution projections (the conv is never restarted).
 * A step then costs O(window * d) for softmax/SWLA mixers and O(dk * dv) per gla/gdn head.
 * Log scaling uses the absolute position of the query. */
#include "decode.h"
#include "decode_internal.h"
#include "kernels/cpu/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *dalloc(hs_decoder *d, size_t bytes) {
    if (d->n_allocs >= (int)(sizeof d->allocs / sizeof d->allocs[0])) return NULL;
    void *p = calloc(1, bytes ? bytes : 1);
    if (p) d->allocs[d->n_allocs++] = p;
    return p;
}

/* Per-mixer buffers are many and small; they get their own calloc each. */
static void *mix_alloc(size_t n, size_t size) { return calloc(n ? n : 1, size); }

static double softplus_d(double x) { return (x > 0 ? x : 0) + log1p(exp(-fabs(x))); }
static double sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }

static int max_i(int a, int b) { return a > b ? a : b; }

static void free_mixer(dec_mixer *dm) {
    free(dm->kc); free(dm->vc); free(dm->state); free(dm->hk); free(dm->hv);
    free(dm->hdec); free(dm->halpha); free(dm->hbeta); free(dm->cq); free(dm->ck); free(dm->cv);
    memset(dm, 0, sizeof *dm);
}

void hs_dec_hist_put(dec_mixer *dm, int s, const float *k, const float *v, const float *gk,
                     const float *beta, const float *log_alpha) {
    size_t slot = (size_t)(s % dm->hcap), H = (size_t)dm->H, dk = (size_t)dm->dk, dv = (size_t)dm->dv;
    for (size_t h = 0; h < H; h++) {
        size_t row = h * (size_t)dm->hcap + slot;
        memcpy(dm->hk + row * dk, k + h * dk, dk * sizeof(float));
        if (dm->hv) memcpy(dm->hv + row * dv, v + h * dv, dv * sizeof(float));
        if (gk) {
            for (size_t i = 0; i < dk; i++) dm->hdec[row * dk + i] = (float)exp((double)gk[h * dk + i]);
        } else {
            dm->halpha[row] = exp((double)log_alpha[h]);
            dm->hbeta[row] = beta[h];
        }
    }
}

void hs_decoder_free(hs_decoder *d) {
    if (!d) return;
    for (int l = 0; l < d->m->cfg.num_layers; l++)
        for (int i = 0; i < 2; i++) free_mixer(&d->mix[l][i]);
    for (int i = 0; i < d->n_allocs; i++) free(d->allocs[i]);
    free(d);
}

static int setup_mixer(hs_decoder *d, dec_mixer *dm, const hs_mixer_config *mc,
                       const hs_mixer_weights *w) {
    dm->mc = mc; dm->w = w;
    dm->H = mc->num_heads;
    dm->Hkv = mc->num_kv_heads > 0 ? mc->num_kv_heads : mc->num_heads;
    dm->dk = mc->head_k_dim; dm->dv = mc->head_v_dim;
    size_t H = (size_t)dm->H, dk = (size_t)dm->dk, dv = (size_t)dm->dv;
    if (hs_mixer_is_softmax(mc->type)) {
        dm->window = hs_knobs_mixer_window(&d->kr, mc);
        dm->cap = dm->window > 0 && dm->window < d->max_tokens ? dm->window : d->max_tokens;
        dm->kc = mix_alloc((size_t)dm->cap * dm->Hkv * dk, sizeof(float));
        dm->vc = mix_alloc((size_t)dm->cap * dm->Hkv * dv, sizeof(float));
        return dm->kc && dm->vc ? 0 : -1;
    }
    if (d->kr.swla == HS_SWLA_OFF) {
        dm->state = mix_alloc(H * dk * dv, sizeof(double));
        if (!dm->state) return -1;
    }
    if (d->keep_history) dm->hcap = d->max_tokens;
    else if (d->kr.swla != HS_SWLA_OFF)
        dm->hcap = d->kr.swla_window < d->max_tokens ? d->kr.swla_window : d->max_tokens;
    if (dm->hcap) {
        dm->hk = mix_alloc((size_t)dm->hcap * H * dk, sizeof(float));
        /* values are read only by the windowed value path; the recurrent state has them */
        if (d->kr.swla != HS_SWLA_OFF) {
            dm->hv = mix_alloc((size_t)dm->hcap * H * dv, sizeof(float));
            if (!dm->hv) return -1;
        }
        if (mc->type == HS_GLA) {
            dm->hdec = mix_alloc((size_t)dm->hcap * H * dk, sizeof(float));
            if (!dm->hdec) return -1;
        } else {
            dm->halpha = mix_alloc((size_t)dm->hcap * H, sizeof(double));
            dm->hbeta = mix_alloc((size_t)dm->hcap * H, sizeof(float));
            if (!dm->halpha || !dm->hbeta) return -1;
        }
        if (!dm->hk) return -1;
    }
    if (mc->use_short_conv && mc->conv_size >= 1) {
        dm->K = mc->conv_size;
        dm->cq = mix_alloc((size_t)(dm->K - 1) * H * dk, sizeof(float));
        dm->ck = mix_alloc((size_t)(dm->K - 1) * H * dk, sizeof(float));
        dm->cv = mix_alloc((size_t)(dm->K - 1) * H * dv, sizeof(float));
        if (!dm->cq || !dm->ck || !dm->cv) return -1;
    }
    return 0;
}

hs_decoder *hs_dec_new(const hs_model *m, const hs_knobs *k, int max_tokens,
                               int keep_history, char *err, size_t errlen) {
    const hs_config *c = &m->cfg;
    if (max_tokens < 1) { snprintf(err, errlen, "decoder: max_tokens must be at least 1"); return NULL; }
    hs_knobs none;
    memset(&none, 0, sizeof none);
    if (!k) k = &none;
    if (hs_knobs_validate(k, c, err, errlen)) return NULL;
    hs_decoder *d = calloc(1, sizeof *d);
    if (!d) { snprintf(err, errlen, "decoder: out of memory"); return NULL; }
    d->m = m;
    d->knobs = *k;
    hs_knobs_resolve(&d->kr, k, c);
    d->max_tokens = max_tokens;
    d->keep_history = keep_history;
    int wide = c->hidden_size, wide_k = 1, r = 1;
    for (int l = 0; l < c->num_layers; l++)
        for (int i = 0; i < c->layers[l].n_mixers; i++) {
            const hs_mixer_config *mc = &c->layers[l].mixers[i];
            wide = max_i(wide, mc->num_heads * max_i(mc->head_k_dim, mc->head_v_dim));
            wide_k = max_i(wide_k, mc->num_heads);
            r = max_i(r, mc->gate_low_rank_dim);
        }
    size_t D = (size_t)c->hidden_size, F = (size_t)c->intermediate_size;
    d->x = dalloc(d, D * 4); d->h = dalloc(d, D * 4); d->y = dalloc(d, D * 4);
    d->ffn_a = dalloc(d, F * 4); d->ffn_b = dalloc(d, F * 4);
    d->q = dalloc(d, (size_t)wide * 4); d->k = dalloc(d, (size_t)wide * 4);
    d->v = dalloc(d, (size_t)wide * 4); d->g = dalloc(d, (size_t)wide * 4);
    d->o = dalloc(d, (size_t)wide * 4); d->gk = dalloc(d, (size_t)wide * 4);
    d->lowrank = dalloc(d, (size_t)r * 4);
    d->beta = dalloc(d, (size_t)wide_k * 4); d->log_alpha = dalloc(d, (size_t)wide_k * 4);
    d->c = dalloc(d, (size_t)max_tokens * sizeof(double));
    d->ks = dalloc(d, (size_t)wide * sizeof(double));
    d->cbuf = dalloc(d, (size_t)wide_k * max_tokens * sizeof(double));
    d->dist = dalloc(d, (size_t)max_tokens * sizeof(float));
    int ok = d->x && d->h && d->y && d->ffn_a && d->ffn_b && d->q && d->k && d->v && d->g &&
             d->o && d->gk && d->lowrank && d->beta && d->log_alpha && d->c && d->ks && d->cbuf && d->dist;
    for (int l = 0; ok && l < c->num_layers; l++)
        for (int i = 0; ok && i < c->layers[l].n_mixers; i++)
            if (setup_mixer(d, &d->mix[l][i], &c->layers[l].mixers[i], &m->layers[l].mix[i])) ok = 0;
    if (!ok) {
        hs_decoder_free(d);
        snprintf(err, errlen, "decoder: out of memory for %d tokens", max_tokens);
        return NULL;
    }
    return d;
}

hs_decoder *hs_decoder_new(const hs_model *m, const hs_knobs *k, int max_tokens,
                           char *err, size_t errlen) {
    return hs_dec_new(m, k, max_tokens, 0, err, errlen);
}

hs_decoder *hs_decoder_new_ex(const hs_model *m, const hs_knobs *k, int max_tokens,
                              int keep_history, char *err, size_t errlen) {
    return hs_dec_new(m, k, max_tokens, keep_history, err, errlen);
}

int hs_decoder_position(const hs_decoder *d) { return d->pos; }

/* ------------------------------------------------------------------- step ---- */

/* Causal depthwise conv of one new row x [C] against the history (then shifted in). */
static void conv_step(float *x, float *hist, const float *w, int C, int K) {
    for (int ch = 0; ch < C; ch++) {
        double u = (double)w[(size_t)ch * K + K - 1] * x[ch];
        for (int j = 0; j < K - 1; j++) u += (double)w[(size_t)ch * K + j] * hist[(size_t)j * C + ch];
        if (K > 1) {
            for (int j = 0; j < K - 2; j++) hist[(size_t)j * C + ch] = hist[(size_t)(j + 1) * C + ch];
            hist[(size_t)(K - 2) * C + ch] = x[ch];
        }
        x[ch] = (float)u;
    }
}

static void emit_dist(hs_decoder *d, const double *c, int layer, int mixer, int head, int t,
                      int lo, hs_decode_head_fn fn, void *ctx) {
    for (int s = 0; s <= t; s++) d->dist[s] = s < lo ? 0.0f : (float)c[s];
    fn(ctx, layer, mixer, head, t, d->dist);
}

/* o[0..dv) = sum_{s in [lo, t]} c_s v_s over a ring of `cap` rows of width `stride`. */
static void ring_weighted_sum(float *o, const double *c, const float *ring, int cap, size_t stride,
                              size_t off, int lo, int t, int dv, double *acc) {
    for (int j = 0; j < dv; j++) acc[j] = 0;
    size_t slot = (size_t)(lo % cap);
    for (int s = lo; s <= t; s++) {
        const float *v = ring + slot * stride + off;
        double w = c[s];
        for (int j = 0; j < dv; j++) acc[j] += w * v[j];
        slot = slot + 1 == (size_t)cap ? 0 : slot + 1;
    }
    for (int j = 0; j < dv; j++) o[j] = (float)acc[j];
}

static void softmax_step(hs_decoder *d, dec_mixer *dm, int layer, int mixer, int t,
                         hs_decode_head_fn fn, void *ctx) {
    const hs_mixer_config *mc = dm->mc;
    int D = d->m->cfg.hidden_size, H = dm->H, Hkv = dm->Hkv, dk = dm->dk, dv = dm->dv;
    matmul_forward(d->q, d->h, dm->w->q_proj, 1, D, H * dk);
    matmul_forward(d->k, d->h, dm->w->k_proj, 1, D, Hkv * dk);
    matmul_forward(d->v, d->h, dm->w->v_proj, 1, D, Hkv * dv);
    if (mc->type == HS_ROPE || mc->type == HS_SWA) {
        rope_forward(d->q, 1, H, dk, mc->rope_theta, t);
        rope_forward(d->k, 1, Hkv, dk, mc->rope_theta, t);
    }
    int slot = t % dm->cap;
    memcpy(dm->kc + (size_t)slot * Hkv * dk, d->k, sizeof(float) * Hkv * dk);
    memcpy(dm->vc + (size_t)slot * Hkv * dv, d->v, sizeof(float) * Hkv * dv);
    int lo = dm->window > 0 ? max_i(0, t - dm->window + 1) : 0;
    double scale = (mc->type == HS_NOPE ? (double)hs_knobs_log_scale(&d->kr, t) : 1.0) / sqrt((double)dk);
    int group = H / Hkv;
    for (int h = 0; h < H; h++) {
        int kvh = h / group;
        const float *q = d->q + (size_t)h * dk;
        double mx = -INFINITY;
        size_t slot = (size_t)(lo % dm->cap);
        for (int s = lo; s <= t; s++) {
            const float *k = dm->kc + slot * Hkv * dk + (size_t)kvh * dk;
            double dot = 0;
            for (int i = 0; i < dk; i++) dot += (double)q[i] * k[i];
            d->c[s] = scale * dot;
            if (d->c[s] > mx) mx = d->c[s];
            slot = slot + 1 == (size_t)dm->cap ? 0 : slot + 1;
        }
        double sum = 0;
        for (int s = lo; s <= t; s++) { d->c[s] = exp(d->c[s] - mx); sum += d->c[s]; }
        for (int s = lo; s <= t; s++) d->c[s] /= sum;
        float *o = d->o + (size_t)h * dv;
        ring_weighted_sum(o, d->c, dm->vc, dm->cap, (size_t)Hkv * dv, (size_t)kvh * dv, lo, t, dv, d->ks);
        if (fn) emit_dist(d, d->c, layer, mixer, h, t, lo, fn, ctx);
        if (hs_knobs_is_ablated(&d->knobs, layer, mixer, h)) memset(o, 0, sizeof(float) * dv);
    }
    matmul_accumulate(d->y, d->o, dm->w->o_proj, 1, H * dv, D);
}

/* First visible source position of query t for gla/gdn under SWLA. */
static int swla_start(const hs_knobs_resolved *kr, int t) {
    long long lo = 0;
    if (kr->swla == HS_SWLA_EXACT) lo = (long long)t - kr->swla_window + 1;
    else if (kr->swla == HS_SWLA_OVERLAP)
        lo = ((long long)(t / kr->swla_stride) + 1) * kr->swla_stride - kr->swla_window;
    return lo > 0 ? (int)lo : 0;
}

/* r . k with four independent partial sums (the sweep is latency-bound otherwise). */
static double dot_df(const double *r, const float *k, int n) {
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        a0 += r[i] * k[i];
        a1 += r[i + 1] * k[i + 1];
        a2 += r[i + 2] * k[i + 2];
        a3 += r[i + 3] * k[i + 3];
    }
    for (; i < n; i++) a0 += r[i] * k[i];
    return (a0 + a1) + (a2 + a3);
}

/* c_{t,s} for s in [lo, t] into c[] from the history ring (backward sweep, spec section 4). */
static void value_path_weights(double *c, const dec_mixer *dm, int h, int t, int lo, const float *q) {
    int dk = dm->dk;
    double r[HS_ANALYSIS_MAX_DK];
    double inv = 1.0 / sqrt((double)dk);
    for (int i = 0; i < dk; i++) r[i] = q[i] * inv;
    size_t base = (size_t)h * dm->hcap, slot = (size_t)(t % dm->hcap);
    for (int s = t; s >= lo; s--) {
        size_t row = base + slot;
        const float *k = dm->hk + row * dk;
        double dot = dot_df(r, k, dk);
        if (dm->mc->type == HS_GLA) {
            c[s] = dot;
            const float *dec = dm->hdec + row * dk;
            for (int i = 0; i < dk; i++) {
                double x = r[i] * dec[i];
                r[i] = fabs(x) < HS_SWEEP_TINY ? 0.0 : x;   /* no denormals: they are slow */
            }
        } else {
            double bd = dm->hbeta[row] * dot, alpha = dm->halpha[row];
            c[s] = bd;
            for (int i = 0; i < dk; i++) {
                double x = alpha * (r[i] - bd * k[i]);
                r[i] = fabs(x) < HS_SWEEP_TINY ? 0.0 : x;
            }
        }
        slot = slot ? slot - 1 : (size_t)dm->hcap - 1;
    }
}

static void linear_step(hs_decoder *d, dec_mixer *dm, int layer, int mixer, int t,
                        hs_decode_head_fn fn, void *ctx) {
    const hs_mixer_config *mc = dm->mc;
    const hs_mixer_weights *w = dm->w;
    int D = d->m->cfg.hidden_size, H = dm->H, dk = dm->dk, dv = dm->dv;
    matmul_forward(d->q, d->h, w->q_proj, 1, D, H * dk);
    matmul_forward(d->k, d->h, w->k_proj, 1, D, H * dk);
    matmul_forward(d->v, d->h, w->v_proj, 1, D, H * dv);
    if (dm->K) {
        conv_step(d->q, dm->cq, w->q_conv, H * dk, dm->K);
        conv_step(d->k, dm->ck, w->k_conv, H * dk, dm->K);
        conv_step(d->v, dm->cv, w->v_conv, H * dv, dm->K);
    }
    if (mc->type == HS_GDN || mc->use_short_conv) {
        silu_forward(d->q, d->q, (size_t)H * dk);
        silu_forward(d->k, d->k, (size_t)H * dk);
        silu_forward(d->v, d->v, (size_t)H * dv);
    }
    if (mc->type == HS_GLA) {
        int r = mc->gate_low_rank_dim;
        matmul_forward(d->lowrank, d->h, w->gk_proj0, 1, D, r);
        matmul_forward(d->gk, d->lowrank, w->gk_proj1, 1, r, H * dk);
        for (int i = 0; i < H * dk; i++) {
            double z = (double)d->gk[i] + w->gk_bias[i];
            d->gk[i] = (float)(-softplus_d(-z) / mc->gate_logit_normalizer);
        }
    } else {
        l2norm_heads_forward(d->q, 1, H, dk, 1e-6f);
        l2norm_heads_forward(d->k, 1, H, dk, 1e-6f);
        matmul_forward(d->beta, d->h, w->b_proj, 1, D, H);
        matmul_forward(d->log_alpha, d->h, w->a_proj, 1, D, H);
        for (int h = 0; h < H; h++) {
            double b = sigmoid_d(d->beta[h]);
            d->beta[h] = (float)(mc->allow_neg_eigval ? 2.0 * b : b);
            double a = -exp((double)w->A_log[h]) * softplus_d((double)d->log_alpha[h] + w->dt_bias[h]);
            d->log_alpha[h] = (float)a;
        }
    }
    if (dm->hcap)
        hs_dec_hist_put(dm, t, d->k, d->v, mc->type == HS_GLA ? d->gk : NULL, d->beta, d->log_alpha);
    double inv = 1.0 / sqrt((double)dk);
    for (int h = 0; h < H; h++) {
        const float *q = d->q + (size_t)h * dk, *k = d->k + (size_t)h * dk, *v = d->v + (size_t)h * dv;
        float *o = d->o + (size_t)h * dv;
        int lo = swla_start(&d->kr, t);
        if (dm->state) {
            double *S = dm->state + (size_t)h * dk * dv;
            if (mc->type == HS_GLA) {
                for (int i = 0; i < dk; i++) {
                    double a = exp((double)d->gk[(size_t)h * dk + i]);
                    double *row = S + (size_t)i * dv;
                    for (int j = 0; j < dv; j++) row[j] = a * row[j] + (double)k[i] * v[j];
                }
            } else {
                double beta = d->beta[h], alpha = exp((double)d->log_alpha[h]);
                double *ks = d->ks;
                for (int j = 0; j < dv; j++) {
                    double acc = 0;
                    for (int i = 0; i < dk; i++) acc += (double)k[i] * S[(size_t)i * dv + j];
                    ks[j] = acc;
                }
                for (int i = 0; i < dk; i++) {
                    double *row = S + (size_t)i * dv;
                    for (int j = 0; j < dv; j++)
                        row[j] = alpha * (row[j] - beta * k[i] * ks[j]) + beta * k[i] * v[j];
                }
            }
            for (int j = 0; j < dv; j++) {
                double acc = 0;
                for (int i = 0; i < dk; i++) acc += (double)q[i] * S[(size_t)i * dv + j];
                o[j] = (float)(acc * inv);
            }
        } else {
            value_path_weights(d->c, dm, h, t, lo, q);
            ring_weighted_sum(o, d->c, dm->hv + (size_t)h * dm->hcap * dv, dm->hcap, (size_t)dv, 0,
                              lo, t, dv, d->ks);
        }
    }
    if (fn) {
        /* a~ of every head: independent sweeps over the history, one thread per head. */
        int lo = swla_start(&d->kr, t);
#pragma omp parallel for schedule(dynamic, 1) if (H > 1 && (long long)(t - lo) * dk > (1 << 16))
        for (int h = 0; h < H; h++) {
            double *c = d->cbuf + (size_t)h * d->max_tokens;
            value_path_weights(c, dm, h, t, lo, d->q + (size_t)h * dk);
            double sum = 0;
            for (int s = lo; s <= t; s++) { c[s] = fabs(c[s]); sum += c[s]; }
            for (int s = lo; s <= t; s++) c[s] = sum > 0 ? c[s] / sum : 0.0;
        }
        for (int h = 0; h < H; h++)
            emit_dist(d, d->cbuf + (size_t)h * d->max_tokens, layer, mixer, h, t, lo, fn, ctx);
    }
    /* per head: rms(o, norm) * silu(h Wg^T), then ablation, then the output projection */
    matmul_forward(d->g, d->h, w->g_proj, 1, D, H * dv);
    rmsnorm_forward(d->o, d->o, w->g_norm, H, dv, mc->norm_eps);
    for (int i = 0; i < H * dv; i++) {
        double g = d->g[i];
        d->o[i] = (float)((double)d->o[i] * (g / (1.0 + exp(-g))));
    }
    for (int h = 0; h < H; h++)
        if (hs_knobs_is_ablated(&d->knobs, layer, mixer, h)) memset(d->o + (size_t)h * dv, 0, sizeof(float) * dv);
    matmul_accumulate(d->y, d->o, w->o_proj, 1, H * dv, D);
}

int hs_decoder_step(hs_decoder *d, int32_t token, float *logits, hs_decode_head_fn head_fn,
                    void *ctx, char *err, size_t errlen) {
    const hs_model *m = d->m;
    const hs_config *c = &m->cfg;
    int D = c->hidden_size, F = c->intermediate_size, V = c->vocab_size, t = d->pos;
    if (t >= d->max_tokens) {
        snprintf(err, errlen, "decoder: full (%d tokens)", d->max_tokens);
        return -1;
    }
    if (token < 0 || token >= V) {
        snprintf(err, errlen, "decoder: token %d is outside the vocabulary [0, %d)", token, V);
        return -1;
    }
    if (head_fn && !d->keep_history && d->kr.swla == HS_SWLA_OFF) {
        for (int l = 0; l < c->num_layers; l++)
            for (int i = 0; i < c->layers[l].n_mixers; i++)
                if (!hs_mixer_is_softmax(c->layers[l].mixers[i].type)) {
                    snprintf(err, errlen, "decoder: head distributions of gla/gdn heads need a "
                             "decoder that keeps history (hs_decoder_new_ex)");
                    return -1;
                }
    }
    memcpy(d->x, m->embed + (size_t)token * D, sizeof(float) * D);
    for (int l = 0; l < c->num_layers; l++) {
        const hs_layer_weights *lw = &m->layers[l];
        rmsnorm_forward(d->h, d->x, lw->attn_norm, 1, D, c->norm_eps);
        memset(d->y, 0, sizeof(float) * D);
        for (int i = 0; i < c->layers[l].n_mixers; i++) {
            dec_mixer *dm = &d->mix[l][i];
            if (hs_mixer_is_softmax(dm->mc->type)) softmax_step(d, dm, l, i, t, head_fn, ctx);
            else linear_step(d, dm, l, i, t, head_fn, ctx);
        }
        for (int i = 0; i < D; i++) d->x[i] += d->y[i];
        rmsnorm_forward(d->h, d->x, lw->mlp_norm, 1, D, c->norm_eps);
        matmul_forward(d->ffn_a, d->h, lw->gate_proj, 1, D, F);
        matmul_forward(d->ffn_b, d->h, lw->up_proj, 1, D, F);
        swiglu_forward(d->ffn_a, d->ffn_a, d->ffn_b, (size_t)F);
        matmul_accumulate(d->x, d->ffn_a, lw->down_proj, 1, F, D);
    }
    if (logits) {
        rmsnorm_forward(d->h, d->x, m->norm, 1, D, c->norm_eps);
        matmul_forward(logits, d->h, m->lm_head, 1, D, V);
    }
    d->pos++;
    return 0;
}

/* ---------------------------------------------------------------- greedy ---- */

static int argmax_logits(const float *x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) if (x[i] > x[best]) best = i;
    return best;
}

int hs_generate_greedy(const hs_model *m, const hs_knobs *k, const int32_t *prompt, int T,
                       int max_new, int32_t *out, int *n_out, hs_decode_head_fn head_fn,
                       void *ctx, const hs_forward_opts *opts, char *err, size_t errlen) {
    *n_out = 0;
    if (T < 1) { snprintf(err, errlen, "generate: empty prompt"); return -1; }
    if (max_new < 1) return 0;
    hs_decoder *d = hs_dec_new(m, k, T + max_new, head_fn != NULL, err, errlen);
    if (!d) return -1;
    int V = m->cfg.vocab_size;
    float *logits = malloc(sizeof(float) * (size_t)V);
    if (!logits) { hs_decoder_free(d); snprintf(err, errlen, "generate: out of memory"); return -1; }
    int rc = hs_dec_prefill(d, prompt, T, logits, opts, head_fn, ctx, err, errlen);
    for (int i = 0; rc == 0 && i < max_new; i++) {
        int y = argmax_logits(logits, V);
        if (y == m->cfg.eos_id) break;
        out[(*n_out)++] = y;
        if (i + 1 < max_new) rc = hs_decoder_step(d, y, logits, head_fn, ctx, err, errlen);
    }
    free(logits);
    hs_decoder_free(d);
    return rc;
}
