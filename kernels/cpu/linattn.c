/* Chunked schedules for linear attention (see linattn.h for the chunk pieces).
 *
 * off:     one state, chunk after chunk.
 * exact:   query t sees s in (t-W, t]. With m = floor(W/C), the m-1 chunks before the
 *          query's chunk are entirely visible to every query of the chunk; their combined
 *          (P, U) comes from a sliding-window aggregate (van Herk / Gil-Werman: suffix
 *          aggregates of the previous group of m-1 chunks combined with the running prefix of
 *          the current group), so each chunk costs about three combines whatever W is, and
 *          nothing is ever subtracted (no cancellation on long inputs). The at most two chunks
 *          that the window edge cuts, and the chunk itself, are done as masked L x C products
 *          through the value-path form. Memory O((W/C) (C dk + |P|) + (W/C) (|P| + dk dv)).
 * overlap: (S >= C) the chunk grid is aligned to the block starts jS and to the restart points
 *          (j+1)S - W, so every chunk lies in one block and every restart is a chunk start.
 *          At a block start the state is rebuilt from zero by folding the stored (P, U) of
 *          the chunks since the restart point (about (W-S)/C folds per block); inside a block
 *          it advances chunk by chunk as in the plain schedule. With S < C that grid would be
 *          cut into tiny chunks, so overlap then runs the exact schedule with the per-block
 *          restart point as the window edge (full chunks: floor((W-S+1)/C) - 1). */
#include "linattn.h"
#include "blas_threads.h"

#include <cblas.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

void la_mm_nn(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
              float beta, float *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) { /* sgemm with K = 0 still scales C by beta, but be explicit */
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) C[(size_t)i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[(size_t)i * ldc + j];
        return;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void la_mm_nt(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
              float beta, float *C, int ldc) {
    if (M <= 0 || N <= 0 || K <= 0) { la_mm_nn(M, N, 0, alpha, A, lda, B, ldb, beta, C, ldc); return; }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void la_mm_tn(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
              float beta, float *C, int ldc) {
    if (M <= 0 || N <= 0 || K <= 0) { la_mm_nn(M, N, 0, alpha, A, lda, B, ldb, beta, C, ldc); return; }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void la_sanitize_swla(int *swla, int *W, int *S) {
    if (*swla != 1 && *swla != 2) { *swla = 0; return; }
    if (*W <= 0) { *swla = 0; return; }
    if (*swla == 2) {
        if (*S <= 0) *S = *W / 4 > 1 ? *W / 4 : 1;
        if (*S > *W) *S = *W;
    }
}

int la_visible_lo(int t, int swla, int W, int S) {
    long lo = 0;
    if (swla == 1) lo = (long)t - W + 1;
    else if (swla == 2) lo = ((long)t / S + 1) * S - W;
    return lo > 0 ? (int)lo : 0;
}

/* ---- state algebra ---------------------------------------------------------------- */

typedef struct {
    const la_method *m;
    int dk, dv, psz;      /* psz: floats in a transition (dk*dk dense, dk diagonal) */
} la_dims;

typedef struct { float *p, *u; } la_agg; /* a segment: S_out = P S_in + U */

/* dst = P src + dst: adds the carried state onto a segment's own contribution. */
static void add_p_state(const la_dims *d, float *dst, const float *p, const float *src) {
    if (d->m->dense) {
        la_mm_nn(d->dk, d->dv, d->dk, 1.0f, p, d->dk, src, d->dv, 1.0f, dst, d->dv);
    } else {
        for (int i = 0; i < d->dk; i++) {
            float e = expf(p[i]);
            for (int j = 0; j < d->dv; j++) dst[(size_t)i * d->dv + j] += e * src[(size_t)i * d->dv + j];
        }
    }
}

/* dst rows = src rows times P ([L, dk]; dst != src). */
static void apply_p_rows(const la_dims *d, float *dst, const float *src, int L, const float *p) {
    if (d->m->dense) {
        la_mm_nn(L, d->dk, d->dk, 1.0f, src, d->dk, p, d->dk, 0.0f, dst, d->dk);
    } else {
        for (int t = 0; t < L; t++)
            for (int i = 0; i < d->dk; i++) dst[(size_t)t * d->dk + i] = src[(size_t)t * d->dk + i] * expf(p[i]);
    }
}

/* out = early followed by late. out may alias neither input. */
static void combine(const la_dims *d, la_agg *out, const la_agg *early, const la_agg *late) {
    memcpy(out->u, late->u, sizeof(float) * (size_t)d->dk * d->dv);
    add_p_state(d, out->u, late->p, early->u);
    if (d->m->dense) la_mm_nn(d->dk, d->dk, d->dk, 1.0f, late->p, d->dk, early->p, d->dk, 0.0f, out->p, d->dk);
    else for (int i = 0; i < d->dk; i++) out->p[i] = early->p[i] + late->p[i];
}

static void copy_agg(const la_dims *d, la_agg *dst, const la_agg *src) {
    memcpy(dst->p, src->p, sizeof(float) * (size_t)d->psz);
    memcpy(dst->u, src->u, sizeof(float) * (size_t)d->dk * d->dv);
}

/* ---- per-head workspace ------------------------------------------------------------ */

typedef struct {
    float *mem;
    size_t used, cap;
} arena;

static float *take(arena *a, size_t n) {
    n = (n + 15) & ~(size_t)15; /* keep 64-byte alignment between buffers */
    float *p = a->mem + a->used;
    a->used += n;
    if (a->used > a->cap) abort(); /* sizes are computed up front; this is a bug guard */
    return p;
}

static size_t rounded(size_t n) { return (n + 15) & ~(size_t)15; }

/* Output of one chunk from the state S entering it: out rows = qe S + ai V. */
static void chunk_output(const la_dims *d, float *o, int ldo, const la_chunk *ch, const float *S,
                         const float *vc, int ldv, int C) {
    la_mm_nn(ch->L, d->dv, d->dk, 1.0f, ch->qe, d->dk, S, d->dv, 0.0f, o, ldo);
    la_mm_nn(ch->L, d->dv, ch->L, 1.0f, ch->ai, C, vc, ldv, 1.0f, o, ldo);
}

/* ---- plain schedule ---------------------------------------------------------------- */

static void head_plain(const la_dims *d, float *out, const float *v, int T, int C, int h, float *scratch,
                       size_t cap) {
    const la_method *m = d->m;
    const int dk = d->dk, dv = d->dv, ldv = m->H * dv;
    arena a = {scratch, 0, cap};
    la_chunk ch;
    ch.qe = take(&a, (size_t)C * dk); ch.ke = take(&a, (size_t)C * dk);
    ch.ai = take(&a, (size_t)C * C); ch.p = take(&a, (size_t)d->psz);
    float *S = take(&a, (size_t)dk * dv), *S2 = take(&a, (size_t)dk * dv);
    float *ls = take(&a, m->scratch_floats);
    memset(S, 0, sizeof(float) * (size_t)dk * dv);
    for (int c0 = 0; c0 < T; c0 += C) {
        ch.L = T - c0 < C ? T - c0 : C;
        m->local(m, h, c0, ch.L, C, &ch, ls);
        const float *vc = v + (size_t)c0 * ldv + (size_t)h * dv;
        chunk_output(d, out + (size_t)c0 * ldv + (size_t)h * dv, ldv, &ch, S, vc, ldv, C);
        if (c0 + ch.L < T) {
            la_mm_tn(dk, dv, ch.L, 1.0f, ch.ke, dk, vc, ldv, 0.0f, S2, dv);
            add_p_state(d, S2, ch.p, S);
            float *t = S; S = S2; S2 = t;
        }
    }
}

static size_t plain_scratch(const la_dims *d, int C) {
    return rounded((size_t)C * d->dk) * 2 + rounded((size_t)C * C) + rounded((size_t)d->psz)
         + rounded((size_t)d->dk * d->dv) * 2 + rounded(d->m->scratch_floats);
}

/* ---- exact sliding window ---------------------------------------------------------- */

typedef struct {
    int k;             /* window length in chunks (m - 1) */
    la_agg *cur, *suf; /* cur: raw aggregates of the current group; suf: suffixes of the last full group */
    la_agg prefix, tmp;
} vanherk;

/* Adds chunk n's aggregate (already in vh->cur[n % k]). */
static void vanherk_push(const la_dims *d, vanherk *vh, int n) {
    int idx = n % vh->k;
    if (idx == 0) copy_agg(d, &vh->prefix, &vh->cur[0]);
    else { combine(d, &vh->tmp, &vh->prefix, &vh->cur[idx]); copy_agg(d, &vh->prefix, &vh->tmp); }
    if (idx == vh->k - 1) { /* group complete: suffix aggregates in place, then swap */
        for (int i = vh->k - 2; i >= 0; i--) {
            combine(d, &vh->tmp, &vh->cur[i], &vh->cur[i + 1]);
            copy_agg(d, &vh->cur[i], &vh->tmp);
        }
        la_agg *t = vh->cur; vh->cur = vh->suf; vh->suf = t;
    }
}

/* Aggregate of chunks n-k .. n-1 (all pushed). Returns a pointer valid until the next push. */
static const la_agg *vanherk_window(const la_dims *d, vanherk *vh, int n) {
    if (n % vh->k == 0) return &vh->suf[0];
    combine(d, &vh->tmp, &vh->suf[(n - vh->k) % vh->k], &vh->prefix);
    return &vh->tmp;
}

/* Chunks that are visible in full to every query of a chunk: floor(Wmin / C) - 1 of them, where
 * every query sees at least Wmin sources (exact: W; overlap: W - S + 1). The ring keeps the
 * chunks a window edge may still cut: everything within W + C tokens. */
static int window_min(int swla, int W, int S) { return swla == 2 ? W - S + 1 : W; }
static int ring_chunks(int C, int W) { return (W + C - 1) / C + 3; }

static size_t window_scratch(const la_dims *d, int C, int swla, int W, int S) {
    int m = window_min(swla, W, S) / C, k = m - 1 > 0 ? m - 1 : 0, R = ring_chunks(C, W);
    size_t agg = rounded((size_t)d->psz) + rounded((size_t)d->dk * d->dv);
    return plain_scratch(d, C) + (size_t)R * (rounded((size_t)C * d->dk) + rounded((size_t)d->psz))
         + (size_t)(2 * k + 2) * agg + rounded((size_t)C * d->dk) * 2 + rounded((size_t)C * C)
         + rounded((size_t)d->dk * d->dv);
}

/* Sliding-window schedule for any visible set [lo(t), t] with lo non-decreasing and every
 * query seeing at least window_min sources: exact SWLA, and overlap when S < C. */
static void head_window(const la_dims *d, float *out, const float *v, int T, int C, int swla, int W, int S,
                        int h, float *scratch, size_t cap) {
    const la_method *m = d->m;
    const int dk = d->dk, dv = d->dv, ldv = m->H * dv;
    const int mw = window_min(swla, W, S) / C, k = mw - 1 > 0 ? mw - 1 : 0, R = ring_chunks(C, W);
    arena a = {scratch, 0, cap};
    la_chunk ch;
    ch.qe = take(&a, (size_t)C * dk); ch.ai = take(&a, (size_t)C * C);
    float *St = take(&a, (size_t)dk * dv), *S2 = take(&a, (size_t)dk * dv);
    float *ls = take(&a, m->scratch_floats);
    float **ring_ke = malloc(sizeof(float *) * (size_t)R * 2), **ring_p = ring_ke + R;
    la_agg *aggs = malloc(sizeof(la_agg) * (size_t)(2 * k + 2));
    if (!ring_ke || !aggs) abort();
    for (int i = 0; i < R; i++) { ring_ke[i] = take(&a, (size_t)C * dk); ring_p[i] = take(&a, (size_t)d->psz); }
    for (int i = 0; i < 2 * k + 2; i++) { aggs[i].p = take(&a, (size_t)d->psz); aggs[i].u = take(&a, (size_t)dk * dv); }
    vanherk vh = {k, aggs, aggs + k, aggs[2 * k], aggs[2 * k + 1]};
    float *X = take(&a, (size_t)C * dk), *X2 = take(&a, (size_t)C * dk), *A = take(&a, (size_t)C * C);
    float *own_u = take(&a, (size_t)dk * dv); /* U of this chunk when no van Herk slot takes it */

    memset(St, 0, sizeof(float) * (size_t)dk * dv);
    for (int n = 0, c0 = 0; c0 < T; n++, c0 += C) {
        const int L = T - c0 < C ? T - c0 : C;
        ch.L = L;
        ch.ke = ring_ke[n % R];
        ch.p = ring_p[n % R];
        m->local(m, h, c0, L, C, &ch, ls);
        const float *vc = v + (size_t)c0 * ldv + (size_t)h * dv;
        float *o = out + (size_t)c0 * ldv + (size_t)h * dv;
        if (la_visible_lo(c0 + L - 1, swla, W, S) == 0) {
            chunk_output(d, o, ldv, &ch, St, vc, ldv, C); /* no query of this chunk reaches a window edge */
        } else {
            const int jf = mw >= 1 ? n + 1 - mw : n;
            const int p = la_visible_lo(c0, swla, W, S) / C; /* oldest chunk any query here sees */
            if (n - jf > 0) {
                const la_agg *z = vanherk_window(d, &vh, n);
                la_mm_nn(L, dv, dk, 1.0f, ch.qe, dk, z->u, dv, 0.0f, o, ldv);
                apply_p_rows(d, X, ch.qe, L, z->p);
            } else {
                for (int t = 0; t < L; t++) memset(o + (size_t)t * ldv, 0, sizeof(float) * (size_t)dv);
                memcpy(X, ch.qe, sizeof(float) * (size_t)L * dk);
            }
            /* the chunk's own tokens, masked to s >= lo(t) */
            for (int t = 0; t < L; t++) {
                const int first = la_visible_lo(c0 + t, swla, W, S) - c0;
                for (int s = 0; s < first && s < L; s++) ch.ai[(size_t)t * C + s] = 0.0f;
            }
            la_mm_nn(L, dv, L, 1.0f, ch.ai, C, vc, ldv, 1.0f, o, ldv);
            /* chunks cut by the window edge, newest first, carrying X back through each */
            for (int j = jf - 1; j >= 0 && j >= p; j--) {
                la_mm_nt(L, C, dk, 1.0f, X, dk, ring_ke[j % R], dk, 0.0f, A, C);
                for (int t = 0; t < L; t++) {
                    long first = (long)la_visible_lo(c0 + t, swla, W, S) - (long)j * C; /* chunk-local */
                    for (int s = 0; s < C && s < first; s++) A[(size_t)t * C + s] = 0.0f;
                }
                la_mm_nn(L, dv, C, 1.0f, A, C, v + (size_t)j * C * ldv + (size_t)h * dv, ldv, 1.0f, o, ldv);
                if (j - 1 >= 0 && j - 1 >= p) {
                    apply_p_rows(d, X2, X, L, ring_p[j % R]);
                    float *t = X; X = X2; X2 = t;
                }
            }
        }
        if (c0 + L >= T) break;
        /* this chunk's own contribution U = ke^T V */
        float *u = k > 0 ? vh.cur[n % k].u : own_u;
        la_mm_tn(dk, dv, L, 1.0f, ch.ke, dk, vc, ldv, 0.0f, u, dv);
        if (la_visible_lo(c0 + L, swla, W, S) == 0) { /* the unwindowed state is still needed */
            memcpy(S2, u, sizeof(float) * (size_t)dk * dv);
            add_p_state(d, S2, ch.p, St);
            float *t = St; St = S2; S2 = t;
        }
        if (k > 0) {
            memcpy(vh.cur[n % k].p, ch.p, sizeof(float) * (size_t)d->psz);
            vanherk_push(d, &vh, n);
        }
    }
    free(ring_ke);
    free(aggs);
}

/* ---- overlap (block restarts) ------------------------------------------------------ */

typedef struct {
    int n;                /* chunks */
    int *start, *len;
    int *first;           /* index of the first chunk this chunk's block can see (its restart point) */
    int ring;             /* chunk aggregates to keep */
} overlap_grid;

static int overlap_grid_build(overlap_grid *g, int T, int C, int W, int S) {
    int cap = 0;
    for (int pass = 0; pass < 2; pass++) {
        int n = 0;
        for (int pos = 0; pos < T;) {
            long end = (long)pos + C;
            long next_block = ((long)pos / S + 1) * S;
            long next_restart = (((long)pos + W) / S + 1) * S - W; /* smallest iS - W > pos */
            if (next_block < end) end = next_block;
            if (next_restart < end) end = next_restart;
            if (end > T) end = T;
            if (pass == 1) { g->start[n] = pos; g->len[n] = (int)(end - pos); }
            n++;
            pos = (int)end;
        }
        if (pass == 0) {
            cap = n;
            g->start = malloc(sizeof(int) * (size_t)cap * 3);
            if (!g->start) return -1;
            g->len = g->start + cap;
            g->first = g->len + cap;
        }
        g->n = n;
    }
    g->ring = 1;
    for (int i = 0, f = 0; i < g->n; i++) {
        int lo = la_visible_lo(g->start[i], 2, W, S);
        while (g->start[f] < lo) f++; /* restart points are chunk starts */
        g->first[i] = f;
        if (i - f + 1 > g->ring) g->ring = i - f + 1;
    }
    return 0;
}

static size_t overlap_scratch(const la_dims *d, int C, int ring) {
    return plain_scratch(d, C) + (size_t)ring * (rounded((size_t)d->psz) + rounded((size_t)d->dk * d->dv));
}

static void head_overlap(const la_dims *d, float *out, const float *v, const overlap_grid *g, int C, int h,
                         float *scratch, size_t cap) {
    const la_method *m = d->m;
    const int dk = d->dk, dv = d->dv, ldv = m->H * dv, R = g->ring;
    arena a = {scratch, 0, cap};
    la_chunk ch;
    ch.qe = take(&a, (size_t)C * dk); ch.ke = take(&a, (size_t)C * dk);
    ch.ai = take(&a, (size_t)C * C);
    float *Z = take(&a, (size_t)dk * dv), *Z2 = take(&a, (size_t)dk * dv);
    float *ls = take(&a, m->scratch_floats);
    la_agg *ring = malloc(sizeof(la_agg) * (size_t)R);
    if (!ring) abort();
    for (int i = 0; i < R; i++) { ring[i].p = take(&a, (size_t)d->psz); ring[i].u = take(&a, (size_t)dk * dv); }
    memset(Z, 0, sizeof(float) * (size_t)dk * dv);
    for (int n = 0; n < g->n; n++) {
        const int c0 = g->start[n], L = g->len[n];
        if (n > 0 && g->first[n] != g->first[n - 1]) {
            /* new restart point: fold the stored chunks from there up to this chunk */
            memset(Z, 0, sizeof(float) * (size_t)dk * dv);
            for (int i = g->first[n]; i < n; i++) {
                memcpy(Z2, ring[i % R].u, sizeof(float) * (size_t)dk * dv);
                add_p_state(d, Z2, ring[i % R].p, Z);
                float *t = Z; Z = Z2; Z2 = t;
            }
        }
        ch.L = L;
        ch.p = ring[n % R].p;
        m->local(m, h, c0, L, C, &ch, ls);
        const float *vc = v + (size_t)c0 * ldv + (size_t)h * dv;
        chunk_output(d, out + (size_t)c0 * ldv + (size_t)h * dv, ldv, &ch, Z, vc, ldv, C);
        if (n + 1 == g->n) break;
        float *u = ring[n % R].u;
        la_mm_tn(dk, dv, L, 1.0f, ch.ke, dk, vc, ldv, 0.0f, u, dv);
        if (g->first[n + 1] == g->first[n]) {
            memcpy(Z2, u, sizeof(float) * (size_t)dk * dv);
            add_p_state(d, Z2, ch.p, Z);
            float *t = Z; Z = Z2; Z2 = t;
        }
    }
    free(ring);
}

/* ---- driver ------------------------------------------------------------------------ */

void la_forward_chunked(float *out, const float *v, int T, int C, int swla, int W, int S,
                        const la_method *m) {
    if (T <= 0 || m->H <= 0) return;
    if (C <= 0) C = 64;
    la_sanitize_swla(&swla, &W, &S);
    /* A window that covers the whole input changes nothing. */
    if (swla == 1 && W >= T) swla = 0;
    if (swla == 2 && ((long)(T - 1) / S + 1) * S <= W) swla = 0;
    la_dims d = {m, m->dk, m->dv, m->dense ? m->dk * m->dk : m->dk};
    overlap_grid g = {0};
    size_t need;
    /* overlap with blocks shorter than a chunk would cut the grid into tiny chunks: it takes
     * the sliding-window schedule instead (its window edge cuts at most three chunks) */
    const int grid = swla == 2 && S >= C;
    if (grid) {
        if (overlap_grid_build(&g, T, C, W, S) != 0) abort();
        need = overlap_scratch(&d, C, g.ring);
    } else if (swla != 0) {
        /* Chunks no longer than the smallest window: a query's own chunk then never starts
         * before its first visible source, so no arithmetic of query t touches a token it
         * cannot see (its output is bitwise independent of them, not just to rounding). */
        if (C > window_min(swla, W, S)) C = window_min(swla, W, S);
        need = window_scratch(&d, C, swla, W, S);
    } else {
        need = plain_scratch(&d, C);
    }
    need = rounded(need);
    const double flops = (double)T * m->H * (4.0 * m->dk * m->dv + 2.0 * C * (m->dk + m->dv)) * (m->dense ? 3 : 1);
    const int par = m->H > 1 && hs_parallel_worth(flops);
    #pragma omp parallel if (par)
    {
        float *scratch = aligned_alloc(64, need * sizeof(float));
        if (!scratch) abort();
        #pragma omp for schedule(dynamic, 1)
        for (int h = 0; h < m->H; h++) {
            if (grid) head_overlap(&d, out, v, &g, C, h, scratch, need);
            else if (swla != 0) head_window(&d, out, v, T, C, swla, W, S, h, scratch, need);
            else head_plain(&d, out, v, T, C, h, scratch, need);
        }
        free(scratch);
    }
    free(g.start);
}

void la_state_readout(float *o, const float *q, const float *S, float scale, int dk, int dv) {
    for (int j = 0; j < dv; j++) o[j] = 0.0f;
    for (int i = 0; i < dk; i++) {
        const float qi = q[i] * scale;
        const float *row = S + (size_t)i * dv;
        for (int j = 0; j < dv; j++) o[j] += qi * row[j];
    }
}
