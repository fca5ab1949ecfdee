/* Causal softmax attention in tiles (flash style): each (head, query tile) keeps a running
 * row max m, row sum l and an unnormalised output accumulator, and walks the key tiles that
 * its rows can see. Scores of one query tile against one key tile live in a Bq x Bk buffer;
 * nothing T x T is ever formed. Key tiles entirely outside a window are never visited.
 * Exact softmax: hs_expf (vexp.h, libm-class accuracy), no fast-math. */
#include "kernels.h"
#include "blas_threads.h"
#include "vexp.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const float *q, *k, *v, *row_scale;
    const float *kt; /* [dk, T]: the current kv head's keys transposed, so both tile products are NN */
    float *out;
    int T, H, Hkv, dk, dv, window, Bq, Bk;
} attn_args;

typedef struct {
    float *qs;   /* [Bq, dk] scaled query rows */
    float *s;    /* [Bq, Bk] scores, then probabilities */
    float *acc;  /* [Bq, dv] unnormalised output */
    float *m, *l;
} attn_work;

/* Turns the scores of one (query tile, key tile) pair into probabilities relative to the
 * updated running max, rescaling each row's sum and accumulator when its max grows. Keys a
 * row cannot see (s > t, or s <= t - window) get probability 0. */
static HS_VEC_CLONES void online_softmax_tile(float *sc, int lds, int nq, int nk, int t0, int ks, int window,
                                              float *m, float *l, float *acc, int dv) {
    for (int r = 0; r < nq; r++) {
        const int t = t0 + r;
        int lo = ks, hi = ks + nk - 1;
        if (window > 0 && t - window + 1 > lo) lo = t - window + 1;
        if (t < hi) hi = t;
        float *sr = sc + (size_t)r * lds;
        if (lo > hi) { /* nothing of this tile is visible to row r */
            memset(sr, 0, sizeof(float) * (size_t)nk);
            continue;
        }
        const int j0 = lo - ks, j1 = hi - ks;
        float mx = -INFINITY;
        #pragma omp simd reduction(max:mx)
        for (int j = j0; j <= j1; j++) mx = sr[j] > mx ? sr[j] : mx;
        const float m_old = m[r];
        const float m_new = mx > m_old ? mx : m_old;
        float sum = 0.0f;
        if (j0 > 0) memset(sr, 0, sizeof(float) * (size_t)j0);
        #pragma omp simd reduction(+:sum)
        for (int j = j0; j <= j1; j++) { float p = hs_expf(sr[j] - m_new); sr[j] = p; sum += p; }
        if (j1 + 1 < nk) memset(sr + j1 + 1, 0, sizeof(float) * (size_t)(nk - 1 - j1));
        if (m_new != m_old) {
            const float corr = m_old == -INFINITY ? 0.0f : hs_expf(m_old - m_new);
            float *ar = acc + (size_t)r * dv;
            #pragma omp simd
            for (int i = 0; i < dv; i++) ar[i] *= corr;
            l[r] *= corr;
        }
        l[r] += sum;
        m[r] = m_new;
    }
}

/* One query tile of one head. */
static void attention_tile(const attn_args *a, attn_work *w, int h, int t0) {
    const int dk = a->dk, dv = a->dv, Bk = a->Bk, window = a->window;
    const int nq = a->T - t0 < a->Bq ? a->T - t0 : a->Bq;
    const int kvh = h / (a->H / a->Hkv);
    const int ldq = a->H * dk, ldv = a->Hkv * dv, ldo = a->H * dv;
    const float inv_sqrt = 1.0f / sqrtf((float)dk);
    const float *ktbase = a->kt, *vbase = a->v + (size_t)kvh * dv;

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
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, nk, dk, 1.0f, w->qs, dk,
                    ktbase + ks, a->T, 0.0f, w->s, Bk);
        online_softmax_tile(w->s, Bk, nq, nk, t0, ks, window, w->m, w->l, w->acc, dv);
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

/* Keys per tile: 512 (4 Bq for query tiles under 64 rows). Long key tiles amortise the
 * per-call packing of the query tile inside sgemm (512 keys measured ~1.5x faster than 128 at
 * T = 8K); under a window a query tile of Bq rows sees at most window + Bq - 1 keys, so the
 * key tile need not be longer than that. */
static int key_tile(int T, int window, int Bq) {
    int bk = Bq >= 64 ? 512 : 4 * Bq;
    if (window > 0 && window + Bq - 1 < bk) bk = window + Bq - 1;
    if (T < bk) bk = T;
    bk = (bk + 15) & ~15;
    return bk > 0 ? bk : 16;
}

/* tile: query rows per tile (<= 0: 128); the key tile length is chosen by key_tile. */
void attention_forward(float *out, const float *q, const float *k, const float *v,
                       const float *row_scale, int T, int H, int Hkv, int dk, int dv,
                       int window, int tile) {
    if (T <= 0 || H <= 0) return;
    if (tile <= 0) tile = 128;
    float *kt = malloc(sizeof(float) * (size_t)T * dk);
    if (!kt) abort();
    attn_args a = {q, k, v, row_scale, kt, out, T, H, Hkv, dk, dv, window, tile, key_tile(T, window, tile)};
    const int n_qt = (T + a.Bq - 1) / a.Bq, group = H / Hkv;
    const long items = (long)n_qt * group;
    const double pairs = window > 0 && window < T ? (double)T * window : (double)T * (T + 1) / 2;
    const int par = hs_parallel_worth(2.0 * pairs * H * (dk + dv));
    #pragma omp parallel if (par)
    {
        attn_work w;
        w.qs = malloc(sizeof(float) * (size_t)a.Bq * dk);
        w.s = malloc(sizeof(float) * (size_t)a.Bq * a.Bk);
        w.acc = malloc(sizeof(float) * (size_t)a.Bq * dv);
        w.m = malloc(sizeof(float) * (size_t)a.Bq);
        w.l = malloc(sizeof(float) * (size_t)a.Bq);
        if (!w.qs || !w.s || !w.acc || !w.m || !w.l) abort();
        /* One kv head at a time, so the transposed keys cost T x dk floats, not T x Hkv x dk
         * (the implicit barriers keep the transpose and its readers apart). */
        for (int g = 0; g < Hkv; g++) {
            #pragma omp for schedule(static)
            for (int s0 = 0; s0 < T; s0 += 64) { /* blocked transpose */
                const int s1 = s0 + 64 < T ? s0 + 64 : T;
                for (int i = 0; i < dk; i++)
                    for (int s = s0; s < s1; s++)
                        kt[(size_t)i * T + s] = k[((size_t)s * Hkv + g) * dk + i];
            }
            /* Latest query tiles first: under causal masking they are the most expensive. */
            #pragma omp for schedule(dynamic, 1)
            for (long it = 0; it < items; it++) {
                int qt = n_qt - 1 - (int)(it / group), h = g * group + (int)(it % group);
                attention_tile(&a, &w, h, qt * a.Bq);
            }
        }
        free(w.qs); free(w.s); free(w.acc); free(w.m); free(w.l);
    }
    free(kt);
}
