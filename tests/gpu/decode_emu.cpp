/* The incremental-decoding kernel bodies (kernels/cuda/decode_kernels_body.cuh) run on the
 * CPU, so their index math (ring slots, key ranges and their merge, lane masks for head dims
 * that are not multiples of 32, GQA, the state layout, the windowed walk) is tested where no
 * GPU exists. Every thread of a block is a coroutine (ucontext); __syncthreads and the warp
 * shuffles go through a scheduler that resumes runnable threads in a random order each round
 * and opens a barrier when every live thread of its scope waits at it (a deadlock, or a
 * shuffle partner that never arrives, is reported). Shared memory is not reset between
 * blocks, and output buffers start as NaN, so a missed write shows. The launchers' grid math
 * (decode_kernels.cu) is restated here.
 * References in double precision from the contract (model-spec sections 4 and 6): rope at a
 * position, the causal short conv, softmax attention of one query over its visible keys, the
 * gla/gdn recurrences, and SWLA as the recurrence restarted from zero at the window start.
 * Tolerances relative to the reference's RMS: largest |error| <= 1e-4 (fp32 against double).
 * Build and run: tests/gpu/decode_emu.sh (g++ only; exit 0 all pass). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <vector>

#include "cuda_runtime.h"
#include "decode_kernels_body.cuh"

namespace demu {

struct Thread {
    ucontext_t ctx;
    emu_dim3 idx;
    int wait;                  /* 0 runnable, 1 block barrier, 2 warp exchange */
    bool done;
    std::vector<char> stack;
};

emu_dim3 block_idx, block_dim, grid_dim;
static Thread *cur;
static ucontext_t sched;
static std::vector<Thread> threads;
static float xf[1024];
static unsigned rng = 2463534242u;
static void (*body_fn)(const void *);
static const void *body_arg;

const emu_dim3 &thread_idx() { return cur->idx; }

static void yield(int why) {
    cur->wait = why;
    swapcontext(&cur->ctx, &sched);
}

void syncthreads() { yield(1); }

float shfl_xor(float v, int mask) {
    const unsigned i = cur->idx.x, lane = i % 32, w = i / 32;
    xf[i] = v;
    yield(2);
    float r = xf[w * 32 + (lane ^ (unsigned)mask)];
    yield(2);
    return r;
}

static void entry() {
    body_fn(body_arg);
    cur->done = true;
    swapcontext(&cur->ctx, &sched);
}

static unsigned next_rand() {
    rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
    return rng;
}

static void run_block(int n) {
    threads.assign(n, Thread());
    for (int i = 0; i < n; i++) {
        Thread &t = threads[i];
        t.idx = emu_dim3{(unsigned)i, 0, 0};
        t.stack.resize(64 * 1024);
        getcontext(&t.ctx);
        t.ctx.uc_stack.ss_sp = t.stack.data();
        t.ctx.uc_stack.ss_size = t.stack.size();
        t.ctx.uc_link = NULL;
        makecontext(&t.ctx, entry, 0);
    }
    std::vector<int> order(n);
    for (;;) {
        int ran = 0, live = 0;
        for (int i = 0; i < n; i++) order[i] = i;
        for (int i = n - 1; i > 0; i--) std::swap(order[i], order[next_rand() % (unsigned)(i + 1)]);
        for (int k = 0; k < n; k++) {
            Thread &t = threads[order[k]];
            if (t.done || t.wait) continue;
            cur = &t;
            swapcontext(&sched, &t.ctx);
            ran = 1;
        }
        int at_block = 0;
        for (int i = 0; i < n; i++)
            if (!threads[i].done) { live++; at_block += threads[i].wait == 1; }
        if (!live) return;
        int released = 0;
        if (at_block == live) {
            for (Thread &t : threads) t.wait = 0;
            released = 1;
        }
        for (int w = 0; !released && w * 32 < n; w++) {
            int lanes = 0, waiting = 0;
            for (int i = w * 32; i < n && i < w * 32 + 32; i++)
                if (!threads[i].done) { lanes++; waiting += threads[i].wait == 2; }
            if (lanes && waiting == lanes) {
                /* a shuffle needs all 32 lanes: a lane that left the kernel would read garbage */
                if (lanes != 32) { fprintf(stderr, "decode_emu: a warp shuffles with %d live lanes\n", lanes); exit(1); }
                for (int i = w * 32; i < w * 32 + 32; i++) threads[i].wait = 0;
                released = 1;
            }
        }
        if (!ran && !released) { fprintf(stderr, "decode_emu: deadlock (block %u,%u)\n", block_idx.x, block_idx.y); exit(1); }
    }
}

/* Runs fn(arg) as a kernel over a gx x gy grid of blocks of bx threads. */
template <class F> static void launch(unsigned gx, unsigned gy, unsigned bx, const F &f) {
    body_fn = [](const void *a) { (*(const F *)a)(); };
    body_arg = &f;
    grid_dim = emu_dim3{gx, gy, 1};
    block_dim = emu_dim3{bx, 1, 1};
    for (unsigned y = 0; y < gy; y++)
        for (unsigned x = 0; x < gx; x++) {
            block_idx = emu_dim3{x, y, 0};
            run_block((int)bx);
        }
    body_arg = NULL;
}

} // namespace demu

/* ---------------------------------------------------------------- helpers ---- */

static unsigned long long seed = 88172645463325252ull;
static double uni() {
    seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
    return (double)(seed >> 11) / 9007199254740992.0;
}
static float nrm() { return (float)((uni() + uni() + uni() - 1.5) * 2.0); }
static std::vector<float> randv(size_t n) {
    std::vector<float> v(n);
    for (float &x : v) x = nrm();
    return v;
}
static std::vector<float> nanv(size_t n) { return std::vector<float>(n, NAN); }

static int fails, checks;

/* got against ref: largest |error| relative to the reference's RMS. */
static void expect(const char *what, const float *got, const double *ref, size_t n, double tol = 1e-4) {
    double ss = 0, md = 0;
    for (size_t i = 0; i < n; i++) ss += ref[i] * ref[i];
    double rms = sqrt(ss / (double)n) + 1e-30;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - ref[i]);
        if (!(d <= md)) md = d;     /* NaN sticks */
    }
    checks++;
    int ok = md / rms <= tol;
    if (!ok) fails++;
    printf("%s %s: max err %.2e of RMS %.3g (tol %.0e)\n", ok ? "ok  " : "FAIL", what, md / rms, rms, tol);
}

static double silu_d(double x) { return x / (1.0 + exp(-x)); }

/* ------------------------------------------------------------------- rope ---- */

static void test_rope(int H, int D, int pos, float theta) {
    std::vector<float> x = randv((size_t)H * D), x0 = x;
    std::vector<double> ref((size_t)H * D);
    for (int h = 0; h < H; h++)
        for (int i = 0; i < D / 2; i++) {
            double a = pos * pow((double)theta, -2.0 * i / D);
            double u = x0[h * D + i], v = x0[h * D + i + D / 2];
            ref[h * D + i] = u * cos(a) - v * sin(a);
            ref[h * D + i + D / 2] = v * cos(a) + u * sin(a);
        }
    const int n = H * (D / 2);
    float *xp = x.data();
    const double lt = log((double)theta);
    demu::launch((unsigned)((n + 255) / 256), 1, 256, [&] { rope_at_kernel(xp, pos, H, D, lt); });
    char what[96];
    snprintf(what, sizeof what, "rope_at H=%d D=%d pos=%d", H, D, pos);
    expect(what, x.data(), ref.data(), x.size());
}

/* ------------------------------------------------------------------- conv ---- */

/* T steps of one channel block against the causal conv of the whole sequence. */
static void test_conv(int C, int K, int with_w, int silu) {
    const int T = 9;
    std::vector<float> xs = randv((size_t)T * C), w = randv((size_t)C * K);
    std::vector<float> hist((size_t)(K > 1 ? K - 1 : 1) * C, 0.0f), out = nanv((size_t)T * C);
    std::vector<double> ref((size_t)T * C);
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++) {
            double u = xs[(size_t)t * C + c];
            if (with_w) {
                u = 0;
                for (int j = 0; j < K; j++) {
                    int s = t - K + 1 + j;
                    if (s >= 0) u += (double)w[(size_t)c * K + j] * xs[(size_t)s * C + c];
                }
            }
            ref[(size_t)t * C + c] = silu ? silu_d(u) : u;
        }
    for (int t = 0; t < T; t++) {
        float *o = out.data() + (size_t)t * C, *hp = hist.data();
        const float *xp = xs.data() + (size_t)t * C, *wp = with_w ? w.data() : NULL;
        demu::launch((unsigned)((C + 127) / 128), 1, 128, [&] { conv_step_kernel(o, hp, xp, wp, C, K, silu); });
    }
    char what[96];
    snprintf(what, sizeof what, "conv_step C=%d K=%d conv=%d silu=%d", C, K, with_w, silu);
    expect(what, out.data(), ref.data(), out.size());
}

/* -------------------------------------------------------------- attention ---- */

/* Query t over a ring of cap rows holding positions t-cap+1..t (row s % cap). */
static void test_attention(int H, int Hkv, int dk, int dv, int t, int cap, int window, float qscale) {
    std::vector<float> K = randv((size_t)(t + 1) * Hkv * dk), V = randv((size_t)(t + 1) * Hkv * dv);
    std::vector<float> q = randv((size_t)H * dk);
    std::vector<float> kc = nanv((size_t)cap * Hkv * dk), vc = nanv((size_t)cap * Hkv * dv);
    for (int s = t + 1 > cap ? t + 1 - cap : 0; s <= t; s++) {
        memcpy(&kc[(size_t)(s % cap) * Hkv * dk], &K[(size_t)s * Hkv * dk], sizeof(float) * Hkv * dk);
        memcpy(&vc[(size_t)(s % cap) * Hkv * dv], &V[(size_t)s * Hkv * dv], sizeof(float) * Hkv * dv);
    }
    const int lo = window > 0 && t - window + 1 > 0 ? t - window + 1 : 0;
    std::vector<double> ref((size_t)H * dv, 0.0);
    for (int h = 0; h < H; h++) {
        const int g = h / (H / Hkv);
        std::vector<double> z(t + 1);
        double mx = -INFINITY, sum = 0;
        for (int s = lo; s <= t; s++) {
            double d = 0;
            for (int i = 0; i < dk; i++) d += (double)q[h * dk + i] * K[((size_t)s * Hkv + g) * dk + i];
            z[s] = d * qscale;
            mx = fmax(mx, z[s]);
        }
        for (int s = lo; s <= t; s++) sum += exp(z[s] - mx);
        for (int s = lo; s <= t; s++)
            for (int e = 0; e < dv; e++)
                ref[h * dv + e] += exp(z[s] - mx) / sum * V[((size_t)s * Hkv + g) * dv + e];
    }
    /* decode_kernels.cu's grid */
    const int n = t - lo + 1;
    int len = (n + DEC_ATT_MAX_SPLITS - 1) / DEC_ATT_MAX_SPLITS;
    if (len < DEC_ATT_MIN_LEN) len = DEC_ATT_MIN_LEN;
    const int splits = (n + len - 1) / len;
    std::vector<float> part = nanv((size_t)H * DEC_ATT_MAX_SPLITS * (dv + 2)), o = nanv((size_t)H * dv);
    float *pp = part.data(), *op = o.data();
    const float *qp = q.data(), *kp = kc.data(), *vp = vc.data();
    demu::launch((unsigned)splits, (unsigned)H, DEC_ATT_WARPS * 32,
                 [&] { dec_attn_part_kernel(pp, qp, kp, vp, cap, lo, n, len, H, Hkv, dk, dv, qscale); });
    demu::launch((unsigned)H, 1, 128, [&] { dec_attn_merge_kernel(op, pp, splits, dv); });
    char what[128];
    snprintf(what, sizeof what, "attention H=%d/%d dk=%d dv=%d t=%d cap=%d window=%d (%d ranges)", H, Hkv, dk, dv,
             t, cap, window, splits);
    expect(what, o.data(), ref.data(), o.size());
}

/* ------------------------------------------------------- linear attention ---- */

typedef struct {
    int T, H, dk, dv, gdn;
    std::vector<float> q, k, v, gk, beta, la;
} la_inputs;

static void l2rows(std::vector<float> &x, int rows, int dim) {
    for (int r = 0; r < rows; r++) {
        double ss = 0;
        for (int i = 0; i < dim; i++) ss += (double)x[(size_t)r * dim + i] * x[(size_t)r * dim + i];
        for (int i = 0; i < dim; i++) x[(size_t)r * dim + i] = (float)(x[(size_t)r * dim + i] / sqrt(ss + 1e-6));
    }
}

static la_inputs la_make(int T, int H, int dk, int dv, int gdn) {
    la_inputs a;
    a.T = T; a.H = H; a.dk = dk; a.dv = dv; a.gdn = gdn;
    a.q = randv((size_t)T * H * dk); a.k = randv((size_t)T * H * dk); a.v = randv((size_t)T * H * dv);
    if (gdn) {
        l2rows(a.q, T * H, dk);
        l2rows(a.k, T * H, dk);
        a.beta.resize((size_t)T * H); a.la.resize((size_t)T * H);
        for (size_t i = 0; i < a.beta.size(); i++) {
            a.beta[i] = (float)(1.0 / (1.0 + exp(-nrm())));
            a.la[i] = (float)(-0.3 * uni() - 0.01);
        }
    } else {
        a.gk.resize((size_t)T * H * dk);
        for (float &g : a.gk) { double z = nrm() + 2.0; g = (float)((fmin(z, 0.0) - log1p(exp(-fabs(z)))) / 4.0); }
    }
    return a;
}

/* o_t = (q_t/sqrt dk) S_t with the recurrence restarted from zero at start(t) (model-spec 4, 6). */
static std::vector<double> la_reference(const la_inputs &a, int (*start)(int t, int W, int S), int W, int S) {
    const int H = a.H, dk = a.dk, dv = a.dv;
    std::vector<double> out((size_t)a.T * H * dv);
    for (int t = 0; t < a.T; t++) {
        const int lo = start ? start(t, W, S) : 0;
        for (int h = 0; h < H; h++) {
            std::vector<double> Sm((size_t)dk * dv, 0.0), ks(dv);
            for (int s = lo; s <= t; s++) {
                const float *k = &a.k[((size_t)s * H + h) * dk], *v = &a.v[((size_t)s * H + h) * dv];
                if (a.gdn) {
                    double be = a.beta[(size_t)s * H + h], al = exp((double)a.la[(size_t)s * H + h]);
                    for (int j = 0; j < dv; j++) {
                        ks[j] = 0;
                        for (int i = 0; i < dk; i++) ks[j] += k[i] * Sm[(size_t)i * dv + j];
                    }
                    for (int i = 0; i < dk; i++)
                        for (int j = 0; j < dv; j++)
                            Sm[(size_t)i * dv + j] = al * (Sm[(size_t)i * dv + j] - be * k[i] * ks[j]) + be * k[i] * v[j];
                } else {
                    const float *g = &a.gk[((size_t)s * H + h) * dk];
                    for (int i = 0; i < dk; i++)
                        for (int j = 0; j < dv; j++)
                            Sm[(size_t)i * dv + j] = exp((double)g[i]) * Sm[(size_t)i * dv + j] + (double)k[i] * v[j];
                }
            }
            const float *q = &a.q[((size_t)t * H + h) * dk];
            for (int j = 0; j < dv; j++) {
                double acc = 0;
                for (int i = 0; i < dk; i++) acc += q[i] * Sm[(size_t)i * dv + j];
                out[((size_t)t * H + h) * dv + j] = acc / sqrt((double)dk);
            }
        }
    }
    return out;
}

static void run_state(const la_inputs &a, float *S, float *out, int t0, int T, int load) {
    const size_t ck = (size_t)a.H * a.dk, cv = (size_t)a.H * a.dv;
    const float *q = out ? a.q.data() + t0 * ck : NULL, *k = a.k.data() + t0 * ck, *v = a.v.data() + t0 * cv;
    const float *gk = a.gdn ? NULL : a.gk.data() + t0 * ck;
    const float *be = a.gdn ? a.beta.data() + (size_t)t0 * a.H : NULL, *la = a.gdn ? a.la.data() + (size_t)t0 * a.H : NULL;
    const long warps = (long)a.H * a.dv;
    const int H = a.H, dk = a.dk, dv = a.dv;
    demu::launch((unsigned)((warps * 32 + 127) / 128), 1, 128,
                 [&] { la_run_kernel(S, out, q, k, v, gk, be, la, T, H, dk, dv, load); });
}

/* The state kernel as the decoder uses it: a prefill of P rows (state only), then single steps
 * from the stored state; and in one launch over every row. */
static void test_state(int H, int dk, int dv, int gdn) {
    const int T = 11, P = 6;
    la_inputs a = la_make(T, H, dk, dv, gdn);
    std::vector<double> ref = la_reference(a, NULL, 0, 0);
    std::vector<float> S = nanv((size_t)H * dk * dv), out = nanv((size_t)T * H * dv);
    run_state(a, S.data(), out.data(), 0, T, 0);
    char what[96];
    snprintf(what, sizeof what, "%s recurrence H=%d dk=%d dv=%d, one launch", gdn ? "gdn" : "gla", H, dk, dv);
    expect(what, out.data(), ref.data(), out.size());
    std::vector<float> S2 = nanv((size_t)H * dk * dv), o2 = nanv((size_t)T * H * dv);
    run_state(a, S2.data(), NULL, 0, P, 0);
    for (int t = P; t < T; t++) run_state(a, S2.data(), o2.data() + (size_t)t * H * dv, t, 1, 1);
    snprintf(what, sizeof what, "%s prefill %d + steps H=%d dk=%d dv=%d", gdn ? "gdn" : "gla", P, H, dk, dv);
    expect(what, o2.data() + (size_t)P * H * dv, ref.data() + (size_t)P * H * dv, (size_t)(T - P) * H * dv);
}

static int start_exact(int t, int W, int S) { (void)S; return t - W + 1 > 0 ? t - W + 1 : 0; }
static int start_overlap(int t, int W, int S) { int lo = (t / S + 1) * S - W; return lo > 0 ? lo : 0; }

/* The windowed step for queries t >= P over rings of cap = W rows (position s in row s % W). */
static void test_window(int H, int dk, int dv, int gdn, int overlap, int W, int S) {
    const int T = 3 * W + 5, P = W + 2;
    la_inputs a = la_make(T, H, dk, dv, gdn);
    int (*start)(int, int, int) = overlap ? start_overlap : start_exact;
    std::vector<double> ref = la_reference(a, start, W, S);
    const int cap = W;
    const size_t ck = (size_t)H * dk, cv = (size_t)H * dv;
    std::vector<float> hk = nanv(cap * ck), hv = nanv(cap * cv), hg = nanv(cap * ck), hb = nanv((size_t)cap * H),
                       hl = nanv((size_t)cap * H), out = nanv((size_t)T * cv);
    for (int t = 0; t < T; t++) {
        const size_t slot = (size_t)(t % cap);
        memcpy(&hk[slot * ck], &a.k[t * ck], sizeof(float) * ck);
        memcpy(&hv[slot * cv], &a.v[t * cv], sizeof(float) * cv);
        if (gdn) {
            memcpy(&hb[slot * H], &a.beta[(size_t)t * H], sizeof(float) * H);
            memcpy(&hl[slot * H], &a.la[(size_t)t * H], sizeof(float) * H);
        } else {
            memcpy(&hg[slot * ck], &a.gk[t * ck], sizeof(float) * ck);
        }
        if (t < P) continue;
        const int lo = start(t, W, S);
        float *o = out.data() + t * cv;
        const float *q = a.q.data() + t * ck, *kp = hk.data(), *vp = hv.data();
        const float *gp = gdn ? NULL : hg.data(), *bp = gdn ? hb.data() : NULL, *lp = gdn ? hl.data() : NULL;
        demu::launch((unsigned)((H * 32 + 127) / 128), 1, 128,
                     [&] { la_window_step_kernel(o, q, kp, vp, gp, bp, lp, cap, t, lo, H, dk, dv); });
    }
    char what[128];
    snprintf(what, sizeof what, "%s swla %s W=%d S=%d H=%d dk=%d dv=%d, steps %d..%d", gdn ? "gdn" : "gla",
             overlap ? "overlap" : "exact", W, S, H, dk, dv, P, T - 1);
    expect(what, out.data() + (size_t)P * cv, ref.data() + (size_t)P * cv, (size_t)(T - P) * cv);
}

static void test_embed(void) {
    const int V = 7, d = 300, token = 5;
    std::vector<__nv_bfloat16> table((size_t)V * d);
    std::vector<double> ref(d);
    for (int i = 0; i < V * d; i++) {
        float f = nrm();
        uint32_t u;
        memcpy(&u, &f, 4);
        table[i].bits = (uint16_t)(u >> 16);
        if (i / d == token) ref[i % d] = __bfloat162float(table[i]);
    }
    std::vector<float> x = nanv(d);
    float *xp = x.data();
    const __nv_bfloat16 *tp = table.data();
    demu::launch(2, 1, 256, [&] { embed_token_kernel(xp, tp, token, d); });
    expect("embed_token", x.data(), ref.data(), d, 0.0);
}

/* dec_gemv_kernel against a double-precision product of the same bf16 values; rows beyond a
 * whole block of warps, in_dim not a multiple of 256, and the accumulate form. */
static void test_gemv(int in_dim, int out_dim, int accumulate) {
    auto bf = [](float f) { uint32_t u; memcpy(&u, &f, 4); __nv_bfloat16 b; b.bits = (uint16_t)(u >> 16); return b; };
    std::vector<dec_bf16x8> wv((size_t)out_dim * in_dim / 8), xv((size_t)in_dim / 8);
    __nv_bfloat16 *w = &wv[0].v[0], *x = &xv[0].v[0];
    for (size_t i = 0; i < (size_t)out_dim * in_dim; i++) w[i] = bf(nrm());
    for (int i = 0; i < in_dim; i++) x[i] = bf(nrm());
    std::vector<float> out = accumulate ? randv(out_dim) : nanv(out_dim);
    std::vector<double> ref(out_dim);
    for (int o = 0; o < out_dim; o++) {
        double acc = accumulate ? out[o] : 0.0;
        for (int i = 0; i < in_dim; i++) acc += (double)__bfloat162float(w[(size_t)o * in_dim + i]) * __bfloat162float(x[i]);
        ref[o] = acc;
    }
    float *op = out.data();
    demu::launch((unsigned)((out_dim + DEC_GEMV_WARPS - 1) / DEC_GEMV_WARPS), 1, DEC_GEMV_WARPS * 32,
                 [&] { dec_gemv_kernel(op, x, w, in_dim, out_dim, accumulate); });
    char what[64];
    snprintf(what, sizeof what, "gemv %d x %d%s", out_dim, in_dim, accumulate ? " accumulate" : "");
    expect(what, out.data(), ref.data(), (size_t)out_dim, 1e-5);
}

int main(int argc, char **argv) {
    const int quick = argc > 1 && !strcmp(argv[1], "quick");
    test_embed();
    test_gemv(160, 21, 0);
    test_gemv(384, 160, 1);
    test_gemv(8, 3, 0);
    test_gemv(1032, 9, 1);
    test_rope(3, 16, 37, 10000.0f);
    test_rope(2, 128, 5001, 500000.0f);
    test_conv(37, 4, 1, 1);
    test_conv(200, 3, 1, 0);
    test_conv(50, 1, 1, 1);
    test_conv(40, 4, 0, 1);
    test_attention(4, 2, 40, 72, 0, 10, 0, 0.2f);
    test_attention(4, 2, 40, 72, 999, 250, 250, 0.16f);           /* ring wrapped 3 times, 4 ranges */
    test_attention(2, 1, 16, 16, 20, 21, 0, 0.25f);
    test_attention(3, 3, 64, 64, 57, 8, 8, 0.3f);                  /* window 8 */
    if (!quick) {
        test_attention(4, 1, 128, 128, 4999, 5000, 0, 0.09f);       /* 79 ranges */
        test_attention(2, 2, 256, 256, 300, 301, 0, 0.0625f);
    }
    test_state(2, 40, 36, 0);
    test_state(2, 40, 36, 1);
    test_state(1, 16, 16, 1);
    test_state(2, 64, 64, 0);
    if (!quick) { test_state(1, 256, 40, 1); test_state(1, 128, 256, 0); }
    test_window(2, 40, 36, 0, 0, 7, 0);
    test_window(2, 40, 36, 1, 0, 7, 0);
    test_window(2, 16, 24, 0, 1, 12, 4);
    test_window(2, 16, 24, 1, 1, 12, 5);
    test_window(1, 64, 64, 1, 1, 9, 9);
    printf("%d checks, %d failed\n", checks, fails);
    return fails ? 1 : 0;
}
