/* The transition form of the gdn state pass (HS_CUDA_GDN_AB=1, kernels/cuda/linattn_chunk_gdn.cu),
 * beside the kernels of linattn_chunk_gdn_body.cuh whose scratch, arguments and pieces it uses;
 * apart from the host side so that tests/gpu/la_emu.cpp can run it on the CPU. Internal to
 * kernels/cuda. */
#ifndef HS_LINATTN_CHUNK_GDN_AB_BODY_CUH
#define HS_LINATTN_CHUNK_GDN_AB_BODY_CUH

#include "linattn_chunk_gdn_body.cuh"

/* ---- the transition form of the state pass (HS_CUDA_GDN_AB=1; plain and overlap SWLA) -- */

/* S_{n+1} = gamma_n S_n + Khat_n^T (U_n - W_n S_n) = gamma_n S_n + A_n S_n + B_n with
 * A_n = -Khat_n^T W_n and B_n = Khat_n^T U_n. A and B do not depend on S, so gdn_ab_kernel forms
 * them for every chunk at once, and each sequential step is one dk x dk x 16 product and one
 * barrier (the other form: two dependent products, Vn's round trip through shared memory and
 * two barriers). Vn = U_n - W_n S_n then comes from gdn_vn_kernel, again for every chunk at
 * once. All three products in 3xTF32. A and B take the exact-SWLA arrays' space. */

#define GDN_AB_THREADS 256

/* Khat [LC][dk+4] and W or U [LC][max(dk, dv)+4] */
static size_t gdn_ab_smem(int dk, int dv) {
    return sizeof(float) * (size_t)LC * ((size_t)dk + 4 + (size_t)(dk > dv ? dk : dv) + 4);
}

/* grid (N, H, 2): z = 0 writes A_n (dk x dk), z = 1 B_n (dk x dv) */
__global__ static void __launch_bounds__(GDN_AB_THREADS) gdn_ab_kernel(gdn_args a) {
    LA_SMEM(float, sm);
    const int dk = a.dk, LDK = dk + 4, isb = blockIdx.z, dc = isb ? a.dv : dk, LDC = dc + 4;
    const int n = blockIdx.x, h = blockIdx.y, warp = threadIdx.x >> 5, t0 = n * LC;
    float *khs = sm, *xs = sm + LC * LDK;
    la_load_tile(khs, LDK, a.Kh, (size_t)a.H * dk, (size_t)h * dk, t0, a.N * LC, dk);
    la_load_tile(xs, LDC, isb ? a.Ub : a.Wb, (size_t)a.H * dc, (size_t)h * dc, t0, a.N * LC, dc);
    __syncthreads();
    float *dst = (isb ? a.Bb : a.Ab) + ((size_t)n * a.H + h) * dk * dc;
    const int nbc = dc / 16;
    for (int tile = warp; tile < (dk / 16) * nbc; tile += GDN_AB_THREADS / 32) {
        const int rb = tile / nbc, cb = tile % nbc;
        la_acc c;
        wmma::fill_fragment(c, 0.0f);
        /* Khat^T X over the chunk's rows: Khat^T read column-major */
        la_mma_3x<la_a_col, la_b_row>(c, khs + rb * 16, LDK, (size_t)8 * LDK, xs + cb * 16, LDC, (size_t)8 * LDC, LC);
        if (!isb)
            #pragma unroll
            for (int i = 0; i < c.num_elements; i++) c.x[i] = -c.x[i];
        wmma::store_matrix_sync(dst + (size_t)rb * 16 * dc + cb * 16, c, (unsigned)dc, wmma::mem_row_major);
    }
}

/* Shared memory of the transition-form pass: two buffers of {A_n [dk][dk+4], this block's B_n
 * columns [dk][LDS], b_last} and the state twice [dk][LDS] (read one, write the other). */
struct gdn_stab_layout {
    size_t buf, am, bm, lb, s0, s1, total; /* float offsets; am, bm, lb within a buffer */
};

__host__ __device__ static gdn_stab_layout gdn_stab_make(int dk) {
    gdn_stab_layout L;
    L.am = 0;
    L.bm = (size_t)dk * (dk + 4);
    L.lb = L.bm + (size_t)dk * GDN_LDS;
    L.buf = L.lb + 8;
    L.s0 = 2 * L.buf;
    L.s1 = L.s0 + (size_t)dk * GDN_LDS;
    L.total = L.s1 + (size_t)dk * GDN_LDS;
    return L;
}

static size_t gdn_stab_smem(int dk) { return gdn_stab_make(dk).total * sizeof(float); }

__device__ static void gdn_stab_prefetch(const gdn_args &a, const gdn_stab_layout &Ly, float *sm, int b, int n, int h,
                                         int col0) {
    const int dk = a.dk, q = dk >> 2;
    float *base = sm + (size_t)b * Ly.buf;
    const float *an = a.Ab + ((size_t)n * a.H + h) * dk * dk, *bn = a.Bb + ((size_t)n * a.H + h) * dk * a.dv + col0;
    for (int i = threadIdx.x; i < dk * q; i += blockDim.x)
        __pipeline_memcpy_async(base + Ly.am + (i / q) * (dk + 4) + (i % q) * 4, an + (size_t)i * 4, 16);
    for (int i = threadIdx.x; i < dk * (GDN_BV / 4); i += blockDim.x) {
        const int r = i / (GDN_BV / 4), c = (i % (GDN_BV / 4)) * 4;
        __pipeline_memcpy_async(base + Ly.bm + r * GDN_LDS + c, bn + (size_t)r * a.dv + c, 16);
    }
    if (threadIdx.x == 0) __pipeline_memcpy_async(base + Ly.lb, a.Lb + (size_t)n * a.H + h, 4);
}

/* grid (dv/16, H, overlap blocks): S_n of its chunks [n_out, n_end) for its 16 columns */
__global__ static void __launch_bounds__(GDN_ST_THREADS, 1) gdn_state_ab_kernel(gdn_args a) {
    LA_SMEM(float, sm);
    const int dk = a.dk, LDA = dk + 4;
    const gdn_stab_layout Ly = gdn_stab_make(dk);
    const int h = blockIdx.y, col0 = blockIdx.x * GDN_BV, tid = threadIdx.x, warp = tid >> 5;
    int n_beg = 0, n_out = 0, n_end = a.N;
    if (a.sc > 0) la_overlap_pass((int)blockIdx.z, a.N, a.sc, a.wc, &n_beg, &n_out, &n_end);
    float *scur = sm + Ly.s0, *snext = sm + Ly.s1;
    for (int i = tid; i < dk * GDN_LDS; i += blockDim.x) scur[i] = 0.0f;
    gdn_stab_prefetch(a, Ly, sm, 0, n_beg, h, col0);
    __pipeline_commit();
    for (int n = n_beg; n < n_end; n++) {
        const int b = (n - n_beg) & 1;
        const float *base = sm + (size_t)b * Ly.buf;
        __pipeline_wait_prior(0);
        __syncthreads();                   /* chunk n's A, B in; S_n whole; buffer b^1 and snext free */
        if (n + 1 < n_end) {
            gdn_stab_prefetch(a, Ly, sm, b ^ 1, n + 1, h, col0);
            __pipeline_commit();
        }
        if (a.l2pf && n + GDN_PF < n_end) {
            la_prefetch_span_l2(a.Ab + ((size_t)(n + GDN_PF) * a.H + h) * dk * dk, (size_t)dk * dk);
            for (int r = tid; r < dk; r += blockDim.x)
                la_prefetch_l2(a.Bb + ((size_t)(n + GDN_PF) * a.H + h) * dk * a.dv + (size_t)r * a.dv + col0);
        }
        if (n >= n_out) {
            float *sn = a.Sb + ((size_t)n * a.H + h) * dk * a.dv + col0;
            for (int i = tid; i < dk * GDN_BV; i += blockDim.x)
                sn[(size_t)(i / GDN_BV) * a.dv + i % GDN_BV] = scur[(i / GDN_BV) * GDN_LDS + i % GDN_BV];
        }
        if (n + 1 == n_end) break;
        const float gl = expf(base[Ly.lb]);
        for (int tile = warp; tile < dk / 16; tile += GDN_ST_WARPS) {
            la_acc c, s;
            wmma::load_matrix_sync(c, base + Ly.bm + tile * 16 * GDN_LDS, GDN_LDS, wmma::mem_row_major);
            wmma::load_matrix_sync(s, scur + tile * 16 * GDN_LDS, GDN_LDS, wmma::mem_row_major);
            #pragma unroll
            for (int i = 0; i < c.num_elements; i++) c.x[i] += gl * s.x[i];
            la_mma_3x<la_a_row, la_b_row>(c, base + Ly.am + tile * 16 * LDA, LDA, 8, scur, GDN_LDS, (size_t)8 * GDN_LDS, dk);
            wmma::store_matrix_sync(snext + tile * 16 * GDN_LDS, c, GDN_LDS, wmma::mem_row_major);
        }
        float *t = scur; scur = snext; snext = t;
    }
    __pipeline_wait_prior(0);
}

/* W [LC][dk+4] and S_n [dk][dv+4] */
static size_t gdn_vn_smem(int dk, int dv) { return sizeof(float) * ((size_t)LC * (dk + 4) + (size_t)dk * (dv + 4)); }

/* grid (N, H): Vn = U_n - W_n S_n into a.Vb (over U itself without SWLA: each warp reads its
 * U tile before it writes the same tile) */
__global__ static void __launch_bounds__(GDN_AB_THREADS) gdn_vn_kernel(gdn_args a) {
    LA_SMEM(float, sm);
    const int dk = a.dk, dv = a.dv, LDK = dk + 4, LDV = dv + 4;
    const int n = blockIdx.x, h = blockIdx.y, warp = threadIdx.x >> 5, t0 = n * LC;
    float *ws = sm, *ss = sm + LC * LDK;
    la_load_tile(ws, LDK, a.Wb, (size_t)a.H * dk, (size_t)h * dk, t0, a.N * LC, dk);
    const float *sn = a.Sb + ((size_t)n * a.H + h) * dk * dv;
    const int q4 = dv >> 2;
    for (int i = threadIdx.x; i < dk * q4; i += blockDim.x)
        *(float4 *)(ss + (i / q4) * LDV + (i % q4) * 4) = *(const float4 *)(sn + (size_t)i * 4);
    __syncthreads();
    const size_t ldu = (size_t)a.H * dv;
    const int nbv = dv / 16;
    for (int tile = warp; tile < 4 * nbv; tile += GDN_AB_THREADS / 32) {
        const int rb = tile / nbv, cb = tile % nbv;
        const size_t off = (size_t)(t0 + rb * 16) * ldu + (size_t)h * dv + cb * 16;
        la_acc c;
        wmma::load_matrix_sync(c, a.Ub + off, (unsigned)ldu, wmma::mem_row_major);
        #pragma unroll
        for (int i = 0; i < c.num_elements; i++) c.x[i] = -c.x[i];
        la_mma_3x<la_a_row, la_b_row>(c, ws + rb * 16 * LDK, LDK, 8, ss + cb * 16, LDV, (size_t)8 * LDV, dk);
        #pragma unroll
        for (int i = 0; i < c.num_elements; i++) c.x[i] = -c.x[i];
        wmma::store_matrix_sync(a.Vb + off, c, (unsigned)ldu, wmma::mem_row_major);
    }
}

#endif
