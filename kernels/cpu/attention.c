/* Causal softmax attention in tiles (flash style): each (head, query tile) keeps a running
 * row max m, row sum l and an unnormalised output accumulator, and walks the key tiles that
 * its rows can see. Scores of one query tile against one key tile live in a Bq x Bk buffer;
 * nothing T x T is ever formed. Key tiles entirely outside a window are never visited.
 * Exact softmax: expf, no fast-math. */
#include "kernels.h"
#include "blas_threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const float *q, *k, *v, *row_scale;
    float *out;
    int T, H, Hkv, dk, dv, window, Bq, Bk;
} attn_args;

typedef struct {
    float *qs;   /* [Bq, dk] scaled query rows */
    float *s;    /* [Bq, Bk] scores, then probabilities */
    float *acc;  /* [Bq, dv] unnormalised output */
    float *m, *l;
} attn_work;

/* One query tile of one head. */
static void attention_tile(const attn_args *a, attn_work *w, int h, int t0) {
    const int dk = a->dk, dv = a->dv, Bk = a->Bk, window = a->window;
    const int nq = a->T - t0 < a->Bq ? a->T - t0 : a->Bq;
    const int kvh = h / (a->H / a->Hkv);
    const int ldq = a->H * dk, ldk = a->Hkv * dk, ldv = a->Hkv * dv, ldo = a->H * dv;
    const float inv_sqrt = 1.0f / sqrtf((float)dk);
    const float *kbase = a->k + (size_t)kvh * dk, *vbase = a->v + (size_t)kvh * dv;

    for (int r = 0; r < nq; r++) {
        const float *qr = a->q + (size_t)(t0 + r) * ldq + (size_t)h * dk;
        float c = inv_sqrt * (a->row_scale ? a->row_scale[t0 + r] : 1.0f);
        float *dst = w->qs + (size_t)r * dk;
        for (int i = 0; i < dk; i++) dst[i] = qr[i] * c;
        w->m[r] = -INFINITY;
        w->l[r] = 0.0f;
    }
    memset(w->acc, 0, sizeof(float) * (size_t)nq * dv);

    const int t_last = t0 + nq - 1;
    const int s_lo = window > 0 && t0 - window + 1 > 0 ? t0 - window + 1 : 0;
    for (int ks = s_lo; ks <= t_last; ks += Bk) {
        const int nk = t_last + 1 - ks < Bk ? t_last + 1 - ks : Bk;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq, nk, dk, 1.0f, w->qs, dk,
                    kbase + (size_t)ks * ldk, ldk, 0.0f, w->s, Bk);
        for (int r = 0; r < nq; r++) {
            const int t = t0 + r;
            int lo = ks, hi = ks + nk - 1;
            if (window > 0 && t - window + 1 > lo) lo = t - window + 1;
            if (t < hi) hi = t;
            float *sr = w->s + (size_t)r * Bk;
            if (lo > hi) { /* nothing of this tile is visible to row r */
                memset(sr, 0, sizeof(float) * (size_t)nk);
                continue;
            }
            const int j0 = lo - ks, j1 = hi - ks;
            float mx = sr[j0];
            for (int j = j0 + 1; j <= j1; j++) mx = sr[j] > mx ? sr[j] : mx;
            const float m_old = w->m[r];
            const float m_new = mx > m_old ? mx : m_old;
            float sum = 0.0f;
            for (int j = 0; j < j0; j++) sr[j] = 0.0f;
            for (int j = j0; j <= j1; j++) { float p = expf(sr[j] - m_new); sr[j] = p; sum += p; }
            for (int j = j1 + 1; j < nk; j++) sr[j] = 0.0f;
            if (m_new != m_old) {
                const float corr = m_old == -INFINITY ? 0.0f : expf(m_old - m_new);
                float *ar = w->acc + (size_t)r * dv;
                for (int i = 0; i < dv; i++) ar[i] *= corr;
                w->l[r] *= corr;
            }
            w->l[r] += sum;
            w->m[r] = m_new;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, dv, nk, 1.0f, w->s, Bk,
                    vbase + (size_t)ks * ldv, ldv, 1.0f, w->acc, dv);
    }
    for (int r = 0; r < nq; r++) {
        float *o = a->out + (size_t)(t0 + r) * ldo + (size_t)h * dv;
        const float *ar = w->acc + (size_t)r * dv;
        const float inv = 1.0f / w->l[r];
        for (int i = 0; i < dv; i++) o[i] = ar[i] * inv;
    }
}

void attention_forward(float *out, const float *q, const float *k, const float *v,
                       const float *row_scale, int T, int H, int Hkv, int dk, int dv,
                       int window, int tile) {
    if (T <= 0 || H <= 0) return;
    if (tile <= 0) tile = 64;
    attn_args a = {q, k, v, row_scale, out, T, H, Hkv, dk, dv, window, tile, 2 * tile};
    const int n_qt = (T + a.Bq - 1) / a.Bq;
    const long items = (long)n_qt * H;
    const int nb = hs_blas_serial_begin();
    #pragma omp parallel
    {
        attn_work w;
        w.qs = malloc(sizeof(float) * (size_t)a.Bq * dk);
        w.s = malloc(sizeof(float) * (size_t)a.Bq * a.Bk);
        w.acc = malloc(sizeof(float) * (size_t)a.Bq * dv);
        w.m = malloc(sizeof(float) * (size_t)a.Bq);
        w.l = malloc(sizeof(float) * (size_t)a.Bq);
        if (!w.qs || !w.s || !w.acc || !w.m || !w.l) abort();
        /* Latest query tiles first: under causal masking they are the most expensive. */
        #pragma omp for schedule(dynamic, 1)
        for (long it = 0; it < items; it++) {
            int qt = n_qt - 1 - (int)(it / H), h = (int)(it % H);
            attention_tile(&a, &w, h, qt * a.Bq);
        }
        free(w.qs); free(w.s); free(w.acc); free(w.m); free(w.l);
    }
    hs_blas_serial_end(nb);
}
