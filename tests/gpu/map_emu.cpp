/* The pooled-map kernel (kernels/cuda/pooled_map_body.cuh: pooled_map_kernel with its softmax,
 * gla and gdn row producers; for gla after head_stats_body.cuh's gla_prep_kernel) run on the CPU
 * in the emulator of tests/gpu/la_emu_include/emu_runtime.h (threads as coroutines, warps
 * drifting as far apart as the barriers allow, shuffles through the scheduler, dynamic shared
 * memory starting as NaN), against a double-precision reference of model-spec section 7 pooled
 * with the rules of engine/analysis_map.c. The host side of cu_pooled_map (grid
 * pm_blocks(bins_t) blocks of PM_THREADS threads, dynamic shared memory pm_gla_smem(dk) for gla,
 * scratch pm_blocks(bins_t) * pm_block_bytes(T, bins_s) bytes) is restated here from the body's
 * helpers.
 * Every "device" buffer ends at an inaccessible page (a read past its end faults) and is preceded
 * by NaN bytes; the scratch starts as NaN bytes (a read of a row weight never written shows) and
 * the cells as -1 (an unwritten cell shows: a~ >= 0 and NaN are the only results).
 * The reference does not share the kernel's sweeps: for each computed query row it builds a~ from
 * the definition (softmax p over the visible s of z = c_t q.k / sqrt(dk), GQA head h / (H/Hkv),
 * window: s > t - window; gla c_{t,s} = (q_t/sqrt dk) . (exp(G_t - G_s) k_s) from the cumulative
 * log gates G; gdn c_{t,s} = beta_s (q_t/sqrt dk) A_t ... A_{s+1} k_s^T with dense
 * A_i = alpha_i (I - beta_i k_i^T k_i); SWLA exact s > t - W, overlap s >= max(0, (t/S+1)S - W);
 * a~ = |c| / sum |c| over the visible s, 0 where the sum is 0) and pools it as
 * hs_pooled_map_from_view does: bins by bin_edge, exact rows or R sampled rows per row bin (the
 * bin's last among them), rows t < s0 skipped, a cell the mean (or max, floor 0) over its causal
 * entries s <= t of the computed rows with the zeros outside the visible range counted, NaN where
 * it has none. Checks, per case:
 *   NaN pattern    exact;
 *   values         |kernel - reference| <= tol * max |reference| over the map, tol 1e-5 for
 *                  softmax and gdn (the row buffer is float), 1e-4 for gla (K~ = k exp(G_e - G_s)
 *                  is stored as float by design);
 *   and that the case exercises what it is for (computed cells, NaN cells: every case has
 *   cells above the diagonal, skipped rows for zooms with s0 > t0, blocks looping over several
 *   row bins when bins_t > PM_MAX_BLOCKS).
 * Cases: softmax full causal, window, GQA, row scale (a zero scale: a uniform row), gla plain /
 * SWLA exact / overlap with T not a multiple of 64, strong (closed) gates and a zero query, gdn
 * plain / exact / overlap; zooms (t0 > 0, s0 > 0, s1 < t1, s0 above the first rows), bins that do
 * not divide the range, bins_t = 300 > PM_MAX_BLOCKS, R = 3 sampled rows and exact, mean and
 * max, one position per bin. Each case has its own seed.
 * Build and run: tests/cli/map_emu.sh (g++ only; exit 0 all pass). usage: map_emu [softmax|gla|gdn] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "cuda_runtime.h"
#include "emu_runtime.h"
#include "emu_mem.h"

/* the launches' grids (the shim's gridDim is the grid emu::launch_call runs) */
static emu_dim3 emu_grid_dim;

#include "head_stats_body.cuh"
#include "pooled_map_body.cuh"

static_assert(PM_GLA_CHUNK == HS_GLA_CHUNK, "the map's gla chunk must be the prep kernel's");

enum { SOFTMAX, GLA, GDN };
static const char *kind_name[] = {"softmax", "gla", "gdn"};


/* ---- cases and inputs ---------------------------------------------------------------------- */


struct Case {
    const char *name;
    int kind, T, H, Hkv, dk, h;
    int window, row_scale;           /* softmax */
    int swla, W, S;                  /* gla, gdn */
    float g;                         /* gla, gdn: log decays -g * U(0,1) */
    int strong;                      /* gla, gdn: log decay -30 at some steps */
    int zero_row;                    /* softmax: row scale 0 there; gla, gdn: q_t = 0 (head h); -1 none */
    int t0, t1, s0, s1, bins_t, bins_s;
    int R;                           /* rows per bin asked for: -1 exact, > 0 sampled */
    int agg;                         /* CU_MAP_MEAN / CU_MAP_MAX */
};

struct Inputs {
    float *q, *k, *gk, *beta, *la, *rs;
};

static void l2norm(float *x, int n) {
    double s2 = 0;
    for (int i = 0; i < n; i++) s2 += (double)x[i] * x[i];
    for (int i = 0; i < n; i++) x[i] = (float)(x[i] / sqrt(s2 + 1e-6));
}

static Inputs make_inputs(const Case &c) {
    Inputs in = {};
    const int T = c.T, H = c.H, dk = c.dk, Hkv = c.kind == SOFTMAX ? c.Hkv : H;
    in.q = dev<float>((size_t)T * H * dk, 0.0f);
    in.k = dev<float>((size_t)T * Hkv * dk, 0.0f);
    /* softmax: queries twice as large, so rows are peaked enough for max and mean to differ */
    const float qs = c.kind == SOFTMAX ? 2.0f : 1.0f;
    for (size_t i = 0; i < (size_t)T * H * dk; i++) in.q[i] = qs * srand1();
    for (size_t i = 0; i < (size_t)T * Hkv * dk; i++) in.k[i] = srand1();
    if (c.kind == SOFTMAX) {
        if (c.row_scale) {
            in.rs = dev<float>((size_t)T, 0.0f);
            for (int t = 0; t < T; t++) in.rs[t] = 0.5f + 1.5f * frand();
            if (c.zero_row >= 0) in.rs[c.zero_row] = 0.0f;   /* a uniform row */
        }
    } else if (c.kind == GLA) {
        in.gk = dev<float>((size_t)T * H * dk, 0.0f);
        for (int t = 0; t < T; t++)
            for (int i = 0; i < H * dk; i++) {
                float g = -c.g * frand();
                /* a closed gate on half the dims now and then, on every dim once */
                if (c.strong && ((t % 37 == 5 && i % 2 == 0) || t == T / 2 + 3)) g = -30.0f;
                in.gk[(size_t)t * H * dk + i] = g;
            }
        if (c.zero_row >= 0) memset(in.q + ((size_t)c.zero_row * H + c.h) * dk, 0, dk * sizeof(float));
    } else {
        in.beta = dev<float>((size_t)T * H, 0.0f);
        in.la = dev<float>((size_t)T * H, 0.0f);
        for (size_t r = 0; r < (size_t)T * H; r++) {
            l2norm(in.q + r * dk, dk);
            l2norm(in.k + r * dk, dk);
            in.beta[r] = frand();
            in.la[r] = -c.g * frand();
            if (c.strong && (r / H) % 41 == 7) in.la[r] = -30.0f;
        }
        if (c.zero_row >= 0) memset(in.q + ((size_t)c.zero_row * H + c.h) * dk, 0, dk * sizeof(float));
    }
    return in;
}

/* ---- reference ----------------------------------------------------------------------------- */

/* Whether query t sees source s (s <= t) under the case's knobs (model-spec sections 4, 7). */
static bool visible(const Case &c, int t, int s) {
    if (c.kind == SOFTMAX) return c.window <= 0 || s > t - c.window;
    if (c.swla == CU_SWLA_EXACT) return s > t - c.W;
    if (c.swla == CU_SWLA_OVERLAP) return s >= std::max(0, (t / c.S + 1) * c.S - c.W);
    return true;
}

/* a~ of query t, head c.h: a[s] for s <= t, 0 where not visible. */
static void ref_dist(const Case &c, const Inputs &in, const std::vector<double> &G, int t, std::vector<double> &a) {
    const int dk = c.dk, H = c.H, h = c.h;
    const double inv = 1.0 / sqrt((double)dk);
    const float *qt = in.q + ((size_t)t * H + h) * dk;
    a.assign(t + 1, 0.0);
    if (c.kind == SOFTMAX) {
        const int kvh = h / (H / c.Hkv);
        const double sc = (in.rs ? (double)in.rs[t] : 1.0) * inv;
        double mx = -INFINITY, sum = 0;
        std::vector<double> z(t + 1);
        for (int s = 0; s <= t; s++) {
            if (!visible(c, t, s)) continue;
            const float *ks = in.k + ((size_t)s * c.Hkv + kvh) * dk;
            double d = 0;
            for (int i = 0; i < dk; i++) d += (double)qt[i] * ks[i];
            z[s] = sc * d;
            mx = std::max(mx, z[s]);
        }
        for (int s = 0; s <= t; s++)
            if (visible(c, t, s)) sum += exp(z[s] - mx);
        for (int s = 0; s <= t; s++)
            if (visible(c, t, s)) a[s] = exp(z[s] - mx) / sum;
        return;
    }
    std::vector<double> r(dk), r2(dk), A((size_t)dk * dk);
    for (int i = 0; i < dk; i++) r[i] = qt[i] * inv;
    int lo = t + 1;
    for (int s = 0; s <= t; s++)
        if (visible(c, t, s)) { lo = s; break; }
    for (int s = t; s >= lo; s--) {          /* gdn: r = q_t/sqrt(dk) A_t ... A_{s+1} */
        const float *ks = in.k + ((size_t)s * H + h) * dk;
        double cs = 0;
        if (c.kind == GLA) {
            const double *Gt = &G[((size_t)t * H + h) * dk], *Gs = &G[((size_t)s * H + h) * dk];
            for (int i = 0; i < dk; i++) cs += qt[i] * inv * exp(Gt[i] - Gs[i]) * ks[i];
        } else {
            const double beta = in.beta[(size_t)s * H + h], alpha = exp((double)in.la[(size_t)s * H + h]);
            for (int i = 0; i < dk; i++) cs += r[i] * ks[i];
            cs *= beta;
            for (int i = 0; i < dk; i++)
                for (int j = 0; j < dk; j++) A[(size_t)i * dk + j] = alpha * ((i == j) - beta * ks[i] * ks[j]);
            for (int j = 0; j < dk; j++) {
                double x = 0;
                for (int i = 0; i < dk; i++) x += r[i] * A[(size_t)i * dk + j];
                r2[j] = x;
            }
            r.swap(r2);
        }
        a[s] = fabs(cs);
    }
    double sum = 0;
    for (int s = 0; s <= t; s++) if (visible(c, t, s)) sum += a[s];
    for (int s = 0; s <= t; s++) a[s] = sum > 0 && visible(c, t, s) ? a[s] / sum : 0.0;
}

/* engine/analysis_map.c: bin i of n positions from start covers [edge(i), edge(i+1)). */
static int ref_edge(int start, int n, int bins, int i) { return start + (int)((long long)i * n / bins); }

/* hs_map_rows_per_bin for an explicit R (-1 exact): R at or above the largest bin is exact. */
static int resolve_R(const Case &c) {
    const int nt = c.t1 - c.t0, per_bin = (nt + c.bins_t - 1) / c.bins_t;
    return c.R <= 0 || c.R >= per_bin ? 0 : c.R;
}

struct RefMap {
    std::vector<double> cells;
    long long rows_used, rows_skipped;
};

/* The pooled map as hs_pooled_map_from_view builds it, from ref_dist rows. */
static RefMap ref_map(const Case &c, const Inputs &in, const std::vector<double> &G) {
    const int Bt = c.bins_t, Bs = c.bins_s, nt = c.t1 - c.t0, ns = c.s1 - c.s0, R = resolve_R(c);
    RefMap m;
    m.cells.assign((size_t)Bt * Bs, NAN);
    m.rows_used = m.rows_skipped = 0;
    std::vector<double> a;
    for (int i = 0; i < Bt; i++) {
        const int ra = ref_edge(c.t0, nt, Bt, i), rb = ref_edge(c.t0, nt, Bt, i + 1);
        std::vector<int> rows;
        if (R > 0)
            for (int r = 0; r < R; r++) rows.push_back(ra + (int)((long long)(r + 1) * (rb - ra) / R) - 1);
        else
            for (int t = ra; t < rb; t++) rows.push_back(t);
        std::vector<double> sum(Bs, 0.0), mx(Bs, 0.0);
        std::vector<long long> cnt(Bs, 0);
        for (int t : rows) {
            if (t < c.s0) { m.rows_skipped++; continue; }
            m.rows_used++;
            ref_dist(c, in, G, t, a);
            for (int j = 0; j < Bs; j++) {
                const int ca = ref_edge(c.s0, ns, Bs, j), cb = std::min(ref_edge(c.s0, ns, Bs, j + 1), t + 1);
                for (int s = ca; s < cb; s++) {
                    sum[j] += a[s];
                    mx[j] = std::max(mx[j], a[s]);
                    cnt[j]++;
                }
            }
        }
        for (int j = 0; j < Bs; j++)
            if (cnt[j]) m.cells[(size_t)i * Bs + j] = c.agg == CU_MAP_MAX ? mx[j] : sum[j] / (double)cnt[j];
    }
    return m;
}

/* ---- one case ------------------------------------------------------------------------------ */

static int fails, runs;

/* The gla prep kernel, and a check that it filled K~ and the chunk decays. */
static bool gla_prep(const Case &c, const Inputs &in, float **ktil, double **dch) {
    const int C = c.H * c.dk, chunks = hs_gla_chunks(c.T);
    *ktil = dev<float>((size_t)c.T * C, NAN);
    *dch = dev<double>((size_t)chunks * C, NAN);
    float *kt = *ktil;
    double *dc = *dch;
    emu_grid_dim = emu_dim3{(unsigned)chunks, 1, 1};
    emu::launch_call([&] { gla_prep_kernel(kt, dc, in.k, in.gk, c.T, C); }, emu_grid_dim, HS_GLA_THREADS, 0);
    for (size_t i = 0; i < (size_t)c.T * C; i++)
        if (!isfinite(kt[i])) { printf("    gla prep: K~[%zu] not written\n", i); return false; }
    for (size_t i = 0; i < (size_t)chunks * C; i++)
        if (!isfinite(dc[i])) { printf("    gla prep: chunk decay [%zu] not written\n", i); return false; }
    return true;
}

static void run_case(const Case &c, unsigned case_seed) {
    seed = case_seed;                /* a case's inputs do not depend on the cases run before it */
    const int nt = c.t1 - c.t0, ns = c.s1 - c.s0;
    if (c.t0 < 0 || c.t0 >= c.t1 || c.t1 > c.T || c.s0 < 0 || c.s0 >= c.s1 || c.s1 > c.T || c.bins_t < 1 ||
        c.bins_s < 1 || c.bins_t > nt || c.bins_s > ns || c.h < 0 || c.h >= c.H ||
        (c.kind == SOFTMAX && c.H % c.Hkv)) {
        printf("map_emu %-8s %-17s: FAIL: the case's geometry is invalid\n", kind_name[c.kind], c.name);
        fails++;
        runs++;
        return;
    }
    Inputs in = make_inputs(c);
    /* gla: cumulative log decays, G_t = sum_{u <= t} gk_u */
    std::vector<double> G;
    if (c.kind == GLA) {
        const size_t C = (size_t)c.H * c.dk;
        G.assign((size_t)c.T * C, 0.0);
        for (int t = 0; t < c.T; t++)
            for (size_t i = 0; i < C; i++) G[t * C + i] = (t ? G[(t - 1) * C + i] : 0.0) + in.gk[t * C + i];
    }
    const RefMap ref = ref_map(c, in, G);

    bool ok = true;
    cu_map_head hd;
    memset(&hd, 0, sizeof hd);
    hd.kind = c.kind == SOFTMAX ? CU_MAP_SOFTMAX : c.kind == GLA ? CU_MAP_GLA : CU_MAP_GDN;
    hd.h = c.h;
    hd.H = c.H;
    hd.Hkv = c.kind == SOFTMAX ? c.Hkv : c.H;
    hd.dk = c.dk;
    hd.q = in.q;
    hd.k = in.k;
    hd.swla = CU_SWLA_OFF;
    hd.S = 1;
    if (c.kind == SOFTMAX) {
        hd.row_scale = in.rs;
        hd.window = c.window;
    } else {
        hd.swla = c.swla;
        hd.W = c.W;
        hd.S = c.S;
    }
    float *ktil = NULL;
    double *dch = NULL;
    size_t smem = 0;
    if (c.kind == GLA) {
        ok = gla_prep(c, in, &ktil, &dch);
        hd.gk = in.gk;
        hd.ktil = ktil;
        hd.dchunk = dch;
        smem = pm_gla_smem(c.dk);
    } else if (c.kind == GDN) {
        hd.beta = in.beta;
        hd.log_alpha = in.la;
    }
    cu_map_geom g = {c.t0, c.t1, c.s0, c.s1, c.bins_t, c.bins_s, resolve_R(c), c.agg};
    const int blocks = pm_blocks(c.bins_t);
    char *scratch = dev<char>((size_t)blocks * pm_block_bytes(c.T, c.bins_s), (char)0xff);
    float *cells = dev<float>((size_t)c.bins_t * c.bins_s, -1.0f);
    if (ok) {
        emu_grid_dim = emu_dim3{(unsigned)blocks, 1, 1};
        emu::launch_call([&] { pooled_map_kernel(cells, scratch, g, hd, c.T); }, emu_grid_dim, PM_THREADS, smem);
    }

    /* compare */
    const double tol = c.kind == GLA ? 1e-4 : 1e-5;
    double rmax = 0, err = 0;
    long long n_nan = 0, n_val = 0, bad = 0;
    for (double v : ref.cells)
        if (!isnan(v)) rmax = std::max(rmax, fabs(v));
    for (int i = 0; i < c.bins_t && ok; i++)
        for (int j = 0; j < c.bins_s; j++) {
            const size_t at = (size_t)i * c.bins_s + j;
            const double want = ref.cells[at], got = cells[at];
            bool cell_ok;
            if (isnan(want)) { n_nan++; cell_ok = isnan(got); }
            else {
                n_val++;
                const double e = fabs(got - want);      /* NaN got: fails below */
                if (!(e <= err)) err = e;
                cell_ok = e <= tol * rmax;
            }
            if (!cell_ok) {
                if (bad < 6)
                    printf("    cell (%d, %d) rows [%d,%d) cols [%d,%d): kernel %.9g reference %.9g\n", i, j,
                           ref_edge(c.t0, nt, c.bins_t, i), ref_edge(c.t0, nt, c.bins_t, i + 1),
                           ref_edge(c.s0, ns, c.bins_s, j), ref_edge(c.s0, ns, c.bins_s, j + 1), got, want);
                bad++;
            }
        }
    if (bad) ok = false;
    /* does the case exercise what it is for? */
    const char *why = NULL;
    if (!n_val || !(rmax > 0)) why = "no computed cell";
    else if (!n_nan) why = "no NaN cell";           /* every case has cells above the diagonal */
    else if (c.s0 > c.t0 && !ref.rows_skipped) why = "no row skipped though s0 > t0";
    else if (c.bins_t > PM_MAX_BLOCKS && blocks >= c.bins_t) why = "blocks do not loop";
    if (why) { printf("    FAIL: the case does not exercise what it is for: %s\n", why); ok = false; }
    const double rel = rmax > 0 ? err / rmax : err;
    printf("map_emu %-8s %-17s T=%d H=%d/%d h=%d dk=%d win=%d swla=%d W=%d S=%d zoom %d:%d,%d:%d bins %dx%d "
           "R=%d %s: %s (rows %lld, skipped %lld, blocks %d; cells %lld + %lld NaN; err %.1e of max %.3g, tol %.0e)\n",
           kind_name[c.kind], c.name, c.T, c.H, c.kind == SOFTMAX ? c.Hkv : c.H, c.h, c.dk, c.window, c.swla, c.W,
           c.S, c.t0, c.t1, c.s0, c.s1, c.bins_t, c.bins_s, resolve_R(c), c.agg == CU_MAP_MAX ? "max" : "mean",
           ok ? "ok" : "FAIL", ref.rows_used, ref.rows_skipped, blocks, n_val, n_nan, rel, rmax, tol);
    fflush(stdout);
    runs++;
    fails += !ok;
    dev_free_all();
}

/* ---- cases --------------------------------------------------------------------------------- */

static Case base(const char *name, int kind, int T, int H, int dk, int h, int bins_t, int bins_s) {
    Case c = {};
    c.name = name;
    c.kind = kind;
    c.T = T;
    c.H = H;
    c.Hkv = H;
    c.dk = dk;
    c.h = h;
    c.S = 1;
    c.g = 0.05f;
    c.zero_row = -1;
    c.t0 = 0; c.t1 = T; c.s0 = 0; c.s1 = T;
    c.bins_t = bins_t;
    c.bins_s = bins_s;
    c.R = -1;
    c.agg = CU_MAP_MEAN;
    return c;
}

static void zoom(Case &c, int t0, int t1, int s0, int s1) { c.t0 = t0; c.t1 = t1; c.s0 = s0; c.s1 = s1; }

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    std::vector<Case> cs;
    Case c;
    /* softmax */
    c = base("causal-10x7", SOFTMAX, 157, 2, 32, 1, 10, 7);
    cs.push_back(c);
    c = base("causal-max", SOFTMAX, 157, 2, 32, 0, 10, 7);
    c.agg = CU_MAP_MAX;
    cs.push_back(c);
    c = base("window", SOFTMAX, 200, 2, 40, 1, 16, 13);
    c.window = 37;
    cs.push_back(c);
    c = base("window-max", SOFTMAX, 200, 2, 40, 0, 23, 16);
    c.window = 37; c.agg = CU_MAP_MAX;
    cs.push_back(c);
    c = base("gqa", SOFTMAX, 180, 4, 24, 3, 12, 9);
    c.Hkv = 2;
    cs.push_back(c);
    c = base("gqa-h1-max", SOFTMAX, 180, 4, 24, 1, 9, 12);
    c.Hkv = 2; c.agg = CU_MAP_MAX;
    cs.push_back(c);
    c = base("row-scale", SOFTMAX, 150, 2, 64, 0, 15, 10);
    c.row_scale = 1; c.zero_row = 77;
    cs.push_back(c);
    /* one position per bin: every cell a single a~ (or NaN above the diagonal) */
    c = base("one-per-bin-max", SOFTMAX, 130, 2, 32, 1, 50, 45);
    zoom(c, 20, 70, 10, 55);
    c.row_scale = 1; c.zero_row = 50; c.agg = CU_MAP_MAX;
    cs.push_back(c);
    c = base("one-per-bin-win", SOFTMAX, 70, 1, 16, 0, 70, 70);
    c.window = 20;
    cs.push_back(c);
    /* zooms: t0 > 0, s0 > 0, s1 < t1, rows before s0 skipped */
    c = base("zoom-skip", SOFTMAX, 170, 2, 32, 0, 11, 5);
    zoom(c, 40, 150, 90, 140);
    cs.push_back(c);
    c = base("zoom-s-after-t", SOFTMAX, 160, 2, 32, 1, 6, 8);
    zoom(c, 10, 60, 30, 150);
    c.agg = CU_MAP_MAX;
    cs.push_back(c);
    /* bins_t > PM_MAX_BLOCKS: blocks loop over two row bins */
    c = base("bins300-zoom", SOFTMAX, 330, 2, 16, 1, 300, 11);
    zoom(c, 15, 330, 5, 300);
    c.window = 60;
    cs.push_back(c);
    /* sampled rows */
    c = base("sampled-R3", SOFTMAX, 400, 2, 32, 1, 20, 20);
    c.R = 3;
    cs.push_back(c);
    c = base("sampled-R3-max", SOFTMAX, 390, 2, 32, 0, 17, 23);
    zoom(c, 7, 390, 40, 370);
    c.R = 3; c.window = 90; c.agg = CU_MAP_MAX;
    cs.push_back(c);
    /* gla: T not a multiple of 64, strong gates, windows inside and across chunks. The emulated
     * walk of the query's own chunk is slow (a block reduction a step), so most gla cases
     * sample rows and the exact one computes the rows of the last, partial chunk and a few
     * before it. */
    c = base("plain-R2", GLA, 157, 2, 32, 1, 10, 7);
    c.R = 2; c.strong = 1; c.zero_row = 100;      /* row 100 is sampled (bin [94,109)) */
    cs.push_back(c);
    c = base("exact-rows-max", GLA, 157, 2, 24, 0, 33, 11);
    zoom(c, 124, 157, 0, 157);
    c.agg = CU_MAP_MAX;
    cs.push_back(c);
    c = base("swla-exact", GLA, 221, 1, 32, 0, 13, 17);
    c.R = 3; c.swla = CU_SWLA_EXACT; c.W = 50; c.g = 0.3f; c.strong = 1;
    cs.push_back(c);
    c = base("swla-overlap-zoom", GLA, 200, 2, 16, 1, 12, 9);
    zoom(c, 30, 200, 60, 190);
    c.R = 3; c.swla = CU_SWLA_OVERLAP; c.W = 100; c.S = 16; c.strong = 1;   /* reaches 2 chunks back */
    cs.push_back(c);
    c = base("sampled-R3-max", GLA, 390, 1, 32, 0, 10, 13);
    c.R = 3; c.g = 0.5f; c.strong = 1; c.agg = CU_MAP_MAX;
    cs.push_back(c);
    c = base("tiny-one-per-bin", GLA, 6, 2, 8, 1, 6, 6);       /* a single partial chunk */
    cs.push_back(c);
    /* gdn */
    c = base("plain", GDN, 141, 2, 32, 1, 10, 7);
    c.zero_row = 120;
    cs.push_back(c);
    c = base("swla-exact-max", GDN, 180, 1, 40, 0, 12, 12);
    c.swla = CU_SWLA_EXACT; c.W = 45; c.strong = 1; c.g = 0.2f; c.agg = CU_MAP_MAX;
    cs.push_back(c);
    c = base("swla-overlap-zoom", GDN, 200, 2, 16, 0, 14, 9);
    zoom(c, 20, 190, 50, 200);
    c.swla = CU_SWLA_OVERLAP; c.W = 70; c.S = 25;
    cs.push_back(c);
    c = base("sampled-R3", GDN, 400, 1, 32, 0, 16, 10);
    c.R = 3; c.strong = 1;
    cs.push_back(c);
    c = base("tiny-one-per-bin", GDN, 5, 2, 8, 0, 5, 5);
    c.agg = CU_MAP_MAX;
    cs.push_back(c);
    for (size_t i = 0; i < cs.size(); i++)
        if (!only || !strcmp(only, kind_name[cs[i].kind])) run_case(cs[i], 11u + 1000u * (unsigned)i);
    printf("map_emu %s: %d/%d\n", fails ? "FAIL" : "PASS", runs - fails, runs);
    return fails ? 1 : 0;
}
