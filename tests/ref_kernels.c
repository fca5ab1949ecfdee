/* Naive double-precision references (see ref_kernels.h). Deliberately the plainest loops
 * that follow the spec's formulas; nothing here is shared with kernels/cpu. */
#include "ref_kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz);
    if (!p) abort();
    return p;
}

void ref_matmul(double *out, const float *in, const float *w, int n, int in_dim, int out_dim) {
    for (int i = 0; i < n; i++)
        for (int o = 0; o < out_dim; o++) {
            double acc = 0;
            for (int j = 0; j < in_dim; j++) acc += (double)in[(size_t)i * in_dim + j] * w[(size_t)o * in_dim + j];
            out[(size_t)i * out_dim + o] = acc;
        }
}

void ref_rmsnorm(double *out, const float *in, const float *w, int n, int dim, double eps) {
    for (int i = 0; i < n; i++) {
        double ss = 0;
        for (int j = 0; j < dim; j++) ss += (double)in[(size_t)i * dim + j] * in[(size_t)i * dim + j];
        double r = 1.0 / sqrt(ss / dim + eps);
        for (int j = 0; j < dim; j++) out[(size_t)i * dim + j] = in[(size_t)i * dim + j] * r * w[j];
    }
}

void ref_l2norm_heads(double *out, const float *x, int T, int n_heads, int dim, double eps) {
    for (long r = 0; r < (long)T * n_heads; r++) {
        double ss = 0;
        for (int j = 0; j < dim; j++) ss += (double)x[r * dim + j] * x[r * dim + j];
        for (int j = 0; j < dim; j++) out[r * dim + j] = x[r * dim + j] / sqrt(ss + eps);
    }
}

void ref_rope(double *out, const float *x, int T, int n_heads, int head_dim, double theta, int pos0) {
    int half = head_dim / 2;
    for (int t = 0; t < T; t++)
        for (int h = 0; h < n_heads; h++) {
            const float *xi = x + ((size_t)t * n_heads + h) * head_dim;
            double *yo = out + ((size_t)t * n_heads + h) * head_dim;
            for (int i = 0; i < half; i++) {
                double f = pow(theta, -2.0 * i / head_dim), a = (double)(pos0 + t) * f;
                yo[i] = xi[i] * cos(a) - xi[i + half] * sin(a);
                yo[i + half] = xi[i + half] * cos(a) + xi[i] * sin(a);
            }
            if (head_dim % 2) yo[head_dim - 1] = xi[head_dim - 1];
        }
}

void ref_silu(double *out, const float *in, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = in[i] / (1.0 + exp(-(double)in[i]));
}

void ref_swiglu(double *out, const float *gate, const float *up, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = gate[i] / (1.0 + exp(-(double)gate[i])) * up[i];
}

void ref_conv1d(double *out, const float *in, const float *w, int T, int C, int K, const float *history) {
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++) {
            double acc = 0;
            for (int j = 0; j < K; j++) {
                int p = t - K + 1 + j;
                double x = p >= 0 ? in[(size_t)p * C + c] : history ? history[(size_t)(p + K - 1) * C + c] : 0.0;
                acc += (double)w[(size_t)c * K + j] * x;
            }
            out[(size_t)t * C + c] = acc;
        }
}

void ref_attention(double *out, const float *q, const float *k, const float *v,
                   const float *row_scale, int T, int H, int Hkv, int dk, int dv, int window) {
    double *z = xcalloc((size_t)T, sizeof(double));
    for (int h = 0; h < H; h++) {
        int g = h / (H / Hkv);
        for (int t = 0; t < T; t++) {
            double c = row_scale ? row_scale[t] : 1.0, mx = -INFINITY;
            int lo = window > 0 && t - window + 1 > 0 ? t - window + 1 : 0;
            for (int s = lo; s <= t; s++) {
                double dot = 0;
                for (int i = 0; i < dk; i++)
                    dot += (double)q[((size_t)t * H + h) * dk + i] * k[((size_t)s * Hkv + g) * dk + i];
                z[s] = c * dot / sqrt((double)dk);
                if (z[s] > mx) mx = z[s];
            }
            double sum = 0;
            for (int s = lo; s <= t; s++) { z[s] = exp(z[s] - mx); sum += z[s]; }
            for (int j = 0; j < dv; j++) {
                double acc = 0;
                for (int s = lo; s <= t; s++) acc += z[s] / sum * v[((size_t)s * Hkv + g) * dv + j];
                out[((size_t)t * H + h) * dv + j] = acc;
            }
        }
    }
    free(z);
}

int ref_swla_restart(int t, int swla, int W, int S) {
    if (swla == 1) return t - W + 1 > 0 ? t - W + 1 : 0;            /* s in (t-W, t] */
    if (swla == 2) { int r = (t / S + 1) * S - W; return r > 0 ? r : 0; } /* block t/S */
    return 0;
}

/* One recurrence step of head h at position s on the double state St [dk, dv]. */
static void gla_step(double *St, const float *k, const float *v, const float *gk, int s, int H, int h, int dk, int dv) {
    for (int i = 0; i < dk; i++) {
        double decay = exp((double)gk[((size_t)s * H + h) * dk + i]);
        double ki = k[((size_t)s * H + h) * dk + i];
        for (int j = 0; j < dv; j++)
            St[(size_t)i * dv + j] = decay * St[(size_t)i * dv + j] + ki * v[((size_t)s * H + h) * dv + j];
    }
}

static void gdn_step(double *St, double *tmp, const float *k, const float *v, const float *beta,
                     const float *log_alpha, int s, int H, int h, int dk, int dv) {
    /* S = alpha (I - beta k^T k) S + beta k^T v */
    double al = exp((double)log_alpha[(size_t)s * H + h]), be = beta[(size_t)s * H + h];
    const float *ks = k + ((size_t)s * H + h) * dk, *vs = v + ((size_t)s * H + h) * dv;
    for (int j = 0; j < dv; j++) {
        double acc = 0;
        for (int i = 0; i < dk; i++) acc += (double)ks[i] * St[(size_t)i * dv + j];
        tmp[j] = acc; /* (k S)_j */
    }
    for (int i = 0; i < dk; i++)
        for (int j = 0; j < dv; j++)
            St[(size_t)i * dv + j] = al * (St[(size_t)i * dv + j] - be * ks[i] * tmp[j]) + be * ks[i] * vs[j];
}

static void read_out(double *out, const double *St, const float *q, int t, int H, int h, int dk, int dv) {
    for (int j = 0; j < dv; j++) {
        double acc = 0;
        for (int i = 0; i < dk; i++) acc += (double)q[((size_t)t * H + h) * dk + i] / sqrt((double)dk) * St[(size_t)i * dv + j];
        out[((size_t)t * H + h) * dv + j] = acc;
    }
}

static void ref_linear(double *out, const float *q, const float *k, const float *v, const float *gk,
                       const float *beta, const float *log_alpha, int T, int H, int dk, int dv,
                       int swla, int W, int S) {
    double *St = xcalloc((size_t)dk * dv, sizeof(double)), *tmp = xcalloc((size_t)dv, sizeof(double));
    for (int h = 0; h < H; h++) {
        int cur_lo = -1, pos = 0;
        for (int t = 0; t < T; t++) {
            int lo = ref_swla_restart(t, swla, W, S);
            if (lo != cur_lo) { /* restart from a zero state at lo */
                memset(St, 0, sizeof(double) * (size_t)dk * dv);
                cur_lo = lo;
                pos = lo;
            }
            for (; pos <= t; pos++) {
                if (gk) gla_step(St, k, v, gk, pos, H, h, dk, dv);
                else gdn_step(St, tmp, k, v, beta, log_alpha, pos, H, h, dk, dv);
            }
            read_out(out, St, q, t, H, h, dk, dv);
        }
    }
    free(St);
    free(tmp);
}

void ref_gla(double *out, const float *q, const float *k, const float *v, const float *gk,
             int T, int H, int dk, int dv, int swla, int W, int S) {
    ref_linear(out, q, k, v, gk, NULL, NULL, T, H, dk, dv, swla, W, S);
}

void ref_gdn(double *out, const float *q, const float *k, const float *v, const float *beta,
             const float *log_alpha, int T, int H, int dk, int dv, int swla, int W, int S) {
    ref_linear(out, q, k, v, NULL, beta, log_alpha, T, H, dk, dv, swla, W, S);
}

void ref_gla_valuepath(double *out, const float *q, const float *k, const float *v, const float *gk,
                       int T, int H, int dk, int dv, const int *lo) {
    double *G = xcalloc((size_t)dk, sizeof(double)); /* G_t - G_s, accumulated as s walks back */
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++) {
            double *o = out + ((size_t)t * H + h) * dv;
            for (int j = 0; j < dv; j++) o[j] = 0;
            for (int i = 0; i < dk; i++) G[i] = 0;
            for (int s = t; s >= lo[t]; s--) {
                double c = 0;
                for (int i = 0; i < dk; i++)
                    c += (double)q[((size_t)t * H + h) * dk + i] / sqrt((double)dk) * exp(G[i]) * k[((size_t)s * H + h) * dk + i];
                for (int j = 0; j < dv; j++) o[j] += c * v[((size_t)s * H + h) * dv + j];
                for (int i = 0; i < dk; i++) G[i] += gk[((size_t)s * H + h) * dk + i];
            }
        }
    free(G);
}

void ref_gdn_valuepath(double *out, const float *q, const float *k, const float *v, const float *beta,
                       const float *log_alpha, int T, int H, int dk, int dv, const int *lo) {
    /* x = (q_t/sqrt(dk)) A_t ... A_{s+1}; c_{t,s} = beta_s x . k_s; A symmetric, so
     * x A_s = alpha_s (x - beta_s (x . k_s) k_s). */
    double *x = xcalloc((size_t)dk, sizeof(double));
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++) {
            double *o = out + ((size_t)t * H + h) * dv;
            for (int j = 0; j < dv; j++) o[j] = 0;
            for (int i = 0; i < dk; i++) x[i] = q[((size_t)t * H + h) * dk + i] / sqrt((double)dk);
            for (int s = t; s >= lo[t]; s--) {
                const float *ks = k + ((size_t)s * H + h) * dk;
                double xk = 0, be = beta[(size_t)s * H + h], al = exp((double)log_alpha[(size_t)s * H + h]);
                for (int i = 0; i < dk; i++) xk += x[i] * ks[i];
                for (int j = 0; j < dv; j++) o[j] += be * xk * v[((size_t)s * H + h) * dv + j];
                for (int i = 0; i < dk; i++) x[i] = al * (x[i] - be * xk * ks[i]);
            }
        }
    free(x);
}
