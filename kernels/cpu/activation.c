/* Elementwise activations: silu(z) = z * sigmoid(z) and the SwiGLU product. */
#include "kernels.h"

#include <math.h>

static inline float silu1(float z) { return z / (1.0f + expf(-z)); }

void silu_forward(float *out, const float *in, size_t n) {
    #pragma omp parallel for schedule(static) if (n > (1 << 18))
    for (size_t i = 0; i < n; i++) out[i] = silu1(in[i]);
}

void swiglu_forward(float *out, const float *gate, const float *up, size_t n) {
    #pragma omp parallel for schedule(static) if (n > (1 << 18))
    for (size_t i = 0; i < n; i++) out[i] = silu1(gate[i]) * up[i];
}
