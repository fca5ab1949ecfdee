/* Rotary embedding, NeoX half-split: for i < dk/2, angle a = t * theta^(-2i/dk) and
 * (x_i, x_{i+dk/2}) -> (x_i cos a - x_{i+dk/2} sin a, x_{i+dk/2} cos a + x_i sin a).
 * Angles are formed in double: at t ~ 64K a float angle would be off by ~1e-2 rad. */
#include "kernels.h"

#include <math.h>
#include <stdlib.h>

void rope_forward(float *x, int T, int n_heads, int head_dim, float theta, int pos0) {
    int half = head_dim / 2;
    if (T <= 0 || half <= 0) return;
    double *inv_freq = malloc(sizeof(double) * (size_t)half);
    if (!inv_freq) abort();
    for (int i = 0; i < half; i++) inv_freq[i] = pow((double)theta, -2.0 * i / head_dim);
    #pragma omp parallel if ((long)T * n_heads * head_dim > (1 << 18))
    {
        float *cs = malloc(sizeof(float) * 2 * (size_t)half);
        if (!cs) abort();
        #pragma omp for schedule(static)
        for (int t = 0; t < T; t++) {
            double pos = (double)pos0 + t;
            for (int i = 0; i < half; i++) {
                double a = pos * inv_freq[i];
                cs[i] = (float)cos(a);
                cs[half + i] = (float)sin(a);
            }
            float *row = x + (size_t)t * n_heads * head_dim;
            for (int h = 0; h < n_heads; h++) {
                float *y = row + (size_t)h * head_dim;
                for (int i = 0; i < half; i++) {
                    float x0 = y[i], x1 = y[i + half], c = cs[i], s = cs[half + i];
                    y[i] = x0 * c - x1 * s;
                    y[i + half] = x1 * c + x0 * s;
                }
            }
        }
        free(cs);
    }
    free(inv_freq);
}
