/* Prefill for incremental decoding (see decode.c): the layers run over the whole prompt with
 * hs_mixer_forward, and each mixer's capture hook fills the decoder's caches: the K/V cache,
 * the gla/gdn history ring and recurrent state (gla: one GEMM over the prompt; gdn: the
 * recurrence), and the short-conv history from the last K-1 rows. Also the partial forward
 * (hs_forward_layers) that map uses to stop at the head's layer. */
#include "decode_internal.h"
#include "kernels/cpu/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- prefill ---- */

typedef struct {
    hs_decoder *d;             /* NULL: only run the layers (analysis of one layer) */
    const hs_forward_opts *user;
    hs_decode_head_fn head_fn; /* called for the last row of the prompt */
    void *head_ctx;
    int failed;
} prefill_ctx;

/* S_{T-1} = sum_s diag(exp(G_{T-1} - G_s)) k_s^T v_s for one gla head, as one GEMM over the
 * prompt with the decays folded into k (products taken backward from T-1, so all <= 1). */
static int gla_state_from_acts(double *S, const hs_mixer_acts *a, int head, int dk, int dv) {
    int T = a->T, H = a->mc->num_heads;
    float *kt = malloc(sizeof(float) * (size_t)dk * T);
    float *vt = malloc(sizeof(float) * (size_t)dv * T);
    float *st = malloc(sizeof(float) * (size_t)dk * dv);
    double *w = malloc(sizeof(double) * (size_t)dk);
    if (!kt || !vt || !st || !w) { free(kt); free(vt); free(st); free(w); return -1; }
    for (int i = 0; i < dk; i++) w[i] = 1.0;
    for (int s = T - 1; s >= 0; s--) {
        const float *k = a->k + (size_t)s * H * dk + (size_t)head * dk;
        const float *v = a->v + (size_t)s * H * dv + (size_t)head * dv;
        const float *g = a->gk + (size_t)s * H * dk + (size_t)head * dk;
        for (int i = 0; i < dk; i++) {
            kt[(size_t)i * T + s] = (float)(w[i] * k[i]);
            w[i] *= exp((double)g[i]);
            if (w[i] < HS_SWEEP_TINY) w[i] = 0;
        }
        for (int j = 0; j < dv; j++) vt[(size_t)j * T + s] = v[j];
    }
    /* st [dv, dk] = vt [dv, T] @ kt[dk, T]^T = (K~^T V)^T */
    matmul_forward(st, vt, kt, dv, T, dk);
    for (int i = 0; i < dk; i++)
        for (int j = 0; j < dv; j++) S[(size_t)i * dv + j] = st[(size_t)j * dk + i];
    free(kt); free(vt); free(st); free(w);
    return 0;
}

/* gdn: the recurrence S = alpha (S - beta k^T (k S)) + beta k^T v over the prompt
 * (O(T dk dv): in the widest vector unit the CPU has). */
static __attribute__((target_clones("avx512f", "avx2", "default"))) void gdn_state_from_acts(double *S, const hs_mixer_acts *a, int head, int dk, int dv,
                                double *ks) {
    int T = a->T, H = a->mc->num_heads;
    memset(S, 0, sizeof(double) * (size_t)dk * dv);
    for (int t = 0; t < T; t++) {
        const float *k = a->k + (size_t)t * H * dk + (size_t)head * dk;
        const float *v = a->v + (size_t)t * H * dv + (size_t)head * dv;
        double beta = a->beta[(size_t)t * H + head];
        double alpha = exp((double)a->log_alpha[(size_t)t * H + head]);
        for (int j = 0; j < dv; j++) ks[j] = 0;
        for (int i = 0; i < dk; i++) {
            double ki = k[i];
            const double *row = S + (size_t)i * dv;
#pragma omp simd
            for (int j = 0; j < dv; j++) ks[j] += ki * row[j];
        }
        for (int i = 0; i < dk; i++) {
            double ki = k[i];
            double *row = S + (size_t)i * dv;
#pragma omp simd
            for (int j = 0; j < dv; j++)
                row[j] = alpha * (row[j] - beta * ki * ks[j]) + beta * ki * (double)v[j];
        }
    }
}

static int fill_caches(hs_decoder *d, const hs_mixer_acts *a) {
    dec_mixer *dm = &d->mix[a->layer][a->mixer];
    int T = a->T, H = dm->H;
    size_t dk = (size_t)dm->dk, dv = (size_t)dm->dv;
    if (hs_mixer_is_softmax(dm->mc->type)) {
        size_t wk = (size_t)dm->Hkv * dk, wv = (size_t)dm->Hkv * dv;
        for (int s = T > dm->cap ? T - dm->cap : 0; s < T; s++) {
            int slot = s % dm->cap;
            memcpy(dm->kc + slot * wk, a->k + (size_t)s * wk, wk * sizeof(float));
            memcpy(dm->vc + slot * wv, a->v + (size_t)s * wv, wv * sizeof(float));
        }
        return 0;
    }
    if (dm->hcap) {
        int gla = dm->mc->type == HS_GLA;
        for (int s = T > dm->hcap ? T - dm->hcap : 0; s < T; s++)
            hs_dec_hist_put(dm, s, a->k + (size_t)s * H * dk, a->v + (size_t)s * H * dv,
                     gla ? a->gk + (size_t)s * H * dk : NULL, gla ? NULL : a->beta + (size_t)s * H,
                     gla ? NULL : a->log_alpha + (size_t)s * H);
    }
    if (dm->state) {
        int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) if ((long long)T * dk * dv > (1 << 18))
        for (int h = 0; h < H; h++) {
            double *S = dm->state + (size_t)h * dk * dv;
            if (dm->mc->type == HS_GLA) {
                if (gla_state_from_acts(S, a, h, (int)dk, (int)dv)) {
#pragma omp atomic write
                    failed = 1;
                }
            } else {
                double *ks = malloc(sizeof(double) * dv);
                if (!ks) {
#pragma omp atomic write
                    failed = 1;
                    continue;
                }
                gdn_state_from_acts(S, a, h, (int)dk, (int)dv, ks);
                free(ks);
            }
        }
        if (failed) return -1;
    }
    return 0;
}

/* a~ of the prompt's last row for every head of this mixer, handed to head_fn. */
static int last_row_dists(prefill_ctx *pc, const hs_mixer_acts *a) {
    int T = a->T;
    double *buf = malloc(sizeof(double) * (size_t)T);
    float *f = malloc(sizeof(float) * (size_t)T);
    if (!buf || !f) { free(buf); free(f); return -1; }
    int rc = 0;
    for (int h = 0; h < a->mc->num_heads && !rc; h++) {
        hs_head_view v;
        if (hs_head_view_init(&v, a, h)) { rc = -1; break; }
        int lo = hs_head_view_row(&v, T - 1, buf);
        for (int s = 0; s < T; s++) f[s] = s < lo ? 0.0f : (float)buf[s];
        pc->head_fn(pc->head_ctx, a->layer, a->mixer, h, T - 1, f);
        hs_head_view_free(&v);
    }
    free(buf); free(f);
    return rc;
}

static void prefill_capture(void *ctx, const hs_mixer_acts *a) {
    prefill_ctx *pc = ctx;
    if (pc->failed) return;
    if (pc->d && fill_caches(pc->d, a)) pc->failed = 1;
    if (pc->head_fn && last_row_dists(pc, a)) pc->failed = 1;
    if (pc->user && pc->user->capture) pc->user->capture(pc->user->capture_ctx, a);
}

/* The last K-1 pre-convolution projections of rows [T-K+1, T) (zeros before 0). */
static void fill_conv_history(dec_mixer *dm, const float *h, int T, int dmodel) {
    if (!dm->K) return;
    int K1 = dm->K - 1;
    size_t cq = (size_t)dm->H * dm->dk, cv = (size_t)dm->H * dm->dv;
    memset(dm->cq, 0, K1 * cq * sizeof(float));
    memset(dm->ck, 0, K1 * cq * sizeof(float));
    memset(dm->cv, 0, K1 * cv * sizeof(float));
    for (int j = 0; j < K1; j++) {
        int t = T - K1 + j;
        if (t < 0) continue;
        const float *row = h + (size_t)t * dmodel;
        matmul_forward(dm->cq + j * cq, row, dm->w->q_proj, 1, dmodel, (int)cq);
        matmul_forward(dm->ck + j * cq, row, dm->w->k_proj, 1, dmodel, (int)cq);
        matmul_forward(dm->cv + j * cv, row, dm->w->v_proj, 1, dmodel, (int)cv);
    }
}

#define MLP_ROWS 256

/* Runs layers [0, n_layers) over tokens (x is [T, d] scratch on return holding the residual
 * stream); fills d's caches when d != NULL; logits of the last row when n_layers covers the
 * model and logits != NULL. */
static int run_layers(hs_decoder *d, const hs_model *m, const hs_knobs *k, const int32_t *tokens,
                      int T, int n_layers, float *logits, const hs_forward_opts *opts,
                      hs_decode_head_fn head_fn, void *head_ctx, char *err, size_t errlen) {
    const hs_config *c = &m->cfg;
    int D = c->hidden_size, F = c->intermediate_size, V = c->vocab_size;
    for (int t = 0; t < T; t++)
        if (tokens[t] < 0 || tokens[t] >= V) {
            snprintf(err, errlen, "token %d at position %d is outside the vocabulary [0, %d)",
                     tokens[t], t, V);
            return -1;
        }
    float *x = malloc(sizeof(float) * (size_t)T * D);
    float *h = malloc(sizeof(float) * (size_t)T * D);
    float *y = malloc(sizeof(float) * (size_t)T * D);
    float *ga = malloc(sizeof(float) * (size_t)MLP_ROWS * F);
    float *gb = malloc(sizeof(float) * (size_t)MLP_ROWS * F);
    int rc = 0;
    if (!x || !h || !y || !ga || !gb) {
        snprintf(err, errlen, "forward: out of memory for %d tokens", T);
        rc = -1;
        goto done;
    }
    for (int t = 0; t < T; t++)
        memcpy(x + (size_t)t * D, m->embed + (size_t)tokens[t] * D, sizeof(float) * D);
    prefill_ctx pc = { d, opts, head_fn, head_ctx, 0 };
    hs_forward_opts mo;
    memset(&mo, 0, sizeof mo);
    if (opts) { mo.chunk = opts->chunk; mo.tile = opts->tile; mo.use_recurrent = opts->use_recurrent; }
    mo.capture = prefill_capture;
    mo.capture_ctx = &pc;
    for (int l = 0; l < n_layers; l++) {
        const hs_layer_weights *lw = &m->layers[l];
        rmsnorm_forward(h, x, lw->attn_norm, T, D, c->norm_eps);
        memset(y, 0, sizeof(float) * (size_t)T * D);
        for (int i = 0; i < c->layers[l].n_mixers; i++) {
            int r = hs_mixer_forward(y, m, l, i, h, T, k, &mo);
            if (r || pc.failed) {
                snprintf(err, errlen, "forward: layer %d mixer %d failed (out of memory?)", l, i);
                rc = -1;
                goto done;
            }
            if (d) fill_conv_history(&d->mix[l][i], h, T, D);
        }
        for (size_t i = 0; i < (size_t)T * D; i++) x[i] += y[i];
        rmsnorm_forward(h, x, lw->mlp_norm, T, D, c->norm_eps);
        for (int r0 = 0; r0 < T; r0 += MLP_ROWS) {
            int n = T - r0 < MLP_ROWS ? T - r0 : MLP_ROWS;
            matmul_forward(ga, h + (size_t)r0 * D, lw->gate_proj, n, D, F);
            matmul_forward(gb, h + (size_t)r0 * D, lw->up_proj, n, D, F);
            swiglu_forward(ga, ga, gb, (size_t)n * F);
            matmul_accumulate(x + (size_t)r0 * D, ga, lw->down_proj, n, F, D);
        }
        if (opts && opts->progress && opts->progress(opts->progress_ctx, (double)(l + 1) / n_layers)) {
            rc = HS_CANCELLED;
            goto done;
        }
    }
    if (logits && n_layers == c->num_layers) {
        rmsnorm_forward(h, x + (size_t)(T - 1) * D, m->norm, 1, D, c->norm_eps);
        matmul_forward(logits, h, m->lm_head, 1, D, V);
    }
done:
    free(x); free(h); free(y); free(ga); free(gb);
    return rc;
}

int hs_forward_layers(const hs_model *m, const int32_t *tokens, int T, const hs_knobs *k,
                      int n_layers, const hs_forward_opts *opts, char *err, size_t errlen) {
    hs_knobs none;
    memset(&none, 0, sizeof none);
    if (!k) k = &none;
    if (T < 1) { snprintf(err, errlen, "forward: empty input"); return -1; }
    if (n_layers < 1 || n_layers > m->cfg.num_layers) {
        snprintf(err, errlen, "forward: %d layers requested, model has %d", n_layers, m->cfg.num_layers);
        return -1;
    }
    return run_layers(NULL, m, k, tokens, T, n_layers, NULL, opts, NULL, NULL, err, errlen);
}

int hs_dec_prefill(hs_decoder *d, const int32_t *tokens, int n, float *logits,
                   const hs_forward_opts *opts, hs_decode_head_fn head_fn, void *ctx,
                   char *err, size_t errlen) {
    if (d->pos != 0) { snprintf(err, errlen, "decoder: prefill must come first"); return -1; }
    if (n < 1 || n > d->max_tokens) {
        snprintf(err, errlen, "decoder: prompt of %d tokens does not fit %d", n, d->max_tokens);
        return -1;
    }
    int rc = run_layers(d, d->m, &d->knobs, tokens, n, d->m->cfg.num_layers, logits, opts,
                        head_fn, ctx, err, errlen);
    if (rc == 0) d->pos = n;
    return rc;
}

int hs_decoder_prefill(hs_decoder *d, const int32_t *tokens, int n, float *logits,
                       const hs_forward_opts *opts, char *err, size_t errlen) {
    return hs_dec_prefill(d, tokens, n, logits, opts, NULL, NULL, err, errlen);
}
