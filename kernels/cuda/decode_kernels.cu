/* Launchers of the incremental-decoding kernels (decode_kernels_body.cuh; the interface and
 * what each computes: kernels.cuh). */
#include "kernels.cuh"

#include <math.h>

#include "decode_kernels_body.cuh"

static inline unsigned blocks_for(size_t n, unsigned threads) {
    size_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 65535u * 64u ? b : 65535u * 64u);
}

cudaError_t cu_embed_token(float *x, const __nv_bfloat16 *embed, int token, int d, cudaStream_t st) {
    embed_token_kernel<<<blocks_for((size_t)d, 256), 256, 0, st>>>(x, embed, token, d);
    return cudaGetLastError();
}

cudaError_t cu_dec_gemv(float *out, const __nv_bfloat16 *in, const __nv_bfloat16 *w, int in_dim, int out_dim,
                        int accumulate, cudaStream_t st) {
    if (in_dim % 8 || ((uintptr_t)in | (uintptr_t)w) % 16 || out_dim < 1) return cudaErrorInvalidValue;
    dec_gemv_kernel<<<(unsigned)((out_dim + DEC_GEMV_WARPS - 1) / DEC_GEMV_WARPS), DEC_GEMV_WARPS * 32, 0, st>>>(
        out, in, w, in_dim, out_dim, accumulate);
    return cudaGetLastError();
}

cudaError_t cu_rope_at(float *x, int pos, int n_heads, int head_dim, float theta, cudaStream_t st) {
    int n = n_heads * (head_dim / 2);
    if (n == 0) return cudaSuccess;
    rope_at_kernel<<<blocks_for((size_t)n, 256), 256, 0, st>>>(x, pos, n_heads, head_dim, log((double)theta));
    return cudaGetLastError();
}

cudaError_t cu_conv_step(float *out, float *hist, const float *x, const float *w, int C, int K, int silu,
                         cudaStream_t st) {
    conv_step_kernel<<<(unsigned)((C + 127) / 128), 128, 0, st>>>(out, hist, x, w, C, K, silu);
    return cudaGetLastError();
}

static int att_len(int n) {
    int len = (n + DEC_ATT_MAX_SPLITS - 1) / DEC_ATT_MAX_SPLITS;
    return len < DEC_ATT_MIN_LEN ? DEC_ATT_MIN_LEN : len;
}

size_t cu_decode_attention_scratch_floats(int H, int dv) {
    return (size_t)H * DEC_ATT_MAX_SPLITS * ((size_t)dv + 2);
}

cudaError_t cu_decode_attention(float *o, const float *q, const float *kc, const float *vc, int cap, int lo,
                                int t, int H, int Hkv, int dk, int dv, float qscale, float *part,
                                cudaStream_t st) {
    if (dk > CU_MAX_HEAD_DIM || dv > CU_MAX_HEAD_DIM || Hkv < 1 || H % Hkv || lo < 0 || lo > t ||
        t - lo + 1 > cap)
        return cudaErrorInvalidValue;
    const int n = t - lo + 1, len = att_len(n), splits = (n + len - 1) / len;
    dec_attn_part_kernel<<<dim3((unsigned)splits, (unsigned)H), DEC_ATT_WARPS * 32, 0, st>>>(
        part, q, kc, vc, cap, lo, n, len, H, Hkv, dk, dv, qscale);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    dec_attn_merge_kernel<<<(unsigned)H, 128, 0, st>>>(o, part, splits, dv);
    return cudaGetLastError();
}

cudaError_t cu_linattn_state_run(float *S, float *out, const float *q, const float *k, const float *v,
                                 const float *gk, const float *beta, const float *log_alpha, int T,
                                 int H, int dk, int dv, int load, cudaStream_t st) {
    if (dk > CU_MAX_HEAD_DIM || dv > CU_MAX_HEAD_DIM || (!gk && (!beta || !log_alpha)) || (out && !q))
        return cudaErrorInvalidValue;
    const long warps = (long)H * dv;
    la_run_kernel<<<(unsigned)((warps * 32 + 127) / 128), 128, 0, st>>>(S, out, q, k, v, gk, beta, log_alpha,
                                                                        T, H, dk, dv, load);
    return cudaGetLastError();
}

cudaError_t cu_linattn_window_step(float *out, const float *q, const float *hk, const float *hv,
                                   const float *hg, const float *hbeta, const float *hla, int cap, int t,
                                   int lo, int H, int dk, int dv, cudaStream_t st) {
    if (dk > CU_MAX_HEAD_DIM || dv > CU_MAX_HEAD_DIM || lo < 0 || lo > t || t - lo + 1 > cap ||
        (!hg && (!hbeta || !hla)))
        return cudaErrorInvalidValue;
    la_window_step_kernel<<<(unsigned)((H * 32 + 127) / 128), 128, 0, st>>>(out, q, hk, hv, hg, hbeta, hla,
                                                                           cap, t, lo, H, dk, dv);
    return cudaGetLastError();
}
