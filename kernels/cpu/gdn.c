/* Gated delta rule (model-spec section 4, `gdn`), per head:
 *   S_t = alpha_t (I - beta_t k_t^T k_t) S_{t-1} + beta_t k_t^T v_t,  o_t = (q_t/sqrt(dk)) S_t.
 * Chunked form (the WY/UT representation of fla's chunk_gated_delta_rule), with b_t the sum
 * of ln alpha from the chunk start through t, gamma_t = exp(b_t), Gam_{ts} = exp(b_t - b_s):
 *   Tm = (I + strict_lower(diag(beta) (Gam o K K^T)))^{-1} diag(beta)
 *   W  = Tm (gamma o K),  U = Tm V,  M = lower(Gam o Q K^T) (incl. diagonal, q scaled)
 *   o  = (gamma o Q - M W) S_in + (M Tm) V
 *   S_out = (gamma_L I - Khat^T W) S_in + (Tm^T Khat)^T V,  Khat_s = exp(b_L - b_s) k_s.
 * All exponents are <= 0. Cost per chunk of C tokens: about 11 products of C x dk size
 * (~11 C^2 dk flops*2 for C = dk), i.e. ~2*11*C*dk flops per token.
 *
 * Exact SWLA (linattn.c) adds, per chunk, about three combines of dense (P, U) aggregates
 * (2 dk^3 + 2 dk^2 dv flops each) plus two masked cross-chunk products (the window edge):
 * roughly 1.5-2x the plain chunked cost for dk = dv = C = 64, independent of W and T, with
 * O(W/C * (C dk + dk^2 + dk dv)) memory per head. Overlap costs the plain form plus
 * (W-S)/C state folds (2 dk^2 dv flops each) per block of S tokens. */
#include "kernels.h"
#include "linattn.h"
#include "blas_threads.h"
#include "vexp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const float *q, *k, *beta, *log_alpha;
    float scale;
} gdn_ctx;

static HS_VEC_CLONES void gdn_local(const la_method *m, int h, int c0, int L, int C, la_chunk *ch, float *scr) {
    const gdn_ctx *g = m->ctx;
    const int dk = m->dk, H = m->H, ld = H * dk;
    const float *q = g->q + (size_t)c0 * ld + (size_t)h * dk;
    const float *k = g->k + (size_t)c0 * ld + (size_t)h * dk;
    const float scale = g->scale;
    float *kk = scr, *mm = kk + (size_t)C * C, *tm = mm + (size_t)C * C;
    float *w = tm + (size_t)C * C, *gk = w + (size_t)C * dk, *khat = gk + (size_t)C * dk;
    float *beta = khat + (size_t)C * dk;
    size_t off = (size_t)(beta + C - scr);
    double *b = (double *)(scr + off + (off & 1)); /* double: b_t - b_s must not cancel (see gla.c) */

    double acc = 0.0;
    for (int t = 0; t < L; t++) {
        acc += g->log_alpha[(size_t)(c0 + t) * H + h];
        b[t] = acc;
        beta[t] = g->beta[(size_t)(c0 + t) * H + h];
    }
    la_mm_nt(L, L, dk, 1.0f, k, ld, k, ld, 0.0f, kk, C);
    la_mm_nt(L, L, dk, scale, q, ld, k, ld, 0.0f, mm, C);
    /* strictly lower Lm in kk; M (lower incl. diagonal) in mm */
    for (int t = 0; t < L; t++) {
        for (int s = 0; s < t; s++) {
            float e = expf((float)(b[t] - b[s]));
            kk[(size_t)t * C + s] *= beta[t] * e;
            mm[(size_t)t * C + s] *= e;
        }
        for (int s = t + 1; s < L; s++) mm[(size_t)t * C + s] = 0.0f;
    }
    /* (I + Lm)^{-1} by forward substitution, row by row, then scale columns by beta */
    for (int t = 0; t < L; t++) {
        float *row = tm + (size_t)t * C;
        memset(row, 0, sizeof(float) * (size_t)L);
        row[t] = 1.0f;
        for (int s = 0; s < t; s++) {
            float l = kk[(size_t)t * C + s];
            if (l == 0.0f) continue;
            const float *prev = tm + (size_t)s * C;
            #pragma omp simd
            for (int j = 0; j <= s; j++) row[j] -= l * prev[j];
        }
    }
    for (int t = 0; t < L; t++)
        for (int s = 0; s <= t; s++) tm[(size_t)t * C + s] *= beta[s];

    const double blast = b[L - 1];
    for (int t = 0; t < L; t++) {
        float gt = expf((float)b[t]), gr = expf((float)(blast - b[t]));
        #pragma omp simd
        for (int i = 0; i < dk; i++) {
            gk[(size_t)t * dk + i] = gt * k[(size_t)t * ld + i];
            khat[(size_t)t * dk + i] = gr * k[(size_t)t * ld + i];
            ch->qe[(size_t)t * dk + i] = scale * gt * q[(size_t)t * ld + i];
        }
    }
    la_mm_nn(L, dk, L, 1.0f, tm, C, gk, dk, 0.0f, w, dk);           /* W = Tm (gamma o K) */
    la_mm_nn(L, dk, L, -1.0f, mm, C, w, dk, 1.0f, ch->qe, dk);      /* qe = gamma o Q - M W */
    la_mm_tn(L, dk, L, 1.0f, tm, C, khat, dk, 0.0f, ch->ke, dk);    /* ke = Tm^T Khat */
    la_mm_nn(L, L, L, 1.0f, mm, C, tm, C, 0.0f, ch->ai, C);         /* ai = M Tm */
    la_mm_tn(dk, dk, L, -1.0f, khat, dk, w, dk, 0.0f, ch->p, dk);   /* P = gamma_L I - Khat^T W */
    const float gl = expf((float)blast);
    for (int i = 0; i < dk; i++) ch->p[(size_t)i * dk + i] += gl;
}

void gdn_forward_chunked(float *out, const float *q, const float *k, const float *v,
                         const float *beta, const float *log_alpha, int T, int H, int dk,
                         int dv, int chunk, int swla, int W, int S) {
    if (chunk <= 0) chunk = 64;
    gdn_ctx g = {q, k, beta, log_alpha, 1.0f / sqrtf((float)dk)};
    size_t scratch = (size_t)3 * chunk * chunk + (size_t)3 * chunk * dk + 4 * (size_t)chunk + 2;
    la_method m = {1, H, dk, dv, scratch, gdn_local, &g};
    la_forward_chunked(out, v, T, chunk, swla, W, S, &m);
}

/* Plain recurrence. Under SWLA the value-path form: walking s back from t with
 * x = (q_t/sqrt(dk)) A_t ... A_{s+1}, c_{t,s} = beta_s x . k_s, and x <- x A_s where
 * x A_s = alpha_s (x - beta_s (x . k_s) k_s) (A_s is symmetric). */
void gdn_forward_recurrent(float *out, const float *q, const float *k, const float *v,
                           const float *beta, const float *log_alpha, int T, int H, int dk,
                           int dv, int swla, int W, int S) {
    if (T <= 0) return;
    la_sanitize_swla(&swla, &W, &S);
    const int ld = H * dk, ldv = H * dv;
    const float scale = 1.0f / sqrtf((float)dk);
    const double per_token = swla == 0 ? 4.0 * dk * dv : 2.0 * (swla == 1 ? W : W + S) * (dk + dv);
    #pragma omp parallel if (H > 1 && hs_parallel_worth(per_token * T * H))
    {
        float *St = malloc(sizeof(float) * ((size_t)dk * dv + dk + dv));
        if (!St) abort();
        float *x = St + (size_t)dk * dv, *ks_v = x + dk;
        #pragma omp for schedule(dynamic, 1)
        for (int h = 0; h < H; h++) {
            memset(St, 0, sizeof(float) * (size_t)dk * dv);
            for (int t = 0; t < T; t++) {
                const float *qt = q + (size_t)t * ld + (size_t)h * dk;
                float *o = out + (size_t)t * ldv + (size_t)h * dv;
                if (swla == 0) {
                    const float *kt = k + (size_t)t * ld + (size_t)h * dk;
                    const float *vt = v + (size_t)t * ldv + (size_t)h * dv;
                    const float al = expf(log_alpha[(size_t)t * H + h]), be = beta[(size_t)t * H + h];
                    /* S = alpha S + k^T (beta v - alpha beta (k S)) */
                    for (int j = 0; j < dv; j++) ks_v[j] = 0.0f;
                    for (int i = 0; i < dk; i++) {
                        const float *row = St + (size_t)i * dv;
                        for (int j = 0; j < dv; j++) ks_v[j] += kt[i] * row[j];
                    }
                    for (int j = 0; j < dv; j++) ks_v[j] = be * vt[j] - al * be * ks_v[j];
                    for (int i = 0; i < dk; i++) {
                        float *row = St + (size_t)i * dv;
                        for (int j = 0; j < dv; j++) row[j] = al * row[j] + kt[i] * ks_v[j];
                    }
                    la_state_readout(o, qt, St, scale, dk, dv);
                } else {
                    int lo = la_visible_lo(t, swla, W, S);
                    for (int i = 0; i < dk; i++) x[i] = qt[i] * scale;
                    for (int j = 0; j < dv; j++) o[j] = 0.0f;
                    for (int s = t; s >= lo; s--) {
                        const float *ks = k + (size_t)s * ld + (size_t)h * dk;
                        const float *vs = v + (size_t)s * ldv + (size_t)h * dv;
                        const float be = beta[(size_t)s * H + h], al = expf(log_alpha[(size_t)s * H + h]);
                        float xk = 0.0f;
                        for (int i = 0; i < dk; i++) xk += x[i] * ks[i];
                        const float c = be * xk;
                        for (int j = 0; j < dv; j++) o[j] += c * vs[j];
                        for (int i = 0; i < dk; i++) x[i] = al * (x[i] - be * xk * ks[i]);
                    }
                }
            }
        }
        free(St);
    }
}
