/* Projections through CBLAS sgemm. OpenBLAS runs single-threaded (blas_core.c) and the two
 * halves of a large product go to OpenMP threads here, so one threading runtime owns the
 * cores: OpenBLAS's pthreads and OpenMP's threads spinning against each other wasted a
 * quarter of the CPU time of a 16K-token forward on this 2-core machine. */
#include "kernels.h"
#include "blas_threads.h"

#include <cblas.h>
#include <omp.h>

static void gemm_rows(float *out, const float *in, const float *weight, int n, int in_dim, int out_dim,
                      float beta) {
    const int nt = omp_get_max_threads();
    const double flops = 2.0 * n * in_dim * out_dim;
    if (nt <= 1 || !hs_parallel_worth(flops) || omp_in_parallel()) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, out_dim, in_dim, 1.0f, in, in_dim,
                    weight, in_dim, beta, out, out_dim);
        return;
    }
    /* Many rows: split the tokens. Few rows (decoding, LM head): split the output features. */
    const int by_rows = n >= 64 * nt;
    const int total = by_rows ? n : out_dim;
    #pragma omp parallel num_threads(nt)
    {
        const int id = omp_get_thread_num(), cnt = omp_get_num_threads();
        const int per = ((total + cnt - 1) / cnt + 15) & ~15;
        const int lo = id * per < total ? id * per : total;
        const int hi = lo + per < total ? lo + per : total;
        if (hi > lo) {
            if (by_rows)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, hi - lo, out_dim, in_dim, 1.0f,
                            in + (size_t)lo * in_dim, in_dim, weight, in_dim, beta,
                            out + (size_t)lo * out_dim, out_dim);
            else
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, hi - lo, in_dim, 1.0f, in, in_dim,
                            weight + (size_t)lo * in_dim, in_dim, beta, out + lo, out_dim);
        }
    }
}

void matmul_forward(float *out, const float *in, const float *weight, int n, int in_dim, int out_dim) {
    if (n <= 0 || out_dim <= 0) return;
    gemm_rows(out, in, weight, n, in_dim, out_dim, 0.0f);
}

void matmul_accumulate(float *out, const float *in, const float *weight, int n, int in_dim, int out_dim) {
    if (n <= 0 || out_dim <= 0) return;
    gemm_rows(out, in, weight, n, in_dim, out_dim, 1.0f);
}
