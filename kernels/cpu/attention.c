/* Causal softmax attention in tiles (flash style): each (head, query tile) keeps a running
 * row max m, row sum l and an unnormalised output accumulator, and walks the key tiles that
 * its rows can see. Scores of one query tile against one key tile live in a Bq x Bk buffer;
 * nothing T x T is ever formed. Key tiles entirely outside a window are never visited.
 * Exact softmax: hs_expf (vexp.h, libm-class accuracy) or its AVX-512 form below (the same
 * reduction and polynomial with fused multiply-adds, the same error bound), no fast-math. */
#include "kernels.h"
#include "blas_threads.h"
#include "vexp.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the two tile products (the sgemm-free kernels below) */
typedef void (*attn_qk_fn)(float *, int, const float *, int, const float *, int, int);
typedef void (*attn_pv_fn)(float *, int, const float *, int, const float *, int, int);
typedef float (*row_max_fn)(const float *, int);  /* a row's max score (see below) */
typedef float (*row_exp_fn)(float *, int, float); /* p = exp(s - m) in place, returns the sum */

typedef struct {
    const float *q, *k, *v, *row_scale;
    /* the current kv head's keys, rearranged so that the score product reads them in order:
     * sgemm: [dk, T] (transposed, so both tile products are NN); the kernels below: panels of
     * 16 keys, [ceil(T/16)][dk][16], zero past T (a [dk, T] row stride of T floats put every
     * d of a key block in the same L1 set at T = 16K: half the score product's time in stalls) */
    const float *kt;
    const float *vp; /* the kernels below: the current kv head's values, [ceil(T/16)*16][dvp], zero padded */
    float *out;
    int T, H, Hkv, dk, dv, window, Bq, Bk;
    int dvp;         /* the accumulators' row stride: dv (sgemm) or dv rounded up to 16 (the kernels) */
    int blas;        /* the tile products through sgemm (HS_CPU_ATTN=blas) */
    attn_qk_fn qk;
    attn_pv_fn pv;
    row_max_fn row_max; /* NULL: the loops */
    row_exp_fn row_exp;
} attn_args;

typedef struct {
    float *qs;   /* [Bq, dk] scaled query rows */
    float *s;    /* [Bq, Bk] scores, then probabilities */
    float *acc;  /* [Bq, dvp] unnormalised output */
    float *m, *l;
} attn_work;

/* The largest score of a row, NaNs skipped (as `x > mx ? x : mx` does); a max is exact in any
 * order, so a faster form changes no result. The vectorised reduction of the loop in
 * online_softmax_tile kept one accumulator (a chain of dependent maxes, 4 cycles each) and
 * finished with sixteen scalar maxes through memory: perf put ~18% of the softmax there.
 * row_max_avx512 below; NULL where the CPU lacks AVX-512 (or HS_CPU_SOFTMAX_LOOP is set). */
/* Turns the scores of one (query tile, key tile) pair into probabilities relative to the
 * updated running max, rescaling each row's sum and accumulator when its max grows. Keys a
 * row cannot see (s > t, or s <= t - window) get probability 0. */
static HS_VEC_CLONES void online_softmax_tile(float *sc, int lds, int nq, int nk, int t0, int ks, int window,
                                              float *m, float *l, float *acc, int dv, row_max_fn row_max,
                                              row_exp_fn row_exp) {
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
        if (row_max)
            mx = row_max(sr + j0, j1 - j0 + 1);
        else {
            #pragma omp simd reduction(max:mx)
            for (int j = j0; j <= j1; j++) mx = sr[j] > mx ? sr[j] : mx;
        }
        const float m_old = m[r];
        const float m_new = mx > m_old ? mx : m_old;
        float sum = 0.0f;
        if (j0 > 0) memset(sr, 0, sizeof(float) * (size_t)j0);
        if (row_exp)
            sum = row_exp(sr + j0, j1 - j0 + 1, m_new);
        else {
            #pragma omp simd reduction(+:sum)
            for (int j = j0; j <= j1; j++) { float p = hs_expf(sr[j] - m_new); sr[j] = p; sum += p; }
        }
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

/* The two tile products, written out rather than through sgemm: at a head's dims (40 in the
 * sample models, 64-128 in the presets) each sgemm call spent as long packing its operands
 * as multiplying them (perf, rope-full at 16K tokens on one core: 43% of the time in the sgemm
 * kernel, 21% in its copies, 28% in the softmax). The keys come in panels of 16 and the
 * values in rows padded to 16 floats (rearranged once per kv head, as the transpose was), and
 * 8 query rows x 3 blocks of 16 columns accumulate in 24 zmm registers over one pass (enough
 * independent chains for both FMA pipes over their latency; each broadcast feeds 3 FMAs).
 * AVX-512 only (attn_kernels says why); elsewhere sgemm as before. Fused multiply-adds
 * (contraction is allowed in these kernels only: no reassociation, no other fast-math).
 * HS_CPU_ATTN=blas restores sgemm (the A/B). Same run, one core, rope-full at 16K tokens:
 * the forward in 10.7 CPU-s against 12.9 (docs/bench-notes.md, session 17). */
#if defined(__x86_64__) && !defined(__clang__)
#define AT_FN(tgt) __attribute__((target(tgt), optimize("fp-contract=fast")))
#define AT_HAVE_X86 1
#else
#define AT_FN(tgt)
#define AT_HAVE_X86 0
#endif
typedef float at_v16 __attribute__((vector_size(64), aligned(4)));

/* Both products for R query rows at a time and up to CH blocks of 16 columns (keys for the
 * scores, value dims for the output) a pass. */
#define AT_KERNELS(NAME, ATTR, R, CH, VT, VW)                                                                    \
static ATTR void attn_qk_##NAME(float *restrict s, int lds, const float *restrict q, int dk,    \
                                      const float *restrict kp, int nq, int nk) {                    \
    int i = 0;                                                                                       \
    for (; i + R <= nq; i += R) {                                                                    \
        const float *qr = q + (size_t)i * dk;                                                        \
        int j = 0;                                                                                   \
        for (; j + 16 * CH <= nk; j += 16 * CH) AT_QK_GROUP(R, CH, VT, VW);                               \
        for (; j < nk; j += 16) AT_QK_GROUP(R, 1, VT, VW);                                                \
    }                                                                                                \
    for (; i < nq; i++) {                                                                            \
        float *sr = s + (size_t)i * lds;                                                             \
        for (int j = 0; j < nk; j++) {                                                               \
            const float *kb = kp + (size_t)(j & ~15) * dk + (j & 15);                                \
            float x = 0.0f;                                                                          \
            for (int d = 0; d < dk; d++) x += q[(size_t)i * dk + d] * kb[(size_t)d * 16];            \
            sr[j] = x;                                                                               \
        }                                                                                            \
    }                                                                                                \
}                                                                                                    \
static ATTR void attn_pv_##NAME(float *restrict acc, int dvp, const float *restrict p, int ldp,  \
                                      const float *restrict vp, int nq, int nk) {                    \
    int i = 0;                                                                                       \
    for (; i + R <= nq; i += R) {                                                                    \
        const float *pr = p + (size_t)i * ldp;                                                       \
        float *o = acc + (size_t)i * dvp;                                                            \
        int c0 = 0;                                                                                  \
        for (; c0 + 16 * CH <= dvp; c0 += 16 * CH) AT_PV_GROUP(R, CH, VT, VW);                           \
        for (; c0 < dvp; c0 += 16) AT_PV_GROUP(R, 1, VT, VW);                                            \
    }                                                                                                \
    for (; i < nq; i++) {                                                                            \
        float *o = acc + (size_t)i * dvp;                                                            \
        const float *pr = p + (size_t)i * ldp;                                                       \
        for (int k = 0; k < nk; k++) {                                                               \
            const float x = pr[k], *vr = vp + (size_t)k * dvp;                                       \
            for (int c = 0; c < dvp; c++) o[c] += x * vr[c];                                         \
        }                                                                                            \
    }                                                                                                \
}

/* In the groups below a block of 16 columns is 16 / VW vectors of type VT (VW lanes): one zmm
 * for the AVX-512 kernels. (A vector wider than the target's registers GCC lowers through
 * memory: the first AVX2 form, with 16-lane vectors, ran 6x slower than sgemm.) */

/* scores of R query rows against G panels of 16 keys from key j (the last panel may hold
 * fewer than 16 of the tile's keys: only those are stored) */
#define AT_QK_GROUP(R, G, VT, VW)                                                                    \
    do {                                                                                             \
        enum { NV = 16 / (VW), NU = (G) * NV };                                                      \
        VT a[R][NU];                                                                                 \
        _Pragma("GCC unroll 8") for (int r = 0; r < R; r++)                                          \
            _Pragma("GCC unroll 12") for (int u = 0; u < NU; u++) a[r][u] = (VT){0};                 \
        const float *kb = kp + (size_t)j * dk;                                                       \
        for (int d = 0; d < dk; d++) {                                                               \
            VT x[NU];                                                                                \
            _Pragma("GCC unroll 12") for (int u = 0; u < NU; u++)                                    \
                x[u] = *(const VT *)(kb + (size_t)(u / NV) * 16 * dk + (size_t)d * 16 + (u % NV) * (VW)); \
            _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {                                    \
                const float qd = qr[(size_t)r * dk + d];                                             \
                _Pragma("GCC unroll 12") for (int u = 0; u < NU; u++) a[r][u] += qd * x[u];          \
            }                                                                                        \
        }                                                                                            \
        _Pragma("GCC unroll 12") for (int u = 0; u < NU; u++) {                                      \
            const int c = 16 * (u / NV) + (u % NV) * (VW), w = nk - j - c < (VW) ? nk - j - c : (VW); \
            if (w <= 0) continue;                                                                    \
            _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {                                    \
                float *sr = s + (size_t)(i + r) * lds + j + c;                                       \
                if (w == (VW)) *(VT *)sr = a[r][u];                                                  \
                else for (int e = 0; e < w; e++) sr[e] = a[r][u][e];                                 \
            }                                                                                        \
        }                                                                                            \
    } while (0)

/* R output rows x G blocks of 16 columns from c0, one pass over the keys, in registers */
#define AT_PV_GROUP(R, G, VT, VW)                                                                    \
    do {                                                                                             \
        enum { NU = (G) * 16 / (VW) };                                                               \
        VT a[R][NU];                                                                                 \
        _Pragma("GCC unroll 8") for (int r = 0; r < R; r++)                                          \
            _Pragma("GCC unroll 12") for (int u = 0; u < NU; u++) a[r][u] = *(VT *)(o + (size_t)r * dvp + c0 + u * (VW)); \
        for (int k = 0; k < nk; k++) {                                                               \
            VT x[NU];                                                                                \
            _Pragma("GCC unroll 12") for (int u = 0; u < NU; u++) x[u] = *(const VT *)(vp + (size_t)k * dvp + c0 + u * (VW)); \
            _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {                                    \
                const float pk = pr[(size_t)r * ldp + k];                                            \
                _Pragma("GCC unroll 12") for (int u = 0; u < NU; u++) a[r][u] += pk * x[u];          \
            }                                                                                        \
        }                                                                                            \
        _Pragma("GCC unroll 8") for (int r = 0; r < R; r++)                                          \
            _Pragma("GCC unroll 12") for (int u = 0; u < NU; u++) *(VT *)(o + (size_t)r * dvp + c0 + u * (VW)) = a[r][u]; \
    } while (0)

#if AT_HAVE_X86
AT_KERNELS(avx512, AT_FN("avx512f"), 8, 3, at_v16, 16)
#endif


#if AT_HAVE_X86
#include <immintrin.h>
static AT_FN("avx512f") float row_max_avx512(const float *x, int n) {
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
    int j = 0;
    for (; j + 64 <= n; j += 64) { /* max_ps(x, m): x > m ? x : m, so a NaN x leaves m */
        m0 = _mm512_max_ps(_mm512_loadu_ps(x + j), m0);
        m1 = _mm512_max_ps(_mm512_loadu_ps(x + j + 16), m1);
        m2 = _mm512_max_ps(_mm512_loadu_ps(x + j + 32), m2);
        m3 = _mm512_max_ps(_mm512_loadu_ps(x + j + 48), m3);
    }
    for (; j + 16 <= n; j += 16) m0 = _mm512_max_ps(_mm512_loadu_ps(x + j), m0);
    if (j < n)
        m1 = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, (__mmask16)((1u << (n - j)) - 1u), x + j), m1);
    return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)));
}

/* The softmax's exponentials, p = exp(s - m) for s <= m: hs_expf's reduction and polynomial
 * with fused multiply-adds (not fast-math: each step is one IEEE operation, and the error stays
 * hs_expf's class: max relative error against exp() in double checked <= 3e-7 by
 * tests/test_kernels.c) and 2^n applied by vscalefps, where hs_expf builds it from exponent
 * bits and guards both ends of the range. Here s - m <= 0, so the guards that remain are
 * hs_expf's: 0 below -86.6 (and for -inf), NaN kept. About half of hs_expf's vector operations;
 * the results differ from hs_expf's by an ulp or so (HS_CPU_SOFTMAX_LOOP=1: hs_expf). */
static AT_FN("avx512f") __m512 exp_le0_avx512(__m512 x) {
    const __m512 lo = _mm512_set1_ps(-86.6f);
    const __m512 xc = _mm512_max_ps(lo, x);    /* lo > x ? lo : x: a NaN x stays NaN */
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), xc);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 y = _mm512_set1_ps(1.9875691500e-4f);
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.3981999507e-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(8.3334519073e-3f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(4.1665795894e-2f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.6666665459e-1f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(5.0000001201e-1f));
    y = _mm512_add_ps(_mm512_fmadd_ps(y, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
    const __m512 res = _mm512_scalef_ps(y, n);
    /* x >= lo, or unordered (NaN): keep; below lo (and -inf): 0 */
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ), res);
}

static AT_FN("avx512f") float row_exp_avx512(float *s, int n, float m) {
    const __m512 mv = _mm512_set1_ps(m);
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    int j = 0;
    for (; j + 32 <= n; j += 32) {
        const __m512 p0 = exp_le0_avx512(_mm512_sub_ps(_mm512_loadu_ps(s + j), mv));
        const __m512 p1 = exp_le0_avx512(_mm512_sub_ps(_mm512_loadu_ps(s + j + 16), mv));
        _mm512_storeu_ps(s + j, p0);
        _mm512_storeu_ps(s + j + 16, p1);
        a0 = _mm512_add_ps(a0, p0);
        a1 = _mm512_add_ps(a1, p1);
    }
    for (; j < n; j += 16) {
        const __mmask16 k = n - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - j)) - 1u);
        const __m512 p = exp_le0_avx512(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, s + j), mv));
        _mm512_mask_storeu_ps(s + j, k, p);
        a0 = _mm512_add_ps(a0, _mm512_maskz_mov_ps(k, p));
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}
#endif

/* Whether this CPU runs the AVX-512 forms above and below (tile products, row max, exp). */
static int cpu_avx512(void) {
#if AT_HAVE_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
#else
    return 0;
#endif
}

static row_max_fn attn_row_max(void) {
#if AT_HAVE_X86
    if (cpu_avx512()) return row_max_avx512;
#endif
    return NULL;
}

static row_exp_fn attn_row_exp(void) {
#if AT_HAVE_X86
    if (cpu_avx512()) return row_exp_avx512;
#endif
    return NULL;
}

float softmax_exp_row(float *s, int n, float m) {
    row_exp_fn f = attn_row_exp();
    if (f) return f(s, n, m);
    float sum = 0.0f;
    for (int j = 0; j < n; j++) { s[j] = hs_expf(s[j] - m); sum += s[j]; }
    return sum;
}

/* The tile kernels where the CPU has AVX-512 (0 elsewhere: sgemm). An AVX2 form (4 rows x two
 * ymm) measured 15.4 CPU-s against 14.1 for OpenBLAS's own Haswell kernels on the 16K rope-full
 * run above, and SSE2 29 against 28.5: those machines keep sgemm. */
static int attn_kernels(attn_qk_fn *qk, attn_pv_fn *pv) {
#if AT_HAVE_X86
    if (cpu_avx512()) {
        *qk = attn_qk_avx512;
        *pv = attn_pv_avx512;
        return 1;
    }
#endif
    *qk = NULL;
    *pv = NULL;
    return 0;
}

/* One query tile of one head. */
static void attention_tile(const attn_args *a, attn_work *w, int h, int t0) {
    const int dk = a->dk, dv = a->dv, Bk = a->Bk, window = a->window;
    const int nq = a->T - t0 < a->Bq ? a->T - t0 : a->Bq;
    const int kvh = h / (a->H / a->Hkv);
    const int ldq = a->H * dk, ldv = a->Hkv * dv, ldo = a->H * dv;
    const float inv_sqrt = 1.0f / sqrtf((float)dk);
    const float *ktbase = a->kt, *vbase = a->v + (size_t)kvh * dv;
    const int blas = a->blas, dvp = a->dvp;

    for (int r = 0; r < nq; r++) {
        const float *qr = a->q + (size_t)(t0 + r) * ldq + (size_t)h * dk;
        float c = inv_sqrt * (a->row_scale ? a->row_scale[t0 + r] : 1.0f);
        float *dst = w->qs + (size_t)r * dk;
        for (int i = 0; i < dk; i++) dst[i] = qr[i] * c;
        w->m[r] = -INFINITY;
        w->l[r] = 0.0f;
    }
    memset(w->acc, 0, sizeof(float) * (size_t)nq * dvp);

    const int t_last = t0 + nq - 1;
    int s_lo = window > 0 && t0 - window + 1 > 0 ? t0 - window + 1 : 0;
    if (!blas) s_lo &= ~15;   /* panels start at multiples of 16 (the keys before the window are masked) */
    for (int ks = s_lo; ks <= t_last; ks += Bk) {
        const int nk = t_last + 1 - ks < Bk ? t_last + 1 - ks : Bk;
        if (blas)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, nk, dk, 1.0f, w->qs, dk,
                        ktbase + ks, a->T, 0.0f, w->s, Bk);
        else
            a->qk(w->s, Bk, w->qs, dk, ktbase + (size_t)ks * dk, nq, nk);
        online_softmax_tile(w->s, Bk, nq, nk, t0, ks, window, w->m, w->l, w->acc, dvp, a->row_max, a->row_exp);
        if (blas)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, dv, nk, 1.0f, w->s, Bk,
                        vbase + (size_t)ks * ldv, ldv, 1.0f, w->acc, dv);
        else
            a->pv(w->acc, dvp, w->s, Bk, a->vp + (size_t)ks * dvp, nq, nk);
    }
    for (int r = 0; r < nq; r++) {
        float *o = a->out + (size_t)(t0 + r) * ldo + (size_t)h * dv;
        const float *ar = w->acc + (size_t)r * dvp;
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
    const char *impl = getenv("HS_CPU_ATTN");
    const int softmax_loop = getenv("HS_CPU_SOFTMAX_LOOP") != NULL;
    attn_qk_fn qk;
    attn_pv_fn pv;
    const int blas = (impl && !strcmp(impl, "blas")) || !attn_kernels(&qk, &pv);
    const int Tp = (T + 15) & ~15, dvp = blas ? dv : (dv + 15) & ~15;
    float *kt = malloc(sizeof(float) * (size_t)Tp * dk);
    float *vp = blas ? NULL : malloc(sizeof(float) * (size_t)Tp * dvp);
    if (!kt || (!blas && !vp)) abort();
    attn_args a = {q, k, v, row_scale, kt, vp, out, T, H, Hkv, dk, dv, window, tile, key_tile(T, window, tile),
                   dvp, blas, qk, pv, softmax_loop ? NULL : attn_row_max(), softmax_loop ? NULL : attn_row_exp()};
    const int n_qt = (T + a.Bq - 1) / a.Bq, group = H / Hkv;
    const long items = (long)n_qt * group;
    const double pairs = window > 0 && window < T ? (double)T * window : (double)T * (T + 1) / 2;
    const int par = hs_parallel_worth(2.0 * pairs * H * (dk + dv));
    #pragma omp parallel if (par)
    {
        attn_work w;
        w.qs = malloc(sizeof(float) * (size_t)a.Bq * dk);
        w.s = malloc(sizeof(float) * (size_t)a.Bq * a.Bk);
        w.acc = malloc(sizeof(float) * (size_t)a.Bq * dvp);
        w.m = malloc(sizeof(float) * (size_t)a.Bq);
        w.l = malloc(sizeof(float) * (size_t)a.Bq);
        if (!w.qs || !w.s || !w.acc || !w.m || !w.l) abort();
        /* One kv head at a time, so the transposed keys cost T x dk floats, not T x Hkv x dk
         * (the implicit barriers keep the transpose and its readers apart). */
        for (int g = 0; g < Hkv; g++) {
            #pragma omp for schedule(static)
            for (int s0 = 0; s0 < Tp; s0 += 64) { /* blocked transpose */
                const int s1 = s0 + 64 < Tp ? s0 + 64 : Tp;
                if (a.blas) {
                    for (int i = 0; i < dk; i++)
                        for (int s = s0; s < s1 && s < T; s++)
                            kt[(size_t)i * T + s] = k[((size_t)s * Hkv + g) * dk + i];
                } else {
                    for (int s = s0; s < s1; s++) {
                        float *dst = kt + (size_t)(s & ~15) * dk + (s & 15), *vd = vp + (size_t)s * dvp;
                        const float *src = k + ((size_t)s * Hkv + g) * dk, *vs = v + ((size_t)s * Hkv + g) * dv;
                        for (int i = 0; i < dk; i++) dst[(size_t)i * 16] = s < T ? src[i] : 0.0f;
                        for (int i = 0; i < dvp; i++) vd[i] = s < T && i < dv ? vs[i] : 0.0f;
                    }
                }
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
    free(vp);
}
