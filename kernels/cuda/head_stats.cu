/* Per-head statistics of a query row's distribution over source positions (model-spec
 * section 7) straight from a mixer's device tensors: normalised entropy, top-k hit against a
 * span, argmax. One block (softmax, gla) or one warp (gdn) per (row, head); nothing of size
 * T x T, and no per-row buffer either: every pass recomputes the row's scores, so a block
 * needs O(dk) memory whatever T is. The CPU reference is engine/analysis_dist.c (double
 * precision, a row at a time); the rules here are its rules:
 *   entropy  -sum a ln a / ln(t+1) over the visible s (0 for t = 0);
 *   hit      the span's largest a~, m, is > 0 and fewer than k visible s have a~ > m;
 *   argmax   the largest a~, the earliest position on ties.
 * Scores are double: softmax ties between identical keys (a NoPE head on a repeated token)
 * must stay exact ties for the top-k rule, as they do on the CPU. */
#include "head_stats_body.cuh"

/* ---- host side ------------------------------------------------------------------------ */

cudaError_t cu_head_stats_softmax(cu_head_stats_out o, const float *q, const float *k,
                                  const float *row_scale, int H, int Hkv, int dk, int window,
                                  const int *rows, int n_rows, int span0, int span1, int topk,
                                  cudaStream_t st) {
    if (n_rows <= 0 || H <= 0) return cudaSuccess;
    stats_softmax_kernel<<<dim3(n_rows, H), HS_THREADS, 0, st>>>(o, q, k, row_scale, H, Hkv, dk, window,
                                                                 rows, n_rows, span0, span1, topk);
    return cudaGetLastError();
}

cudaError_t cu_head_stats_gla_prep(float *ktil, double *dchunk, const float *k, const float *gk, int T,
                                   int C, cudaStream_t st) {
    if (T <= 0) return cudaSuccess;
    gla_prep_kernel<<<hs_gla_chunks(T), HS_GLA_THREADS, 0, st>>>(ktil, dchunk, k, gk, T, C);
    return cudaGetLastError();
}

size_t cu_head_stats_gla_scratch(int T, int C) {
    return (size_t)hs_gla_chunks(T) * (size_t)C * sizeof(double);
}

cudaError_t cu_head_stats_gla(cu_head_stats_out o, const float *q, const float *k, const float *gk,
                              const float *ktil, const double *dchunk, int H, int dk, int swla, int W,
                              int S, const int *rows, int n_rows, int span0, int span1, int topk,
                              cudaStream_t st) {
    if (n_rows <= 0 || H <= 0) return cudaSuccess;
    stats_gla_kernel<<<dim3(n_rows, H), HS_GLA_THREADS, hs_gla_smem(dk), st>>>(o, q, k, gk, ktil, dchunk, H, dk,
                                                                              swla, W, S, rows, n_rows, span0,
                                                                              span1, topk);
    return cudaGetLastError();
}

cudaError_t cu_head_stats_gdn(cu_head_stats_out o, const float *q, const float *k, const float *beta,
                              const float *log_alpha, int H, int dk, int swla, int W, int S,
                              const int *rows, int n_rows, int span0, int span1, int topk,
                              cudaStream_t st) {
    if (n_rows <= 0 || H <= 0) return cudaSuccess;
    if (dk > CU_MAX_HEAD_DIM) return cudaErrorInvalidValue;
    const int items = n_rows * H;
    stats_gdn_kernel<<<(items + HS_GDN_WARPS - 1) / HS_GDN_WARPS, 32 * HS_GDN_WARPS, 0, st>>>(
        o, q, k, beta, log_alpha, H, dk, swla, W, S, rows, n_rows, span0, span1, topk);
    return cudaGetLastError();
}
