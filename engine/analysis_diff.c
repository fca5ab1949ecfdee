/* Parameter displacement (the paper's r_Q, r_K): per head, the spectral norm of the change
 * of that head's rows of W_Q (W_K) over the spectral norm of the original rows. */
#include "analysis_api.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest singular value of (M - minus) [rows, cols] by power iteration in double on the
 * rows x rows Gram matrix G = A A^T (rows is a head's dk, small). */
double hs_spectral_norm(const float *M, int rows, int cols, const float *minus, int iters) {
    size_t n = (size_t)rows * cols;
    double *A = malloc(sizeof(double) * n);
    double *G = malloc(sizeof(double) * (size_t)rows * rows);
    double *x = malloc(sizeof(double) * (size_t)rows), *y = malloc(sizeof(double) * (size_t)rows);
    double lambda = -1;
    if (!A || !G || !x || !y) goto done;
    for (size_t i = 0; i < n; i++) A[i] = (double)M[i] - (minus ? (double)minus[i] : 0.0);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j <= i; j++) {
            double s = 0;
            for (int c = 0; c < cols; c++) s += A[(size_t)i * cols + c] * A[(size_t)j * cols + c];
            G[(size_t)i * rows + j] = G[(size_t)j * rows + i] = s;
        }
    /* A start vector with no special structure, so it is not orthogonal to the top vector. */
    for (int i = 0; i < rows; i++) x[i] = 1.0 + 0.37 * sin(1.0 + 2.3 * i);
    lambda = 0;
    for (int it = 0; it < iters; it++) {
        double nx = 0;
        for (int i = 0; i < rows; i++) nx += x[i] * x[i];
        nx = sqrt(nx);
        if (nx == 0) { lambda = 0; break; }
        for (int i = 0; i < rows; i++) x[i] /= nx;
        for (int i = 0; i < rows; i++) {
            double s = 0;
            for (int j = 0; j < rows; j++) s += G[(size_t)i * rows + j] * x[j];
            y[i] = s;
        }
        double l = 0;  /* Rayleigh quotient x^T G x with |x| = 1 */
        for (int i = 0; i < rows; i++) l += x[i] * y[i];
        double prev = lambda;
        lambda = l;
        memcpy(x, y, sizeof(double) * (size_t)rows);
        if (it > 10 && fabs(lambda - prev) <= 1e-15 * fabs(lambda)) break;
    }
done:
    free(A); free(G); free(x); free(y);
    return lambda < 0 ? NAN : sqrt(lambda);
}

static int same_shape(const hs_config *a, const hs_config *b, char *err, size_t errlen) {
    if (a->hidden_size != b->hidden_size || a->num_layers != b->num_layers) {
        snprintf(err, errlen, "diff: models differ in shape (hidden %d vs %d, layers %d vs %d)",
                 a->hidden_size, b->hidden_size, a->num_layers, b->num_layers);
        return -1;
    }
    for (int l = 0; l < a->num_layers; l++) {
        if (a->layers[l].n_mixers != b->layers[l].n_mixers) {
            snprintf(err, errlen, "diff: layer %d has %d mixers in MODEL_A but %d in MODEL_B", l,
                     a->layers[l].n_mixers, b->layers[l].n_mixers);
            return -1;
        }
        for (int i = 0; i < a->layers[l].n_mixers; i++) {
            const hs_mixer_config *x = &a->layers[l].mixers[i], *y = &b->layers[l].mixers[i];
            if (x->type != y->type || x->num_heads != y->num_heads ||
                x->num_kv_heads != y->num_kv_heads || x->head_k_dim != y->head_k_dim) {
                snprintf(err, errlen, "diff: layer %d mixer %d differs: %s %d heads (%d kv) dk %d "
                         "in MODEL_A, %s %d heads (%d kv) dk %d in MODEL_B", l, i,
                         hs_mixer_type_name(x->type), x->num_heads, x->num_kv_heads, x->head_k_dim,
                         hs_mixer_type_name(y->type), y->num_heads, y->num_kv_heads, y->head_k_dim);
                return -1;
            }
        }
    }
    return 0;
}

#define POWER_ITERS 2000

int hs_model_displacement(hs_head_displacement *out, const hs_model *a, const hs_model *b,
                          char *err, size_t errlen) {
    if (same_shape(&a->cfg, &b->cfg, err, errlen)) return -1;
    const hs_config *c = &a->cfg;
    int D = c->hidden_size, n = 0;
    for (int l = 0; l < c->num_layers; l++)
        for (int i = 0; i < c->layers[l].n_mixers; i++) {
            const hs_mixer_config *mc = &c->layers[l].mixers[i];
            const hs_mixer_weights *wa = &a->layers[l].mix[i], *wb = &b->layers[l].mix[i];
            int dk = mc->head_k_dim, H = mc->num_heads;
            int hkv = mc->num_kv_heads > 0 ? mc->num_kv_heads : H;
            for (int h = 0; h < H; h++, n++) {
                int kvh = hs_mixer_is_softmax(mc->type) ? h / (H / hkv) : h;
                size_t qo = (size_t)h * dk * D, ko = (size_t)kvh * dk * D;
                double nq = hs_spectral_norm(wa->q_proj + qo, dk, D, NULL, POWER_ITERS);
                double nk = hs_spectral_norm(wa->k_proj + ko, dk, D, NULL, POWER_ITERS);
                double dq = hs_spectral_norm(wb->q_proj + qo, dk, D, wa->q_proj + qo, POWER_ITERS);
                double dkn = hs_spectral_norm(wb->k_proj + ko, dk, D, wa->k_proj + ko, POWER_ITERS);
                if (isnan(nq) || isnan(nk) || isnan(dq) || isnan(dkn)) {
                    snprintf(err, errlen, "diff: out of memory");
                    return -1;
                }
                out[n].layer = l; out[n].mixer = i; out[n].head = h; out[n].type = mc->type;
                out[n].r_q = nq > 0 ? dq / nq : (dq > 0 ? INFINITY : 0.0);
                out[n].r_k = nk > 0 ? dkn / nk : (dkn > 0 ? INFINITY : 0.0);
            }
        }
    return 0;
}
