/* Projections: thin wrappers over CBLAS sgemm (OpenBLAS), which threads itself. */
#include "kernels.h"

#include <cblas.h>

void matmul_forward(float *out, const float *in, const float *weight, int n, int in_dim, int out_dim) {
    if (n <= 0 || out_dim <= 0) return;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, out_dim, in_dim, 1.0f, in, in_dim,
                weight, in_dim, 0.0f, out, out_dim);
}

void matmul_accumulate(float *out, const float *in, const float *weight, int n, int in_dim, int out_dim) {
    if (n <= 0 || out_dim <= 0) return;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, out_dim, in_dim, 1.0f, in, in_dim,
                weight, in_dim, 1.0f, out, out_dim);
}
