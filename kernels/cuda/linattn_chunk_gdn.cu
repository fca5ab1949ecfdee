/* Chunked gated delta rule on the tensor cores (see linattn_chunk.cuh), the WY/UT form of
 * kernels/cpu/gdn.c with chunks of LC = 64. Per chunk, b_t = sum of ln alpha from the chunk
 * start through t (double), gamma_t = exp(b_t), every pairwise factor exp(b_t - b_s), t >= s:
 *
 *  local  (one block per chunk and head, in parallel):
 *         Lm = strict_lower(diag(beta) (Gam o K K^T)), X = (I + Lm)^{-1} by forward
 *         substitution in shared memory (one column per four threads), Tm = X diag(beta),
 *         W = Tm (gamma o K), U = Tm V, Khat_s = exp(b_last - b_s) k_s and b_last, written to
 *         the scratch: all of a chunk that does not depend on the state (b_t's scan included),
 *         so the sequential pass below only multiplies.
 *  state  (one block per head and 16 value columns, sequential over chunks; the columns of
 *         the state evolve independently): stores S_n, then Vn = U - W S_n (overwrites U),
 *         S_{n+1} = gamma_last S_n + Khat^T Vn, gamma_last = exp(b_last); chunk n+1's W, Khat,
 *         U columns and b_last are copied (cp.async) during step n, two barriers a step
 *         (the copies landed, then Vn whole before the state update). Every product is
 *         single tf32 but, under exact SWLA (which multiplies transitions together), K K^T
 *         and W, which make up the transition: 3xTF32 there (hi/lo split of both operands).
 *         W S was 3xTF32 until session 10 and K K^T and W everywhere until session 12 (the
 *         emulator's error against the double-precision reference: see gdn_local_kernel).
 *         Where 16 columns a block would leave SMs idle the pass runs with 8
 *         (linattn_chunk_gdn_state8.cuh; gdn_bv8 below).
 *  output (one block per chunk and head): o = (q/sqrt(dk) o gamma) S_n + M Vn with
 *         M = lower(Gam o Q K^T)/sqrt(dk) (diagonal included).
 * SWLA (W, S multiples of the chunk): overlap restarts the state pass per block of S tokens
 * (grid z); exact (W >= 2 chunks) runs the state pass restarted every B = W/64 - 1 chunks with
 * the block-prefix transition beside the state, a backward pass for each block's suffix states
 * and transitions (from the same Khat and b_last), and gdn_out_exact_kernel: every chunk's
 * window is a block suffix, a block prefix and one cut chunk (van Herk / Gil-Werman with dense
 * transitions, nothing subtracted). */
#include "linattn_chunk_gdn_state8.cuh"   /* and linattn_chunk_gdn_body.cuh */

#include <stdlib.h>
#include <string.h>

/* ---- host side ------------------------------------------------------------------------ */

/* Raises a kernel's dynamic shared memory limit to `bytes` when it is below (the attribute
 * is per kernel and sticks; one device per process, as the engine runs). */
static cudaError_t set_smem(const void *fn, size_t bytes, size_t *current) {
    if (bytes <= *current) return cudaSuccess;
    cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e == cudaSuccess) *current = bytes;
    return e;
}

size_t cu_la_smem_optin(void);   /* linattn_chunk.cu */
int cu_la_stage_allowed(void);   /* linattn_chunk.cu */
int cu_la_env_is(const char *name, const char *value);   /* linattn_chunk.cu */

int cu_la_sm_count(void);        /* linattn_chunk.cu */

/* The state pass's width: 8 value columns a block (gdn_state8_kernel) where the 16-column
 * grid would leave SMs idle (no SWLA: H * dv / 16 blocks, 64 at 8 heads x 128 on 132 SMs), else
 * 16. On the H200 (session 10) at 64K, 8 heads x 128: plain gdn chunk 6.97 ms against 9.18,
 * the 376m GDN-NoPE prefill 121.8 ms against 136.3; with overlap SWLA (4096 blocks of 16
 * columns) 14.91 against 12.99, so a grid that already fills the GPU keeps 16 columns.
 * HS_CUDA_GDN_BV=8 or 16 forces one (8 only where it runs: not exact SWLA, dims, memory). */
static int gdn_bv8(int dk, int dv, int H, unsigned zb, int swla) {
    static const int force = cu_la_env_is("HS_CUDA_GDN_BV", "8") ? 8 : cu_la_env_is("HS_CUDA_GDN_BV", "16") ? 16 : 0;
    if (swla == CU_SWLA_EXACT || !g8_fits(dk, dv) || g8_smem(dk) > cu_la_smem_optin()) return 0;
    if (force) return force == 8;
    return (long)(dv / GDN_BV) * H * zb < cu_la_sm_count();
}

/* The most dynamic shared memory a gdn chunk kernel needs (for cu_la_chunk_fits): the
 * unstaged forms; gdn_stage() picks the staged ones where they fit (the 8-column state pass
 * runs only where its own memory fits, gdn_bv8). */
size_t cu_la_gdn_smem_max(int dk, int dv) {
    const size_t sz[] = {gdn_local_make(dk, dv, true).total, gdn_state_smem(dk), gdn_out_smem(dk, dv, 0),
                         gdn_suffix_make(dk, dv, 0).total * sizeof(float), gdn_ox_make(dk, dv).total * sizeof(float)};
    size_t m = 0;
    for (size_t x : sz) m = x > m ? x : m;
    return m;
}

static int gdn_stage(int dk, int dv) {
    if (!cu_la_stage_allowed()) return 0;
    const size_t out = gdn_out_smem(dk, dv, 1), suffix = gdn_suffix_make(dk, dv, 1).total * sizeof(float);
    return (out > suffix ? out : suffix) <= cu_la_smem_optin();
}

int cu_gdn_chunk_supports(int T, int swla, int W, int S) {
    if (swla == CU_SWLA_OFF) return 1;
    /* overlap: one grid layer per block of S tokens (at most 65535 of them) */
    if (swla == CU_SWLA_OVERLAP)
        return W >= S && S >= LC && W % LC == 0 && S % LC == 0 && (T - 1) / S + 1 <= 65535;
    /* exact: windows of at least two chunks, a whole number of them */
    return swla == CU_SWLA_EXACT && W >= 2 * LC && W % LC == 0 && (long)(T - 1) / (W / LC - 1) / LC + 1 <= 65535;
}

size_t cu_la_gdn_work_bytes(int T, int H, int dk, int dv) { return gdn_work_bytes(T, H, dk, dv); }

cudaError_t cu_gdn_chunk(float *out, const float *q, const float *k, const float *v, const float *beta,
                         const float *log_alpha, int T, int H, int dk, int dv, int swla, int W, int S,
                         void *work, size_t work_bytes, cudaStream_t st) {
    if (T < 1) return cudaSuccess;
    if (swla != CU_SWLA_EXACT && swla != CU_SWLA_OVERLAP) swla = CU_SWLA_OFF;
    if (!cu_la_chunk_fits(dk, dv) || !cu_gdn_chunk_supports(T, swla, W, S) || !work ||
        work_bytes < cu_la_chunk_work_bytes(T, H, dk, dv))
        return cudaErrorInvalidValue;
    gdn_args a = {};
    a.out = out; a.q = q; a.k = k; a.v = v; a.beta = beta; a.la = log_alpha;
    a.T = T; a.H = H; a.dk = dk; a.dv = dv; a.N = (T + LC - 1) / LC;
    a.scale = 1.0f / sqrtf((float)dk);
    gdn_carve(a, work, swla, W, S);
    a.stage = gdn_stage(dk, dv);

    const unsigned zb = a.sc > 0 ? (unsigned)((a.N + a.sc - 1) / a.sc) : 1u;
    const int bv8 = gdn_bv8(dk, dv, H, zb, swla);
    static size_t local_set, state_set, out_set, suffix_set, ox_set, state8_set;
    const size_t ls = gdn_local_make(dk, dv, a.Keb != NULL).total;
    cudaError_t e = set_smem((const void *)gdn_local_kernel, ls, &local_set);
    if (e == cudaSuccess && !bv8) e = set_smem((const void *)gdn_state_kernel, gdn_state_smem(dk), &state_set);
    if (e == cudaSuccess && bv8) e = set_smem((const void *)gdn_state8_kernel, g8_smem(dk), &state8_set);
    if (e == cudaSuccess) e = set_smem((const void *)gdn_out_kernel, gdn_out_smem(dk, dv, a.stage), &out_set);
    if (e == cudaSuccess && swla == CU_SWLA_EXACT)
        e = set_smem((const void *)gdn_suffix_kernel, gdn_suffix_make(dk, dv, a.stage).total * sizeof(float), &suffix_set);
    if (e == cudaSuccess && swla == CU_SWLA_EXACT)
        e = set_smem((const void *)gdn_out_exact_kernel, gdn_ox_make(dk, dv).total * sizeof(float), &ox_set);
    if (e != cudaSuccess) return e;
    dim3 grid((unsigned)a.N, (unsigned)H);
    gdn_local_kernel<<<grid, GDN_THREADS, ls, st>>>(a);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    /* exact SWLA: the prefix pass also carries the dk columns of the block-prefix transition */
    const unsigned cbs = (unsigned)((dv + (swla == CU_SWLA_EXACT ? dk : 0)) / GDN_BV);
    if (bv8)
        gdn_state8_kernel<<<dim3((unsigned)(dv / G8_BV), (unsigned)H, zb), G8_THREADS, g8_smem(dk), st>>>(a);
    else
        gdn_state_kernel<<<dim3(cbs, (unsigned)H, zb), GDN_ST_THREADS, gdn_state_smem(dk), st>>>(a);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    if (swla == CU_SWLA_EXACT) {
        gdn_suffix_kernel<<<dim3((unsigned)(dk / 16), (unsigned)H, zb), GDN_SUF_THREADS,
                            gdn_suffix_make(dk, dv, a.stage).total * sizeof(float), st>>>(a);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
        gdn_out_exact_kernel<<<grid, GDN_THREADS, gdn_ox_make(dk, dv).total * sizeof(float), st>>>(a);
    } else {
        gdn_out_kernel<<<grid, GDN_OUT_THREADS, gdn_out_smem(dk, dv, a.stage), st>>>(a);
    }
    return cudaGetLastError();
}
