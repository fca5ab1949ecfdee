/* The element-wise kernel bodies (kernels/cuda/elementwise_body.cuh: embedding, RoPE, SwiGLU,
 * the RoPE angles table, short conv + SiLU, that and the l2 norm in one pass, the gla gate, and the gla gate from its
 * low-rank factor, RMSNorm) run on the CPU in the emulator of
 * tests/gpu/la_emu_include/emu_runtime.h (threads as coroutines; SwiGLU also from a bf16 product), against references written
 * here as plain loops over every element, in the form the contract states (model-spec
 * section 3). The kernels and references do the same float arithmetic per element (the CPU's
 * expf, cos and sin on both sides), so every element must match exactly; what is tested is the
 * kernels' walk (RMSNorm, whose block sum adds in its own order, within 2e-6 of the row; see
 * rmsnorm_case): rows by blocks (grid-stride, fewer blocks than rows too), columns by threads,
 * widths that are not multiples of the block, RoPE's one angle for every head. Outputs start
 * as NaN, so an element the walk misses shows. Build and run: tests/cli/ew_emu.sh. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "cuda_runtime.h"
#include "cuda_bf16.h"
#include "emu_runtime.h"
#include "elementwise_body.cuh"

static unsigned seed = 11u;
static float frand() { seed = seed * 1664525u + 1013904223u; return (float)((seed >> 8) & 0xffffff) / 16777216.0f; }
static int fails, cases;

static void check(const char *what, const float *got, const float *want, size_t n) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (!(got[i] == want[i])) { if (!bad) first = i; bad++; }
    cases++;
    if (bad) {
        fails++;
        printf("FAIL %s: %zu of %zu elements differ (first %zu: %g, want %g)\n", what, bad, n, first, got[first], want[first]);
    } else {
        printf("ok   %s: %zu elements\n", what, n);
    }
}

static std::vector<float> rnd(size_t n, float lo, float hi) {
    std::vector<float> v(n);
    for (auto &x : v) x = lo + (hi - lo) * frand();
    return v;
}

static float to_f(float x) { return x; }
static float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
static void from_f(float &d, float x) { d = x; }
static void from_f(__nv_bfloat16 &d, float x) { d = __float2bfloat16(x); }

/* SwiGLU from a gu of element type G (fp32 or bf16) against the element-by-element form */
template <class G>
static void swiglu_case(const char *name, void (*kernel)(__nv_bfloat16 *, const G *, int, int), int T, int F,
                        int threads, emu_dim3 g) {
    std::vector<G> gu((size_t)T * 2 * F);
    for (auto &x : gu) from_f(x, 8 * frand() - 4);
    std::vector<__nv_bfloat16> out((size_t)T * F, (__nv_bfloat16)0x7fc0);
    std::vector<float> got((size_t)T * F), want((size_t)T * F);
    for (int t = 0; t < T; t++)
        for (int f = 0; f < F; f++) {
            const float gv = to_f(gu[(size_t)t * 2 * F + f]), uv = to_f(gu[(size_t)t * 2 * F + F + f]);
            want[(size_t)t * F + f] = __bfloat162float(__float2bfloat16(gv / (1.0f + expf(-gv)) * uv));
        }
    __nv_bfloat16 *o = out.data();
    const G *gp = gu.data();
    emu::launch_call([=] { kernel(o, gp, T, F); }, g, threads, 0);
    for (size_t i = 0; i < got.size(); i++) got[i] = __bfloat162float(out[i]);
    char what[160];
    snprintf(what, sizeof what, "%s T=%d F=%d threads=%d grid=%u", name, T, F, threads, g.x);
    check(what, got.data(), want.data(), got.size());
}

/* RMSNorm (one block a row) against the contract's form in double: the fp32 output within
 * 2e-6 of the row's largest (the block's sum adds in another order), the bf16 output exactly
 * the kernel's own fp32 rounded (so the packing of four into 8 bytes is checked bit for bit).
 * off = 1 shifts x off 16 bytes, which takes the one-element walk. */
static void rmsnorm_case(int T, int dim, int threads, int with_f32, int off) {
    std::vector<float> xs = rnd((size_t)T * dim + 4, -2, 2), w = rnd(dim, 0.5f, 1.5f);
    std::vector<float> of((size_t)T * dim, NAN), want((size_t)T * dim);
    std::vector<__nv_bfloat16> ob((size_t)T * dim, (__nv_bfloat16)0x7fc0);
    const float *x = xs.data() + off, eps = 1e-6f;
    double tol = 0.0;
    for (int t = 0; t < T; t++) {
        double ss = 0.0;
        for (int j = 0; j < dim; j++) ss += (double)x[(size_t)t * dim + j] * x[(size_t)t * dim + j];
        const double r = 1.0 / sqrt(ss / dim + eps);
        for (int j = 0; j < dim; j++) {
            want[(size_t)t * dim + j] = (float)(x[(size_t)t * dim + j] * r * w[j]);
            tol = fmax(tol, fabs(want[(size_t)t * dim + j]));
        }
    }
    tol *= 2e-6;
    __nv_bfloat16 *obp = ob.data();
    float *ofp = with_f32 ? of.data() : NULL;
    const float *wp = w.data();
    emu::launch_call([=] { rmsnorm_kernel(obp, ofp, x, wp, dim, eps); }, emu_dim3{(unsigned)T, 1, 1}, threads, 0);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < want.size(); i++) {
        const float b = __bfloat162float(ob[i]);
        const bool ok = with_f32 ? fabs(of[i] - want[i]) <= tol && ob[i] == __float2bfloat16(of[i])
                                 : fabs(b - want[i]) <= fabs(want[i]) * (1.0 / 128) + tol;
        if (!ok && !bad++) first = i;
    }
    cases++;
    char what[160];
    snprintf(what, sizeof what, "rmsnorm T=%d dim=%d threads=%d%s%s", T, dim, threads, with_f32 ? " +fp32" : "",
             off ? " unaligned" : "");
    if (bad) {
        fails++;
        printf("FAIL %s: %zu of %zu elements off (first %zu: %g / bf16 %g, want %g)\n", what, bad, want.size(), first,
               with_f32 ? of[first] : NAN, __bfloat162float(ob[first]), want[first]);
    } else {
        printf("ok   %s: %zu elements\n", what, want.size());
    }
}

/* The per-head output norm and gate (head_norm_gate_kernel, G = float or bf16 g): against the
 * contract in double, the bf16 output within its rounding (2^-8 of the element) plus 2e-6 of the
 * largest (the lanes' sums add in another order); a head without a norm exactly bf16(o), a masked
 * head exactly 0. off = 1 shifts o off 16 bytes (the one-element walk). */
template <typename G>
static void head_norm_gate_case(int T, int H, int dv, int threads, int off, int with_norm) {
    const size_t n = (size_t)T * H * dv;
    std::vector<float> os = rnd(n + 4, -2, 2), gf = rnd(n, -4, 4), w = rnd(dv, 0.5f, 1.5f);
    std::vector<G> g(n);
    for (size_t i = 0; i < n; i++) from_f(g[i], gf[i]);
    std::vector<uint8_t> mask(H, 1);
    if (H > 1) mask[1] = 0;
    const float *o = os.data() + off, eps = 1e-6f;
    std::vector<double> want(n);
    double tol = 0.0;
    for (long r = 0; r < (long)T * H; r++) {
        const float *x = o + (size_t)r * dv;
        double ss = 0.0;
        for (int j = 0; j < dv; j++) ss += (double)x[j] * x[j];
        const double rr = 1.0 / sqrt(ss / dv + eps);
        for (int j = 0; j < dv; j++) {
            const double gv = to_f(g[(size_t)r * dv + j]);
            double v = !mask[r % H] ? 0.0 : !with_norm ? (double)x[j] : x[j] * rr * w[j] * (gv / (1.0 + exp(-gv)));
            want[(size_t)r * dv + j] = v;
            tol = fmax(tol, fabs(v));
        }
    }
    tol *= 2e-6;
    std::vector<__nv_bfloat16> ob(n, (__nv_bfloat16)0x7fc0);
    __nv_bfloat16 *obp = ob.data();
    const G *gp = g.data();
    const float *wp = with_norm ? w.data() : NULL;
    const uint8_t *mp = mask.data();
    const long rows = (long)T * H;
    emu::launch_call([=] { head_norm_gate_kernel<G>(obp, o, with_norm ? gp : NULL, wp, mp, rows, H, dv, eps); },
                     emu_dim3{(unsigned)((rows * 32 + threads - 1) / threads), 1, 1}, threads, 0);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        const long r = (long)(i / dv);
        const float b = __bfloat162float(ob[i]);
        const bool ok = !mask[r % H] ? b == 0.0f && !std::signbit(b)
                      : !with_norm ? ob[i] == __float2bfloat16(o[i])
                      : fabs(b - want[i]) <= fabs(want[i]) * (1.0 / 256) + tol;
        if (!ok && !bad++) first = i;
    }
    cases++;
    char what[160];
    snprintf(what, sizeof what, "head_norm_gate<%s> T=%d H=%d dv=%d threads=%d%s%s", sizeof(G) == 4 ? "fp32" : "bf16",
             T, H, dv, threads, off ? " unaligned" : "", with_norm ? "" : " no norm");
    if (bad) {
        fails++;
        printf("FAIL %s: %zu of %zu elements off (first %zu: %g, want %g)\n", what, bad, n, first,
               __bfloat162float(ob[first]), want[first]);
    } else {
        printf("ok   %s: %zu elements\n", what, n);
    }
}

/* the short conv (K taps, zero before row 0) of channel c at row t, then SiLU: the contract's
 * element-by-element form (mode 0 conv + SiLU, 1 conv, 2 SiLU alone) */
static float conv_silu_ref(const std::vector<float> &in, const std::vector<float> &w, int t, int c, int C, int K,
                           int mode) {
    float acc = 0.0f;
    if (mode < 2) {
        for (int j = 0; j < K; j++)
            if (t - K + 1 + j >= 0) acc += w[(size_t)c * K + j] * in[(size_t)(t - K + 1 + j) * C + c];
    } else {
        acc = in[(size_t)t * C + c];
    }
    return mode != 1 ? acc / (1.0f + expf(-acc)) : acc;
}

/* conv_silu_strip_kernel: four channels a thread (blockDim C/4), CONV_STRIP rows a block,
 * the last three input rows in registers. The conv and SiLU exactly as the element-by-element
 * form (conv_silu_at's order); with L2 (dim > 0) the head's sum of squares in the kernel's
 * order (a lane's four squares in order, then a butterfly over the dim/4 lanes), written out
 * here, so every element must match exactly. mode: 0 conv + SiLU, 1 conv, 2 SiLU alone. */
static void conv_strip_case(int T, int C, int mode, int dim, unsigned grid) {
    const int K = 4, silu = mode != 1;
    const float eps = 1e-6f;
    std::vector<float> in = rnd((size_t)T * C, -2, 2), w = rnd((size_t)C * K, -1, 1);
    std::vector<float> out((size_t)T * C, NAN), want((size_t)T * C), y(C);
    for (int t = 0; t < T; t++) {
        for (int c = 0; c < C; c++) want[(size_t)t * C + c] = y[c] = conv_silu_ref(in, w, t, c, C, K, mode);
        if (dim > 0) {
            const int lanes = dim / 4;
            for (int h = 0; h < C / dim; h++) {
                float part[32], nxt[32];
                for (int l = 0; l < lanes; l++) {
                    const float *q = y.data() + h * dim + 4 * l;
                    float ss = q[0] * q[0];
                    ss += q[1] * q[1];
                    ss += q[2] * q[2];
                    ss += q[3] * q[3];
                    part[l] = ss;
                }
                for (int o = lanes >> 1; o > 0; o >>= 1) {
                    for (int l = 0; l < lanes; l++) nxt[l] = part[l] + part[l ^ o];
                    memcpy(part, nxt, sizeof(float) * lanes);
                }
                for (int j = 0; j < dim; j++) want[(size_t)t * C + h * dim + j] = y[h * dim + j] * rsqrtf(part[j / 4] + eps);
            }
        }
    }
    float *o = out.data();
    const float *ip = in.data(), *wp = mode < 2 ? w.data() : NULL;
    if (dim > 0)
        emu::launch_call([=] { conv_silu_strip_kernel<true>(o, ip, wp, T, C, silu, dim, eps); }, emu_dim3{grid, 1, 1}, C / 4, 0);
    else
        emu::launch_call([=] { conv_silu_strip_kernel<false>(o, ip, wp, T, C, silu, 0, 0.0f); }, emu_dim3{grid, 1, 1}, C / 4, 0);
    char what[160];
    snprintf(what, sizeof what, "conv_silu_strip %s%s T=%d C=%d dim=%d grid=%u",
             mode == 0 ? "conv+silu" : mode == 1 ? "conv" : "silu", dim > 0 ? "+l2" : "", T, C, dim, grid);
    check(what, out.data(), want.data(), out.size());
}

/* grid: blocks to launch (fewer than T tests the grid-stride walk) */
static void run(int T, int width, int heads, int threads, unsigned grid) {
    char what[160];
    const emu_dim3 g = {grid, 1, 1};
    /* embedding */
    {
        const int V = 50, d = width;
        std::vector<__nv_bfloat16> E((size_t)V * d);
        for (auto &e : E) e = __float2bfloat16(2 * frand() - 1);
        std::vector<int32_t> tok(T);
        for (auto &t : tok) t = (int32_t)(frand() * V) % V;
        std::vector<float> out((size_t)T * d, NAN), want((size_t)T * d);
        for (int t = 0; t < T; t++)
            for (int j = 0; j < d; j++) want[(size_t)t * d + j] = __bfloat162float(E[(size_t)tok[t] * d + j]);
        float *o = out.data();
        const __nv_bfloat16 *e = E.data();
        const int32_t *tk = tok.data();
        emu::launch_call([=] { embedding_kernel(o, e, tk, T, d); }, g, threads, 0);
        snprintf(what, sizeof what, "embedding T=%d d=%d threads=%d grid=%u", T, d, threads, grid);
        check(what, out.data(), want.data(), out.size());
    }
    /* RoPE: rows t, heads h, pairs (p, p + half) rotated by t theta^(-2p/hd) */
    {
        const int hd = width - width % 2, half = hd / 2;
        const double lt = log(10000.0);
        std::vector<float> x = rnd((size_t)T * heads * hd, -1, 1), want = x;
        for (int t = 0; t < T; t++)
            for (int h = 0; h < heads; h++)
                for (int p = 0; p < half; p++) {
                    const double a = (double)t * exp(-2.0 * p / hd * lt);
                    const float c = (float)cos(a), s = (float)sin(a);
                    float *y = want.data() + ((size_t)t * heads + h) * hd;
                    const float x0 = y[p], x1 = y[p + half];
                    y[p] = x0 * c - x1 * s;
                    y[p + half] = x1 * c + x0 * s;
                }
        float *xp = x.data();
        emu::launch_call([=] { rope_kernel(xp, T, heads, hd, lt); }, g, threads, 0);
        snprintf(what, sizeof what, "rope T=%d heads=%d head_dim=%d threads=%d grid=%u", T, heads, hd, threads, grid);
        check(what, x.data(), want.data(), x.size());
    }
    /* the RoPE angles table (cu_rope_table: the TMA-fed attention rotates q and k by it) holds
     * the cos and sin rope_kernel rotates with */
    for (int hd : {heads * 2, 2 * width}) {
        const int half = hd / 2;
        const double lt = log(10000.0);
        std::vector<float2> cs((size_t)T * half, float2{NAN, NAN});
        std::vector<float> got((size_t)T * hd), want((size_t)T * hd);
        for (int t = 0; t < T; t++)
            for (int p = 0; p < half; p++) {
                const double a = (double)t * exp(-2.0 * p / hd * lt);
                want[(size_t)t * hd + 2 * p] = (float)cos(a);
                want[(size_t)t * hd + 2 * p + 1] = (float)sin(a);
            }
        float2 *cp = cs.data();
        emu::launch_call([=] { rope_table_kernel(cp, T, hd, lt); }, g, threads, 0);
        for (size_t i = 0; i < cs.size(); i++) { got[2 * i] = cs[i].x; got[2 * i + 1] = cs[i].y; }
        snprintf(what, sizeof what, "rope_table T=%d head_dim=%d threads=%d grid=%u", T, hd, threads, grid);
        check(what, got.data(), want.data(), got.size());
    }
    /* SwiGLU, gu rows [gate | up] in fp32 and in bf16 */
    swiglu_case<float>("swiglu", swiglu_kernel, T, width, threads, g);
    swiglu_case<__nv_bfloat16>("swiglu_bf16", swiglu_bf16_kernel, T, width, threads, g);
    for (int with_f32 = 0; with_f32 < 2; with_f32++)
        for (int off = 0; off < 2; off++) rmsnorm_case(T, width, threads, with_f32, off);
    /* short conv (K = 4) with and without SiLU, and SiLU alone */
    for (int mode = 0; mode < 3; mode++) {
        const int C = width, K = 4, silu = mode != 1;
        std::vector<float> in = rnd((size_t)T * C, -2, 2), w = rnd((size_t)C * K, -1, 1);
        std::vector<float> out((size_t)T * C, NAN), want((size_t)T * C);
        for (int t = 0; t < T; t++)
            for (int c = 0; c < C; c++) want[(size_t)t * C + c] = conv_silu_ref(in, w, t, c, C, K, mode);
        float *o = out.data();
        const float *ip = in.data(), *wp = mode < 2 ? w.data() : NULL;
        emu::launch_call([=] { conv_silu_kernel(o, ip, wp, T, C, K, silu); }, g, threads, 0);
        snprintf(what, sizeof what, "conv_silu %s T=%d C=%d threads=%d grid=%u",
                 mode == 0 ? "conv+silu" : mode == 1 ? "conv" : "silu", T, C, threads, grid);
        check(what, out.data(), want.data(), out.size());
    }
    /* short conv + SiLU then each head's l2 norm in one pass (gdn's q and k), against the two
     * steps as the contract states them, with l2norm_kernel's order of additions: lane j of a
     * warp sums its head's elements j, j + 32, ..., a butterfly over the 32 lanes, each lane
     * scales its own elements by its own sum */
    for (int dim : {8, 13, 20, 32, 50, 64, 100}) {
        const int C = width, K = 4;
        if (C % dim) continue;
        const float eps = 1e-6f;
        std::vector<float> in = rnd((size_t)T * C, -2, 2), w = rnd((size_t)C * K, -1, 1);
        std::vector<float> out((size_t)T * C, NAN), want((size_t)T * C), y(C);
        for (int t = 0; t < T; t++) {
            for (int c = 0; c < C; c++) y[c] = conv_silu_ref(in, w, t, c, C, K, 0);
            for (int h = 0; h < C / dim; h++) {
                float part[32] = {0}, nxt[32];
                for (int j = 0; j < dim; j++) part[j % 32] += y[h * dim + j] * y[h * dim + j];
                for (int o = 16; o > 0; o >>= 1) {
                    for (int l = 0; l < 32; l++) nxt[l] = part[l] + part[l ^ o];
                    memcpy(part, nxt, sizeof part);
                }
                for (int j = 0; j < dim; j++)
                    want[(size_t)t * C + h * dim + j] = y[h * dim + j] * rsqrtf(part[j % 32] + eps);
            }
        }
        float *o = out.data();
        const float *ip = in.data(), *wp = w.data();
        emu::launch_call([=] { conv_silu_l2norm_kernel(o, ip, wp, T, C, K, 1, dim, eps); }, g, threads,
                         (size_t)C * sizeof(float));
        snprintf(what, sizeof what, "conv_silu_l2norm T=%d C=%d dim=%d threads=%d grid=%u", T, C, dim, threads, grid);
        check(what, out.data(), want.data(), out.size());
    }
    /* gla gate: logsigmoid(z + b) / 16 */
    {
        const int C = width;
        std::vector<float> z = rnd((size_t)T * C, -30, 10), b = rnd(C, -1, 1), want = z;
        for (int t = 0; t < T; t++)
            for (int c = 0; c < C; c++) {
                const float v = want[(size_t)t * C + c] + b[c];
                want[(size_t)t * C + c] = (fminf(v, 0.0f) - log1pf(expf(-fabsf(v)))) * (1.0f / 16.0f);
            }
        float *zp = z.data();
        const float *bp = b.data();
        emu::launch_call([=] { gla_gate_kernel(zp, bp, T, C, 1.0f / 16.0f); }, g, threads, 0);
        snprintf(what, sizeof what, "gla_gate T=%d C=%d threads=%d grid=%u", T, C, threads, grid);
        check(what, z.data(), want.data(), z.size());
    }
    /* the gla gate from its low-rank factor: logsigmoid(lr . w[c] + b[c]) / 16, the products
     * summed in order by fused multiply-adds; ranks below, at and at the cap; a column grid
     * that does not divide the width and row walkers fewer than the rows */
    for (int R : {1, 8, 16, GLA_GATE_RMAX}) {
        const int C = width;
        std::vector<float> lrf = rnd((size_t)T * R, -2, 2), wf = rnd((size_t)C * R, -1, 1), b = rnd(C, -1, 1);
        std::vector<__nv_bfloat16> lr(lrf.size()), wv(wf.size());
        for (size_t i = 0; i < lrf.size(); i++) lr[i] = __float2bfloat16(lrf[i]);
        for (size_t i = 0; i < wf.size(); i++) wv[i] = __float2bfloat16(wf[i]);
        std::vector<float> z((size_t)T * C, NAN), want(z.size());
        for (int t = 0; t < T; t++)
            for (int c = 0; c < C; c++) {
                float acc = 0.0f;
                for (int r = 0; r < R; r++)
                    acc = fmaf(__bfloat162float(lr[(size_t)t * R + r]), __bfloat162float(wv[(size_t)c * R + r]), acc);
                const float v = acc + b[c];
                want[(size_t)t * C + c] = (fminf(v, 0.0f) - log1pf(expf(-fabsf(v)))) * (1.0f / 16.0f);
            }
        float *zp = z.data();
        const __nv_bfloat16 *lp = lr.data(), *wp = wv.data();
        const float *bp = b.data();
        const emu_dim3 g2 = {(unsigned)((C + threads - 1) / threads), grid, 1};
        emu::launch_call([=] { gla_gate_lowrank_kernel(zp, lp, wp, bp, T, C, R, 1.0f / 16.0f); }, g2, threads, 0);
        snprintf(what, sizeof what, "gla_gate_lowrank T=%d C=%d R=%d threads=%d grid=%ux%u", T, C, R, threads, g2.x, g2.y);
        check(what, z.data(), want.data(), z.size());
        /* the four-column form (R 8 or 16, C a multiple of 4): bit for bit the same sums */
        if ((R == 8 || R == 16) && C % 4 == 0) {
            std::vector<float> z4((size_t)T * C, NAN);
            float *z4p = z4.data();
            const emu_dim3 g4 = {(unsigned)((C / 4 + threads - 1) / threads), grid, 1};
            if (R == 16) emu::launch_call([=] { gla_gate_lowrank4_kernel<16>(z4p, lp, wp, bp, T, C, 1.0f / 16.0f); }, g4, threads, 0);
            else emu::launch_call([=] { gla_gate_lowrank4_kernel<8>(z4p, lp, wp, bp, T, C, 1.0f / 16.0f); }, g4, threads, 0);
            snprintf(what, sizeof what, "gla_gate_lowrank4 T=%d C=%d R=%d threads=%d grid=%ux%u", T, C, R, threads, g4.x, g4.y);
            check(what, z4.data(), want.data(), z4.size());
        }
    }
}

int main() {
    /* widths below, at and above the block; grids of one block a row, fewer, and one */
    run(7, 40, 3, 32, 7);
    run(13, 100, 2, 64, 5);
    run(9, 300, 4, 256, 1);
    run(5, 64, 8, 64, 2);
    run(1, 130, 1, 32, 1);
    run(3, 520, 2, 32, 2);   /* SwiGLU's 8-element walk past one pass of the block */
    /* the strip walk: strips cut inside and at the end, grids of one block, fewer than the
     * strips and one a strip; heads of 4 to 128 (1 to 32 lanes) */
    for (int mode = 0; mode < 3; mode++) {
        conv_strip_case(40, 128, mode, 0, 1);
        conv_strip_case(17, 256, mode, 0, 2);
        conv_strip_case(3, 128, mode, 0, 1);
    }
    for (int dim : {4, 8, 32, 64, 128}) {
        conv_strip_case(37, 128, 0, dim, 2);
        conv_strip_case(16, 256, 0, dim, 1);
    }
    conv_strip_case(33, 512, 1, 128, 3);
    /* head dims of one float4 a lane, several, a partial pass, none (6) and past 128 */
    for (int dv : {128, 64, 40, 6, 132}) {
        head_norm_gate_case<float>(5, 3, dv, 256, 0, 1);
        head_norm_gate_case<__nv_bfloat16>(5, 3, dv, 64, 0, 1);
        head_norm_gate_case<float>(3, 2, dv, 32, 0, 0);
    }
    head_norm_gate_case<float>(4, 3, 128, 64, 1, 1);
    head_norm_gate_case<__nv_bfloat16>(4, 3, 128, 64, 1, 1);
    head_norm_gate_case<float>(2, 2, 64, 32, 1, 0);
    printf("ew_emu %s: %d/%d runs pass\n", fails ? "FAIL" : "PASS", cases - fails, cases);
    return fails ? 1 : 0;
}
