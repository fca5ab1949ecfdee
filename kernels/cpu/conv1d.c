/* Causal depthwise 1-D convolution (the short conv of gla/gdn):
 * out[t,c] = sum_{j<K} w[c*K + j] * x[t-K+1+j, c], where x at negative positions is zero,
 * or row (p + K-1) of `history` ([K-1, C], oldest first) when decoding. */
#include "kernels.h"

static inline float conv_input(const float *in, const float *history, int t, int c, int C, int K) {
    if (t >= 0) return in[(size_t)t * C + c];
    if (!history) return 0.0f;
    return history[(size_t)(t + K - 1) * C + c];
}

void conv1d_causal_forward(float *out, const float *in, const float *w, int T, int C, int K,
                           const float *history) {
    #pragma omp parallel for schedule(static) if ((long)T * C * K > (1 << 18))
    for (int t = 0; t < T; t++) {
        float *y = out + (size_t)t * C;
        if (t >= K - 1) {
            /* Fast path: the whole receptive field lies inside `in`. */
            for (int c = 0; c < C; c++) y[c] = 0.0f;
            for (int j = 0; j < K; j++) {
                const float *x = in + (size_t)(t - K + 1 + j) * C;
                for (int c = 0; c < C; c++) y[c] += w[(size_t)c * K + j] * x[c];
            }
        } else {
            for (int c = 0; c < C; c++) {
                float acc = 0.0f;
                for (int j = 0; j < K; j++)
                    acc += w[(size_t)c * K + j] * conv_input(in, history, t - K + 1 + j, c, C, K);
                y[c] = acc;
            }
        }
    }
}
