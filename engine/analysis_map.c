/* Pooled maps (model-spec section 7): a bins_t x bins_s grid over (query t, source s), each
 * cell the mean or max of a~ over its causal entries s <= t (zeros outside a window count),
 * NaN where the cell has no causal entry. Rows are computed one at a time (O(visible * dk)
 * each) and folded into the grid right away: memory O(B^2 + T) beside the activations.
 *
 * Exact mode computes every query row. Sampled mode (long inputs, see hs_map_opts) computes
 * R evenly spaced rows of each row bin, always including the bin's last row, so a cell that
 * has any causal entry has one among the sampled rows and NaN cells stay exact. */
#include "analysis_api.h"
#include "kernels/cpu/blas_threads.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hs_pooled_map_free(hs_pooled_map *p) {
    if (!p) return;
    free(p->cells);
    p->cells = NULL;
}

/* Query rows per hs_head_view_rows call (a MAP_BLOCK x T buffer of doubles per thread). */
#define MAP_BLOCK 64

static int bin_edge(int start, int n, int bins, int i) {
    return start + (int)((long long)i * n / bins);
}

int hs_map_opts_resolve(hs_map_opts *o, int T, char *err, size_t errlen) {
    if (T < 1) { snprintf(err, errlen, "map: empty input"); return -1; }
    if (o->t1 == 0) o->t1 = T;
    if (o->s1 == 0) o->s1 = T;
    if (o->t0 < 0 || o->t0 >= o->t1 || o->t1 > T || o->s0 < 0 || o->s0 >= o->s1 || o->s1 > T) {
        snprintf(err, errlen, "--zoom: %d:%d,%d:%d must satisfy 0 <= t0 < t1 <= T and "
                 "0 <= s0 < s1 <= T (T = %d)", o->t0, o->t1, o->s0, o->s1, T);
        return -1;
    }
    int nt = o->t1 - o->t0, ns = o->s1 - o->s0;
    if (o->bins_t < 0 || o->bins_s < 0 || o->bins_t > 1024 || o->bins_s > 1024) {
        snprintf(err, errlen, "--bins: must be between 1 and 1024");
        return -1;
    }
    if (o->bins_t == 0) o->bins_t = 256;
    if (o->bins_s == 0) o->bins_s = 256;
    /* A bin covers at least one position (B <= T): clamp to the range length. */
    if (o->bins_t > nt) o->bins_t = nt;
    if (o->bins_s > ns) o->bins_s = ns;
    if (o->rows_per_bin < -1) {
        snprintf(err, errlen, "--rows-per-bin: must be -1 (exact), 0 (auto) or positive");
        return -1;
    }
    if (o->agg != HS_POOL_MEAN && o->agg != HS_POOL_MAX) {
        snprintf(err, errlen, "--agg: must be mean or max");
        return -1;
    }
    return 0;
}

int hs_map_rows_per_bin(const hs_map_opts *o) {
    int nt = o->t1 - o->t0;
    int per_bin = (nt + o->bins_t - 1) / o->bins_t;
    int R = o->rows_per_bin;
    if (R == -1) return 0;
    if (R == 0) {
        if (nt <= HS_MAP_EXACT_T) return 0;
        R = HS_MAP_SAMPLE_ROWS;
    }
    return R >= per_bin ? 0 : R;
}

/* Rows computed for row bin i (R = rows per bin, 0 = every row) and the r-th of them: R
 * evenly spaced rows always include the bin's last row. */
static int bin_rows(const hs_map_opts *o, int R, int i) {
    int nt = o->t1 - o->t0;
    return R > 0 ? R : bin_edge(o->t0, nt, o->bins_t, i + 1) - bin_edge(o->t0, nt, o->bins_t, i);
}

static int bin_row(const hs_map_opts *o, int R, int i, int r) {
    int nt = o->t1 - o->t0;
    int a = bin_edge(o->t0, nt, o->bins_t, i), b = bin_edge(o->t0, nt, o->bins_t, i + 1);
    return R > 0 ? a + (int)((long long)(r + 1) * (b - a) / R) - 1 : a + r;
}

long long hs_map_rows_used(const hs_map_opts *o) {
    const int R = hs_map_rows_per_bin(o);
    long long n = 0;
    for (int i = 0; i < o->bins_t; i++)
        for (int r = 0, nr = bin_rows(o, R, i); r < nr; r++) n += bin_row(o, R, i, r) >= o->s0;
    return n;
}

/* Folds query row t's a~ (row[lo..t], zero before lo) into one row of cells. */
static void fold_row(double *sum, double *mx, long long *cnt, const double *row, int lo, int t,
                     const int *cs, int Bs) {
    for (int j = 0; j < Bs; j++) {
        int s_lo = cs[j], s_hi = cs[j + 1] < t + 1 ? cs[j + 1] : t + 1;
        if (s_lo >= s_hi) break;
        double acc = 0, m = mx[j];
        for (int s = s_lo > lo ? s_lo : lo; s < s_hi; s++) {
            acc += row[s];
            if (row[s] > m) m = row[s];
        }
        sum[j] += acc;
        mx[j] = m;
        cnt[j] += s_hi - s_lo;
    }
}

int hs_pooled_map_from_view(hs_pooled_map *out, hs_head_view *v, const hs_map_opts *o,
                            long long *rows_used, hs_progress_fn progress, void *pctx,
                            char *err, size_t errlen) {
    int Bt = o->bins_t, Bs = o->bins_s, T = v->T;
    int nt = o->t1 - o->t0, ns = o->s1 - o->s0;
    int R = hs_map_rows_per_bin(o);
    memset(out, 0, sizeof *out);
    out->cells = malloc(sizeof(float) * (size_t)Bt * Bs);
    int *cs = malloc(sizeof(int) * (size_t)(Bs + 1));
    if (!out->cells || !cs) {
        free(out->cells); free(cs); out->cells = NULL;
        snprintf(err, errlen, "map: out of memory");
        return -1;
    }
    for (int j = 0; j <= Bs; j++) cs[j] = bin_edge(o->s0, ns, Bs, j);
    /* Tasks: runs of consecutive row bins holding at most MAP_BLOCK rows together (a bin with
     * more rows is a task of its own), so each row GEMM sees many rows. */
    int *task = malloc(sizeof(int) * (size_t)(Bt + 1)), n_tasks = 0;
    if (!task) {
        free(out->cells); free(cs); out->cells = NULL;
        snprintf(err, errlen, "map: out of memory");
        return -1;
    }
    for (int i = 0; i < Bt;) {
        int rows = 0;
        task[n_tasks++] = i;
        do {
            rows += bin_rows(o, R, i);
            i++;
        } while (i < Bt && rows + bin_rows(o, R, i) <= MAP_BLOCK);
    }
    task[n_tasks] = Bt;
    long long used = 0;
    int failed = hs_head_view_prepare(v) != 0, cancelled = 0, done_bins = 0;
    int blas = hs_blas_serial_begin();
#pragma omp parallel reduction(+ : used) if (!failed && (long long)nt * (o->s1 > o->t1 ? o->s1 : o->t1) * v->dk > (1 << 20))
    {
        double *dist = malloc(sizeof(double) * (size_t)MAP_BLOCK * T);
        int *ts = malloc(sizeof(int) * MAP_BLOCK), *tb = malloc(sizeof(int) * MAP_BLOCK);
        int *los = malloc(sizeof(int) * MAP_BLOCK);
        double *sum = malloc(sizeof(double) * (size_t)MAP_BLOCK * Bs);
        double *mx = malloc(sizeof(double) * (size_t)MAP_BLOCK * Bs);
        long long *cnt = malloc(sizeof(long long) * (size_t)MAP_BLOCK * Bs);
        int ok = dist && ts && tb && los && sum && mx && cnt;
        if (!ok) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 1)
        for (int k = 0; k < n_tasks; k++) {
            int stop_c, stop_f;
#pragma omp atomic read
            stop_c = cancelled;
#pragma omp atomic read
            stop_f = failed;
            if (!ok || stop_c || stop_f) continue;
            int b0 = task[k], b1 = task[k + 1];
            for (size_t j = 0; j < (size_t)(b1 - b0) * Bs; j++) { sum[j] = 0; mx[j] = 0; cnt[j] = 0; }
            int n = 0;
            for (int i = b0; i < b1; i++) {
                int nr = bin_rows(o, R, i);
                for (int r = 0; r < nr; r++) {
                    int t = bin_row(o, R, i, r);
                    if (t >= cs[0]) { ts[n] = t; tb[n] = i - b0; n++; }
                    int last = i == b1 - 1 && r == nr - 1;
                    if (n == 0 || (n < MAP_BLOCK && !last)) continue;
                    /* a full block of rows (or the task's last): compute and fold in */
                    if (hs_head_view_rows(v, ts, n, dist, (size_t)T, los)) {
#pragma omp atomic write
                        failed = 1;
                        n = 0;
                        break;
                    }
                    used += n;
                    for (int q = 0; q < n; q++)
                        fold_row(sum + (size_t)tb[q] * Bs, mx + (size_t)tb[q] * Bs,
                                 cnt + (size_t)tb[q] * Bs, dist + (size_t)q * T, los[q], ts[q], cs, Bs);
                    n = 0;
                }
            }
            for (int i = b0; i < b1; i++) {
                float *cells = out->cells + (size_t)i * Bs;
                size_t at = (size_t)(i - b0) * Bs;
                for (int j = 0; j < Bs; j++)
                    cells[j] = cnt[at + j] == 0 ? NAN
                               : (float)(o->agg == HS_POOL_MAX ? mx[at + j] : sum[at + j] / (double)cnt[at + j]);
            }
            if (progress) {
                int d;
#pragma omp atomic capture
                d = done_bins += b1 - b0;
                if (omp_get_thread_num() == 0 && progress(pctx, (double)d / Bt)) {
#pragma omp atomic write
                    cancelled = 1;
                }
            }
        }
        free(dist); free(ts); free(tb); free(los); free(sum); free(mx); free(cnt);
    }
    free(task);
    hs_blas_serial_end(blas);
    free(cs);
    if (failed || cancelled) {
        free(out->cells);
        out->cells = NULL;
        if (failed) { snprintf(err, errlen, "map: out of memory"); return -1; }
        return HS_CANCELLED;
    }
    out->head.layer = v->acts->layer;
    out->head.mixer = v->acts->mixer;
    out->head.head = v->head;
    out->type = v->type;
    out->T = T;
    out->t0 = o->t0; out->t1 = o->t1; out->s0 = o->s0; out->s1 = o->s1;
    out->bins_t = Bt; out->bins_s = Bs;
    out->agg = o->agg;
    if (rows_used) *rows_used = used;
    return 0;
}

/* ---- the whole pipeline: layers up to the head's, then the map inside the capture ---- */

typedef struct {
    const hs_map_opts *o;
    hs_pooled_map *out;
    long long *rows_used;
    hs_progress_fn progress;
    void *pctx;
    int n_layers;
    int rc, done;
    char *err;
    size_t errlen;
} map_ctx;

static int map_progress(void *ctx, double f) {
    map_ctx *mc = ctx;
    /* layers take the first half of the bar, the map rows the second */
    return mc->progress ? mc->progress(mc->pctx, mc->done ? 0.5 + 0.5 * f : 0.5 * f) : 0;
}

static void map_capture(void *ctx, const hs_mixer_acts *a) {
    map_ctx *mc = ctx;
    if (a->layer != mc->o->head.layer || a->mixer != mc->o->head.mixer || mc->done) return;
    hs_head_view v;
    if (hs_head_view_init(&v, a, mc->o->head.head)) {
        snprintf(mc->err, mc->errlen, "map: out of memory");
        mc->rc = -1;
        mc->done = 1;
        return;
    }
    mc->done = 1;
    mc->rc = hs_pooled_map_from_view(mc->out, &v, mc->o, mc->rows_used,
                                     mc->progress ? map_progress : NULL, mc, mc->err, mc->errlen);
    hs_head_view_free(&v);
}

int hs_pooled_map_compute(hs_pooled_map *out, const hs_model *m, const hs_knobs *k,
                          const int32_t *tokens, int T, hs_map_opts *o, long long *rows_used,
                          hs_progress_fn progress, void *progress_ctx, char *err, size_t errlen) {
    const hs_config *c = &m->cfg;
    memset(out, 0, sizeof *out);
    const hs_head_ref *h = &o->head;
    if (h->layer < 0 || h->layer >= c->num_layers || h->mixer < 0 ||
        h->mixer >= c->layers[h->layer].n_mixers || h->head < 0 ||
        h->head >= c->layers[h->layer].mixers[h->mixer].num_heads) {
        snprintf(err, errlen, "--head: %d.%d.%d does not exist in this model", h->layer, h->mixer, h->head);
        return -1;
    }
    if (c->layers[h->layer].mixers[h->mixer].head_k_dim > HS_ANALYSIS_MAX_DK) {
        snprintf(err, errlen, "map: head_k_dim above %d is not supported", HS_ANALYSIS_MAX_DK);
        return -1;
    }
    if (hs_map_opts_resolve(o, T, err, errlen)) return -1;
    map_ctx mc = { o, out, rows_used, progress, progress_ctx, h->layer + 1, 0, 0, err, errlen };
    hs_forward_opts fo;
    memset(&fo, 0, sizeof fo);
    fo.capture = map_capture;
    fo.capture_ctx = &mc;
    fo.progress = progress ? map_progress : NULL;
    fo.progress_ctx = &mc;
    int rc = hs_forward_layers(m, tokens, T, k, h->layer + 1, &fo, err, errlen);
    if (rc == 0) rc = mc.rc;
    if (rc != 0) hs_pooled_map_free(out);
    return rc;
}
