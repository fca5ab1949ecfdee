/* Naive double-precision reference of the model contract. Written for clarity, not speed:
 * every formula is the spec's, term by term. */
#include "ref_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double *zalloc(size_t n) {
    double *p = calloc(n ? n : 1, sizeof *p);
    if (!p) abort();
    return p;
}

void ref_trace_free(ref_trace *tr) {
    free(tr->q); free(tr->k); free(tr->v); free(tr->gk); free(tr->beta); free(tr->log_alpha);
    free(tr->row_scale); free(tr->raw); free(tr->y);
    memset(tr, 0, sizeof *tr);
}

void ref_rms(double *out, const double *in, const float *w, int n, int dim, double eps) {
    for (int r = 0; r < n; r++) {
        const double *x = in + (size_t)r * dim;
        double ss = 0;
        for (int i = 0; i < dim; i++) ss += x[i] * x[i];
        double inv = 1.0 / sqrt(ss / dim + eps);
        for (int i = 0; i < dim; i++) out[(size_t)r * dim + i] = x[i] * inv * (double)w[i];
    }
}

void ref_linear(double *out, const double *in, const float *W, int n, int in_dim, int out_dim) {
    for (int r = 0; r < n; r++)
        for (int o = 0; o < out_dim; o++) {
            double s = 0;
            for (int i = 0; i < in_dim; i++) s += in[(size_t)r * in_dim + i] * (double)W[(size_t)o * in_dim + i];
            out[(size_t)r * out_dim + o] = s;
        }
}

static double sigmoid(double z) { return 1.0 / (1.0 + exp(-z)); }
static double silu(double z) { return z * sigmoid(z); }
static double softplus(double z) { return z > 30 ? z : log1p(exp(z)); }

/* u_t = sum_{j<K} w[c, j] * x_{t-K+1+j}, zeros before t = 0. */
static void conv_causal(double *out, const double *x, const float *w, int T, int C, int K) {
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++) {
            double s = 0;
            for (int j = 0; j < K; j++) {
                int src = t - K + 1 + j;
                if (src >= 0) s += (double)w[c * K + j] * x[(size_t)src * C + c];
            }
            out[(size_t)t * C + c] = s;
        }
}

/* NeoX half-split rotation at position t. */
static void rope(double *x, int T, int H, int dk, double theta) {
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++) {
            double *v = x + (size_t)t * H * dk + (size_t)h * dk;
            for (int i = 0; i < dk / 2; i++) {
                double f = pow(theta, -2.0 * i / dk), a = t * f;
                double x1 = v[i], x2 = v[i + dk / 2];
                v[i] = x1 * cos(a) - x2 * sin(a);
                v[i + dk / 2] = x2 * cos(a) + x1 * sin(a);
            }
        }
}

static int l0_or(int v, const hs_model *m) { return v > 0 ? v : m->cfg.train_context; }

/* First position whose state query t sees under SWLA (spec section 6); 0 when off. */
static int swla_start(const hs_knobs *k, const hs_model *m, int t) {
    if (!k || k->swla == HS_SWLA_OFF) return 0;
    int W = l0_or(k->swla_window, m);
    if (k->swla == HS_SWLA_EXACT) return t - W + 1 > 0 ? t - W + 1 : 0;
    int S = k->swla_stride > 0 ? k->swla_stride : (W / 4 > 1 ? W / 4 : 1);
    int s0 = (t / S + 1) * S - W;
    return s0 > 0 ? s0 : 0;
}

static int ablated(const hs_knobs *k, int l, int j, int h) {
    if (!k) return 0;
    for (int i = 0; i < k->n_ablate; i++)
        if (k->ablate[i].layer == l && k->ablate[i].mixer == j && k->ablate[i].head == h) return 1;
    return 0;
}

static void softmax_mixer(ref_trace *tr, const hs_model *m, const hs_mixer_config *mc,
                          const hs_mixer_weights *w, const double *h, int T, const hs_knobs *k) {
    int d = m->cfg.hidden_size, H = tr->H, Hkv = tr->Hkv, dk = tr->dk, dv = tr->dv;
    ref_linear(tr->q, h, w->q_proj, T, d, H * dk);
    ref_linear(tr->k, h, w->k_proj, T, d, Hkv * dk);
    ref_linear(tr->v, h, w->v_proj, T, d, Hkv * dv);
    if (mc->type != HS_NOPE) {
        rope(tr->q, T, H, dk, mc->rope_theta);
        rope(tr->k, T, Hkv, dk, mc->rope_theta);
    }
    int W = 0;
    if (mc->type == HS_SWA) W = k && k->swa_window > 0 ? k->swa_window : mc->window;
    if (mc->type == HS_ROPE && k && k->rope_window)
        W = k->rope_window == HS_KNOB_L0 ? m->cfg.train_context : k->rope_window;
    tr->window = W;
    for (int t = 0; t < T; t++) {
        double c = 1;
        if (mc->type == HS_NOPE && k && k->log_scale) {
            double L0 = l0_or(k->log_scale_L0, m);
            c = log(t + 1.0) / log(L0);
            if (c < 1) c = 1;
        }
        tr->row_scale[t] = c;
    }
    double *z = zalloc((size_t)T);
    for (int hd = 0; hd < H; hd++) {
        int kv = hd / (H / Hkv);
        for (int t = 0; t < T; t++) {
            const double *qt = tr->q + (size_t)t * H * dk + (size_t)hd * dk;
            double mx = -INFINITY;
            for (int s = 0; s <= t; s++) {
                z[s] = -INFINITY;
                if (W > 0 && !(s > t - W)) continue;
                const double *ks = tr->k + (size_t)s * Hkv * dk + (size_t)kv * dk;
                double dot = 0;
                for (int i = 0; i < dk; i++) dot += qt[i] * ks[i];
                z[s] = tr->row_scale[t] * dot / sqrt((double)dk);
                if (z[s] > mx) mx = z[s];
            }
            double sum = 0;
            for (int s = 0; s <= t; s++) sum += z[s] == -INFINITY ? 0 : exp(z[s] - mx);
            double *ot = tr->raw + (size_t)t * H * dv + (size_t)hd * dv;
            for (int s = 0; s <= t; s++) {
                if (z[s] == -INFINITY) continue;
                double p = exp(z[s] - mx) / sum;
                const double *vs = tr->v + (size_t)s * Hkv * dv + (size_t)kv * dv;
                for (int i = 0; i < dv; i++) ot[i] += p * vs[i];
            }
        }
    }
    free(z);
}

/* q, k, v projections, optional conv, silu when `act`. */
static void qkv_linear_family(ref_trace *tr, const hs_model *m, const hs_mixer_config *mc,
                              const hs_mixer_weights *w, const double *h, int T, int act) {
    int d = m->cfg.hidden_size, H = tr->H, dk = tr->dk, dv = tr->dv;
    double *outs[3] = {tr->q, tr->k, tr->v};
    const float *W[3] = {w->q_proj, w->k_proj, w->v_proj};
    const float *cw[3] = {w->q_conv, w->k_conv, w->v_conv};
    int C[3] = {H * dk, H * dk, H * dv};
    for (int a = 0; a < 3; a++) {
        double *raw = zalloc((size_t)T * C[a]);
        ref_linear(raw, h, W[a], T, d, C[a]);
        if (mc->use_short_conv) conv_causal(outs[a], raw, cw[a], T, C[a], mc->conv_size);
        else memcpy(outs[a], raw, (size_t)T * C[a] * sizeof *raw);
        free(raw);
        if (act)
            for (size_t i = 0; i < (size_t)T * C[a]; i++) outs[a][i] = silu(outs[a][i]);
    }
}

static void gla_mixer(ref_trace *tr, const hs_model *m, const hs_mixer_config *mc,
                      const hs_mixer_weights *w, const double *h, int T, const hs_knobs *k) {
    int d = m->cfg.hidden_size, H = tr->H, dk = tr->dk, dv = tr->dv, r = mc->gate_low_rank_dim;
    qkv_linear_family(tr, m, mc, w, h, T, mc->use_short_conv);
    double *low = zalloc((size_t)T * r);
    ref_linear(low, h, w->gk_proj0, T, d, r);
    ref_linear(tr->gk, low, w->gk_proj1, T, r, H * dk);
    free(low);
    for (int t = 0; t < T; t++)
        for (int i = 0; i < H * dk; i++) {
            double z = tr->gk[(size_t)t * H * dk + i] + (double)w->gk_bias[i];
            double ls = -softplus(-z); /* logsigmoid */
            tr->gk[(size_t)t * H * dk + i] = ls / mc->gate_logit_normalizer;
        }
    /* For each t, the literal recurrence from a zero state at swla_start(t) (0 when off). */
    double *S = zalloc((size_t)dk * dv);
    for (int hd = 0; hd < H; hd++)
        for (int t = 0; t < T; t++) {
            /* the state folded over [s0, t]; restarted from zero whenever s0 moves */
            int s0 = swla_start(k, m, t), from = t;
            if (t == 0 || s0 != swla_start(k, m, t - 1)) {
                memset(S, 0, (size_t)dk * dv * sizeof *S);
                from = s0;
            }
            for (int s = from; s <= t; s++) {
                const double *g = tr->gk + (size_t)s * H * dk + (size_t)hd * dk;
                const double *ks = tr->k + (size_t)s * H * dk + (size_t)hd * dk;
                const double *vs = tr->v + (size_t)s * H * dv + (size_t)hd * dv;
                for (int i = 0; i < dk; i++)
                    for (int j = 0; j < dv; j++)
                        S[i * dv + j] = exp(g[i]) * S[i * dv + j] + ks[i] * vs[j];
            }
            const double *qt = tr->q + (size_t)t * H * dk + (size_t)hd * dk;
            double *ot = tr->raw + (size_t)t * H * dv + (size_t)hd * dv;
            for (int j = 0; j < dv; j++) {
                double s = 0;
                for (int i = 0; i < dk; i++) s += qt[i] / sqrt((double)dk) * S[i * dv + j];
                ot[j] = s;
            }
        }
    free(S);
}

static void gdn_mixer(ref_trace *tr, const hs_model *m, const hs_mixer_config *mc,
                      const hs_mixer_weights *w, const double *h, int T, const hs_knobs *k) {
    int d = m->cfg.hidden_size, H = tr->H, dk = tr->dk, dv = tr->dv;
    qkv_linear_family(tr, m, mc, w, h, T, 1);
    for (int t = 0; t < T; t++)
        for (int hd = 0; hd < H; hd++) {
            double *xs[2] = {tr->q + (size_t)t * H * dk + (size_t)hd * dk,
                             tr->k + (size_t)t * H * dk + (size_t)hd * dk};
            for (int a = 0; a < 2; a++) {
                double ss = 0;
                for (int i = 0; i < dk; i++) ss += xs[a][i] * xs[a][i];
                for (int i = 0; i < dk; i++) xs[a][i] /= sqrt(ss + 1e-6);
            }
        }
    ref_linear(tr->beta, h, w->b_proj, T, d, H);
    ref_linear(tr->log_alpha, h, w->a_proj, T, d, H);
    for (int t = 0; t < T; t++)
        for (int hd = 0; hd < H; hd++) {
            double *b = tr->beta + (size_t)t * H + hd, *la = tr->log_alpha + (size_t)t * H + hd;
            *b = sigmoid(*b) * (mc->allow_neg_eigval ? 2.0 : 1.0);
            *la = -exp((double)w->A_log[hd]) * softplus(*la + (double)w->dt_bias[hd]);
        }
    double *S = zalloc((size_t)dk * dv), *kS = zalloc((size_t)dv);
    for (int hd = 0; hd < H; hd++)
        for (int t = 0; t < T; t++) {
            int s0 = swla_start(k, m, t), from = t;
            if (t == 0 || s0 != swla_start(k, m, t - 1)) {
                memset(S, 0, (size_t)dk * dv * sizeof *S);
                from = s0;
            }
            for (int s = from; s <= t; s++) {
                /* S = alpha (I - beta k^T k) S + beta k^T v */
                const double *ks = tr->k + (size_t)s * H * dk + (size_t)hd * dk;
                const double *vs = tr->v + (size_t)s * H * dv + (size_t)hd * dv;
                double alpha = exp(tr->log_alpha[(size_t)s * H + hd]), beta = tr->beta[(size_t)s * H + hd];
                for (int j = 0; j < dv; j++) {
                    kS[j] = 0;
                    for (int i = 0; i < dk; i++) kS[j] += ks[i] * S[i * dv + j];
                }
                for (int i = 0; i < dk; i++)
                    for (int j = 0; j < dv; j++)
                        S[i * dv + j] = alpha * (S[i * dv + j] - beta * ks[i] * kS[j]) + beta * ks[i] * vs[j];
            }
            const double *qt = tr->q + (size_t)t * H * dk + (size_t)hd * dk;
            double *ot = tr->raw + (size_t)t * H * dv + (size_t)hd * dv;
            for (int j = 0; j < dv; j++) {
                double s = 0;
                for (int i = 0; i < dk; i++) s += qt[i] / sqrt((double)dk) * S[i * dv + j];
                ot[j] = s;
            }
        }
    free(S);
    free(kS);
}

void ref_mixer_forward(double *y, ref_trace *out_tr, const hs_model *m, int layer, int mixer,
                       const double *h, int T, const hs_knobs *k) {
    const hs_mixer_config *mc = &m->cfg.layers[layer].mixers[mixer];
    const hs_mixer_weights *w = &m->layers[layer].mix[mixer];
    int d = m->cfg.hidden_size;
    ref_trace tr = {0};
    tr.T = T;
    tr.H = mc->num_heads;
    tr.Hkv = mc->type <= HS_SWA && mc->num_kv_heads > 0 ? mc->num_kv_heads : mc->num_heads;
    tr.dk = mc->head_k_dim;
    tr.dv = mc->head_v_dim;
    tr.q = zalloc((size_t)T * tr.H * tr.dk);
    tr.k = zalloc((size_t)T * tr.Hkv * tr.dk);
    tr.v = zalloc((size_t)T * tr.Hkv * tr.dv);
    tr.raw = zalloc((size_t)T * tr.H * tr.dv);
    tr.y = zalloc((size_t)T * d);
    if (mc->type == HS_GLA) {
        tr.gk = zalloc((size_t)T * tr.H * tr.dk);
        gla_mixer(&tr, m, mc, w, h, T, k);
    } else if (mc->type == HS_GDN) {
        tr.beta = zalloc((size_t)T * tr.H);
        tr.log_alpha = zalloc((size_t)T * tr.H);
        gdn_mixer(&tr, m, mc, w, h, T, k);
    } else {
        tr.row_scale = zalloc((size_t)T);
        softmax_mixer(&tr, m, mc, w, h, T, k);
    }
    /* per-head norm and gate (gla/gdn), then ablation, then the output projection */
    size_t C = (size_t)tr.H * tr.dv;
    double *o = zalloc((size_t)T * C);
    memcpy(o, tr.raw, (size_t)T * C * sizeof *o);
    if (mc->type == HS_GLA || mc->type == HS_GDN) {
        double *g = zalloc((size_t)T * C);
        ref_linear(g, h, w->g_proj, T, d, (int)C);
        ref_rms(o, tr.raw, w->g_norm, T * tr.H, tr.dv, mc->norm_eps);
        for (size_t i = 0; i < (size_t)T * C; i++) o[i] *= silu(g[i]);
        free(g);
    }
    for (int hd = 0; hd < tr.H; hd++)
        if (ablated(k, layer, mixer, hd))
            for (int t = 0; t < T; t++)
                for (int j = 0; j < tr.dv; j++) o[(size_t)t * C + (size_t)hd * tr.dv + j] = 0;
    ref_linear(tr.y, o, w->o_proj, T, (int)C, d);
    free(o);
    for (size_t i = 0; i < (size_t)T * d; i++) y[i] += tr.y[i];
    if (out_tr) *out_tr = tr;
    else ref_trace_free(&tr);
}

void ref_forward(double *logits, double *nll, double *hidden, const hs_model *m,
                 const int32_t *tok, int T, const hs_knobs *k) {
    const hs_config *c = &m->cfg;
    int d = c->hidden_size, F = c->intermediate_size, V = c->vocab_size;
    double *x = zalloc((size_t)T * d), *h = zalloc((size_t)T * d);
    double *g = zalloc((size_t)T * F), *u = zalloc((size_t)T * F);
    for (int t = 0; t < T; t++)
        for (int i = 0; i < d; i++) x[(size_t)t * d + i] = m->embed[(size_t)tok[t] * d + i];
    for (int l = 0; l < c->num_layers; l++) {
        const hs_layer_weights *lw = &m->layers[l];
        ref_rms(h, x, lw->attn_norm, T, d, c->norm_eps);
        for (int j = 0; j < c->layers[l].n_mixers; j++) ref_mixer_forward(x, NULL, m, l, j, h, T, k);
        ref_rms(h, x, lw->mlp_norm, T, d, c->norm_eps);
        ref_linear(g, h, lw->gate_proj, T, d, F);
        ref_linear(u, h, lw->up_proj, T, d, F);
        for (size_t i = 0; i < (size_t)T * F; i++) g[i] = silu(g[i]) * u[i];
        double *dn = zalloc((size_t)T * d);
        ref_linear(dn, g, lw->down_proj, T, F, d);
        for (size_t i = 0; i < (size_t)T * d; i++) x[i] += dn[i];
        free(dn);
    }
    ref_rms(h, x, m->norm, T, d, c->norm_eps);
    if (hidden) memcpy(hidden, h, (size_t)T * d * sizeof *h);
    if (logits || nll) {
        double *row = zalloc((size_t)V);
        for (int t = 0; t < T; t++) {
            ref_linear(row, h + (size_t)t * d, m->lm_head, 1, d, V);
            if (logits) memcpy(logits + (size_t)t * V, row, (size_t)V * sizeof *row);
            if (nll && t < T - 1) {
                double mx = row[0], s = 0;
                for (int i = 1; i < V; i++) if (row[i] > mx) mx = row[i];
                for (int i = 0; i < V; i++) s += exp(row[i] - mx);
                nll[t] = log(s) + mx - row[tok[t + 1]];
            }
        }
        free(row);
    }
    free(x); free(h); free(g); free(u);
}
