/* Many query rows of one head at once (the fast path of probe and map).
 *
 * Keys are cut into fixed chunks of HS_ROWS_CHUNK positions, aligned to 0, so what a chunk
 * contributes can be prepared once per head and shared by every row:
 *   softmax  the kv head's keys, contiguous;
 *   gla      K~_s = k_s * exp(G_{b-1} - G_s) (chunk [a,b)) and the chunk's total decay
 *            P = exp(G_{b-1} - G_{a-1}); a row whose sweep vector is R = q_t/sqrt(dk) *
 *            exp(G_t - G_{b-1}) gets c_{t,s} = R . K~_s for the whole chunk (one GEMM for all
 *            rows), then R <- R * P;
 *   gdn      U_s = A_{b-1} ... A_{s+1} k_s and M = A_{b-1} ... A_a (dk x dk): c_{t,s} =
 *            beta_s R . U_s, then R <- R M.
 * Every factor is a product of decays <= 1 or contractions, so nothing overflows. A row's own
 * chunk (the keys from its query back to the chunk start) is swept step by step. Rows are
 * double; the GEMMs are float (relative error ~1e-6 of a row's scale). */
#include "analysis_api.h"
#include "kernels/cpu/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HS_ROWS_CHUNK 256
#define KEY_TILE 512
#define TINY HS_SWEEP_TINY
/* The O(T dk^2) loops of gdn run in the widest vector unit the CPU has. */
#define VEC_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

/* One gdn chunk [lo, hi): U_s = M_s k_s into keys (float), M = A_{hi-1}..A_lo into M (row-major).
 * Mt is dk x dk scratch holding M_s^T, u dk scratch. */
static VEC_CLONES void gdn_chunk(float *keys, double *M, double *Mt, double *u, const hs_head_view *v,
                                 int lo, int hi) {
    const hs_mixer_acts *a = v->acts;
    int dk = v->dk, H = a->mc->num_heads;
    for (int i = 0; i < dk * dk; i++) Mt[i] = 0;
    for (int i = 0; i < dk; i++) Mt[(size_t)i * dk + i] = 1.0;
    for (int s = hi - 1; s >= lo; s--) {
        const float *k = a->k + ((size_t)s * H + v->head) * dk;
        double beta = a->beta[(size_t)s * H + v->head], alpha = v->decay[s];
        for (int i = 0; i < dk; i++) u[i] = 0;
        for (int l = 0; l < dk; l++) {
            double kl = k[l];
            const double *col = Mt + (size_t)l * dk;
#pragma omp simd
            for (int i = 0; i < dk; i++) u[i] += col[i] * kl;
        }
        float *out = keys + (size_t)s * dk;
        for (int i = 0; i < dk; i++) out[i] = (float)u[i];
        for (int jj = 0; jj < dk; jj++) {
            double bk = beta * k[jj];
            double *col = Mt + (size_t)jj * dk;
#pragma omp simd
            for (int i = 0; i < dk; i++) col[i] = alpha * (col[i] - bk * u[i]);
        }
    }
    for (int i = 0; i < dk; i++)
        for (int jj = 0; jj < dk; jj++) M[(size_t)i * dk + jj] = Mt[(size_t)jj * dk + i];
}

/* R <- R M for one row (M row-major dk x dk), tiny values flushed. */
static VEC_CLONES void row_times_matrix(double *R, double *tmp, const double *M, int dk) {
    for (int c = 0; c < dk; c++) tmp[c] = 0;
    for (int i = 0; i < dk; i++) {
        double ri = R[i];
        const double *Mrow = M + (size_t)i * dk;
#pragma omp simd
        for (int c = 0; c < dk; c++) tmp[c] += ri * Mrow[c];
    }
    for (int c = 0; c < dk; c++) R[c] = fabs(tmp[c]) < TINY ? 0 : tmp[c];
}

int hs_head_view_prepare(hs_head_view *v) {
    if (v->prepared) return 0;
    const hs_mixer_acts *a = v->acts;
    int T = v->T, dk = v->dk, C = HS_ROWS_CHUNK;
    int nch = (T + C - 1) / C;
    v->keys = malloc(sizeof(float) * (size_t)T * dk);
    if (!v->keys) return -1;
    if (hs_mixer_is_softmax(v->type)) {
        int hkv = a->mc->num_kv_heads > 0 ? a->mc->num_kv_heads : a->mc->num_heads;
        for (int s = 0; s < T; s++)
            memcpy(v->keys + (size_t)s * dk, a->k + ((size_t)s * hkv + v->kv_head) * dk, sizeof(float) * dk);
        v->prepared = 1;
        return 0;
    }
    int H = a->mc->num_heads;
    size_t carry_n = v->type == HS_GLA ? (size_t)dk : (size_t)dk * dk;
    v->carry = malloc(sizeof(double) * (size_t)nch * carry_n);
    double *P = malloc(sizeof(double) * (size_t)dk * dk);   /* gla: P_s; gdn: M^T */
    double *u = malloc(sizeof(double) * (size_t)dk);
    if (!v->carry || !P || !u) { free(P); free(u); return -1; }
    for (int j = 0; j < nch; j++) {
        int lo = j * C, hi = lo + C < T ? lo + C : T;
        if (v->type == HS_GLA) {
            for (int i = 0; i < dk; i++) P[i] = 1.0;
            for (int s = hi - 1; s >= lo; s--) {
                const float *k = a->k + ((size_t)s * H + v->head) * dk;
                const double *d = v->decay + (size_t)s * dk;
                float *out = v->keys + (size_t)s * dk;
                for (int i = 0; i < dk; i++) {
                    out[i] = (float)(P[i] * k[i]);
                    P[i] = P[i] * d[i] < TINY ? 0.0 : P[i] * d[i];
                }
            }
            memcpy(v->carry + (size_t)j * dk, P, sizeof(double) * dk);
        } else {
            /* M_{b-1} = I; u_s = M_s k_s; M_{s-1} = alpha_s (M_s - beta_s u_s k_s^T). */
            gdn_chunk(v->keys, v->carry + (size_t)j * dk * dk, P, u, v, lo, hi);
        }
    }
    free(P); free(u);
    v->prepared = 1;
    return 0;
}

/* Softmax rows: scores by float GEMM over key tiles, softmax in double. */
static int softmax_rows(const hs_head_view *v, const int *ts, int n, const int *los, double *out,
                        size_t ld) {
    const hs_mixer_acts *a = v->acts;
    int dk = v->dk, H = a->mc->num_heads;
    int L = ts[0], R = ts[0];
    for (int r = 0; r < n; r++) { if (los[r] < L) L = los[r]; if (ts[r] > R) R = ts[r]; }
    float *Q = malloc(sizeof(float) * (size_t)n * dk);
    float *Z = malloc(sizeof(float) * (size_t)n * KEY_TILE);
    if (!Q || !Z) { free(Q); free(Z); return -1; }
    for (int r = 0; r < n; r++)
        memcpy(Q + (size_t)r * dk, a->q + ((size_t)ts[r] * H + v->head) * dk, sizeof(float) * dk);
    for (int s0 = L; s0 <= R; s0 += KEY_TILE) {
        int len = R + 1 - s0 < KEY_TILE ? R + 1 - s0 : KEY_TILE;
        matmul_forward(Z, Q, v->keys + (size_t)s0 * dk, n, dk, len);
        for (int r = 0; r < n; r++) {
            double scale = v->inv_sqrt_dk * (a->row_scale ? (double)a->row_scale[ts[r]] : 1.0);
            int from = los[r] > s0 ? los[r] : s0, to = ts[r] + 1 < s0 + len ? ts[r] + 1 : s0 + len;
            double *row = out + (size_t)r * ld;
            const float *z = Z + (size_t)r * len - s0;
            for (int s = from; s < to; s++) row[s] = scale * (double)z[s];
        }
    }
    for (int r = 0; r < n; r++) {
        double *row = out + (size_t)r * ld, mx = -INFINITY, sum = 0;
        for (int s = los[r]; s <= ts[r]; s++) if (row[s] > mx) mx = row[s];
        for (int s = los[r]; s <= ts[r]; s++) { row[s] = exp(row[s] - mx); sum += row[s]; }
        for (int s = los[r]; s <= ts[r]; s++) row[s] /= sum;
    }
    free(Q); free(Z);
    return 0;
}

/* One step of a row's own sweep: c_{t,s} for key s, then R moves to s-1. */
static double sweep_step(const hs_head_view *v, double *R, int s) {
    const hs_mixer_acts *a = v->acts;
    int dk = v->dk, H = a->mc->num_heads;
    const float *k = a->k + ((size_t)s * H + v->head) * dk;
    double dot = 0;
    for (int i = 0; i < dk; i++) dot += R[i] * (double)k[i];
    if (v->type == HS_GLA) {
        const double *d = v->decay + (size_t)s * dk;
        for (int i = 0; i < dk; i++) {
            double x = R[i] * d[i];
            R[i] = fabs(x) < TINY ? 0.0 : x;
        }
        return dot;
    }
    double beta = a->beta[(size_t)s * H + v->head], alpha = v->decay[s], bd = beta * dot;
    for (int i = 0; i < dk; i++) {
        double x = alpha * (R[i] - bd * (double)k[i]);
        R[i] = fabs(x) < TINY ? 0.0 : x;
    }
    return bd;
}

static int cmp_desc(const void *x, const void *y, void *ctx) {
    const int *ts = ctx;
    int a = ts[*(const int *)x], b = ts[*(const int *)y];
    return (a < b) - (a > b);
}

/* gla / gdn rows: chunked sweep, one GEMM per chunk for every row already past it. */
static int linear_rows(const hs_head_view *v, const int *ts, int n, const int *los, double *out,
                       size_t ld) {
    const hs_mixer_acts *a = v->acts;
    int dk = v->dk, H = a->mc->num_heads, C = HS_ROWS_CHUNK;
    int *order = malloc(sizeof(int) * (size_t)n);
    int *state = calloc((size_t)n, sizeof(int));       /* 0 waiting, 1 active, 2 done */
    int *act = malloc(sizeof(int) * (size_t)n);
    double *R = malloc(sizeof(double) * (size_t)n * dk);
    double *tmp = malloc(sizeof(double) * (size_t)dk);
    float *Rf = malloc(sizeof(float) * (size_t)n * dk);
    float *Cb = malloc(sizeof(float) * (size_t)n * C);
    if (!order || !state || !act || !R || !tmp || !Rf || !Cb) {
        free(order); free(state); free(act); free(R); free(tmp); free(Rf); free(Cb);
        return -1;
    }
    for (int r = 0; r < n; r++) order[r] = r;
    qsort_r(order, (size_t)n, sizeof(int), cmp_desc, (void *)ts);
    int L = los[0];
    for (int r = 0; r < n; r++) if (los[r] < L) L = los[r];
    int next = 0;                                       /* next row (in order) to enter */
    for (int j = ts[order[0]] / C; j >= L / C; j--) {
        int lo = j * C, hi = lo + C < v->T ? lo + C : v->T;
        /* Rows already active take this whole chunk by GEMM. */
        int m = 0;
        for (int r = 0; r < n; r++) if (state[r] == 1) act[m++] = r;
        if (m) {
            for (int i = 0; i < m; i++)
                for (int c = 0; c < dk; c++) Rf[(size_t)i * dk + c] = (float)R[(size_t)act[i] * dk + c];
            matmul_forward(Cb, Rf, v->keys + (size_t)lo * dk, m, dk, hi - lo);
            for (int i = 0; i < m; i++) {
                int r = act[i];
                double *row = out + (size_t)r * ld;
                const float *cb = Cb + (size_t)i * (hi - lo);
                int from = los[r] > lo ? los[r] : lo;
                for (int s = from; s < hi; s++) {
                    double c = cb[s - lo];
                    if (v->type == HS_GDN) c *= a->beta[(size_t)s * H + v->head];
                    row[s] = fabs(c);
                }
                if (los[r] >= lo) { state[r] = 2; continue; }
                double *Rr = R + (size_t)r * dk;
                if (v->type == HS_GLA) {
                    const double *P = v->carry + (size_t)j * dk;
                    for (int c = 0; c < dk; c++) {
                        Rr[c] *= P[c];
                        if (fabs(Rr[c]) < TINY) Rr[c] = 0;
                    }
                } else {
                    row_times_matrix(Rr, tmp, v->carry + (size_t)j * dk * dk, dk);
                }
            }
        }
        /* Rows whose query lies in this chunk: sweep from the query down to the chunk start. */
        while (next < n && ts[order[next]] >= lo) {
            int r = order[next++], t = ts[r];
            double *Rr = R + (size_t)r * dk, *row = out + (size_t)r * ld;
            const float *q = a->q + ((size_t)t * H + v->head) * dk;
            for (int c = 0; c < dk; c++) Rr[c] = (double)q[c] * v->inv_sqrt_dk;
            int stop = los[r] > lo ? los[r] : lo;
            for (int s = t; s >= stop; s--) row[s] = fabs(sweep_step(v, Rr, s));
            state[r] = los[r] >= lo ? 2 : 1;
        }
    }
    for (int r = 0; r < n; r++) {
        double *row = out + (size_t)r * ld, sum = 0;
        for (int s = los[r]; s <= ts[r]; s++) sum += row[s];
        double inv = sum > 0 ? 1.0 / sum : 0.0;
        for (int s = los[r]; s <= ts[r]; s++) row[s] *= inv;
    }
    free(order); free(state); free(act); free(R); free(tmp); free(Rf); free(Cb);
    return 0;
}

int hs_head_view_rows(const hs_head_view *v, const int *ts, int n, double *out, size_t ld,
                      int *los) {
    if (n <= 0) return 0;
    if (!v->prepared) return -1;
    for (int r = 0; r < n; r++) los[r] = hs_head_view_start(v, ts[r]);
    if (hs_mixer_is_softmax(v->type)) return softmax_rows(v, ts, n, los, out, ld);
    return linear_rows(v, ts, n, los, out, ld);
}
