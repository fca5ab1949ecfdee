/* Per-head distributions a~_{t,.} (model-spec section 7) from a mixer's captured
 * activations, and the per-row statistics computed from them. Everything is one query row
 * at a time in double precision; nothing here holds a T x T matrix. */
#include "analysis_api.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int hs_head_view_init(hs_head_view *v, const hs_mixer_acts *a, int head) {
    memset(v, 0, sizeof *v);
    const hs_mixer_config *mc = a->mc;
    if (head < 0 || head >= mc->num_heads || mc->head_k_dim > HS_ANALYSIS_MAX_DK) return -1;
    v->acts = a;
    v->head = head;
    v->type = mc->type;
    v->T = a->T;
    v->dk = mc->head_k_dim;
    v->inv_sqrt_dk = 1.0 / sqrt((double)mc->head_k_dim);
    int hkv = mc->num_kv_heads > 0 ? mc->num_kv_heads : mc->num_heads;
    v->kv_head = hs_mixer_is_softmax(mc->type) ? head / (mc->num_heads / hkv) : head;
    if (hs_mixer_is_softmax(mc->type)) {
        v->window = a->window;
        return 0;
    }
    if (a->knobs) {
        v->swla = a->knobs->swla;
        v->swla_window = a->knobs->swla_window;
        v->swla_stride = a->knobs->swla_stride;
        if (v->swla != HS_SWLA_OFF && v->swla_window < 1) v->swla = HS_SWLA_OFF;
        if (v->swla == HS_SWLA_OVERLAP && v->swla_stride < 1)
            v->swla_stride = v->swla_window / 4 > 0 ? v->swla_window / 4 : 1;
    }
    int T = a->T, dk = v->dk, H = mc->num_heads;
    if (mc->type == HS_GLA) {
        /* exp(gk) once per position: the backward sweep then needs only multiplies. */
        v->decay = malloc(sizeof(double) * (size_t)T * (size_t)dk);
        if (!v->decay) return -1;
        for (int t = 0; t < T; t++) {
            const float *g = a->gk + (size_t)t * H * dk + (size_t)head * dk;
            double *d = v->decay + (size_t)t * dk;
            for (int i = 0; i < dk; i++) d[i] = exp((double)g[i]);
        }
    } else if (mc->type == HS_GDN) {
        v->decay = malloc(sizeof(double) * (size_t)(T > 0 ? T : 1));
        if (!v->decay) return -1;
        for (int t = 0; t < T; t++) v->decay[t] = exp((double)a->log_alpha[(size_t)t * H + head]);
    }
    return 0;
}

void hs_head_view_free(hs_head_view *v) {
    free(v->decay);
    free(v->keys);
    free(v->carry);
    v->decay = NULL;
    v->keys = NULL;
    v->carry = NULL;
    v->prepared = 0;
}

int hs_head_view_start(const hs_head_view *v, int t) {
    int lo = 0;
    if (hs_mixer_is_softmax(v->type)) {
        if (v->window > 0) lo = t - v->window + 1;
    } else if (v->swla == HS_SWLA_EXACT) {
        lo = t - v->swla_window + 1;
    } else if (v->swla == HS_SWLA_OVERLAP) {
        long long j = t / v->swla_stride;
        long long b = (j + 1) * (long long)v->swla_stride - v->swla_window;
        lo = b > 0 ? (int)b : 0;
    }
    return lo > 0 ? lo : 0;
}

/* Dot products with four partial sums (a single chain is latency-bound). The order is fixed,
 * so equal inputs give equal results (exact ties stay ties). */
static double dot_ff(const float *a, const float *b, int n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += (double)a[i] * b[i];
        s1 += (double)a[i + 1] * b[i + 1];
        s2 += (double)a[i + 2] * b[i + 2];
        s3 += (double)a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s0 += (double)a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

static double dot_df(const double *a, const float *b, int n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

static void softmax_row(const hs_head_view *v, int t, int lo, double *dist) {
    const hs_mixer_acts *a = v->acts;
    const hs_mixer_config *mc = a->mc;
    int dk = v->dk, hkv = mc->num_kv_heads > 0 ? mc->num_kv_heads : mc->num_heads;
    const float *q = a->q + (size_t)t * mc->num_heads * dk + (size_t)v->head * dk;
    double scale = v->inv_sqrt_dk * (a->row_scale ? (double)a->row_scale[t] : 1.0);
    double mx = -INFINITY;
    for (int s = lo; s <= t; s++) {
        const float *k = a->k + (size_t)s * hkv * dk + (size_t)v->kv_head * dk;
        double z = scale * dot_ff(q, k, dk);
        dist[s] = z;
        if (z > mx) mx = z;
    }
    double sum = 0;
    for (int s = lo; s <= t; s++) { dist[s] = exp(dist[s] - mx); sum += dist[s]; }
    double inv = 1.0 / sum;
    for (int s = lo; s <= t; s++) dist[s] *= inv;
}

/* |c_{t,s}| for gla: r_s = q_t/sqrt(dk) * exp(G_t - G_s), stepping r_{s-1} = r_s * exp(gk_s). */
static void gla_row(const hs_head_view *v, int t, int lo, double *dist) {
    const hs_mixer_acts *a = v->acts;
    int dk = v->dk, H = a->mc->num_heads;
    double r[HS_ANALYSIS_MAX_DK];
    const float *q = a->q + (size_t)t * H * dk + (size_t)v->head * dk;
    for (int i = 0; i < dk; i++) r[i] = (double)q[i] * v->inv_sqrt_dk;
    for (int s = t; s >= lo; s--) {
        const float *k = a->k + (size_t)s * H * dk + (size_t)v->head * dk;
        const double *d = v->decay + (size_t)s * dk;
        dist[s] = fabs(dot_df(r, k, dk));
        for (int i = 0; i < dk; i++) {
            double x = r[i] * d[i];
            r[i] = fabs(x) < HS_SWEEP_TINY ? 0.0 : x;   /* no denormals: they are slow */
        }
    }
}

/* |c_{t,s}| for gdn: r <- r A_s = alpha_s (r - beta_s (r.k_s) k_s), backward from t. */
static void gdn_row(const hs_head_view *v, int t, int lo, double *dist) {
    const hs_mixer_acts *a = v->acts;
    int dk = v->dk, H = a->mc->num_heads;
    double r[HS_ANALYSIS_MAX_DK];
    const float *q = a->q + (size_t)t * H * dk + (size_t)v->head * dk;
    for (int i = 0; i < dk; i++) r[i] = (double)q[i] * v->inv_sqrt_dk;
    for (int s = t; s >= lo; s--) {
        const float *k = a->k + (size_t)s * H * dk + (size_t)v->head * dk;
        double beta = (double)a->beta[(size_t)s * H + v->head], alpha = v->decay[s];
        double dot = dot_df(r, k, dk);
        dist[s] = fabs(beta * dot);
        double bd = beta * dot;
        for (int i = 0; i < dk; i++) {
            double x = alpha * (r[i] - bd * (double)k[i]);
            r[i] = fabs(x) < HS_SWEEP_TINY ? 0.0 : x;
        }
    }
}

int hs_head_view_row(const hs_head_view *v, int t, double *dist) {
    int lo = hs_head_view_start(v, t);
    if (hs_mixer_is_softmax(v->type)) {
        softmax_row(v, t, lo, dist);
        return lo;
    }
    if (v->type == HS_GLA) gla_row(v, t, lo, dist);
    else gdn_row(v, t, lo, dist);
    double sum = 0;
    for (int s = lo; s <= t; s++) sum += dist[s];
    if (sum > 0) {
        double inv = 1.0 / sum;
        for (int s = lo; s <= t; s++) dist[s] *= inv;
    } else {
        for (int s = lo; s <= t; s++) dist[s] = 0;
    }
    return lo;
}

/* ---- per-row statistics ---- */

double hs_dist_entropy(const double *dist, int lo, int t) {
    if (t <= 0) return 0.0;
    double h = 0;
    for (int s = lo; s <= t; s++)
        if (dist[s] > 0) h -= dist[s] * log(dist[s]);
    return h / log((double)t + 1.0);
}

int hs_dist_topk_hit(const double *dist, int lo, int t, int span_start, int span_end, int k) {
    int a = span_start > lo ? span_start : lo;
    int b = span_end < t + 1 ? span_end : t + 1;
    if (a >= b || k < 1) return 0;
    /* The span position with the largest a~ has the fewest strictly larger entries. */
    double m = 0;
    for (int s = a; s < b; s++) if (dist[s] > m) m = dist[s];
    if (!(m > 0)) return 0;
    int larger = 0;
    for (int s = lo; s <= t; s++)
        if (dist[s] > m && ++larger >= k) return 0;
    return 1;
}

int hs_dist_argmax(const double *dist, int lo, int t) {
    int best = lo;
    for (int s = lo + 1; s <= t; s++) if (dist[s] > dist[best]) best = s;
    return best;
}

int hs_dist_argmax_f(const float *dist, int n) {
    int best = 0;
    for (int s = 1; s < n; s++) if (dist[s] > dist[best]) best = s;
    return best;
}

int hs_topk_default(int T) {
    int k = T / 64;
    if (k < 1) k = 1;
    return k > 64 ? 64 : k;
}

void hs_retrieval_score(double *score, const int *amax, int n_heads, int stride,
                        const int32_t *tokens, int span_start, int span_end,
                        const int32_t *gen, int n_gen) {
    if (span_start < 0 || span_end <= span_start) return;
    double unit = 1.0 / (span_end - span_start);
    for (int h = 0; h < n_heads; h++)
        for (int i = 0; i < n_gen; i++) {
            int s = amax[(size_t)h * stride + i];
            if (s >= span_start && s < span_end && tokens[s] == gen[i]) score[h] += unit;
        }
}

/* ---- head indexing ---- */

int hs_config_head_count(const hs_config *c) {
    int n = 0;
    for (int l = 0; l < c->num_layers; l++)
        for (int m = 0; m < c->layers[l].n_mixers; m++) n += c->layers[l].mixers[m].num_heads;
    return n;
}

int hs_config_head_index(const hs_config *c, int layer, int mixer, int head) {
    int n = 0;
    for (int l = 0; l < c->num_layers; l++)
        for (int m = 0; m < c->layers[l].n_mixers; m++) {
            if (l == layer && m == mixer) return n + head;
            n += c->layers[l].mixers[m].num_heads;
        }
    return -1;
}
