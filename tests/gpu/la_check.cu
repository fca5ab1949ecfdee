/* Kernel check and benchmark of the chunked gla/gdn kernels (kernels/cuda/linattn_chunk*.cu)
 * against the verified recurrences (kernels/cuda/linattn.cu: cu_gla_scan, cu_gdn_scan, and the
 * per-query walk cu_linattn_window, which is the SWLA definition itself). Built and run by
 * tests/gpu/kcheck_linattn.sh (step kcheck) and tests/gpu/la_bench.sh (bench rows).
 *
 *   la_check check            random inputs, T in {1, 63, 64, 65, 1001, 4099}, weak and strong
 *                             decays, head dims 128/64/32/16, SWLA exact W in {64, 100, 256, 1000}
 *                             and overlap (aligned, S < chunk, straddling blocks) for gla,
 *                             chunk-aligned overlap and exact for gdn. One line per case, then
 *                             "la_check PASS|FAIL n/m".
 *   la_check bench T H d [ROW] ms per call (best of 3 after a warm-up) of the recurrences and the
 *                             chunk kernels, plain / exact SWLA / overlap SWLA (ROW: only the
 *                             rows whose name contains it).
 *
 * Tolerance (chunk vs recurrence, relative to the RMS of the reference output): RMS of the
 * difference <= 3e-3 and largest difference <= 3e-2. The chunk kernels round matmul inputs to
 * tf32 (10-bit mantissa, relative rounding <= 2^-11 ~ 4.9e-4) and accumulate in fp32; the
 * recurrences are fp32 throughout. An indexing or masking error shows as O(1). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "kernels/cuda/kernels.cuh"
#include "kernels/cuda/linattn_chunk.cuh"
#include "tests/gpu/la_check_cases.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static const double TOL_RMS = 3e-3, TOL_MAX = 3e-2;


struct inputs {
    int T, H, dk, dv;
    float *q, *k, *v, *gk, *beta, *la, *o_ref, *o_new;
    void *work;
    size_t work_bytes;
};

static void up(float **d, const std::vector<float> &h) {
    CK(cudaMalloc(d, h.size() * sizeof(float) + 16));
    CK(cudaMemcpy(*d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
}

/* gla: q, k, v uniform in [-1, 1), gk uniform in [-g, 0); gdn: q, k L2-normalised per head,
 * beta uniform in [0, bmax), ln alpha uniform in [-g, 0). */
static inputs make_inputs(int T, int H, int dk, int dv, float g, float bmax) {
    inputs in = {};
    in.T = T; in.H = H; in.dk = dk; in.dv = dv;
    size_t nk = (size_t)T * H * dk, nv = (size_t)T * H * dv;
    std::vector<float> q(nk), k(nk), v(nv), gk(nk), be((size_t)T * H), la((size_t)T * H);
    la_check_fill(q.data(), k.data(), v.data(), gk.data(), be.data(), la.data(), T, H, dk, dv, g, bmax);
    if (bmax > 0) /* gdn: unit q and k rows per head (x / sqrt(sum x^2 + 1e-6), as cu_l2norm_heads) */
        for (size_t r = 0; r < (size_t)T * H; r++)
            for (int w = 0; w < 2; w++) {
                float *x = (w ? k.data() : q.data()) + r * dk;
                double s = 0;
                for (int i = 0; i < dk; i++) s += (double)x[i] * x[i];
                float inv = (float)(1.0 / sqrt(s + 1e-6));
                for (int i = 0; i < dk; i++) x[i] *= inv;
            }
    up(&in.q, q); up(&in.k, k); up(&in.v, v); up(&in.gk, gk); up(&in.beta, be); up(&in.la, la);
    CK(cudaMalloc(&in.o_ref, nv * sizeof(float)));
    CK(cudaMalloc(&in.o_new, nv * sizeof(float)));
    CK(cudaMemset(in.o_new, 0xff, nv * sizeof(float))); /* NaN: rows the kernel fails to write show up */
    in.work_bytes = cu_la_chunk_work_bytes(T, H, dk, dv);
    CK(cudaMalloc(&in.work, in.work_bytes));
    return in;
}

static void free_inputs(inputs &in) {
    cudaFree(in.q); cudaFree(in.k); cudaFree(in.v); cudaFree(in.gk); cudaFree(in.beta); cudaFree(in.la);
    cudaFree(in.o_ref); cudaFree(in.o_new); cudaFree(in.work);
}

/* Reference: recurrence for plain and gla exact (verified scans), the per-query walk (the
 * definition) for every windowed gdn case and for overlap. */
static void run_ref(const inputs &in, int gdn, int swla, int W, int S) {
    if (gdn && swla == CU_SWLA_OFF)
        CK(cu_gdn_scan(in.o_ref, in.q, in.k, in.v, in.beta, in.la, in.T, in.H, in.dk, in.dv, 0));
    else if (!gdn && swla != CU_SWLA_OVERLAP)
        CK(cu_gla_scan(in.o_ref, in.q, in.k, in.v, in.gk, in.T, in.H, in.dk, in.dv, swla, W, 0));
    else
        CK(cu_linattn_window(in.o_ref, in.q, in.k, in.v, gdn ? NULL : in.gk, gdn ? in.beta : NULL,
                             gdn ? in.la : NULL, in.T, in.H, in.dk, in.dv, swla, W, S, 0));
}

static void run_new(const inputs &in, int gdn, int swla, int W, int S) {
    if (gdn)
        CK(cu_gdn_chunk(in.o_new, in.q, in.k, in.v, in.beta, in.la, in.T, in.H, in.dk, in.dv, swla, W, S, in.work,
                        in.work_bytes, 0));
    else
        CK(cu_gla_chunk(in.o_new, in.q, in.k, in.v, in.gk, in.T, in.H, in.dk, in.dv, swla, W, S, in.work, in.work_bytes, 0));
}

static int n_cases, n_fail;

static void check_case(int gdn, int T, int H, int dk, int dv, float g, float bmax, int swla, int W, int S) {
    inputs in = make_inputs(T, H, dk, dv, g, gdn ? bmax : 0.0f);
    run_ref(in, gdn, swla, W, S);
    run_new(in, gdn, swla, W, S);
    CK(cudaDeviceSynchronize());
    size_t n = (size_t)T * H * dv;
    std::vector<float> a(n), b(n);
    CK(cudaMemcpy(a.data(), in.o_ref, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), in.o_new, n * 4, cudaMemcpyDeviceToHost));
    double ss = 0, es = 0, mx = 0;
    size_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        ss += (double)a[i] * a[i];
        es += d * d;
        if (!(d <= mx)) { mx = d; worst = i; } /* NaN propagates */
    }
    double rms = sqrt(ss / n) + 1e-30, rel_rms = sqrt(es / n) / rms, rel_max = mx / rms;
    bool ok = rel_rms <= TOL_RMS && rel_max <= TOL_MAX;
    const char *mode = swla == CU_SWLA_EXACT ? "exact" : swla == CU_SWLA_OVERLAP ? "overlap" : "plain";
    printf("la_check %s %-7s T=%-5d H=%d dk=%-3d dv=%-3d decay<=%-6g%s W=%-4d S=%-4d ref_rms=%.3e rel_rms=%.2e rel_max=%.2e %s\n",
           gdn ? "gdn" : "gla", mode, T, H, dk, dv, g, gdn && bmax > 1 ? " beta<2" : "", W, S, rms, rel_rms, rel_max,
           ok ? "ok" : "FAIL");
    if (!ok) {
        size_t t = worst / ((size_t)H * dv), r = worst % ((size_t)H * dv);
        printf("    worst at t=%zu head=%zu col=%zu: ref %.6g chunk %.6g\n", t, r / dv, r % dv, a[worst], b[worst]);
    }
    fflush(stdout);
    n_cases++;
    n_fail += !ok;
    free_inputs(in);
}

static int run_check(void) {
    la_check_cases(check_case);
    printf("la_check %s %d/%d cases within tolerance (rel_rms <= %.0e, rel_max <= %.0e)\n", n_fail ? "FAIL" : "PASS",
           n_cases - n_fail, n_cases, TOL_RMS, TOL_MAX);
    return n_fail ? 1 : 0;
}

/* ---- bench -------------------------------------------------------------------------------- */

static float time_ms(const inputs &in, int which, int W, int S) {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float best = 1e30f;
    for (int r = 0; r < 4; r++) { /* the first is the warm-up */
        cudaEventRecord(e0);
        switch (which) {
        case 0: CK(cu_gla_scan(in.o_ref, in.q, in.k, in.v, in.gk, in.T, in.H, in.dk, in.dv, CU_SWLA_OFF, 0, 0)); break;
        case 1: CK(cu_gla_scan(in.o_ref, in.q, in.k, in.v, in.gk, in.T, in.H, in.dk, in.dv, CU_SWLA_EXACT, W, 0)); break;
        case 2: run_new(in, 0, CU_SWLA_OFF, 0, 0); break;
        case 3: run_new(in, 0, CU_SWLA_EXACT, W, 0); break;
        case 4: run_new(in, 0, CU_SWLA_OVERLAP, W, S); break;
        case 5: CK(cu_gdn_scan(in.o_ref, in.q, in.k, in.v, in.beta, in.la, in.T, in.H, in.dk, in.dv, 0)); break;
        case 6: run_new(in, 1, CU_SWLA_OFF, 0, 0); break;
        case 7: run_new(in, 1, CU_SWLA_OVERLAP, W, S); break;
        case 8: run_new(in, 1, CU_SWLA_EXACT, W, 0); break;
        }
        cudaEventRecord(e1);
        CK(cudaEventSynchronize(e1));
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        if (r > 0 && ms < best) best = ms;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return best;
}

/* only: run the rows whose name contains it (NULL: all, and the ratio line), so a profiler
 * sees the launches of one row (tests/gpu/device_run.sh ladetail) */
static int run_bench(int T, int H, int d, const char *only) {
    const int W = 4096, S = 1024;
    const char *names[] = {"gla_recurrent_plain", "gla_recurrent_exact_swla", "gla_chunk_plain", "gla_chunk_exact_swla",
                           "gla_chunk_overlap_swla", "gdn_recurrent_plain", "gdn_chunk_plain", "gdn_chunk_overlap_swla",
                           "gdn_chunk_exact_swla"};
    float ms[9];
    for (int gdn = 0; gdn < 2; gdn++) {
        /* typical gates: gla ~ logsigmoid/16, gdn alpha near 0.98 */
        inputs in = make_inputs(T, H, d, d, gdn ? 0.04f : 0.1f, gdn ? 1.0f : 0.0f);
        for (int w = gdn ? 5 : 0; w < (gdn ? 9 : 5); w++) {
            if (only && !strstr(names[w], only)) continue;
            ms[w] = time_ms(in, w, W, S);
            double fl = 4.0 * T * H * (double)d * d; /* the recurrence's count, as bench_gpu */
            printf("kernel name=%s T=%d H=%d dk=%d ms=%.3f tflops=%.2f%s\n", names[w], T, H, d, ms[w],
                   fl / (ms[w] * 1e-3) / 1e12, w == 1 || w == 3 || w == 4 || w >= 7 ? " W=4096 S=1024" : "");
            fflush(stdout);
        }
        free_inputs(in);
    }
    if (only) return 0;
    printf("la_ratio T=%d gla_chunk_vs_recurrent=%.1fx gdn_chunk_vs_recurrent=%.1fx gla_exact_swla_vs_plain=%.2f "
           "gla_overlap_swla_vs_plain=%.2f gdn_overlap_swla_vs_plain=%.2f gdn_exact_swla_vs_plain=%.2f\n", T,
           ms[0] / ms[2], ms[5] / ms[6], ms[3] / ms[2], ms[4] / ms[2], ms[7] / ms[6], ms[8] / ms[6]);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "check")) return run_check();
    if (argc >= 5 && !strcmp(argv[1], "bench"))
        return run_bench(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), argc >= 6 ? argv[5] : NULL);
    fprintf(stderr, "usage: la_check check | bench T H d [ROW]\n");
    return 2;
}
