/* The head-statistics kernel bodies (kernels/cuda/head_stats_body.cuh: softmax, gla prep + gla,
 * gdn) run on the CPU in the emulator of tests/gpu/la_emu_include/emu_runtime.h (threads as
 * coroutines, warps drifting as far apart as the barriers allow, shuffles through the
 * scheduler, dynamic shared memory starting as NaN), so their reductions, barriers, chunk walks,
 * windows and tie rules are tested where no GPU exists. The host sides of the launchers (grids,
 * block sizes, shared memory) are restated here from the body's constants.
 * Every "device" buffer ends at an inaccessible page (a read past its end faults) and is
 * preceded by NaN bytes; outputs start as NaN / -1 so an unwritten result shows.
 * The reference is written from model-spec section 7 in double precision, independently of the
 * kernels' sweeps: softmax p over the visible s of z = c_t q.k / sqrt(dk); gla
 * c_{t,s} = (q_t/sqrt dk) . (exp(G_t - G_s) k_s) from the cumulative log decays G; gdn
 * c_{t,s} = beta_s (q_t/sqrt dk) A_t ... A_{s+1} k_s^T with dense A_i = alpha_i (I - beta_i k_i^T k_i);
 * a~ = |c| / sum |c|; visibility by a per-position test of the knob rules. Checks:
 *   entropy  |kernel - reference| <= 1e-10 (softmax, gdn: all double arithmetic) or 2e-6 (gla:
 *            K~ = k exp(G_e - G_s) is stored as float by design, ~1e-7 relative in c);
 *   hit      exact; gla/gdn rows whose decision would flip if the a~ near the span's largest
 *            moved by 1e-5 (gla) / 1e-9 (gdn) relative are counted as ambiguous, not failed;
 *   argmax   exact (earliest on ties), with the same allowance for gla/gdn near-ties.
 * Keys repeat exactly (softmax; gla within a chunk with no decay between) so scores tie exactly,
 * and topk is chosen from the reference so that the decisions are real: the median row sits on
 * the boundary, and a row with ties at the span's largest a~ decides between "fewer than k
 * strictly larger" and "fewer than k larger or equal". A zero query row (a~ = 0 everywhere:
 * argmax is the first visible position) and a dead span (zero keys there, topk > T: only
 * "m > 0" says miss) cover the zero cases. Each case has its own seed. A case that exercises
 * none of what it is for (hits and misses, deciding ties, a dead span) fails too.
 * Build and run: tests/cli/hs_emu.sh (g++ only; exit 0 all pass). usage: hs_emu [softmax|gla|gdn] */
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
#include "head_stats_body.cuh"

enum { SOFTMAX, GLA, GDN };
static const char *kind_name[] = {"softmax", "gla", "gdn"};


/* ---- cases and inputs ---------------------------------------------------------------------- */


struct Case {
    const char *name;
    int kind, T, H, Hkv, dk;
    int window, row_scale;           /* softmax */
    int ties;                        /* softmax, gla: exactly equal scores (see plant_ties_*) */
    int swla, W, S;                  /* gla, gdn */
    float g;                         /* gla, gdn: weak log decays are -g * U(0,1) */
    int strong;                      /* gla, gdn: log decay -30 at some steps */
    int dead_span;                   /* gla, gdn: zero keys over the span (a~ = 0 there) */
    int span0, span1;
    std::vector<int> rows;
    int zero_row;                    /* softmax: row_scale 0 there; gla, gdn: q = 0 there (head 0); -1 none */
};

struct Inputs {
    float *q, *k, *gk, *beta, *la, *rs;
    int *rows;
};

static void l2norm(float *x, int n) {
    double s2 = 0;
    for (int i = 0; i < n; i++) s2 += (double)x[i] * x[i];
    for (int i = 0; i < n; i++) x[i] = (float)(x[i] / sqrt(s2 + 1e-6));
}

/* Softmax keys that tie exactly: a vector u per kv head repeated at the span's start and at
 * positions outside it, 1.1 u two or three times (a strictly larger score, itself tied), two
 * copies of each HS_THREADS apart (the same thread's, in order), queries leaning towards u so these compete with the
 * random keys for the top ranks. */
static void plant_ties_softmax(const Case &c, float *q, float *k) {
    const int G = c.H / c.Hkv, dk = c.dk, s0 = c.span0;
    const int same[] = {s0, s0 + 2, 3, 3 + HS_THREADS, s0 - 7, c.span1 + 5, c.span1 + 30};
    const int more[] = {s0 - 20, c.span1 + 12, c.span1 + 12 + HS_THREADS};
    for (int g = 0; g < c.Hkv; g++) {
        std::vector<float> u(dk);
        for (int i = 0; i < dk; i++) u[i] = srand1();
        for (int s : same)
            if (s >= 0 && s < c.T) memcpy(k + ((size_t)s * c.Hkv + g) * dk, u.data(), dk * sizeof(float));
        for (int s : more)
            if (s >= 0 && s < c.T)
                for (int i = 0; i < dk; i++) k[((size_t)s * c.Hkv + g) * dk + i] = 1.1f * u[i];
        for (int t = 0; t < c.T; t++)
            for (int h = g * G; h < (g + 1) * G; h++)
                for (int i = 0; i < dk; i++) q[((size_t)t * c.H + h) * dk + i] += 0.25f * u[i];
    }
}

/* gla ties: a large key repeated at span0 - 12, span0 - 6 and span0 + 2 with no decay after the
 * first (gk = 0 exactly) up to the last, all in one chunk: the kernel's K~ of the three are then
 * equal (and so are its own-chunk scores), as are the reference's exp(G_t - G_s). */
static void plant_ties_gla(const Case &c, float *k, float *gk) {
    const int C = c.H * c.dk, s0 = c.span0 - 12, s1 = c.span0 + 2;
    if (s0 / HS_GLA_CHUNK != s1 / HS_GLA_CHUNK) { fprintf(stderr, "hs_emu: gla ties straddle a chunk\n"); exit(1); }
    std::vector<float> u(C);
    for (int i = 0; i < C; i++) u[i] = 3 * srand1();
    for (int s : {s0, c.span0 - 6, s1}) memcpy(k + (size_t)s * C, u.data(), C * sizeof(float));
    for (int s = s0 + 1; s <= s1; s++) memset(gk + (size_t)s * C, 0, C * sizeof(float));
}

static Inputs make_inputs(const Case &c) {
    Inputs in = {};
    const int T = c.T, H = c.H, dk = c.dk, Hkv = c.kind == SOFTMAX ? c.Hkv : H;
    in.q = dev<float>((size_t)T * H * dk, 0.0f);
    in.k = dev<float>((size_t)T * Hkv * dk, 0.0f);
    for (size_t i = 0; i < (size_t)T * H * dk; i++) in.q[i] = srand1();
    for (size_t i = 0; i < (size_t)T * Hkv * dk; i++) in.k[i] = srand1();
    if (c.kind == SOFTMAX) {
        if (c.ties) plant_ties_softmax(c, in.q, in.k);
        if (c.row_scale) {
            in.rs = dev<float>((size_t)T, 0.0f);
            for (int t = 0; t < T; t++) in.rs[t] = 0.5f + 1.5f * frand();
            if (c.zero_row >= 0) in.rs[c.zero_row] = 0.0f;   /* a uniform row: ties everywhere */
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
        if (c.ties) plant_ties_gla(c, in.k, in.gk);
        if (c.zero_row >= 0) memset(in.q + (size_t)c.zero_row * H * dk, 0, dk * sizeof(float));
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
        if (c.zero_row >= 0) memset(in.q + (size_t)c.zero_row * H * dk, 0, dk * sizeof(float));
    }
    if (c.dead_span && c.kind != SOFTMAX)
        for (int s = std::max(c.span0, 0); s < std::min(c.span1, T); s++)
            memset(in.k + (size_t)s * H * dk, 0, (size_t)H * dk * sizeof(float));
    in.rows = dev<int>(c.rows.size(), 0);
    for (size_t r = 0; r < c.rows.size(); r++) in.rows[r] = c.rows[r];
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

/* a~ of query t, head h: a[s] for visible s <= t, -1 elsewhere. */
static void ref_dist(const Case &c, const Inputs &in, const std::vector<double> &G, int h, int t,
                     std::vector<double> &a) {
    const int dk = c.dk, H = c.H;
    const double inv = 1.0 / sqrt((double)dk);
    const float *qt = in.q + ((size_t)t * H + h) * dk;
    a.assign(t + 1, -1.0);
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
    for (int s = t; s >= 0; s--) {           /* gdn: r = q_t/sqrt(dk) A_t ... A_{s+1} */
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
        if (visible(c, t, s)) a[s] = fabs(cs);
    }
    double sum = 0;
    for (int s = 0; s <= t; s++) if (a[s] >= 0) sum += a[s];
    for (int s = 0; s <= t; s++) if (a[s] >= 0) a[s] = sum > 0 ? a[s] / sum : 0.0;
}

/* What the statistics depend on, apart from k. */
struct RefRow {
    std::vector<double> a;
    double ent, m, amax;
    int argmax, lo, span;            /* span: clipped span non-empty */
    int larger, larger_lo, larger_hi, ties;   /* #{a > m}; with near-ties of m larger or not; #{a == m} - 1 */
    int nmax;                        /* positions at the largest a~ */
};

static RefRow ref_row(const Case &c, const std::vector<double> &a, int t, double rtol) {
    RefRow R = {};
    R.a = a;
    R.lo = t + 1;
    for (int s = t; s >= 0; s--) if (a[s] >= 0) R.lo = s;
    double h = 0;
    R.amax = -1;
    for (int s = R.lo; s <= t; s++) {
        if (a[s] > 0) h -= a[s] * log(a[s]);
        if (a[s] > R.amax) { R.amax = a[s]; R.argmax = s; }
    }
    R.ent = t > 0 ? h / log(t + 1.0) : 0.0;
    for (int s = R.lo; s <= t; s++) R.nmax += a[s] == R.amax;
    const int sa = std::max(c.span0, R.lo), sb = std::min(c.span1, t + 1);
    R.span = sa < sb;
    R.m = 0;
    for (int s = sa; s < sb; s++) R.m = std::max(R.m, a[s]);
    /* exact ties are never ambiguous: they are exact in the kernels too */
    for (int s = R.lo; s <= t; s++) {
        R.larger += a[s] > R.m;
        R.ties += a[s] == R.m;
        R.larger_lo += a[s] > R.m * (1 + rtol);
        R.larger_hi += a[s] > R.m || (a[s] != R.m && a[s] > R.m * (1 - rtol));
    }
    R.ties -= 1;
    return R;
}

static int ref_hit(const RefRow &R, int k) { return R.span && R.m > 0 && R.larger < k; }

/* ---- one case ------------------------------------------------------------------------------ */

static int fails, runs, bad_runs;

struct Tally { int items, hits, misses, tie_decisive, zero_decisive, tied_argmax, ambiguous, bad; double ent_err; };

static void emulate(const Case &c, const Inputs &in, const float *ktil, const double *dch, cu_head_stats_out o,
                    int topk) {
    const int n = (int)c.rows.size(), H = c.H;
    if (c.kind == SOFTMAX) {
        emu::launch_call([&] {
            stats_softmax_kernel(o, in.q, in.k, in.rs, H, c.Hkv, c.dk, c.window, in.rows, n, c.span0, c.span1, topk);
        }, emu_dim3{(unsigned)n, (unsigned)H, 1}, HS_THREADS, 0);
    } else if (c.kind == GLA) {
        emu::launch_call([&] {
            stats_gla_kernel(o, in.q, in.k, in.gk, ktil, dch, H, c.dk, c.swla, c.W, c.S, in.rows, n, c.span0,
                             c.span1, topk);
        }, emu_dim3{(unsigned)n, (unsigned)H, 1}, HS_GLA_THREADS, hs_gla_smem(c.dk));
    } else {
        const int items = n * H;
        emu::launch_call([&] {
            stats_gdn_kernel(o, in.q, in.k, in.beta, in.la, H, c.dk, c.swla, c.W, c.S, in.rows, n, c.span0, c.span1,
                             topk);
        }, emu_dim3{(unsigned)((items + HS_GDN_WARPS - 1) / HS_GDN_WARPS), 1, 1}, 32 * HS_GDN_WARPS, 0);
    }
}

/* The gla prep kernel, and a check that it filled K~ and the chunk decays. */
static void gla_prep(const Case &c, const Inputs &in, float **ktil, double **dch) {
    const int C = c.H * c.dk, chunks = hs_gla_chunks(c.T);
    *ktil = dev<float>((size_t)c.T * C, NAN);
    *dch = dev<double>((size_t)chunks * C, NAN);
    float *kt = *ktil;
    double *dc = *dch;
    emu::launch_call([&] { gla_prep_kernel(kt, dc, in.k, in.gk, c.T, C); }, emu_dim3{(unsigned)chunks, 1, 1},
                     HS_GLA_THREADS, 0);
    for (size_t i = 0; i < (size_t)c.T * C; i++)
        if (!isfinite(kt[i])) { printf("    gla prep: K~[%zu] not written\n", i); fails++; return; }
    for (size_t i = 0; i < (size_t)chunks * C; i++)
        if (!isfinite(dc[i])) { printf("    gla prep: chunk decay [%zu] not written\n", i); fails++; return; }
}

static void compare(const Case &c, const std::vector<RefRow> &ref, cu_head_stats_out o, int topk, double etol,
                    double rtol, Tally &ty) {
    const int n = (int)c.rows.size();
    for (int h = 0; h < c.H; h++)
        for (int r = 0; r < n; r++) {
            const RefRow &R = ref[(size_t)h * n + r];
            const int i = h * n + r, t = c.rows[r], want = ref_hit(R, topk);
            const double e = o.entropy[i];
            const int hit = o.hit[i], am = o.argmax[i];
            ty.items++;
            ty.hits += want;
            ty.misses += R.span && !want;
            /* a rule that counted ties as larger would decide otherwise */
            ty.tie_decisive += want && R.larger + R.ties >= topk;
            /* ... or one without "m > 0" */
            ty.zero_decisive += R.span && !(R.m > 0) && R.larger < topk;
            ty.tied_argmax += R.nmax > 1;
            const double ee = fabs(e - R.ent);
            if (!(ee <= ty.ent_err)) ty.ent_err = ee;
            const bool hit_amb = (R.larger_lo < topk) != (R.larger_hi < topk);
            const bool am_amb = am >= R.lo && am <= t && R.a[am] != R.amax && R.a[am] >= R.amax * (1 - rtol);
            bool ok = ee <= etol, amb = false;
            if (hit != want) { if (hit_amb && (hit == 0 || hit == 1)) amb = true; else ok = false; }
            if (am != R.argmax) { if (am_amb) amb = true; else ok = false; }
            ty.ambiguous += amb;
            if (!ok) {
                if (ty.bad < 6)
                    printf("    head %d row t=%d (lo %d): entropy %.17g ref %.17g (err %.2e), hit %d ref %d "
                           "(larger %d, ties %d, k %d), argmax %d ref %d\n", h, t, R.lo, e, R.ent, ee, hit, want,
                           R.larger, R.ties, topk, am, R.argmax);
                ty.bad++;
            }
        }
}

/* topk values that put rows on both sides of the boundary: the median row's count of larger
 * a~ plus one (it hits with nothing to spare) and that count (it misses); for ties, a row with
 * ties at its span's largest a~ right at its boundary; for a dead span (a~ = 0 there), a k
 * that only the "m > 0" rule turns into a miss. */
static std::vector<int> pick_topk(const Case &c, const std::vector<RefRow> &ref) {
    if (c.dead_span) return {c.T + 1};
    std::vector<int> larger;
    int tie_k = 0;
    for (const RefRow &R : ref)
        if (R.span && R.m > 0) {
            larger.push_back(R.larger);
            if (c.ties && !tie_k && R.ties > 0) tie_k = R.larger + 1;
        }
    if (larger.empty()) return {3};
    std::sort(larger.begin(), larger.end());
    const int med = larger[larger.size() / 2];
    std::vector<int> ks = {med + 1};
    if (med > 0) ks.push_back(med);
    if (tie_k && std::find(ks.begin(), ks.end(), tie_k) == ks.end()) ks.push_back(tie_k);
    return ks;
}

static void run_case(const Case &c, unsigned case_seed) {
    const int n = (int)c.rows.size();
    seed = case_seed;                /* a case's inputs do not depend on the cases run before it */
    Inputs in = make_inputs(c);
    /* gla: cumulative log decays, G_t = sum_{u <= t} gk_u */
    std::vector<double> G;
    if (c.kind == GLA) {
        const size_t C = (size_t)c.H * c.dk;
        G.assign((size_t)c.T * C, 0.0);
        for (int t = 0; t < c.T; t++)
            for (size_t i = 0; i < C; i++) G[t * C + i] = (t ? G[(t - 1) * C + i] : 0.0) + in.gk[t * C + i];
    }
    const double rtol = c.kind == GLA ? 1e-5 : c.kind == GDN ? 1e-9 : 0.0;
    const double etol = c.kind == GLA ? 2e-6 : 1e-10;
    std::vector<RefRow> ref((size_t)c.H * n);
    std::vector<double> a;
    for (int h = 0; h < c.H; h++)
        for (int r = 0; r < n; r++) {
            ref_dist(c, in, G, h, c.rows[r], a);
            ref[(size_t)h * n + r] = ref_row(c, a, c.rows[r], rtol);
        }
    float *ktil = NULL;
    double *dch = NULL;
    if (c.kind == GLA) gla_prep(c, in, &ktil, &dch);
    Tally ty = {};
    for (int topk : pick_topk(c, ref)) {
        cu_head_stats_out o;
        o.entropy = dev<double>((size_t)n * c.H, NAN);
        o.hit = dev<int>((size_t)n * c.H, -1);
        o.argmax = dev<int>((size_t)n * c.H, -1);
        emulate(c, in, ktil, dch, o, topk);
        const int bad0 = ty.bad;
        compare(c, ref, o, topk, etol, rtol, ty);
        printf("hs_emu %-8s %-12s T=%d H=%d/%d dk=%d window=%d swla=%d W=%d S=%d span=[%d,%d) topk=%d: %s\n",
               kind_name[c.kind], c.name, c.T, c.H, c.kind == SOFTMAX ? c.Hkv : c.H, c.dk, c.window, c.swla, c.W,
               c.S, c.span0, c.span1, topk, ty.bad > bad0 ? "FAIL" : "ok");
        runs++;
        bad_runs += ty.bad > bad0;
        fails += ty.bad > bad0;
    }
    printf("    %d rows x heads: entropy max err %.1e (tol %.0e); %d hits, %d misses, decided by the tie rule %d, "
           "by m > 0 %d; %d argmax ties; %d ambiguous\n", ty.items, ty.ent_err, etol, ty.hits, ty.misses,
           ty.tie_decisive, ty.zero_decisive, ty.tied_argmax, ty.ambiguous);
    if ((c.ties && (!ty.tie_decisive || !ty.tied_argmax)) || (c.dead_span && !ty.zero_decisive) ||
        (!c.dead_span && c.span0 < c.span1 && (!ty.hits || !ty.misses))) {
        printf("    FAIL: the case does not exercise what it is for (hits and misses, ties, a dead span)\n");
        fails++;
    }
    fflush(stdout);
    dev_free_all();
}

/* ---- cases --------------------------------------------------------------------------------- */

static Case base(const char *name, int kind, int T, int H, int dk, int span0, int span1, std::vector<int> rows) {
    Case c = {};
    c.name = name;
    c.kind = kind;
    c.T = T;
    c.H = H;
    c.Hkv = H;
    c.dk = dk;
    c.S = 1;
    c.g = 0.05f;
    c.span0 = span0;
    c.span1 = span1;
    c.rows = rows;
    c.zero_row = -1;
    return c;
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    std::vector<Case> cs;
    Case c;
    /* softmax: GQA, exact ties, rows at both ends, the span cut by t and by the window */
    c = base("causal-ties", SOFTMAX, 150, 4, 40, 60, 66, {149, 0, 1, 61, 64, 100, 148, 30});
    c.Hkv = 2; c.ties = 1;
    cs.push_back(c);
    c = base("window-rs", SOFTMAX, 300, 4, 64, 100, 106, {0, 299, 102, 105, 140, 170, 175, 298, 64, 210});
    c.Hkv = 2; c.ties = 1; c.window = 70; c.row_scale = 1; c.zero_row = 140;
    cs.push_back(c);
    c = base("dk128-ties", SOFTMAX, 300, 2, 128, 10, 14, {0, 299, 12, 80, 258, 259, 270, 282, 290, 298});
    c.row_scale = 1; c.ties = 1;
    cs.push_back(c);
    c = base("dk18-empty", SOFTMAX, 300, 2, 18, 50, 50, {0, 50, 299, 150, 1});
    c.Hkv = 1; c.window = 33;
    cs.push_back(c);
    /* gla: weak and closed gates, the query's own chunk and earlier ones, windows */
    c = base("weak-ties", GLA, 150, 2, 40, 60, 70, {149, 0, 1, 62, 63, 64, 65, 127, 128, 100});
    c.zero_row = 100; c.ties = 1;
    cs.push_back(c);
    c = base("strong", GLA, 300, 2, 64, 120, 130, {0, 299, 5, 128, 129, 191, 192, 250, 298});
    c.strong = 1;
    cs.push_back(c);
    c = base("exact", GLA, 300, 1, 16, 150, 160, {0, 299, 155, 170, 226, 249, 255, 259, 260, 64, 200});
    c.swla = CU_SWLA_EXACT; c.W = 100; c.g = 0.2f;
    cs.push_back(c);
    c = base("overlap-dead", GLA, 300, 2, 128, 200, 204, {0, 299, 202, 230, 255, 256, 287, 130});
    c.swla = CU_SWLA_OVERLAP; c.W = 96; c.S = 32; c.dead_span = 1;
    cs.push_back(c);
    c = base("dk18-w40-empty", GLA, 150, 1, 18, 40, 40, {0, 149, 40, 102, 110, 127, 128});
    c.swla = CU_SWLA_EXACT; c.W = 40;
    cs.push_back(c);
    /* gdn: plain (a partly filled last block), closed gates, exact and overlap windows */
    c = base("plain", GDN, 150, 2, 40, 60, 70, {149, 0, 1, 64, 65, 100, 148});
    c.zero_row = 100;
    cs.push_back(c);
    c = base("strong", GDN, 300, 1, 64, 120, 130, {0, 299, 125, 200, 298});
    c.strong = 1; c.g = 0.2f;
    cs.push_back(c);
    c = base("exact", GDN, 300, 2, 128, 200, 210, {0, 299, 205, 250, 279, 284, 290});
    c.swla = CU_SWLA_EXACT; c.W = 80;
    cs.push_back(c);
    c = base("overlap-dead", GDN, 300, 1, 16, 150, 155, {0, 299, 152, 160, 174, 175, 240});
    c.swla = CU_SWLA_OVERLAP; c.W = 100; c.S = 25; c.dead_span = 1;
    cs.push_back(c);
    c = base("empty-span", GDN, 150, 1, 16, 70, 70, {0, 70, 149});
    cs.push_back(c);
    for (size_t i = 0; i < cs.size(); i++)
        if (!only || !strcmp(only, kind_name[cs[i].kind])) run_case(cs[i], 7u + 1000u * (unsigned)i);
    printf("hs_emu %s: %d/%d runs match the reference\n", fails ? "FAIL" : "PASS", runs - bad_runs, runs);
    return fails ? 1 : 0;
}
