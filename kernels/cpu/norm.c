/* Row normalisations: RMSNorm over a row and L2 normalisation per head. Sums of squares are
 * accumulated in double so long rows do not lose precision. */
#include "kernels.h"

#include <math.h>

void rmsnorm_forward(float *out, const float *in, const float *weight, int n, int dim, float eps) {
    #pragma omp parallel for schedule(static) if ((long)n * dim > (1 << 18))
    for (int i = 0; i < n; i++) {
        const float *x = in + (size_t)i * dim;
        float *y = out + (size_t)i * dim;
        double ss = 0.0;
        for (int j = 0; j < dim; j++) ss += (double)x[j] * x[j];
        float r = (float)(1.0 / sqrt(ss / dim + (double)eps));
        for (int j = 0; j < dim; j++) y[j] = x[j] * r * weight[j];
    }
}

void l2norm_heads_forward(float *x, int T, int n_heads, int dim, float eps) {
    long rows = (long)T * n_heads;
    #pragma omp parallel for schedule(static) if (rows * dim > (1 << 18))
    for (long r = 0; r < rows; r++) {
        float *y = x + (size_t)r * dim;
        double ss = 0.0;
        for (int j = 0; j < dim; j++) ss += (double)y[j] * y[j];
        float inv = (float)(1.0 / sqrt(ss + (double)eps));
        for (int j = 0; j < dim; j++) y[j] *= inv;
    }
}
