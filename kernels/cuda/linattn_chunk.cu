/* Chunked gated linear attention on the tensor cores (see linattn_chunk.cuh), chunks of LC = 64
 * tokens, three kernels per call:
 *
 *  local  (one block per chunk and head, in parallel): b_t = sum of gk from the chunk start
 *         through t (double), the chunk's decay P = b_last (log, per channel) and its own
 *         state contribution U = Khat^T V with Khat_s = k_s exp(b_last - b_s) (every exponent
 *         <= 0).
 *  scan   (one thread per state element, sequential over chunks): Z_{n+1} = exp(P_n) Z_n + U_n
 *         in fp32 (the only sequential part, one multiply-add per element and chunk). Under
 *         SWLA the carried state holds only the chunks [fz(n), n-1] that every query of chunk
 *         n sees in full: a chunk leaving that set is subtracted as the very U it was added
 *         with, decayed by exp(sum of P since), so nothing cancels but the chunk's own terms.
 *         Overlap SWLA instead runs the plain scan, and the output kernel takes the windowed
 *         state as Z_n - exp(C_n - C_fz) Z_fz from double prefix sums C of P (host side says
 *         why each mode has its form; HS_CUDA_GLA_SWLA_DIFF=0|1 puts both on one.)
 *  output (one block per chunk and head): o = Qt Z_n + A V with Qt_t = q_t/sqrt(dk) exp(b_t)
 *         and A the causal intra-chunk matrix; under SWLA also the at most two (exact) chunks
 *         before fz(n) that a window edge cuts, as masked products with the query carried
 *         back by the decay in between, and the intra-chunk mask s >= lo(t).
 *
 * Intra-chunk decay without overflow, however strong the gates: the chunk is cut in four
 * sub-blocks of 16; an off-diagonal block (queries of sub-block i, keys of sub-block j < i) is
 * a tensor-core product of q_t exp(b_t - b_r) and k_s exp(b_r - b_s) with r the last key row of
 * sub-block j (both exponents <= 0); a diagonal block takes exp(b_t - b_s) pairwise (fp32).
 * b itself is summed in double and stored as float: the absolute error of a difference is
 * then ~1e-7 |b|, below the tf32 rounding of the products for any |b| up to ~1e3 per chunk. */
#include "linattn_chunk_gla_body.cuh"

/* ---- host side ------------------------------------------------------------------------- */

size_t cu_la_gdn_smem_max(int dk, int dv);   /* linattn_chunk_gdn.cu */
size_t cu_la_gdn_work_bytes(int T, int H, int dk, int dv);

/* The most dynamic shared memory any chunk kernel takes for these head dims. */
static size_t cu_la_chunk_smem_max(int dk, int dv) {
    size_t m = gla_out_make(dk, dv, 0).total * sizeof(float), l = gla_local_smem(dk, dv), g = cu_la_gdn_smem_max(dk, dv);
    if (l > m) m = l;
    return g > m ? g : m;
}

/* 1 when the environment variable `name` is set to `value` (the switches below read it once). */
int cu_la_env_is(const char *name, const char *value) {
    const char *e = getenv(name);
    return e && !strcmp(e, value);
}

int cu_la_chunk_enabled(void) {
    static const int v = !cu_la_env_is("HS_CUDA_LINATTN", "recurrent");
    return v;
}

/* Shared memory a block may opt in to on the current device (read once). */
size_t cu_la_smem_optin(void) {
    static long v = -1;
    if (v < 0) {
        int dev = 0, bytes = 0;
        v = cudaGetDevice(&dev) == cudaSuccess &&
                    cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess
                ? bytes : 0;
    }
    return (size_t)v;
}

/* The device's SM count (0 where it cannot be read). */
int cu_la_sm_count(void) {
    static int v = -1;
    if (v < 0) {
        int dev = 0, n = 0;
        v = cudaGetDevice(&dev) == cudaSuccess && cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess
                ? n : 0;
    }
    return v;
}

/* The most staging the chunk kernels may use where the shared memory allows: 2 (gla: the cut
 * chunk's products built early; gdn stages at any level above 0). HS_CUDA_LA_STAGE=0 takes the
 * forms for devices with less shared memory anyway (to check them on a Hopper GPU), =1 the gla
 * output kernel that builds the cut chunk's products after its own terms (A/B, la_check). */
int cu_la_stage_allowed(void) {
    static const int v = cu_la_env_is("HS_CUDA_LA_STAGE", "0") ? 0 : cu_la_env_is("HS_CUDA_LA_STAGE", "1") ? 1 : 2;
    return v;
}

int cu_la_chunk_fits(int dk, int dv) {
    if (!(dk >= 16 && dv >= 16 && dk % 16 == 0 && dv % 16 == 0 && dk <= CU_LA_CHUNK_MAXD && dv <= CU_LA_CHUNK_MAXD))
        return 0;
    return cu_la_chunk_smem_max(dk, dv) <= cu_la_smem_optin();
}

static size_t align256(size_t n) { return (n + 255) / 256 * 256; }

/* gla: two state arrays (contributions, carried states) + a [N, H, dk] log-decay array + one
 * of doubles (the window's log decays as floats, or their prefix sums) + Khat [N*LC, H*dk];
 * gdn: gdn_work_bytes in linattn_chunk_gdn_body.cuh (states, W, Khat, U, Vn, b_last, and the exact-SWLA arrays). */
size_t cu_la_chunk_work_bytes(int T, int H, int dk, int dv) {
    if (T < 1 || H < 1 || !cu_la_chunk_fits(dk, dv)) return 0;
    size_t N = ((size_t)T + LC - 1) / LC, st = align256(N * H * dk * dv * 4);
    size_t gla = 2 * st + align256(N * H * dk * 4) + align256(N * H * dk * 8) + align256(N * LC * H * dk * 4);
    size_t gdn = cu_la_gdn_work_bytes(T, H, dk, dv);
    return gla > gdn ? gla : gdn;
}

/* Raises a kernel's dynamic shared memory limit to `bytes` when it is below (the attribute
 * is per kernel and sticks; one device per process, as the engine runs). */
static cudaError_t set_smem(const void *fn, size_t bytes, size_t *current) {
    if (bytes <= *current) return cudaSuccess;
    cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e == cudaSuccess) *current = bytes;
    return e;
}

cudaError_t cu_gla_chunk(float *out, const float *q, const float *k, const float *v, const float *gk,
                         int T, int H, int dk, int dv, int swla, int W, int S, void *work,
                         size_t work_bytes, cudaStream_t st) {
    if (T < 1) return cudaSuccess;
    if (!cu_la_chunk_fits(dk, dv) || !work || work_bytes < cu_la_chunk_work_bytes(T, H, dk, dv))
        return cudaErrorInvalidValue;
    if (swla != CU_SWLA_EXACT && swla != CU_SWLA_OVERLAP) swla = CU_SWLA_OFF;
    if (swla != CU_SWLA_OFF && W < 1) return cudaErrorInvalidValue;
    if (swla == CU_SWLA_OVERLAP && (S < 1 || S > W)) return cudaErrorInvalidValue;
    gla_args a = {};
    a.out = out; a.q = q; a.k = k; a.v = v; a.gk = gk;
    a.T = T; a.H = H; a.dk = dk; a.dv = dv; a.N = (T + LC - 1) / LC;
    a.swla = swla; a.W = W; a.S = S;
    a.scale = 1.0f / sqrtf((float)dk);
    /* the diagonal blocks factored (3xTF32) where the decays allow: plain 2.895 -> 2.540 ms at
     * 64K, 0.205 -> 0.184 at 4K on the H100, la_check 86/86 there (session 23);
     * HS_CUDA_GLA_DIAG=pairwise keeps the pairwise form for A/Bs */
    static const int diag_pairwise = cu_la_env_is("HS_CUDA_GLA_DIAG", "pairwise");
    a.diag_pairwise = diag_pairwise;
    const size_t st_bytes = align256((size_t)a.N * H * dk * dv * 4);
    char *base = (char *)work;
    a.U = (float *)base;
    /* without SWLA the scan rewrites each contribution into the state entering its chunk */
    a.Z = swla == CU_SWLA_OFF ? a.U : (float *)(base + st_bytes);
    a.P = (float *)(base + 2 * st_bytes);
    const size_t pd_bytes = align256((size_t)a.N * H * dk * 4), cz_bytes = align256((size_t)a.N * H * dk * 8);
    /* SWLA by state differences: the plain scan, and the output kernel takes each windowed
     * state as the full one minus the decayed state entering the window. Overlap takes it (its
     * subtracted state is shared by the S/LC chunks of a stride, so it comes from L2: 3.148 vs
     * 3.744 ms at 64K, 0.217 vs 0.249 at 4K on the H100); exact keeps the scan that subtracts
     * each chunk as it leaves (every chunk reads its own subtracted state from memory: 3.489 vs
     * 3.542 ms at 64K; docs/bench-notes.md "Session 28"). HS_CUDA_GLA_SWLA_DIFF=1 or =0 puts
     * both modes on one form for A/Bs. */
    static const int diff_force = cu_la_env_is("HS_CUDA_GLA_SWLA_DIFF", "1") ? 1 : cu_la_env_is("HS_CUDA_GLA_SWLA_DIFF", "0") ? 0 : -1;
    const bool diff = swla != CU_SWLA_OFF && (diff_force >= 0 ? diff_force == 1 : swla == CU_SWLA_OVERLAP);
    a.Lz = swla == CU_SWLA_OFF || diff ? NULL : (float *)(base + 2 * st_bytes + pd_bytes);
    a.Cz = diff ? (double *)(base + 2 * st_bytes + pd_bytes) : NULL;
    a.Kh = swla == CU_SWLA_OFF ? NULL : (float *)(base + 2 * st_bytes + pd_bytes + cz_bytes);

    /* the prefetching output kernel (and the one that also builds the cut chunk's products
     * early) where the device gives a block its shared memory */
    a.stage = 0;
    if (swla != CU_SWLA_OFF && cu_la_stage_allowed())
        for (int g = cu_la_stage_allowed(); g > 0 && !a.stage; g--)
            if (gla_out_make(dk, dv, g).total * sizeof(float) <= cu_la_smem_optin()) a.stage = g;
    static size_t local_set, out_set;
    const size_t ls = gla_local_smem(dk, dv), os = gla_out_make(dk, dv, a.stage).total * sizeof(float);
    cudaError_t e = set_smem((const void *)gla_local_kernel, ls, &local_set);
    if (e == cudaSuccess) e = set_smem((const void *)gla_out_kernel, os, &out_set);
    if (e != cudaSuccess) return e;
    dim3 grid((unsigned)a.N, (unsigned)H);
    gla_local_kernel<<<grid, GLA_THREADS, ls, st>>>(a);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    if (a.N > 1) {
        const size_t elems = (size_t)H * dk * dv;
        (diff ? gla_scan_kernel<0, 0>
         : a.swla == CU_SWLA_EXACT ? gla_scan_kernel<GLA_DPF_EXACT, 0>
         : a.swla == CU_SWLA_OVERLAP ? gla_scan_kernel<GLA_DPF, GLA_BURST> : gla_scan_kernel<0, 0>)<<<(unsigned)((elems / 2 + GLA_SCAN_THREADS - 1) / GLA_SCAN_THREADS), GLA_SCAN_THREADS, 0, st>>>(a);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
    gla_out_kernel<<<grid, GLA_THREADS, os, st>>>(a);
    return cudaGetLastError();
}
