/* GEMM throughput of the engine's projection kernel (matmul_forward, CBLAS sgemm) at the
 * shapes the forward pass uses. Prints one line per shape: rows in out, GFLOP per wall second,
 * GFLOP per CPU second (all threads; on a shared machine the second is the steadier one).
 * `bench_gemm 0 core` prints the name of the OpenBLAS kernels in use instead. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cpu/kernels.h"

static double clock_s(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    double min_s = argc > 1 ? atof(argv[1]) : 1.0;
    if (argc > 2) { /* "core": the OpenBLAS kernels in use after the engine's set-up */
        printf("%s\n", openblas_get_corename());
        return 0;
    }
    /* rows x in_dim -> out_dim: projection blocks of the 4M bench model and a square one */
    int shapes[][3] = {{4096, 256, 256}, {1024, 256, 768}, {1024, 768, 256}, {2048, 1024, 1024},
                       {1024, 2048, 2048}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int n = shapes[s][0], k = shapes[s][1], m = shapes[s][2];
        float *a = malloc((size_t)n * k * sizeof *a), *w = malloc((size_t)m * k * sizeof *w);
        float *o = malloc((size_t)n * m * sizeof *o);
        if (!a || !w || !o) { fprintf(stderr, "out of memory\n"); return 1; }
        for (size_t i = 0; i < (size_t)n * k; i++) a[i] = (float)((i * 7919) % 1000) * 1e-3f;
        for (size_t i = 0; i < (size_t)m * k; i++) w[i] = (float)((i * 104729) % 1000) * 1e-3f;
        matmul_forward(o, a, w, n, k, m); /* warm up (thread pool, pages) */
        int reps = 0;
        double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), t;
        do {
            matmul_forward(o, a, w, n, k, m);
            reps++;
            t = clock_s(CLOCK_MONOTONIC) - t0;
        } while (t < min_s);
        double c = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0, flop = 2.0 * n * k * m * reps;
        printf("%d %d %d %.1f %.1f\n", n, k, m, flop / t / 1e9, flop / c / 1e9);
        free(a); free(w); free(o);
    }
    return 0;
}
