/* CPU kernels against the naive double-precision references of ref_kernels.c, on random
 * inputs, T values that are not multiples of the chunk or tile. Tolerance: relative error
 * (max |kernel - ref| / max |ref|) <= 1e-4 unless stated. */
#include "test.h"
#include "ref_kernels.h"
#include "cpu/kernels.h"
#include "cpu/vexp.h"

#include <stdlib.h>
#include <string.h>

#define TOL 1e-4

static float *fnew(size_t n) { float *p = calloc(n ? n : 1, sizeof(float)); if (!p) abort(); return p; }
static double *dnew(size_t n) { double *p = calloc(n ? n : 1, sizeof(double)); if (!p) abort(); return p; }
static float *frand(size_t n, double scale, hs_test_rng *r) { float *p = fnew(n); hs_test_fill_normal(p, n, scale, r); return p; }

static double logsigmoid(double x) { return x >= 0 ? -log1p(exp(-x)) : x - log1p(exp(x)); }
static double softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

/* The vectorisable exp used by softmax and the gates: libm-class accuracy on the whole
 * range where the result is a normal float, exact 0 / inf / NaN outside it. */
TEST(kernels_vexp_accuracy) {
    double worst = 0, at = 0;
    for (int i = 0; i <= 2000000; i++) {
        float x = (float)(-86.6 + (86.6 + 88.7) * i / 2000000.0);
        double ref = exp((double)x), rel = fabs((double)hs_expf(x) - ref) / ref;
        if (worst == worst && !(rel <= worst)) { worst = rel; at = x; } /* a NaN sticks */
    }
    CHECK(worst <= 3e-7, "hs_expf max rel err %.3g at x=%.7g", worst, at);
    CHECK(hs_expf(0.0f) == 1.0f, "exp(0) = %.9g", hs_expf(0.0f));
    CHECK(hs_expf(-100.0f) == 0.0f && hs_expf(-INFINITY) == 0.0f, "underflow not 0");
    CHECK(isinf(hs_expf(100.0f)) && isinf(hs_expf(INFINITY)), "overflow not inf");
    CHECK(isnan(hs_expf(NAN)), "NaN not propagated");
}

TEST(kernels_matmul) {
    hs_test_rng r = {1};
    int n = 37, di = 50, dout = 29;
    float *x = frand((size_t)n * di, 1, &r), *w = frand((size_t)dout * di, 1, &r), *y = fnew((size_t)n * dout);
    double *ref = dnew((size_t)n * dout);
    matmul_forward(y, x, w, n, di, dout);
    ref_matmul(ref, x, w, n, di, dout);
    double e = hs_test_rel_err(y, ref, (size_t)n * dout, 1e-6);
    CHECK(e <= TOL, "matmul_forward rel err %.3g", e);
    matmul_accumulate(y, x, w, n, di, dout);
    for (size_t i = 0; i < (size_t)n * dout; i++) ref[i] *= 2;
    e = hs_test_rel_err(y, ref, (size_t)n * dout, 1e-6);
    CHECK(e <= TOL, "matmul_accumulate rel err %.3g", e);
    free(x); free(w); free(y); free(ref);
    /* large enough to be split over threads: by rows (many tokens), by features (few tokens) */
    const int shapes[][3] = {{257, 256, 240}, {3, 512, 10000}};
    for (int c = 0; c < 2; c++) {
        n = shapes[c][0]; di = shapes[c][1]; dout = shapes[c][2];
        x = frand((size_t)n * di, 1, &r); w = frand((size_t)dout * di, 1, &r); y = frand((size_t)n * dout, 1, &r);
        ref = dnew((size_t)n * dout);
        ref_matmul(ref, x, w, n, di, dout);
        for (size_t i = 0; i < (size_t)n * dout; i++) ref[i] += y[i];
        matmul_accumulate(y, x, w, n, di, dout);
        e = hs_test_rel_err(y, ref, (size_t)n * dout, 1e-6);
        CHECK(e <= TOL, "matmul_accumulate %dx%dx%d rel err %.3g", n, di, dout, e);
        matmul_forward(y, x, w, n, di, dout);
        ref_matmul(ref, x, w, n, di, dout);
        e = hs_test_rel_err(y, ref, (size_t)n * dout, 1e-6);
        CHECK(e <= TOL, "matmul_forward %dx%dx%d rel err %.3g", n, di, dout, e);
        free(x); free(w); free(y); free(ref);
    }
}

TEST(kernels_rmsnorm_l2norm) {
    hs_test_rng r = {2};
    int n = 33, d = 70;
    float *x = frand((size_t)n * d, 3, &r), *w = frand((size_t)d, 1, &r), *y = fnew((size_t)n * d);
    double *ref = dnew((size_t)n * d);
    rmsnorm_forward(y, x, w, n, d, 1e-6f);
    ref_rmsnorm(ref, x, w, n, d, 1e-6);
    double e = hs_test_rel_err(y, ref, (size_t)n * d, 1e-6);
    CHECK(e <= TOL, "rmsnorm rel err %.3g", e);
    rmsnorm_forward(x, x, w, n, d, 1e-6f); /* in place */
    e = hs_test_rel_err(x, ref, (size_t)n * d, 1e-6);
    CHECK(e <= TOL, "rmsnorm in place rel err %.3g", e);
    hs_test_fill_normal(x, (size_t)n * d, 2, &r);
    ref_l2norm_heads(ref, x, n, 5, 14, 1e-6);
    l2norm_heads_forward(x, n, 5, 14, 1e-6f);
    e = hs_test_rel_err(x, ref, (size_t)n * d, 1e-6);
    CHECK(e <= TOL, "l2norm rel err %.3g", e);
    free(x); free(w); free(y); free(ref);
}

TEST(kernels_rope) {
    hs_test_rng r = {3};
    int T = 21, H = 3, hd = 16;
    const int pos0s[] = {0, 7, 65000};
    const float thetas[] = {10000.0f, 500000.0f};
    float *x = fnew((size_t)T * H * hd), *x0 = frand((size_t)T * H * hd, 1, &r);
    double *ref = dnew((size_t)T * H * hd);
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 2; b++) {
            memcpy(x, x0, sizeof(float) * (size_t)T * H * hd);
            rope_forward(x, T, H, hd, thetas[b], pos0s[a]);
            ref_rope(ref, x0, T, H, hd, thetas[b], pos0s[a]);
            double e = hs_test_rel_err(x, ref, (size_t)T * H * hd, 1e-6);
            CHECK(e <= TOL, "rope pos0=%d theta=%g rel err %.3g", pos0s[a], thetas[b], e);
        }
    free(x); free(x0); free(ref);
}

/* hs_log1pf_unit (the gla gate's logsigmoid): log1p over [0, 1] in libm's accuracy class. */
TEST(kernels_log1p_unit) {
    double worst = 0, at = 0;
    for (int i = 0; i <= 2000000; i++) {
        float u = (float)(i / 2000000.0);
        double ref = log1p((double)u), rel = u > 0 ? fabs(hs_log1pf_unit(u) - ref) / ref : fabs(hs_log1pf_unit(u));
        if (worst == worst && !(rel <= worst)) { worst = rel; at = u; } /* a NaN sticks */
    }
    for (int i = 0; i <= 2000; i++) {   /* tiny arguments: log1p(u) = u to the last bit */
        float u = (float)pow(10.0, -40.0 + 39.9 * i / 2000.0);
        double ref = log1p((double)u), rel = fabs(hs_log1pf_unit(u) - ref) / ref;
        if (worst == worst && !(rel <= worst)) { worst = rel; at = u; }
    }
    CHECK(worst <= 2e-7, "hs_log1pf_unit max rel err %.3g at u=%.9g", worst, at);
    CHECK(hs_log1pf_unit(0.0f) == 0.0f && isnan(hs_log1pf_unit(NAN)), "log1p(0) / log1p(NaN)");
}

/* The softmax's own exponentials (AVX-512 where the CPU has it): hs_expf's accuracy class over
 * [-86.6, 0], the same special values, every tail length, and the sum it returns. */
TEST(kernels_softmax_exp_row) {
    enum { N = 1000 };
    float buf[N];
    double worst = 0, at = 0;
    for (int i0 = 0; i0 <= 2000000; i0 += N) {
        int n = 2000001 - i0 < N ? 2000001 - i0 : N;
        double ref_sum = 0;
        for (int j = 0; j < n; j++) buf[j] = (float)(-86.6 * (i0 + j) / 2000000.0);
        float xs[N];
        for (int j = 0; j < n; j++) xs[j] = buf[j];
        float sum = softmax_exp_row(buf, n, 0.0f);
        for (int j = 0; j < n; j++) {
            double ref = exp((double)xs[j]), rel = fabs((double)buf[j] - ref) / ref;
            ref_sum += ref;
            if (worst == worst && !(rel <= worst)) { worst = rel; at = xs[j]; } /* a NaN sticks */
        }
        double es = fabs(sum - ref_sum) / ref_sum;
        CHECK(es <= 1e-6, "softmax_exp_row sum rel err %.3g at block %d", es, i0);
    }
    CHECK(worst <= 3e-7, "softmax_exp_row max rel err %.3g at x=%.7g", worst, at);
    float sp[6] = {0.0f, -100.0f, -INFINITY, NAN, -86.7f, 3.0f};
    float sum = softmax_exp_row(sp, 6, 3.0f);   /* x = s - 3 */
    CHECK(sp[0] == hs_expf(-3.0f) || fabs(sp[0] - exp(-3.0)) <= 3e-7 * exp(-3.0), "exp(-3) = %.9g", sp[0]);
    CHECK(sp[1] == 0.0f && sp[2] == 0.0f && sp[4] == 0.0f, "below -86.6: %g %g %g", sp[1], sp[2], sp[4]);
    CHECK(isnan(sp[3]) && isnan(sum), "NaN score: %g (sum %g)", sp[3], sum);
    CHECK(sp[5] == 1.0f, "exp(0) = %.9g", sp[5]);
    /* every tail length, against the loop's hs_expf */
    hs_test_rng r = {9};
    for (int n = 1; n <= 70; n++) {
        float a[80], b[80];
        for (int j = 0; j < 80; j++) a[j] = b[j] = (float)(-20.0 * hs_test_uniform(&r));
        float sa = softmax_exp_row(a, n, 0.5f), sb = 0;
        for (int j = 0; j < n; j++) { b[j] = hs_expf(b[j] - 0.5f); sb += b[j]; }
        for (int j = 0; j < 80; j++) {
            double d = fabs((double)a[j] - b[j]);
            CHECK(j < n ? d <= 3e-7 * b[j] + 1e-30 : a[j] == b[j], "n=%d j=%d: %.9g against %.9g", n, j, a[j], b[j]);
        }
        CHECK(fabs(sa - sb) <= 1e-6 * sb, "n=%d sum %.9g against %.9g", n, sa, sb);
    }
}

TEST(kernels_silu_swiglu) {
    hs_test_rng r = {4};
    for (int big = 0; big < 2; big++) {
    size_t n = big ? 300001 : 1001; /* the second size runs the OpenMP path */
    float *g = frand(n, 4, &r), *u = frand(n, 1, &r), *y = fnew(n);
    double *ref = dnew(n);
    silu_forward(y, g, n);
    ref_silu(ref, g, n);
    double e = hs_test_rel_err(y, ref, n, 1e-6);
    CHECK(e <= TOL, "silu rel err %.3g", e);
    swiglu_forward(y, g, u, n);
    ref_swiglu(ref, g, u, n);
    e = hs_test_rel_err(y, ref, n, 1e-6);
    CHECK(e <= TOL, "swiglu rel err %.3g", e);
    free(g); free(u); free(y); free(ref);
    }
    /* the tails: silu(-100) = -0 (rounded), silu(100) = 100 */
    float z[2] = {-100.0f, 100.0f}, o[2];
    silu_forward(o, z, 2);
    CHECK(o[0] == 0.0f && o[1] == 100.0f, "silu tails %g %g", o[0], o[1]);
}

TEST(kernels_conv1d) {
    hs_test_rng r = {5};
    const int Ts[] = {1, 2, 3, 13, 64, 2000}; /* 2000 x 40 x 4 > 2^18: the OpenMP path */
    int C = 40, K = 4;
    for (int a = 0; a < 6; a++) {
        int T = Ts[a];
        float *x = frand((size_t)T * C, 1, &r), *w = frand((size_t)C * K, 1, &r), *y = fnew((size_t)T * C);
        float *hist = frand((size_t)(K - 1) * C, 1, &r);
        double *ref = dnew((size_t)T * C);
        conv1d_causal_forward(y, x, w, T, C, K, NULL);
        ref_conv1d(ref, x, w, T, C, K, NULL);
        double e = hs_test_rel_err(y, ref, (size_t)T * C, 1e-6);
        CHECK(e <= TOL, "conv1d T=%d rel err %.3g", T, e);
        conv1d_causal_forward(y, x, w, T, C, K, hist);
        ref_conv1d(ref, x, w, T, C, K, hist);
        e = hs_test_rel_err(y, ref, (size_t)T * C, 1e-6);
        CHECK(e <= TOL, "conv1d with history T=%d rel err %.3g", T, e);
        free(x); free(w); free(y); free(hist); free(ref);
    }
    /* decoding: running the second half with the first half's last K-1 rows as history equals
     * one pass over the whole sequence */
    int T = 20, P = 9;
    float *x = frand((size_t)T * C, 1, &r), *w = frand((size_t)C * K, 1, &r);
    float *full = fnew((size_t)T * C), *part = fnew((size_t)T * C);
    conv1d_causal_forward(full, x, w, T, C, K, NULL);
    conv1d_causal_forward(part, x, w, P, C, K, NULL);
    conv1d_causal_forward(part + (size_t)P * C, x + (size_t)P * C, w, T - P, C, K, x + (size_t)(P - K + 1) * C);
    CHECK(hs_test_rel_err_ff(part, full, (size_t)T * C, 1e-6) <= 1e-6, "conv1d split with history differs");
    free(x); free(w); free(full); free(part);
}

TEST(kernels_attention) {
    hs_test_rng r = {6};
    struct { int T, H, Hkv, dk, dv, window, tile, scaled, exact; } cs[] = {
        {1, 4, 4, 16, 16, 0, 16, 0, 0},   {63, 4, 2, 16, 8, 0, 16, 1, 0},  {65, 4, 1, 32, 16, 0, 32, 0, 0},
        {200, 4, 2, 16, 16, 17, 16, 1, 0}, {200, 2, 2, 8, 24, 1, 32, 0, 0}, {200, 4, 1, 16, 16, 64, 64, 1, 0},
        {513, 2, 1, 32, 32, 0, 64, 1, 0},  {513, 4, 2, 16, 16, 100, 32, 0, 0}, {300, 3, 3, 16, 16, 600, 16, 0, 0},
        {129, 2, 2, 64, 64, 0, 0, 1, 0},
        /* the sample models' heads (40: panels of 16 with a short last one, 16 + 16 + 8 value
         * columns), an odd key dim, a wide value dim, row counts that leave a tail of query rows */
        {1100, 4, 4, 40, 40, 0, 128, 1, 0}, {300, 2, 1, 20, 40, 0, 100, 0, 0}, {77, 2, 2, 48, 128, 50, 64, 1, 0},
        {531, 3, 1, 40, 40, 200, 30, 0, 0},
        /* scores spread over thousands, exact in fp32 (integer q and k, dk = 16): exp(s - m)
         * overflows unless m is each row's true max (a softmax is otherwise the same whatever m
         * is, so only these catch a wrong max), and no rounding of near ties blurs the check */
        {1100, 2, 2, 16, 16, 0, 128, 0, 1}, {531, 2, 1, 16, 40, 200, 64, 0, 1}, {77, 1, 1, 16, 8, 0, 16, 0, 1},
    };
    /* each case through the default path (the tile kernels where the CPU has AVX-512) and
     * through sgemm (HS_CPU_ATTN=blas) */
    static const char *impls[] = {NULL, "blas"};
    const char *impl_env = getenv("HS_CPU_ATTN");
    char *impl_saved = impl_env ? strdup(impl_env) : NULL;
    for (int impl = 0; impl < 2; impl++)
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        if (impls[impl]) setenv("HS_CPU_ATTN", impls[impl], 1);
        else unsetenv("HS_CPU_ATTN");
        int T = cs[c].T, H = cs[c].H, Hkv = cs[c].Hkv, dk = cs[c].dk, dv = cs[c].dv;
        float *q = frand((size_t)T * H * dk, 1.5, &r), *k = frand((size_t)T * Hkv * dk, 1.5, &r);
        float *v = frand((size_t)T * Hkv * dv, 1, &r), *o = fnew((size_t)T * H * dv);
        if (cs[c].exact) {
            for (size_t i = 0; i < (size_t)T * H * dk; i++) q[i] = 16.0f * (float)((int)(17 * hs_test_uniform(&r)) - 8);
            for (size_t i = 0; i < (size_t)T * Hkv * dk; i++) k[i] = (float)((int)(17 * hs_test_uniform(&r)) - 8);
        }
        float *rs = NULL;
        if (cs[c].scaled) {
            rs = fnew((size_t)T);
            for (int t = 0; t < T; t++) rs[t] = (float)(1.0 + 2.0 * hs_test_uniform(&r));
        }
        double *ref = dnew((size_t)T * H * dv);
        attention_forward(o, q, k, v, rs, T, H, Hkv, dk, dv, cs[c].window, cs[c].tile);
        ref_attention(ref, q, k, v, rs, T, H, Hkv, dk, dv, cs[c].window);
        double e = hs_test_rel_err(o, ref, (size_t)T * H * dv, 1e-6);
        CHECK(e <= TOL, "attention (%s) T=%d H=%d Hkv=%d dk=%d dv=%d window=%d tile=%d scaled=%d: rel err %.3g",
              impls[impl] ? "sgemm" : "default", T, H, Hkv, dk, dv, cs[c].window, cs[c].tile, cs[c].scaled, e);
        free(q); free(k); free(v); free(o); free(rs); free(ref);
    }
    if (impl_saved) setenv("HS_CPU_ATTN", impl_saved, 1);
    else unsetenv("HS_CPU_ATTN");
    free(impl_saved);
}

/* ---- linear attention ------------------------------------------------------------- */

typedef struct {
    int T, H, dk, dv;
    float *q, *k, *v, *gk, *beta, *log_alpha;
} lin_inputs;

/* gate_mode 0: logsigmoid(x)/16 (the spec's default normalizer), 1: decays very close to 1,
 * 2: strong and mixed gates down to ~-60 per step (exp overflow bait). */
static lin_inputs gla_inputs(int T, int H, int dk, int dv, int gate_mode, hs_test_rng *r) {
    lin_inputs in = {T, H, dk, dv, frand((size_t)T * H * dk, 1, r), frand((size_t)T * H * dk, 1, r),
                     frand((size_t)T * H * dv, 1, r), fnew((size_t)T * H * dk), NULL, NULL};
    for (size_t i = 0; i < (size_t)T * H * dk; i++) {
        double x = hs_test_normal(r);
        if (gate_mode == 0) in.gk[i] = (float)(logsigmoid(2 * x + 2) / 16);
        else if (gate_mode == 1) in.gk[i] = (float)(logsigmoid(x + 9) / 16); /* ~ -1e-5 .. -1e-3 */
        else in.gk[i] = (float)(i % 3 == 0 ? logsigmoid(8 * x - 30) : logsigmoid(x + 3) / 16);
    }
    return in;
}

static void l2rows(float *x, long rows, int d) {
    for (long i = 0; i < rows; i++) {
        double ss = 1e-6;
        for (int j = 0; j < d; j++) ss += (double)x[i * d + j] * x[i * d + j];
        for (int j = 0; j < d; j++) x[i * d + j] = (float)(x[i * d + j] / sqrt(ss));
    }
}

static lin_inputs gdn_inputs(int T, int H, int dk, int dv, int neg_eig, hs_test_rng *r) {
    lin_inputs in = {T, H, dk, dv, frand((size_t)T * H * dk, 1, r), frand((size_t)T * H * dk, 1, r),
                     frand((size_t)T * H * dv, 1, r), NULL, fnew((size_t)T * H), fnew((size_t)T * H)};
    l2rows(in.q, (long)T * H, dk);
    l2rows(in.k, (long)T * H, dk);
    for (size_t i = 0; i < (size_t)T * H; i++) {
        double b = 1.0 / (1.0 + exp(-hs_test_normal(r)));
        in.beta[i] = (float)(neg_eig ? 2 * b : b);
        in.log_alpha[i] = (float)(-exp(0.5 * hs_test_normal(r)) * softplus(hs_test_normal(r) - 2));
    }
    return in;
}

static void lin_free(lin_inputs *in) {
    free(in->q); free(in->k); free(in->v); free(in->gk); free(in->beta); free(in->log_alpha);
}

static void run_lin(float *o, const lin_inputs *in, int chunked, int chunk, int swla, int W, int S) {
    if (in->gk) {
        if (chunked) gla_forward_chunked(o, in->q, in->k, in->v, in->gk, in->T, in->H, in->dk, in->dv, chunk, swla, W, S);
        else gla_forward_recurrent(o, in->q, in->k, in->v, in->gk, in->T, in->H, in->dk, in->dv, swla, W, S);
    } else {
        if (chunked) gdn_forward_chunked(o, in->q, in->k, in->v, in->beta, in->log_alpha, in->T, in->H, in->dk, in->dv, chunk, swla, W, S);
        else gdn_forward_recurrent(o, in->q, in->k, in->v, in->beta, in->log_alpha, in->T, in->H, in->dk, in->dv, swla, W, S);
    }
}

static void ref_lin(double *ref, const lin_inputs *in, int swla, int W, int S) {
    if (in->gk) ref_gla(ref, in->q, in->k, in->v, in->gk, in->T, in->H, in->dk, in->dv, swla, W, S);
    else ref_gdn(ref, in->q, in->k, in->v, in->beta, in->log_alpha, in->T, in->H, in->dk, in->dv, swla, W, S);
}

/* Checks recurrent and chunked (chunk 16, 32, 64) against the literal reference for one
 * input set and SWLA setting; returns the worst relative error, and which run in *what. */
static double lin_check(const lin_inputs *in, int swla, int W, int S, const char **what) {
    size_t n = (size_t)in->T * in->H * in->dv;
    float *o = fnew(n);
    double *ref = dnew(n), worst = 0;
    static const char *names[] = {"recurrent", "chunk16", "chunk32", "chunk64"};
    ref_lin(ref, in, swla, W, S);
    for (int i = 0; i < 4; i++) {
        for (size_t j = 0; j < n; j++) o[j] = NAN;
        run_lin(o, in, i > 0, 16 << (i > 0 ? i - 1 : 0), swla, W, S);
        double e = hs_test_rel_err(o, ref, n, 1e-6);
        if (!(e <= worst)) { worst = e; *what = names[i]; }
    }
    free(o); free(ref);
    return worst;
}

static const int lin_Ts[] = {1, 63, 65, 200, 513};

static void lin_suite(hs_test_ctx *ctx__, int gdn) {
    hs_test_rng r = {gdn ? 11u : 10u};
    /* (W, S) pairs: window below, equal to and above the chunk sizes, not multiples of them */
    static const int WS[][2] = {{1, 1}, {10, 3}, {16, 16}, {50, 12}, {64, 16}, {100, 33}, {150, 40}};
    for (int a = 0; a < 5; a++) {
        int T = lin_Ts[a];
        lin_inputs in = gdn ? gdn_inputs(T, 2, 16, 12, a % 2, &r) : gla_inputs(T, 2, 16, 12, a == 4 ? 2 : 0, &r);
        const char *what = "";
        double e = lin_check(&in, SWLA_OFF, 0, 0, &what);
        CHECK(e <= TOL, "%s T=%d swla off: %s rel err %.3g", gdn ? "gdn" : "gla", T, what, e);
        for (int w = 0; w < 7; w++) {
            if (T > 200 && w % 2 == 0) continue; /* keep the literal O(T W dk dv) reference cheap */
            e = lin_check(&in, SWLA_EXACT, WS[w][0], 0, &what);
            CHECK(e <= TOL, "%s T=%d swla exact W=%d: %s rel err %.3g", gdn ? "gdn" : "gla", T, WS[w][0], what, e);
            e = lin_check(&in, SWLA_OVERLAP, WS[w][0], WS[w][1], &what);
            CHECK(e <= TOL, "%s T=%d swla overlap W=%d S=%d: %s rel err %.3g", gdn ? "gdn" : "gla", T,
                  WS[w][0], WS[w][1], what, e);
        }
        lin_free(&in);
    }
}

TEST(kernels_gla_chunked_recurrent_vs_ref) { lin_suite(ctx__, 0); }
TEST(kernels_gdn_chunked_recurrent_vs_ref) { lin_suite(ctx__, 1); }

TEST(kernels_gla_strong_gates_finite) {
    /* gates down to ~-60 per step: a chunked form that factorised exp(b_t - b_s) as
     * exp(b_t) exp(-b_s) would overflow here */
    hs_test_rng r = {12};
    lin_inputs in = gla_inputs(300, 1, 32, 16, 2, &r);
    const char *what = "";
    double e = lin_check(&in, SWLA_OFF, 0, 0, &what);
    CHECK(e <= TOL, "strong gates: %s rel err %.3g", what, e);
    lin_free(&in);
}

/* The spec's visible sets, counted directly: exact sees min(t+1, W) sources, overlap between
 * W-S+1 and W once the window is full; outputs equal the value-path sum over exactly that set. */
TEST(kernels_swla_visible_sets) {
    hs_test_rng r = {13};
    const int T = 200;
    static const int WS[][2] = {{50, 12}, {64, 16}, {33, 33}, {40, 1}};
    for (int gdn = 0; gdn < 2; gdn++) {
        lin_inputs in = gdn ? gdn_inputs(T, 2, 16, 8, 0, &r) : gla_inputs(T, 2, 16, 8, 0, &r);
        size_t n = (size_t)T * 2 * 8;
        int *lo = malloc(sizeof(int) * T);
        float *o = fnew(n);
        double *ref = dnew(n);
        for (int c = 0; c < 4; c++)
            for (int mode = 1; mode <= 2; mode++) {
                int W = WS[c][0], S = WS[c][1];
                for (int t = 0; t < T; t++) {
                    if (mode == 1) lo[t] = t - W + 1 > 0 ? t - W + 1 : 0;
                    else { int j = t / S, st = (j + 1) * S - W; lo[t] = st > 0 ? st : 0; }
                    int seen = t - lo[t] + 1;
                    if (mode == 1) CHECK(seen == (t + 1 < W ? t + 1 : W), "exact sees %d at t=%d", seen, t);
                    else if (lo[t] > 0) CHECK(seen >= W - S + 1 && seen <= W, "overlap W=%d S=%d sees %d at t=%d", W, S, seen, t);
                    else CHECK(seen == t + 1, "overlap before the first restart sees %d at t=%d", seen, t);
                }
                if (gdn) ref_gdn_valuepath(ref, in.q, in.k, in.v, in.beta, in.log_alpha, T, 2, 16, 8, lo);
                else ref_gla_valuepath(ref, in.q, in.k, in.v, in.gk, T, 2, 16, 8, lo);
                for (int chunk = 16; chunk <= 64; chunk *= 4) {
                    run_lin(o, &in, 1, chunk, mode, W, S);
                    double e = hs_test_rel_err(o, ref, n, 1e-6);
                    CHECK(e <= TOL, "%s %s W=%d S=%d chunk=%d vs value-path set: rel err %.3g", gdn ? "gdn" : "gla",
                          mode == 1 ? "exact" : "overlap", W, S, chunk, e);
                }
            }
        free(lo); free(o); free(ref);
        lin_free(&in);
    }
}

/* Long input, decays near 1 (states grow over thousands of steps): exact SWLA must not lose
 * precision. Reference: the value-path sum over (t-W, t] in double. */
TEST(kernels_swla_exact_long_precision) {
    hs_test_rng r = {14};
    const int T = 4096, W = 256, dk = 16, dv = 16;
    for (int gdn = 0; gdn < 2; gdn++) {
        lin_inputs in = gdn ? gdn_inputs(T, 1, dk, dv, 0, &r) : gla_inputs(T, 1, dk, dv, 1, &r);
        if (gdn) for (int t = 0; t < T; t++) in.log_alpha[t] = (float)(-1e-4 * (1 + hs_test_uniform(&r)));
        size_t n = (size_t)T * dv;
        int *lo = malloc(sizeof(int) * T);
        for (int t = 0; t < T; t++) lo[t] = t - W + 1 > 0 ? t - W + 1 : 0;
        float *o = fnew(n);
        double *ref = dnew(n);
        if (gdn) ref_gdn_valuepath(ref, in.q, in.k, in.v, in.beta, in.log_alpha, T, 1, dk, dv, lo);
        else ref_gla_valuepath(ref, in.q, in.k, in.v, in.gk, T, 1, dk, dv, lo);
        run_lin(o, &in, 1, 64, SWLA_EXACT, W, 0);
        double e = hs_test_rel_err(o, ref, n, 1e-6);
        CHECK(e <= TOL, "%s exact T=%d W=%d: rel err %.3g", gdn ? "gdn" : "gla", T, W, e);
        free(lo); free(o); free(ref);
        lin_free(&in);
    }
}

/* Full-size heads (dk = dv = 64, 4 heads): large enough that the kernels run their OpenMP
 * paths; chunked against the recurrence (itself checked against the references above). */
TEST(kernels_linear_parallel_heads) {
    hs_test_rng r = {15};
    const int T = 400, H = 4, dk = 64, dv = 64;
    for (int gdn = 0; gdn < 2; gdn++) {
        lin_inputs in = gdn ? gdn_inputs(T, H, dk, dv, 0, &r) : gla_inputs(T, H, dk, dv, 0, &r);
        size_t n = (size_t)T * H * dv;
        float *a = fnew(n), *b = fnew(n);
        for (int mode = 0; mode <= 2; mode++) {
            run_lin(a, &in, 0, 0, mode, 100, 25);
            run_lin(b, &in, 1, 64, mode, 100, 25);
            double e = hs_test_rel_err_ff(b, a, n, 1e-6);
            CHECK(e <= TOL, "%s swla=%d chunked vs recurrent rel err %.3g", gdn ? "gdn" : "gla", mode, e);
        }
        free(a); free(b);
        lin_free(&in);
    }
}

/* A token a query cannot see has no influence at all on its output: perturbing every input of
 * source s (key, value, gate) leaves the rows t with lo(t) > s bitwise unchanged, and changes
 * row s itself. Covers the sliding-window schedule (exact; overlap with S < C) and the block
 * grid (overlap with S >= C). */
TEST(kernels_swla_invisible_bitwise) {
    hs_test_rng r = {16};
    const int T = 150, H = 2, dk = 16, dv = 8;
    static const int cfg[][3] = {{1, 10, 0}, {1, 50, 0}, {2, 20, 6}, {2, 50, 12}, {2, 100, 33}};
    for (int gdn = 0; gdn < 2; gdn++) {
        lin_inputs in = gdn ? gdn_inputs(T, H, dk, dv, 0, &r) : gla_inputs(T, H, dk, dv, 0, &r);
        size_t n = (size_t)T * H * dv;
        float *a = fnew(n), *b = fnew(n);
        for (int c = 0; c < 5; c++)
            for (int chunk = 16; chunk <= 64; chunk *= 4) {
                const int mode = cfg[c][0], W = cfg[c][1], S = cfg[c][2], s = 37;
                run_lin(a, &in, 1, chunk, mode, W, S);
                for (int h = 0; h < H; h++) { /* perturb every input of source s */
                    for (int i = 0; i < dk; i++) in.k[((size_t)s * H + h) * dk + i] += 0.5f;
                    for (int i = 0; i < dv; i++) in.v[((size_t)s * H + h) * dv + i] -= 0.5f;
                    if (gdn) { in.beta[s * H + h] *= 0.5f; in.log_alpha[s * H + h] -= 0.3f; }
                    else for (int i = 0; i < dk; i++) in.gk[((size_t)s * H + h) * dk + i] -= 0.3f;
                }
                run_lin(b, &in, 1, chunk, mode, W, S);
                lin_free(&in);
                /* fresh unperturbed inputs for the next case */
                in = gdn ? gdn_inputs(T, H, dk, dv, 0, &r) : gla_inputs(T, H, dk, dv, 0, &r);
                CHECK(memcmp(a + (size_t)s * H * dv, b + (size_t)s * H * dv, sizeof(float) * H * dv) != 0,
                      "%s mode=%d W=%d: perturbing source %d does not change its own row", gdn ? "gdn" : "gla", mode, W, s);
                for (int t = s; t < T; t++) {
                    int lo = mode == 1 ? t - W + 1 : (t / S + 1) * S - W;
                    if (lo <= s) continue;
                    CHECK(memcmp(a + (size_t)t * H * dv, b + (size_t)t * H * dv, sizeof(float) * H * dv) == 0,
                          "%s mode=%d W=%d S=%d chunk=%d: row %d (first visible %d) depends on source %d",
                          gdn ? "gdn" : "gla", mode, W, S, chunk, t, lo, s);
                }
            }
        free(a); free(b);
        lin_free(&in);
    }
}
