/* Elementwise activations: silu(z) = z * sigmoid(z) = z / (1 + exp(-z)) and the SwiGLU
 * product. exp is vexp.h's (libm accuracy, vectorised); for z < -88.7 exp(-z) is +inf and
 * silu(z) is -0, its correctly rounded value. */
#include "kernels.h"
#include "vexp.h"

static HS_VEC_CLONES void silu_range(float *out, const float *in, size_t n) {
    #pragma omp simd
    for (size_t i = 0; i < n; i++) out[i] = in[i] / (1.0f + hs_expf(-in[i]));
}

static HS_VEC_CLONES void swiglu_range(float *out, const float *gate, const float *up, size_t n) {
    #pragma omp simd
    for (size_t i = 0; i < n; i++) out[i] = gate[i] / (1.0f + hs_expf(-gate[i])) * up[i];
}

/* Blocks of 4096 elements per OpenMP iteration (only above 2^18 elements in all). */
#define ACT_BLOCK 4096

void silu_forward(float *out, const float *in, size_t n) {
    const long nb = (long)((n + ACT_BLOCK - 1) / ACT_BLOCK);
    #pragma omp parallel for schedule(static) if (n > (1 << 18))
    for (long b = 0; b < nb; b++) {
        size_t lo = (size_t)b * ACT_BLOCK, len = n - lo < ACT_BLOCK ? n - lo : ACT_BLOCK;
        silu_range(out + lo, in + lo, len);
    }
}

void swiglu_forward(float *out, const float *gate, const float *up, size_t n) {
    const long nb = (long)((n + ACT_BLOCK - 1) / ACT_BLOCK);
    #pragma omp parallel for schedule(static) if (n > (1 << 18))
    for (long b = 0; b < nb; b++) {
        size_t lo = (size_t)b * ACT_BLOCK, len = n - lo < ACT_BLOCK ? n - lo : ACT_BLOCK;
        swiglu_range(out + lo, gate + lo, up + lo, len);
    }
}
