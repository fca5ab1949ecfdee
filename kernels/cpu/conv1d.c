/* Causal depthwise 1-D convolution (the short conv of gla/gdn):
 * out[t,c] = sum_{j<K} w[c*K + j] * x[t-K+1+j, c], where x at negative positions is zero,
 * or row (p + K-1) of `history` ([K-1, C], oldest first) when decoding. */
#include "kernels.h"
#include "vexp.h"

static inline float conv_input(const float *in, const float *history, int t, int c, int C, int K) {
    if (t >= 0) return in[(size_t)t * C + c];
    if (!history) return 0.0f;
    return history[(size_t)(t + K - 1) * C + c];
}

static HS_VEC_CLONES void conv_rows(float *out, const float *in, const float *w, int t0, int t1, int C, int K,
                                     const float *history) {
    for (int t = t0; t < t1; t++) {
        float *y = out + (size_t)t * C;
        if (t >= K - 1) {
            /* Fast path: the whole receptive field lies inside `in`. */
            for (int c = 0; c < C; c++) y[c] = 0.0f;
            for (int j = 0; j < K; j++) {
                const float *x = in + (size_t)(t - K + 1 + j) * C;
                #pragma omp simd
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

void conv1d_causal_forward(float *out, const float *in, const float *w, int T, int C, int K,
                           const float *history) {
    const int nb = (T + 63) / 64; /* 64 rows per OpenMP iteration */
    #pragma omp parallel for schedule(static) if ((long)T * C * K > (1 << 18))
    for (int b = 0; b < nb; b++) {
        const int t0 = b * 64, t1 = t0 + 64 < T ? t0 + 64 : T;
        conv_rows(out, in, w, t0, t1, C, K, history);
    }
}
