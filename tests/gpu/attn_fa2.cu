/* The FA2 (mma.sync), wgmma and TMA-fed wgmma ("wgtma") attention kernels on the GPU: checked against the verified fp32
 * kernel, and timed against the older kernels (tests/gpu/device_run.sh kcheck,
 * tests/bench/bench_gpu.sh). The wgmma kernels are checked and timed where their sm_90a machine
 * code runs (an H100/H200 with this build), else reported skipped.
 *
 *   attn_fa2 check      T in {1, 63, 64, 65, 1001, 4099} x window {none, 300, 64} x log scaling
 *                       {off, on} x head dim {64, 128}, GQA 8 query / 2 kv heads (and 8/8 for
 *                       some), random inputs. Two comparisons per case against cu_attention_simt
 *                       (fp32 throughout; parity-tested against the CPU engine):
 *                       (a) operands: K and V exactly bf16 and q pre-rounded the way the FA2
 *                           kernel rounds its scaled q, so both kernels see the same scores and
 *                           only the FA2 kernel's bf16 probabilities and accumulation order
 *                           differ: largest |diff| <= 3e-2 and RMS diff <= 3e-3 of the output RMS
 *                           (on an H200 both kernels reached 2.1-2.2e-2 at T=4099 without window
 *                           or log scaling, the longest averages; 1.4e-2 at most elsewhere);
 *                       (b) fp32 inputs as the engine passes them: <= 1.5e-1 and <= 1.5e-2 (a
 *                           sanity bound: the bf16 rounding of the scaled q moves the scores in
 *                           proportion to their size, which log scaling triples at T=4099).
 *                       The CPU emulator of the kernel bodies (tests/gpu/fa2_emu.cpp) measured
 *                       at most 1.1e-2 / 1.1e-3 for (a) and 7.0e-2 / 5.0e-3 for (b) (T=4099,
 *                       log scaling, no window) on such inputs.
 *                       Also: no NaN, nothing written past the output. Last line PASS or FAIL.
 *   attn_fa2 bench T[,T...] H D [fa2,wgmma,wgtma,tc,simt]
 *                       causal attention (NoPE, kv heads = heads): FA2 and the wgmma kernels (causal, and
 *                       with window 4096), the WMMA and fp32 kernels (or the listed ones); FLOPs 4*T*T*D/2 per head (causal),
 *                       4*D per visible pair (window).
 *   attn_fa2 one T H Hkv D window logscale
 *                       one check case (for compute-sanitizer); the wgmma kernels' with
 *                       HS_CUDA_ATTENTION=wgmma or wgtma. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "kernels/cuda/kernels.cuh"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static unsigned rng = 2024u;
static float urand(void) {
    rng = rng * 1664525u + 1013904223u;
    return ((rng >> 8) & 0xffffff) / 16777216.0f - 0.5f;
}

static float bf16_round(float f) {         /* round to nearest even, as the kernel's conversions */
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&f, &u, 4);
    return f;
}

struct stats { double max, rms; int nan; };

static stats diff(const std::vector<float> &a, const std::vector<float> &ref, size_t n) {
    double ss = 0, se = 0, mx = 0;
    int nan = 0;
    for (size_t i = 0; i < n; i++) {
        const double e = fabs((double)a[i] - ref[i]);
        if (!isfinite(a[i])) nan = 1;
        ss += (double)ref[i] * ref[i];
        se += e * e;
        if (mx == mx && !(e <= mx)) mx = e; /* a NaN e sticks */
    }
    const double rms = n ? sqrt(ss / n) : 1.0;
    stats s = {rms > 0 ? mx / rms : mx, rms > 0 ? sqrt(se / n) / rms : sqrt(se / n), nan};
    return s;
}

/* One case of the FA2 (wg = 0) or wgmma (wg = 1) kernel, both comparisons; prints its line,
 * returns 1 when it passes. */
static const char *const kind_name[] = {"fa2", "wgmma", "wgtma"};

/* one case of kernel wg: 0 FA2, 1 wgmma, 2 the TMA-fed wgmma */
static int check_case(int wg, int T, int H, int Hkv, int D, int W, int ls) {
    const int GUARD = 256;
    const size_t nq = (size_t)T * H * D, nk = (size_t)T * Hkv * D;
    std::vector<float> q(nq), k(nk), v(nk), rs(T), qop(nq), kop(nk), vop(nk);
    for (auto &x : q) x = 4.0f * urand();
    for (auto &x : k) x = 4.0f * urand();
    for (auto &x : v) x = 2.0f * urand();
    for (int t = 0; t < T; t++) rs[t] = ls ? fmaxf(1.0f, logf(t + 1.0f) / logf(16.0f)) : 1.0f;
    /* (a): the operands the FA2 kernel multiplies, given to both kernels */
    const float qscale = (float)(1.4426950408889634 / sqrt((double)D));
    for (int t = 0; t < T; t++) {
        const float sc = qscale * rs[t];
        for (int i = 0; i < H * D; i++) {
            const size_t j = (size_t)t * H * D + i;
            qop[j] = (float)((double)bf16_round(q[j] * sc) / sc);
        }
    }
    for (size_t i = 0; i < nk; i++) { kop[i] = bf16_round(k[i]); vop[i] = bf16_round(v[i]); }
    float *dq, *dk, *dv, *drs, *o1, *o2;
    void *scratch;
    const size_t sb = wg == 2 ? cu_attention_wgt_scratch_bytes(T, Hkv, D, D)
                      : wg    ? cu_attention_wg_scratch_bytes(T, Hkv, D, D)
                              : cu_attention_fa2_scratch_bytes(T, Hkv, D, D);
    CK(cudaMalloc(&dq, nq * 4)); CK(cudaMalloc(&dk, nk * 4)); CK(cudaMalloc(&dv, nk * 4));
    CK(cudaMalloc(&drs, T * 4)); CK(cudaMalloc(&o1, (nq + GUARD) * 4)); CK(cudaMalloc(&o2, nq * 4));
    CK(cudaMalloc(&scratch, sb));
    CK(cudaMemcpy(drs, rs.data(), T * 4, cudaMemcpyHostToDevice));
    stats st[2];
    for (int variant = 0; variant < 2; variant++) {
        CK(cudaMemcpy(dq, (variant ? q : qop).data(), nq * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dk, (variant ? k : kop).data(), nk * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dv, (variant ? v : vop).data(), nk * 4, cudaMemcpyHostToDevice));
        CK(cudaMemset(o1, 0xff, (nq + GUARD) * 4));   /* NaN everywhere: unwritten rows show */
        const float *r = ls ? drs : NULL;
        if (wg == 2) CK(cu_attention_wgt(o1, dq, dk, dv, r, T, H, Hkv, D, D, W, scratch, sb, 0));
        else if (wg) CK(cu_attention_wg(o1, dq, dk, dv, r, T, H, Hkv, D, D, W, scratch, sb, 0));
        else CK(cu_attention_fa2(o1, dq, dk, dv, r, T, H, Hkv, D, D, W, scratch, sb, 0));
        CK(cu_attention_simt(o2, dq, dk, dv, r, T, H, Hkv, D, D, W, 0));
        CK(cudaDeviceSynchronize());
        std::vector<float> a(nq + GUARD), b(nq);
        CK(cudaMemcpy(a.data(), o1, (nq + GUARD) * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.data(), o2, nq * 4, cudaMemcpyDeviceToHost));
        st[variant] = diff(a, b, nq);
        for (int i = 0; i < GUARD; i++) {
            uint32_t u;
            memcpy(&u, &a[nq + i], 4);
            if (u != 0xffffffffu) st[variant].nan = 2;
        }
    }
    const int ok = !st[0].nan && !st[1].nan && st[0].max <= 3e-2 && st[0].rms <= 3e-3 && st[1].max <= 1.5e-1 &&
                   st[1].rms <= 1.5e-2;
    printf("kcheck %s %s T=%d H=%d Hkv=%d D=%d window=%d logscale=%d operands: max=%.2e rms=%.2e "
           "fp32: max=%.2e rms=%.2e%s\n",
           ok ? "ok  " : "FAIL", kind_name[wg], T, H, Hkv, D, W, ls, st[0].max, st[0].rms, st[1].max, st[1].rms,
           st[0].nan == 2 || st[1].nan == 2 ? " wrote past the output"
           : st[0].nan || st[1].nan         ? " non-finite output"
                                            : "");
    fflush(stdout);
    cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(drs); cudaFree(o1); cudaFree(o2);
    cudaFree(scratch);
    return ok;
}

/* The TMA-fed kernel rotating q and k as it loads them (cu_attention_wgt_rope with
 * cu_rope_table's angles) against cu_rope on q and k, then the same kernel: the same rotated
 * values go into the same bf16 roundings, so the two agree to a rounding of the products'
 * order at most (tolerance: max 1e-2, rms 1e-3 of the output RMS). */
static int check_rope_case(int T, int H, int Hkv, int D, int W) {
    const size_t nq = (size_t)T * H * D, nk = (size_t)T * Hkv * D;
    std::vector<float> q(nq), k(nk), v(nk);
    for (auto &x : q) x = 4.0f * urand();
    for (auto &x : k) x = 4.0f * urand();
    for (auto &x : v) x = 2.0f * urand();
    float *dq, *dk, *dv, *o1, *o2;
    float2 *cs;
    void *scratch;
    const size_t sb = cu_attention_wgt_scratch_bytes(T, Hkv, D, D);
    CK(cudaMalloc(&dq, nq * 4)); CK(cudaMalloc(&dk, nk * 4)); CK(cudaMalloc(&dv, nk * 4));
    CK(cudaMalloc(&o1, nq * 4)); CK(cudaMalloc(&o2, nq * 4)); CK(cudaMalloc(&cs, (size_t)T * D / 2 * sizeof(float2)));
    CK(cudaMalloc(&scratch, sb));
    CK(cudaMemcpy(dq, q.data(), nq * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dk, k.data(), nk * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dv, v.data(), nk * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(o1, 0xff, nq * 4));
    CK(cu_rope_table(cs, T, D, 10000.0f, 0));
    CK(cu_attention_wgt_rope(o1, dq, dk, dv, NULL, T, H, Hkv, D, D, W, cs, scratch, sb, 0));
    CK(cu_rope(dq, T, H, D, 10000.0f, 0));
    CK(cu_rope(dk, T, Hkv, D, 10000.0f, 0));
    CK(cu_attention_wgt(o2, dq, dk, dv, NULL, T, H, Hkv, D, D, W, scratch, sb, 0));
    CK(cudaDeviceSynchronize());
    std::vector<float> a(nq), b(nq);
    CK(cudaMemcpy(a.data(), o1, nq * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), o2, nq * 4, cudaMemcpyDeviceToHost));
    const stats st = diff(a, b, nq);
    const int ok = !st.nan && st.max <= 1e-2 && st.rms <= 1e-3;
    printf("kcheck %s wgtma+rope T=%d H=%d Hkv=%d D=%d window=%d against rope then wgtma: max=%.2e rms=%.2e%s\n",
           ok ? "ok  " : "FAIL", T, H, Hkv, D, W, st.max, st.rms, st.nan ? " non-finite output" : "");
    fflush(stdout);
    cudaFree(dq); cudaFree(dk); cudaFree(dv); cudaFree(o1); cudaFree(o2); cudaFree(cs); cudaFree(scratch);
    return ok;
}

static int check(void) {
    const int Ts[] = {1, 63, 64, 65, 1001, 4099}, windows[] = {0, 300, 64}, dims[] = {64, 128};
    CK(cu_attention_setup());
    int fails = 0;
    for (int wg = 0; wg < 3; wg++) {
        const char *name = kind_name[wg];
        if (wg == 1 ? !cu_attention_wg_fits(128, 128) : wg == 2 ? !cu_attention_wgt_fits(128, 128) : 0) {
            printf("kcheck %s: not available here (no sm_90a machine code for this GPU): skipped\n", name);
            continue;
        }
        int f = 0, runs = 0;
        for (int D : dims)
            for (int T : Ts)
                for (int W : windows)
                    for (int ls = 0; ls < 2; ls++) {
                        const int Hkv = (T + W + ls) % 3 == 0 ? 8 : 2;   /* mostly GQA 8/2, some 8/8 */
                        f += !check_case(wg, T, 8, Hkv, D, W, ls);
                        runs++;
                    }
        printf("kcheck %s: %d cases, %d failed: %s (tolerance: operands max 3e-2 rms 3e-3, fp32 max 1.5e-1 rms 1.5e-2 "
               "of the fp32 kernel's output RMS)\n", name, runs, f, f ? "FAIL" : "PASS");
        fails += f;
        if (wg == 2) {
            int fr = 0, nr = 0;
            for (int D : dims)
                for (int T : {65, 1001, 4099})
                    for (int W : {0, 300}) {
                        fr += !check_rope_case(T, 8, 2, D, W);
                        nr++;
                    }
            printf("kcheck wgtma+rope: %d cases, %d failed: %s\n", nr, fr, fr ? "FAIL" : "PASS");
            fails += fr;
        }
    }
    return fails ? 1 : 0;
}

static int bench(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: attn_fa2 bench T[,T...] H D [fa2,wgmma,wgtma,tc,simt]\n"); return 2; }
    const int H = atoi(argv[3]), D = atoi(argv[4]);
    const char *only = argc > 5 ? argv[5] : "fa2,wgmma,wgtma,tc,simt";   /* kernel families to time */
    const char *family[] = {"fa2", "fa2", "wgmma", "wgmma", "tc", "simt", "wgtma", "wgtma"};
    CK(cu_attention_setup());
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    char buf[256];
    snprintf(buf, sizeof buf, "%s", argv[2]);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        const int T = atoi(tok);
        const size_t n = (size_t)T * H * D, sb = cu_attention_wgt_scratch_bytes(T, H, D, D) > cu_attention_wg_scratch_bytes(T, H, D, D)
                                                 ? cu_attention_wgt_scratch_bytes(T, H, D, D)
                                                 : cu_attention_wg_scratch_bytes(T, H, D, D); /* >= FA2's */
        float *q, *k, *v, *o;
        void *scratch;
        CK(cudaMalloc(&q, n * 4)); CK(cudaMalloc(&k, n * 4)); CK(cudaMalloc(&v, n * 4)); CK(cudaMalloc(&o, n * 4));
        CK(cudaMalloc(&scratch, sb));
        std::vector<float> h(n);
        for (auto &x : h) x = urand();
        CK(cudaMemcpy(q, h.data(), n * 4, cudaMemcpyHostToDevice));
        for (auto &x : h) x = urand();
        CK(cudaMemcpy(k, h.data(), n * 4, cudaMemcpyHostToDevice));
        for (auto &x : h) x = urand();
        CK(cudaMemcpy(v, h.data(), n * 4, cudaMemcpyHostToDevice));
        const int Wn = 4096;
        const double causal = 4.0 * (double)T * T * D / 2 * H;
        const double pairs = Wn < T ? (double)T * Wn - (double)Wn * (Wn - 1) / 2 : (double)T * (T + 1) / 2;
        const char *names[] = {"attention_fa2_causal",  "attention_fa2_window4096", "attention_wgmma_causal",
                               "attention_wgmma_window4096", "attention_tc_causal", "attention_simt_causal",
                               "attention_wgtma_causal", "attention_wgtma_window4096"};
        for (int which = 0; which < 8; which++) {
            char want[64];
            snprintf(want, sizeof want, ",%s,", family[which]);
            char list[256];
            snprintf(list, sizeof list, ",%s,", only);
            if (!strstr(list, want)) continue;
            if ((which == 2 || which == 3) && !cu_attention_wg_fits(D, D)) continue;
            if (which >= 6 && !cu_attention_wgt_fits(D, D)) continue;
            const int fast = which <= 3 || which >= 6;
            const int reps = fast ? 5 : T >= 32768 ? 1 : 3;       /* the old kernels take seconds at 64K */
            float best = 1e30f;
            for (int r = -fast; r < reps; r++) {                    /* one untimed warm-up for the new ones */
                CK(cudaEventRecord(e0));
                switch (which) {
                case 0: CK(cu_attention_fa2(o, q, k, v, NULL, T, H, H, D, D, 0, scratch, sb, 0)); break;
                case 1: CK(cu_attention_fa2(o, q, k, v, NULL, T, H, H, D, D, Wn, scratch, sb, 0)); break;
                case 2: CK(cu_attention_wg(o, q, k, v, NULL, T, H, H, D, D, 0, scratch, sb, 0)); break;
                case 3: CK(cu_attention_wg(o, q, k, v, NULL, T, H, H, D, D, Wn, scratch, sb, 0)); break;
                case 4: CK(cu_attention_tc(o, q, k, v, NULL, T, H, H, D, D, 0, 0)); break;
                case 5: CK(cu_attention_simt(o, q, k, v, NULL, T, H, H, D, D, 0, 0)); break;
                case 6: CK(cu_attention_wgt(o, q, k, v, NULL, T, H, H, D, D, 0, scratch, sb, 0)); break;
                case 7: CK(cu_attention_wgt(o, q, k, v, NULL, T, H, H, D, D, Wn, scratch, sb, 0)); break;
                }
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                if (r >= 0 && ms < best) best = ms;
            }
            const double fl = which == 1 || which == 3 || which == 7 ? 4.0 * D * pairs * H : causal;
            printf("kernel name=%s T=%d H=%d dk=%d ms=%.3f tflops=%.1f\n", names[which], T, H, D, best,
                   fl / (best * 1e-3) / 1e12);
            fflush(stdout);
        }
        cudaFree(q); cudaFree(k); cudaFree(v); cudaFree(o); cudaFree(scratch);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "check")) return check();
    if (argc >= 2 && !strcmp(argv[1], "bench")) return bench(argc, argv);
    if (argc == 8 && !strcmp(argv[1], "one")) {      /* one case, e.g. under compute-sanitizer */
        CK(cu_attention_setup());
        const char *ea = getenv("HS_CUDA_ATTENTION");
        const int wg = ea && !strcmp(ea, "wgtma") ? 2 : ea && !strcmp(ea, "wgmma") ? 1 : 0;
        if (wg && !(wg == 2 ? cu_attention_wgt_fits(128, 128) : cu_attention_wg_fits(128, 128))) { printf("%s kernel not available here\n", kind_name[wg]); return 1; }
        return check_case(wg, atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), atoi(argv[7])) ? 0 : 1;
    }
    fprintf(stderr, "usage: attn_fa2 check | bench T[,T...] H D | one T H Hkv D window logscale\n");
    return 2;
}
