/* Gated linear attention (model-spec section 4, `gla`), per head:
 *   S_t = diag(exp(gk_t)) S_{t-1} + k_t^T v_t,   o_t = (q_t / sqrt(dk)) S_t.
 * Chunked form: within a chunk, b_t = sum of gk from the chunk start through t (<= 0, per
 * channel). Every exponent used is a difference b_t - b_r with t after r, so it is <= 0 and
 * exp never overflows, however negative the gates. When a chunk decays by at most 30 e-folds
 * in every channel, exp(b_t - b_s) = exp(b_t) exp(-b_s) with both factors in [e^-30, e^30]
 * and the intra-chunk matrix is one GEMM; otherwise it is built from 16 x 16 sub-blocks. */
#include "kernels.h"
#include "linattn.h"
#include "blas_threads.h"
#include "vexp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GLA_SUB 16           /* sub-block of the intra-chunk matrix under strong decay */
#define GLA_FACTOR_MAX 30.0  /* largest decay (in e-folds) a chunk may have for the one-GEMM form */

typedef struct {
    const float *q, *k, *gk;
    float scale;
} gla_ctx;

/* Intra-chunk matrix by sub-blocks, for chunks whose gates decay by more than
 * GLA_FACTOR_MAX within the chunk: cross sub-block products use the last key of the key
 * sub-block as reference (both exponents <= 0), diagonal sub-blocks take the exponentials
 * pairwise. */
static HS_VEC_CLONES void gla_intra_subblocks(float *ai, int C, const float *q, const float *k, int ld,
                                              const double *b, int L, int dk, float scale, float *qt, float *kt) {
    for (int j0 = 0; j0 < L; j0 += GLA_SUB) {
        const int j1 = j0 + GLA_SUB < L ? j0 + GLA_SUB : L;
        for (int t = j0; t < j1; t++) {
            const double *bt = b + (size_t)t * dk;
            const float *qr = q + (size_t)t * ld;
            for (int s = j0; s <= t; s++) {
                const double *bs = b + (size_t)s * dk;
                const float *kr = k + (size_t)s * ld;
                float acc = 0.0f;
                #pragma omp simd reduction(+:acc)
                for (int i = 0; i < dk; i++) acc += qr[i] * kr[i] * hs_expf((float)(bt[i] - bs[i]));
                ai[(size_t)t * C + s] = scale * acc;
            }
        }
        if (j1 < L) {
            const double *br = b + (size_t)(j1 - 1) * dk; /* reference: last key of the sub-block */
            for (int s = j0; s < j1; s++) {
                const double *bs = b + (size_t)s * dk;
                const float *kr = k + (size_t)s * ld;
                float *dst = kt + (size_t)(s - j0) * dk;
                #pragma omp simd
                for (int i = 0; i < dk; i++) dst[i] = kr[i] * hs_expf((float)(br[i] - bs[i]));
            }
            for (int t = j1; t < L; t++) {
                const double *bt = b + (size_t)t * dk;
                const float *qr = q + (size_t)t * ld;
                float *dst = qt + (size_t)(t - j1) * dk;
                #pragma omp simd
                for (int i = 0; i < dk; i++) dst[i] = scale * qr[i] * hs_expf((float)(bt[i] - br[i]));
            }
            la_mm_nt(L - j1, j1 - j0, dk, 1.0f, qt, dk, kt, dk, 0.0f, ai + (size_t)j1 * C + j0, C);
        }
    }
}

static HS_VEC_CLONES void gla_local(const la_method *m, int h, int c0, int L, int C, la_chunk *ch, float *scr) {
    const gla_ctx *g = m->ctx;
    const int dk = m->dk, ld = m->H * dk;
    const float *q = g->q + (size_t)c0 * ld + (size_t)h * dk;
    const float *k = g->k + (size_t)c0 * ld + (size_t)h * dk;
    const float *gk = g->gk + (size_t)c0 * ld + (size_t)h * dk;
    /* b in double: with strong gates b reaches -1e3 within a chunk, and b_t - b_s formed
     * from floats would then carry an absolute error ~1e-4 even when the difference is tiny */
    double *b = (double *)scr;
    float *qt = scr + 2 * (size_t)C * dk, *kt = qt + (size_t)C * dk;
    const float scale = g->scale;

    for (int i = 0; i < dk; i++) b[i] = gk[i];
    for (int t = 1; t < L; t++) {
        const double *prev = b + (size_t)(t - 1) * dk;
        double *cur = b + (size_t)t * dk;
        const float *gt = gk + (size_t)t * ld;
        #pragma omp simd
        for (int i = 0; i < dk; i++) cur[i] = prev[i] + gt[i];
    }
    const double *blast = b + (size_t)(L - 1) * dk;
    double range = 0.0;
    for (int i = 0; i < dk; i++) range = -blast[i] > range ? -blast[i] : range;
    for (int t = 0; t < L; t++) {
        const double *bt = b + (size_t)t * dk;
        const float *qr = q + (size_t)t * ld, *kr = k + (size_t)t * ld;
        float *qe = ch->qe + (size_t)t * dk, *ke = ch->ke + (size_t)t * dk;
        #pragma omp simd
        for (int i = 0; i < dk; i++) {
            qe[i] = scale * qr[i] * hs_expf((float)bt[i]);
            ke[i] = kr[i] * hs_expf((float)(blast[i] - bt[i]));
        }
    }
    for (int i = 0; i < dk; i++) ch->p[i] = (float)blast[i];

    float *ai = ch->ai;
    if (range <= GLA_FACTOR_MAX) {
        /* exp(b_t - b_s) = exp(b_t) exp(-b_s) with every factor in [e^-30, e^30]: one GEMM */
        for (int s = 0; s < L; s++) {
            const double *bs = b + (size_t)s * dk;
            const float *kr = k + (size_t)s * ld;
            float *dst = kt + (size_t)s * dk;
            #pragma omp simd
            for (int i = 0; i < dk; i++) dst[i] = kr[i] * hs_expf((float)-bs[i]);
        }
        la_mm_nt(L, L, dk, 1.0f, ch->qe, dk, kt, dk, 0.0f, ai, C);
        for (int t = 0; t < L; t++) memset(ai + (size_t)t * C + t + 1, 0, sizeof(float) * (size_t)(L - 1 - t));
    } else {
        for (int t = 0; t < L; t++) memset(ai + (size_t)t * C, 0, sizeof(float) * (size_t)L);
        gla_intra_subblocks(ai, C, q, k, ld, b, L, dk, scale, qt, kt);
    }
}

void gla_forward_chunked(float *out, const float *q, const float *k, const float *v,
                         const float *gk, int T, int H, int dk, int dv, int chunk,
                         int swla, int W, int S) {
    if (chunk <= 0) chunk = 64;
    gla_ctx g = {q, k, gk, 1.0f / sqrtf((float)dk)};
    la_method m = {0, H, dk, dv, (size_t)4 * chunk * dk + (size_t)chunk * dk, gla_local, &g};
    la_forward_chunked(out, v, T, chunk, swla, W, S, &m);
}

/* Plain recurrence, one token at a time. Under SWLA it takes the value-path form
 * o_t = sum_{s visible} (q_t/sqrt(dk)) . (exp(G_t - G_s) k_s) v_s, walking s back from t
 * and carrying the decay in x, which is the definition without restarts. */
void gla_forward_recurrent(float *out, const float *q, const float *k, const float *v,
                           const float *gk, int T, int H, int dk, int dv,
                           int swla, int W, int S) {
    if (T <= 0) return;
    la_sanitize_swla(&swla, &W, &S);
    const int ld = H * dk, ldv = H * dv;
    const float scale = 1.0f / sqrtf((float)dk);
    const double per_token = swla == 0 ? 4.0 * dk * dv : 2.0 * (swla == 1 ? W : W + S) * (dk + dv);
    #pragma omp parallel if (H > 1 && hs_parallel_worth(per_token * T * H))
    {
        float *St = malloc(sizeof(float) * ((size_t)dk * dv + dk));
        if (!St) abort();
        float *x = St + (size_t)dk * dv;
        #pragma omp for schedule(dynamic, 1)
        for (int h = 0; h < H; h++) {
            memset(St, 0, sizeof(float) * (size_t)dk * dv);
            for (int t = 0; t < T; t++) {
                const float *qt = q + (size_t)t * ld + (size_t)h * dk;
                float *o = out + (size_t)t * ldv + (size_t)h * dv;
                if (swla == 0) {
                    const float *kt = k + (size_t)t * ld + (size_t)h * dk, *gt = gk + (size_t)t * ld + (size_t)h * dk;
                    const float *vt = v + (size_t)t * ldv + (size_t)h * dv;
                    for (int i = 0; i < dk; i++) {
                        float e = expf(gt[i]), ki = kt[i];
                        float *row = St + (size_t)i * dv;
                        for (int j = 0; j < dv; j++) row[j] = e * row[j] + ki * vt[j];
                    }
                    la_state_readout(o, qt, St, scale, dk, dv);
                } else {
                    int lo = la_visible_lo(t, swla, W, S);
                    for (int i = 0; i < dk; i++) x[i] = qt[i] * scale;
                    for (int j = 0; j < dv; j++) o[j] = 0.0f;
                    for (int s = t; s >= lo; s--) {
                        const float *ks = k + (size_t)s * ld + (size_t)h * dk, *gs = gk + (size_t)s * ld + (size_t)h * dk;
                        const float *vs = v + (size_t)s * ldv + (size_t)h * dv;
                        float c = 0.0f;
                        for (int i = 0; i < dk; i++) c += x[i] * ks[i];
                        for (int j = 0; j < dv; j++) o[j] += c * vs[j];
                        for (int i = 0; i < dk; i++) x[i] *= expf(gs[i]);
                    }
                }
            }
        }
        free(St);
    }
}
