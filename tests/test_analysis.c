/* Analysis (model-spec section 7) against independent references: finite differences of a
 * double-precision recurrence for the gla/gdn Jacobian weights, a naive softmax, explicit
 * matrix products, hand-computed statistics, and naive full-matrix pooling (T <= 512). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_api.h"
#include "test.h"

/* ---- synthetic captured activations ---- */
typedef struct {
    int T, H, Hkv, dk, dv;
    float *q, *k, *v, *gk, *beta, *la, *rs;
    hs_mixer_config mc;
    hs_knobs_resolved kr;
    hs_mixer_acts a;
} fake;

static void normalize_heads(float *x, int T, int H, int d) {
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++) {
            float *p = x + ((size_t)t * H + h) * d;
            double s = 0;
            for (int i = 0; i < d; i++) s += (double)p[i] * p[i];
            s = sqrt(s + 1e-6);
            for (int i = 0; i < d; i++) p[i] = (float)(p[i] / s);
        }
}

/* Gate strength: 1 for the usual random gates, smaller for slow decays (long memory). */
static double g_gate_scale = 1.0;

/* window: softmax window; swla/W/S for gla/gdn. */
static void fake_init(fake *f, hs_mixer_type type, int T, int H, int Hkv, int dk, int dv,
                      int window, int log_scale, hs_swla_mode swla, int W, int S, uint64_t seed) {
    memset(f, 0, sizeof *f);
    hs_test_rng rng = { seed };
    f->T = T; f->H = H; f->Hkv = Hkv; f->dk = dk; f->dv = dv;
    f->q = malloc(sizeof(float) * T * H * dk);
    f->k = malloc(sizeof(float) * T * Hkv * dk);
    f->v = malloc(sizeof(float) * T * Hkv * dv);
    hs_test_fill_normal(f->q, (size_t)T * H * dk, 1.0, &rng);
    hs_test_fill_normal(f->k, (size_t)T * Hkv * dk, 1.0, &rng);
    hs_test_fill_normal(f->v, (size_t)T * Hkv * dv, 1.0, &rng);
    f->mc.type = type; f->mc.num_heads = H; f->mc.num_kv_heads = Hkv;
    f->mc.head_k_dim = dk; f->mc.head_v_dim = dv;
    f->kr.swla = swla; f->kr.swla_window = W; f->kr.swla_stride = S;
    f->a.mc = &f->mc; f->a.T = T; f->a.q = f->q; f->a.k = f->k; f->a.v = f->v;
    f->a.window = window; f->a.knobs = &f->kr;
    if (log_scale) {
        f->rs = malloc(sizeof(float) * T);
        for (int t = 0; t < T; t++) f->rs[t] = (float)(1.0 + 2.0 * hs_test_uniform(&rng));
        f->a.row_scale = f->rs;
    }
    if (type == HS_GLA) {
        f->gk = malloc(sizeof(float) * T * H * dk);
        for (int i = 0; i < T * H * dk; i++) {
            double z = 2.0 * hs_test_normal(&rng) + 1.0;
            f->gk[i] = (float)(-log1p(exp(-z)) / 4.0 * g_gate_scale);   /* logsigmoid(z) / 4 */
        }
        f->a.gk = f->gk;
    } else if (type == HS_GDN) {
        normalize_heads(f->q, T, H, dk);
        normalize_heads(f->k, T, H, dk);
        f->beta = malloc(sizeof(float) * T * H);
        f->la = malloc(sizeof(float) * T * H);
        for (int i = 0; i < T * H; i++) {
            f->beta[i] = (float)(1.0 / (1.0 + exp(-hs_test_normal(&rng))));
            f->la[i] = (float)(-0.3 * g_gate_scale * log1p(exp(hs_test_normal(&rng))));
        }
        f->a.beta = f->beta; f->a.log_alpha = f->la;
    }
}

static void fake_free(fake *f) {
    free(f->q); free(f->k); free(f->v); free(f->gk); free(f->beta); free(f->la); free(f->rs);
}

/* The visible start, written again from the spec text. */
static int naive_lo(const fake *f, int t) {
    int lo = 0;
    if (hs_mixer_is_softmax(f->mc.type)) { if (f->a.window > 0) lo = t - f->a.window + 1; }
    else if (f->kr.swla == HS_SWLA_EXACT) lo = t - f->kr.swla_window + 1;
    else if (f->kr.swla == HS_SWLA_OVERLAP) lo = (t / f->kr.swla_stride + 1) * f->kr.swla_stride - f->kr.swla_window;
    return lo < 0 ? 0 : lo;
}

/* Mixer output o_t (one head) by running the recurrence from zero at the visible start, in
 * double, with v given in double (so it can be perturbed). */
static void naive_recurrent_out(double *o, const fake *f, int head, int t, const double *v) {
    int dk = f->dk, dv = f->dv, H = f->H;
    double S[16][16] = { { 0 } };
    for (int s = naive_lo(f, t); s <= t; s++) {
        const float *k = f->k + ((size_t)s * H + head) * dk;
        const double *vs = v + ((size_t)s * H + head) * dv;
        if (f->mc.type == HS_GLA) {
            const float *g = f->gk + ((size_t)s * H + head) * dk;
            for (int i = 0; i < dk; i++)
                for (int j = 0; j < dv; j++) S[i][j] = exp((double)g[i]) * S[i][j] + (double)k[i] * vs[j];
        } else {
            double beta = f->beta[s * H + head], alpha = exp((double)f->la[s * H + head]);
            double kS[16] = { 0 };
            for (int j = 0; j < dv; j++) for (int i = 0; i < dk; i++) kS[j] += (double)k[i] * S[i][j];
            for (int i = 0; i < dk; i++)
                for (int j = 0; j < dv; j++)
                    S[i][j] = alpha * (S[i][j] - beta * k[i] * kS[j]) + beta * k[i] * vs[j];
        }
    }
    const float *q = f->q + ((size_t)t * H + head) * dk;
    for (int j = 0; j < dv; j++) {
        double acc = 0;
        for (int i = 0; i < dk; i++) acc += (double)q[i] * S[i][j];
        o[j] = acc / sqrt((double)dk);
    }
}

/* Largest singular value of a small n x n matrix by power iteration on J^T J. */
static double small_spectral(const double *J, int n) {
    double x[16], y[16], l = 0;
    for (int i = 0; i < n; i++) x[i] = 1.0 + 0.1 * i;
    for (int it = 0; it < 200; it++) {
        double nx = 0;
        for (int i = 0; i < n; i++) nx += x[i] * x[i];
        nx = sqrt(nx);
        if (nx == 0) return 0;
        for (int i = 0; i < n; i++) x[i] /= nx;
        double Jx[16];
        for (int i = 0; i < n; i++) { Jx[i] = 0; for (int j = 0; j < n; j++) Jx[i] += J[i * n + j] * x[j]; }
        for (int j = 0; j < n; j++) { y[j] = 0; for (int i = 0; i < n; i++) y[j] += J[i * n + j] * Jx[i]; }
        l = 0;
        for (int i = 0; i < n; i++) l += x[i] * y[i];
        memcpy(x, y, sizeof(double) * n);
    }
    return sqrt(l);
}

/* a~ by finite differences: ||d o_t / d v_s||_2 normalised over s (spec section 7). */
static void fd_dist(double *dist, const fake *f, int head, int t) {
    int dv = f->dv, n = f->T * f->H * dv;
    double *v = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++) v[i] = f->v[i];
    double eps = 1e-4, sum = 0, op[16], om[16], J[256];
    for (int s = 0; s <= t; s++) {
        for (int m = 0; m < dv; m++) {
            size_t at = ((size_t)s * f->H + head) * dv + m;
            double keep = v[at];
            v[at] = keep + eps; naive_recurrent_out(op, f, head, t, v);
            v[at] = keep - eps; naive_recurrent_out(om, f, head, t, v);
            v[at] = keep;
            for (int j = 0; j < dv; j++) J[j * dv + m] = (op[j] - om[j]) / (2 * eps);
        }
        dist[s] = small_spectral(J, dv);
        sum += dist[s];
    }
    for (int s = 0; s <= t; s++) dist[s] = sum > 0 ? dist[s] / sum : 0;
    free(v);
}

static double jacobian_case(hs_mixer_type type, hs_swla_mode swla, uint64_t seed) {
    fake f;
    int T = 37;
    fake_init(&f, type, T, 2, 2, 4, 3, 0, 0, swla, 9, 4, seed);
    double *ref = malloc(sizeof(double) * T), *got = malloc(sizeof(double) * T);
    double worst = 0;
    int rows[] = { 0, 1, 8, 9, 12, 15, 16, 23, 36 };
    for (int h = 0; h < 2; h++) {
        hs_head_view v;
        if (hs_head_view_init(&v, &f.a, h)) { worst = 1e9; break; }
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
            int t = rows[r];
            fd_dist(ref, &f, h, t);
            for (int s = 0; s < T; s++) got[s] = 0;
            hs_head_view_row(&v, t, got);
            for (int s = 0; s <= t; s++) {
                double e = fabs(got[s] - ref[s]);
                if (worst == worst && !(e <= worst)) worst = e; /* a NaN sticks */
            }
        }
        hs_head_view_free(&v);
    }
    free(ref); free(got);
    fake_free(&f);
    return worst;
}

TEST(analysis_jacobian_gla_vs_finite_differences) {
    static const hs_swla_mode modes[] = { HS_SWLA_OFF, HS_SWLA_EXACT, HS_SWLA_OVERLAP };
    for (int m = 0; m < 3; m++) {
        double e = jacobian_case(HS_GLA, modes[m], 11 + m);
        CHECK(e < 1e-6, "gla swla mode %d: max |a~ - finite differences| = %.3g", m, e);
    }
}

TEST(analysis_jacobian_gdn_vs_finite_differences) {
    static const hs_swla_mode modes[] = { HS_SWLA_OFF, HS_SWLA_EXACT, HS_SWLA_OVERLAP };
    for (int m = 0; m < 3; m++) {
        double e = jacobian_case(HS_GDN, modes[m], 21 + m);
        CHECK(e < 1e-6, "gdn swla mode %d: max |a~ - finite differences| = %.3g", m, e);
    }
}

TEST(analysis_overlap_visible_counts) {
    /* Overlap SWLA: every query sees between W-S+1 and W tokens once t >= W-1. */
    fake f;
    fake_init(&f, HS_GLA, 64, 1, 1, 2, 2, 0, 0, HS_SWLA_OVERLAP, 12, 5, 3);
    hs_head_view v;
    CHECK(hs_head_view_init(&v, &f.a, 0) == 0, "init");
    for (int t = 11; t < 64; t++) {
        int seen = t - hs_head_view_start(&v, t) + 1;
        CHECK(seen >= 12 - 5 + 1 && seen <= 12, "t=%d sees %d tokens", t, seen);
    }
    hs_head_view_free(&v);
    fake_free(&f);
}

/* ---- naive full rows, independent of the sweeps ---- */

static void naive_row(double *dist, const fake *f, int head, int t) {
    int dk = f->dk, H = f->H, lo = naive_lo(f, t);
    for (int s = 0; s <= t; s++) dist[s] = 0;
    if (hs_mixer_is_softmax(f->mc.type)) {
        int kvh = head / (f->H / f->Hkv);
        double z[1024], mx = -1e300, sum = 0;
        for (int s = lo; s <= t; s++) {
            double dot = 0;
            for (int i = 0; i < dk; i++)
                dot += (double)f->q[((size_t)t * H + head) * dk + i] * f->k[((size_t)s * f->Hkv + kvh) * dk + i];
            z[s] = dot / sqrt((double)dk) * (f->rs ? f->rs[t] : 1.0);
            if (z[s] > mx) mx = z[s];
        }
        for (int s = lo; s <= t; s++) sum += exp(z[s] - mx);
        for (int s = lo; s <= t; s++) dist[s] = exp(z[s] - mx) / sum;
        return;
    }
    double sum = 0;
    if (f->mc.type == HS_GLA) {
        /* c = (q/sqrt(dk)) . (exp(G_t - G_s) * k_s), G the cumulative sum of gk. */
        for (int s = lo; s <= t; s++) {
            double c = 0;
            for (int i = 0; i < dk; i++) {
                double G = 0;
                for (int u = s + 1; u <= t; u++) G += f->gk[((size_t)u * H + head) * dk + i];
                c += f->q[((size_t)t * H + head) * dk + i] / sqrt((double)dk) * exp(G) *
                     f->k[((size_t)s * H + head) * dk + i];
            }
            dist[s] = fabs(c);
        }
    } else {
        /* c = beta_s (q/sqrt(dk)) A_t ... A_{s+1} k_s^T with explicit dk x dk matrices. */
        double P[16][16], A[16][16], N[16][16];
        for (int i = 0; i < dk; i++) for (int j = 0; j < dk; j++) P[i][j] = i == j;
        for (int s = t; s >= lo; s--) {
            const float *k = f->k + ((size_t)s * H + head) * dk;
            const float *q = f->q + ((size_t)t * H + head) * dk;
            double c = 0;
            for (int i = 0; i < dk; i++)
                for (int j = 0; j < dk; j++) c += q[i] * P[i][j] * k[j];
            dist[s] = fabs(f->beta[s * H + head] * c / sqrt((double)dk));
            double alpha = exp((double)f->la[s * H + head]), beta = f->beta[s * H + head];
            for (int i = 0; i < dk; i++)
                for (int j = 0; j < dk; j++) A[i][j] = alpha * ((i == j) - beta * k[i] * k[j]);
            for (int i = 0; i < dk; i++)
                for (int j = 0; j < dk; j++) {
                    N[i][j] = 0;
                    for (int u = 0; u < dk; u++) N[i][j] += P[i][u] * A[u][j];
                }
            memcpy(P, N, sizeof P);
        }
    }
    for (int s = lo; s <= t; s++) sum += dist[s];
    for (int s = lo; s <= t; s++) dist[s] = sum > 0 ? dist[s] / sum : 0;
}

static double rows_err(const fake *f) {
    double *ref = malloc(sizeof(double) * f->T), *got = malloc(sizeof(double) * f->T), worst = 0;
    for (int h = 0; h < f->H; h++) {
        hs_head_view v;
        if (hs_head_view_init(&v, &f->a, h)) { worst = 1e9; break; }
        for (int t = 0; t < f->T; t++) {
            naive_row(ref, f, h, t);
            for (int s = 0; s <= t; s++) got[s] = 0;
            hs_head_view_row(&v, t, got);
            for (int s = 0; s <= t; s++) if (fabs(got[s] - ref[s]) > worst) worst = fabs(got[s] - ref[s]);
        }
        hs_head_view_free(&v);
    }
    free(ref); free(got);
    return worst;
}

TEST(analysis_softmax_rows_vs_naive) {
    int windows[] = { 0, 1, 7 };
    for (int w = 0; w < 3; w++)
        for (int ls = 0; ls < 2; ls++) {
            fake f;
            fake_init(&f, HS_NOPE, 61, 4, 2, 8, 5, windows[w], ls, HS_SWLA_OFF, 0, 0, 100 + w * 2 + ls);
            double e = rows_err(&f);
            fake_free(&f);
            CHECK(e < 1e-9, "window %d log_scale %d: max error %.3g", windows[w], ls, e);
        }
}

TEST(analysis_linear_rows_vs_explicit_products) {
    for (int type = 0; type < 2; type++)
        for (int m = 0; m < 3; m++) {
            fake f;
            fake_init(&f, type ? HS_GDN : HS_GLA, 45, 2, 2, 5, 3, 0, 0, (hs_swla_mode)m, 10, 3, 200 + type * 3 + m);
            double e = rows_err(&f);
            fake_free(&f);
            CHECK(e < 1e-9, "%s swla %d: max error %.3g", type ? "gdn" : "gla", m, e);
        }
}

/* ---- statistics on hand-computed cases ---- */

TEST(analysis_entropy_hand_cases) {
    double d[4] = { 0.5, 0.5, 0, 0 };
    CHECK(fabs(hs_dist_entropy(d, 0, 1) - 1.0) < 1e-12, "uniform over 2");
    double one[1] = { 1 };
    CHECK(hs_dist_entropy(one, 0, 0) == 0, "t = 0 is 0");
    double u[4] = { 0.25, 0.25, 0.25, 0.25 };
    CHECK(fabs(hs_dist_entropy(u, 0, 3) - 1.0) < 1e-12, "uniform over 4");
    double hot[4] = { 0, 0, 1, 0 };
    CHECK(hs_dist_entropy(hot, 0, 3) == 0, "one-hot is 0");
    /* window of 2 at t = 3: ln 2 / ln 4 = 0.5 */
    double w[4] = { 0, 0, 0.5, 0.5 };
    CHECK(fabs(hs_dist_entropy(w, 2, 3) - 0.5) < 1e-12, "windowed: %g", hs_dist_entropy(w, 2, 3));
    double m[3] = { 0.2, 0.3, 0.5 };
    double ref = -(0.2 * log(0.2) + 0.3 * log(0.3) + 0.5 * log(0.5)) / log(3.0);
    CHECK(fabs(hs_dist_entropy(m, 0, 2) - ref) < 1e-12, "mixed");
}

TEST(analysis_topk_hit_ties) {
    double d[5] = { 0.1, 0.3, 0.3, 0.3, 0.0 };
    CHECK(hs_dist_topk_hit(d, 0, 4, 1, 2, 1) == 1, "tied top entry counts with k = 1");
    CHECK(hs_dist_topk_hit(d, 0, 4, 3, 4, 1) == 1, "every tied entry counts");
    CHECK(hs_dist_topk_hit(d, 0, 4, 0, 1, 3) == 0, "3 strictly larger, k = 3: miss");
    CHECK(hs_dist_topk_hit(d, 0, 4, 0, 1, 4) == 1, "3 strictly larger, k = 4: hit");
    CHECK(hs_dist_topk_hit(d, 0, 4, 4, 5, 64) == 0, "zero weight never counts");
    CHECK(hs_dist_topk_hit(d, 0, 4, 0, 2, 1) == 1, "best span position decides");
    CHECK(hs_dist_topk_hit(d, 0, 4, -1, -1, 1) == 0, "empty span");
    CHECK(hs_dist_topk_hit(d, 0, 2, 3, 5, 64) == 0, "span after the query");
    double all0[3] = { 0, 0, 0 };
    CHECK(hs_dist_topk_hit(all0, 0, 2, 0, 3, 64) == 0, "all zero");
    CHECK(hs_topk_default(4096) == 64 && hs_topk_default(100000) == 64 && hs_topk_default(512) == 8 &&
          hs_topk_default(10) == 1, "default k");
}

TEST(analysis_argmax_and_retrieval_hand_cases) {
    double d[4] = { 0.2, 0.4, 0.4, 0.0 };
    CHECK(hs_dist_argmax(d, 0, 3) == 1, "ties go to the earliest");
    float f[4] = { 0.1f, 0.2f, 0.7f, 0.0f };
    CHECK(hs_dist_argmax_f(f, 4) == 2, "float argmax");
    /* prompt tokens, span [2,5) holds 7 8 9; two heads, three generated tokens */
    int32_t tokens[6] = { 1, 2, 7, 8, 9, 3 };
    int32_t gen[3] = { 7, 8, 4 };
    int amax[2 * 3] = { 2, 3, 4,      /* head 0: hits 7 and 8, third token 4 != 9 */
                        0, 4, -1 };   /* head 1: outside the span, then 9 != 8 */
    double score[2] = { 0, 0 };
    hs_retrieval_score(score, amax, 2, 3, tokens, 2, 5, gen, 3);
    CHECK(fabs(score[0] - 2.0 / 3.0) < 1e-12 && score[1] == 0, "scores %g %g", score[0], score[1]);
    double none[2] = { 0, 0 };
    hs_retrieval_score(none, amax, 2, 3, tokens, -1, -1, gen, 3);
    CHECK(none[0] == 0 && none[1] == 0, "no span: no score");
}

/* ---- pooled maps against a naive full matrix ---- */

static int naive_map_check(const fake *f, int head, hs_map_opts o, int sampled_rows, char *why, size_t n) {
    int T = f->T;
    char err[256];
    if (hs_map_opts_resolve(&o, T, err, sizeof err)) { snprintf(why, n, "resolve: %.200s", err); return 0; }
    o.rows_per_bin = sampled_rows;
    int R = hs_map_rows_per_bin(&o);
    double *full = malloc(sizeof(double) * T * T);
    for (int t = 0; t < T; t++) naive_row(full + (size_t)t * T, f, head, t);
    hs_head_view v;
    hs_head_view_init(&v, &f->a, head);
    hs_pooled_map pm;
    long long used = 0;
    int rc = hs_pooled_map_from_view(&pm, &v, &o, &used, NULL, NULL, err, sizeof err);
    hs_head_view_free(&v);
    if (rc) { free(full); snprintf(why, n, "map: %.200s", err); return 0; }
    int ok = 1;
    int nt = o.t1 - o.t0, ns = o.s1 - o.s0;
    for (int i = 0; i < o.bins_t && ok; i++) {
        int a = o.t0 + i * nt / o.bins_t, b = o.t0 + (i + 1) * nt / o.bins_t;
        for (int j = 0; j < o.bins_s && ok; j++) {
            int c0 = o.s0 + j * ns / o.bins_s, c1 = o.s0 + (j + 1) * ns / o.bins_s;
            double sum = 0, mx = -1;
            long cnt = 0;
            int any_causal = 0;
            for (int t = a; t < b; t++)
                for (int s = c0; s < c1; s++) if (s <= t) any_causal = 1;
            for (int r = 0; r < (R ? R : b - a); r++) {
                int t = R ? a + (r + 1) * (b - a) / R - 1 : a + r;
                for (int s = c0; s < c1 && s <= t; s++) {
                    double x = full[(size_t)t * T + s];
                    sum += x; cnt++;
                    if (x > mx) mx = x;
                }
            }
            float got = pm.cells[(size_t)i * o.bins_s + j];
            if (!any_causal) {
                if (!isnan(got)) { snprintf(why, n, "cell %d,%d: expected NaN, got %g", i, j, got); ok = 0; }
                continue;
            }
            if (cnt == 0) { snprintf(why, n, "cell %d,%d: causal but no sampled entry", i, j); ok = 0; continue; }
            double want = o.agg == HS_POOL_MAX ? mx : sum / cnt;
            if (isnan(got) || fabs(got - want) > 1e-6 * (1 + fabs(want))) {
                snprintf(why, n, "cell %d,%d: got %.8g want %.8g", i, j, got, want);
                ok = 0;
            }
        }
    }
    if (ok && R == 0) {
        long long want_rows = 0;
        for (int t = o.t0; t < o.t1; t++) if (t >= o.s0) want_rows++;
        if (used != want_rows) { snprintf(why, n, "rows used %lld, expected %lld", used, want_rows); ok = 0; }
    }
    /* the CUDA path reports its rows through hs_map_rows_used: the same count, sampled too */
    if (ok && hs_map_rows_used(&o) != used) {
        snprintf(why, n, "hs_map_rows_used %lld, the CPU pooling computed %lld", hs_map_rows_used(&o), used);
        ok = 0;
    }
    hs_pooled_map_free(&pm);
    free(full);
    return ok;
}

TEST(analysis_pooled_map_vs_naive) {
    char why[256];
    struct { hs_mixer_type type; int window; hs_swla_mode swla; } cases[] = {
        { HS_NOPE, 0, HS_SWLA_OFF }, { HS_SWA, 13, HS_SWLA_OFF }, { HS_GLA, 0, HS_SWLA_EXACT },
        { HS_GDN, 0, HS_SWLA_OVERLAP }, { HS_GLA, 0, HS_SWLA_OFF },
    };
    for (int c = 0; c < 5; c++) {
        fake f;
        int T = c == 0 ? 300 : 97;
        fake_init(&f, cases[c].type, T, 2, hs_mixer_is_softmax(cases[c].type) ? 1 : 2, 4, 3,
                  cases[c].window, 0, cases[c].swla, 20, 6, 300 + c);
        for (int agg = 0; agg < 2; agg++) {
            hs_map_opts o = { .head = { 0, 0, 1 }, .bins_t = 10, .bins_s = 13, .agg = agg };
            CHECK(naive_map_check(&f, 1, o, -1, why, sizeof why), "case %d agg %d whole: %s", c, agg, why);
            hs_map_opts z = { .head = { 0, 0, 1 }, .bins_t = 7, .bins_s = 9, .agg = agg,
                              .t0 = 20, .t1 = 90, .s0 = 5, .s1 = 61 };
            CHECK(naive_map_check(&f, 1, z, -1, why, sizeof why), "case %d agg %d zoom: %s", c, agg, why);
            hs_map_opts zb = { .head = { 0, 0, 0 }, .bins_t = 5, .bins_s = 6, .agg = agg,
                               .t0 = 3, .t1 = 40, .s0 = 30, .s1 = 97 };
            CHECK(naive_map_check(&f, 0, zb, -1, why, sizeof why), "case %d agg %d zoom above diagonal: %s", c, agg, why);
            hs_map_opts s = { .head = { 0, 0, 0 }, .bins_t = 8, .bins_s = 8, .agg = agg };
            CHECK(naive_map_check(&f, 0, s, 3, why, sizeof why), "case %d agg %d sampled: %s", c, agg, why);
        }
        fake_free(&f);
    }
}

TEST(analysis_map_opts_checks) {
    char err[256];
    hs_map_opts o = { .bins_t = 2000 };
    CHECK(hs_map_opts_resolve(&o, 100, err, sizeof err) == -1 && strstr(err, "--bins"), "bins > 1024");
    hs_map_opts z = { .t0 = 50, .t1 = 40 };
    CHECK(hs_map_opts_resolve(&z, 100, err, sizeof err) == -1 && strstr(err, "--zoom"), "bad zoom");
    hs_map_opts c = { .bins_t = 512, .bins_s = 512, .s0 = 10, .s1 = 20 };
    CHECK(hs_map_opts_resolve(&c, 100, err, sizeof err) == 0 && c.bins_t == 100 && c.bins_s == 10, "clamped");
    hs_map_opts big = { 0 };
    CHECK(hs_map_opts_resolve(&big, 16384, err, sizeof err) == 0 && hs_map_rows_per_bin(&big) == HS_MAP_SAMPLE_ROWS,
          "16K with 256 bins samples");
    hs_map_opts small = { 0 };
    CHECK(hs_map_opts_resolve(&small, 4096, err, sizeof err) == 0 && hs_map_rows_per_bin(&small) == 0,
          "4K is exact");
}

TEST(analysis_spectral_norm) {
    /* diag(3, 2) padded with a zero column: norm 3; difference against itself: 0. */
    float m[2 * 3] = { 3, 0, 0, 0, 2, 0 };
    CHECK(fabs(hs_spectral_norm(m, 2, 3, NULL, 1000) - 3.0) < 1e-9, "diag");
    CHECK(hs_spectral_norm(m, 2, 3, m, 1000) == 0.0, "zero difference");
    /* A rank-one matrix u v^T has norm |u||v|. */
    float r[3 * 4];
    double u[3] = { 1, -2, 0.5 }, v[4] = { 0.3, 1, -1, 2 };
    for (int i = 0; i < 3; i++) for (int j = 0; j < 4; j++) r[i * 4 + j] = (float)(u[i] * v[j]);
    double want = sqrt(1 + 4 + 0.25) * sqrt(0.09 + 1 + 1 + 4);
    CHECK(fabs(hs_spectral_norm(r, 3, 4, NULL, 1000) - want) < 1e-5 * want, "rank one");
}

/* ---- the chunked many-rows path against the single-row sweep ---- */

TEST(analysis_many_rows_match_single_rows) {
    struct { hs_mixer_type type; int window, ls; hs_swla_mode swla; int W, S; } cases[] = {
        { HS_NOPE, 0, 1, HS_SWLA_OFF, 0, 0 }, { HS_SWA, 70, 0, HS_SWLA_OFF, 0, 0 },
        { HS_GLA, 0, 0, HS_SWLA_OFF, 0, 0 }, { HS_GLA, 0, 0, HS_SWLA_EXACT, 100, 0 },
        { HS_GLA, 0, 0, HS_SWLA_OVERLAP, 90, 20 }, { HS_GDN, 0, 0, HS_SWLA_OFF, 0, 0 },
        { HS_GDN, 0, 0, HS_SWLA_EXACT, 65, 0 }, { HS_GDN, 0, 0, HS_SWLA_OVERLAP, 128, 32 },
    };
    int T = 333;
    /* unsorted, duplicated, chunk-boundary and first/last rows */
    int ts[] = { 332, 0, 63, 64, 65, 127, 200, 5, 331, 128, 129, 64, 250, 1, 191, 192 };
    int n = (int)(sizeof ts / sizeof ts[0]);
    double *one = malloc(sizeof(double) * T), *many = malloc(sizeof(double) * (size_t)n * T);
    int los[16];
    for (int c = 0; c < 16; c++) {
        fake f;
        /* second pass: slow decays, so chunks far from the query still carry weight */
        g_gate_scale = c < 8 ? 1.0 : 0.01;
        fake_init(&f, cases[c % 8].type, T, 2, hs_mixer_is_softmax(cases[c % 8].type) ? 1 : 2, 16, 8,
                  cases[c % 8].window, cases[c % 8].ls, cases[c % 8].swla, cases[c % 8].W,
                  cases[c % 8].S, 900 + c);
        g_gate_scale = 1.0;
        double worst = 0;
        for (int h = 0; h < 2; h++) {
            hs_head_view v;
            CHECK(hs_head_view_init(&v, &f.a, h) == 0 && hs_head_view_prepare(&v) == 0, "init");
            for (size_t i = 0; i < (size_t)n * T; i++) many[i] = -1;
            CHECK(hs_head_view_rows(&v, ts, n, many, (size_t)T, los) == 0, "rows");
            for (int r = 0; r < n; r++) {
                int lo = hs_head_view_row(&v, ts[r], one);
                CHECK(lo == los[r], "case %d row %d: lo %d vs %d", c, ts[r], los[r], lo);
                double scale = 1e-12;
                for (int s = lo; s <= ts[r]; s++) if (one[s] > scale) scale = one[s];
                for (int s = lo; s <= ts[r]; s++) {
                    double e = fabs(many[(size_t)r * T + s] - one[s]) / scale;
                    if (worst == worst && !(e <= worst)) worst = e; /* a NaN sticks */
                }
                for (int s = 0; s < lo; s++)
                    CHECK(many[(size_t)r * T + s] == -1, "case %d: wrote outside the visible range", c);
            }
            hs_head_view_free(&v);
        }
        fake_free(&f);
        CHECK(worst < 2e-5, "case %d (type %d swla %d): max relative difference %.3g", c,
              (int)cases[c % 8].type, (int)cases[c % 8].swla, worst);
    }
    free(one);
    free(many);
}

/* ---- probe statistics on exact ties (repeated tokens under a NoPE head) ---- */

TEST(analysis_probe_stats_exact_ties) {
    /* Every key identical: a~ is uniform, every position ties, so a span of one position is
     * a top-1 hit (nothing is strictly larger) for every probe row; entropy is exactly 1. */
    const char *json = "{\"model_type\":\"hybrid\",\"vocab_size\":300,\"hidden_size\":8,"
                       "\"intermediate_size\":8,\"num_hidden_layers\":1,\"head_dim\":64,"
                       "\"train_context\":64,\"layers\":[{\"mixers\":[{\"type\":\"nope\",\"num_heads\":2}]}]}";
    hs_config *c = calloc(1, sizeof *c);
    char err[HS_ERR_LEN];
    CHECK(hs_config_parse(c, json, strlen(json), "t.json", err, sizeof err) == 0, "%.300s", err);
    int T = 700, H = 2, dk = 64;
    float *q = malloc(sizeof(float) * T * H * dk), *k = malloc(sizeof(float) * T * H * dk);
    hs_test_rng rng = { 5 };
    float key[64];
    hs_test_fill_normal(key, dk, 1.0, &rng);
    hs_test_fill_normal(q, (size_t)T * H * dk, 1.0, &rng);
    for (int t = 0; t < T * H; t++) memcpy(k + (size_t)t * dk, key, sizeof key);
    hs_knobs_resolved kr;
    memset(&kr, 0, sizeof kr);
    hs_mixer_acts a;
    memset(&a, 0, sizeof a);
    a.layer = 0; a.mixer = 0; a.mc = &c->layers[0].mixers[0]; a.T = T; a.q = q; a.k = k; a.v = k;
    a.knobs = &kr;
    int probe[40];
    for (int i = 0; i < 40; i++) probe[i] = 600 + i;
    hs_head_stat heads[2];
    memset(heads, 0, sizeof heads);
    hs_probe_stats ps = { c, T, probe, 40, 300, 301, 1, heads, 0 };
    hs_probe_stats_capture(&ps, &a);
    free(q); free(k); free(c);
    CHECK(!ps.failed, "capture failed");
    for (int h = 0; h < 2; h++) {
        CHECK(heads[h].hit_rate == 1.0, "head %d: hit rate %g on exact ties, expected 1", h, heads[h].hit_rate);
        CHECK(fabs(heads[h].entropy - 1.0) < 1e-12, "head %d: entropy %.15g, expected 1", h, heads[h].entropy);
        CHECK(heads[h].layer == 0 && heads[h].head == h && heads[h].type == HS_NOPE, "head fields");
    }
}
