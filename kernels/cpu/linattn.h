/* Shared machinery of the chunked linear-attention kernels (gla.c, gdn.c).
 *
 * Both mixers are linear recurrences S_t = A_t S_{t-1} + k~_t^T v_t, o_t = q_t S_t, so a
 * chunk of L consecutive tokens, entered with state S, is described by four local pieces:
 *   qe [L, dk]  o_t   += qe_t S              (how the incoming state reaches each query)
 *   ai [L, L]   o     += ai V                (lower triangular: the chunk's own tokens)
 *   ke [L, dk]  S_out  = P S + ke^T V        (each token's key carried to the chunk end)
 *   P           the transition across the chunk: dense dk x dk (gdn) or diagonal (gla,
 *               stored as log decays so long products never under/overflow in between).
 * The value-path coefficient of key s (chunk j) for query t (chunk n > j) is
 *   c_{t,s} = (qe_t P_{n-1} ... P_{j+1}) . ke_s,
 * which is what exact SWLA uses for the chunks cut by a window edge. The method fills the
 * pieces; the driver (linattn.c) runs the plain, exact-window and overlap schedules. */
#ifndef HS_LINATTN_H
#define HS_LINATTN_H

#include <stddef.h>

typedef struct {
    int L;
    float *qe, *ke, *ai, *p;
} la_chunk;

typedef struct la_method la_method;
struct la_method {
    int dense;             /* 1: P is a dense dk x dk matrix; 0: P is diagonal (log decays) */
    int H, dk, dv;
    size_t scratch_floats; /* per-thread scratch the local function needs for chunk size C */
    /* Fills ch (ch->L = L already set) for head h and tokens c0 .. c0+L-1. Buffers have
     * leading dimensions dk (qe, ke) and C (ai); scratch has scratch_floats floats. */
    void (*local)(const la_method *m, int h, int c0, int L, int C, la_chunk *ch, float *scratch);
    const void *ctx;
};

/* Runs the chunked schedule for every head (OpenMP over heads). v [T, H*dv] -> out [T, H*dv]. */
void la_forward_chunked(float *out, const float *v, int T, int C, int swla, int W, int S,
                        const la_method *m);

/* First position query t may see under the SWLA knob (model-spec section 6). W, S as given
 * to the kernels after la_sanitize_swla. */
int la_visible_lo(int t, int swla, int W, int S);
/* o[dv] = (q[dk] * scale) S[dk, dv]: the recurrent kernels' state readout. */
void la_state_readout(float *o, const float *q, const float *S, float scale, int dk, int dv);
/* Normalises the SWLA arguments: W <= 0 turns SWLA off; overlap S outside 1..W becomes
 * max(1, W/4) (the spec's default) or W. */
void la_sanitize_swla(int *swla, int *W, int *S);

/* Small row-major GEMM helpers (CBLAS): C = alpha * op(A) op(B) + beta * C. */
void la_mm_nn(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
              float beta, float *C, int ldc);
void la_mm_nt(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
              float beta, float *C, int ldc);
void la_mm_tn(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
              float beta, float *C, int ldc);

#endif
