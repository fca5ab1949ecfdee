/* The kernels of linattn_chunk_gdn.cu (its header comment describes them), apart from its host side
 * so that tests/gpu/la_emu.cpp can run them on the CPU. Internal to kernels/cuda. */
#ifndef HS_LINATTN_CHUNK_GDN_BODY_CUH
#define HS_LINATTN_CHUNK_GDN_BODY_CUH

#include "linattn_chunk_common.cuh"

#include <math.h>

using namespace nvcuda;

#define GDN_THREADS 256

static_assert(LC == 64, "gdn_cumsum scans two rows per lane of one warp");
#define GDN_WARPS (GDN_THREADS / 32)
#define GDN_ST_THREADS 128
#define GDN_ST_WARPS (GDN_ST_THREADS / 32)
#define GDN_BV 16                /* value columns per state block */
#define GDN_LDS (GDN_BV + 4)

struct gdn_args {
    float *out;
    const float *q, *k, *v, *beta, *la;
    float *Wb, *Ub, *Sb;         /* W [N*LC, H*dk], U [N*LC, H*dv], states [N, H, dk, dv] */
    float *Vb;                   /* Vn = U - W S_n [N*LC, H*dv]: Ub itself without SWLA (in place) */
    int T, H, dk, dv, N;
    int sc, wc;                  /* overlap SWLA: stride and window in chunks (0: no SWLA) */
    float scale;
};

/* Inclusive prefix sums (double) of LC values by warp 0, two per lane and a shuffle scan;
 * visible to the block after a barrier. */
__device__ static void gdn_scan64(double *bd, double x0, double x1) {
    const int lane = threadIdx.x;
    const double pair = x0 + x1;
    double incl = pair;
    #pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const double y = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += y;
    }
    bd[2 * lane] = incl - pair + x0;
    bd[2 * lane + 1] = incl;
}

/* b_t (chunk-local cumulative ln alpha) for the LC rows of chunk n; rows past T add 0. */
__device__ static void gdn_cumsum(double *bd, const gdn_args &a, int n, int h) {
    if (threadIdx.x >= 32) return;
    const int t = n * LC + 2 * threadIdx.x;
    const double x0 = t < a.T ? (double)a.la[(size_t)t * a.H + h] : 0.0;
    const double x1 = t + 1 < a.T ? (double)a.la[(size_t)(t + 1) * a.H + h] : 0.0;
    gdn_scan64(bd, x0, x1);
}

/* ---- local: WY representation of the chunk -------------------------------------------- */

struct gdn_local_layout {
    size_t ks, vs, gm, xm, bet, bd, total;  /* byte offsets */
};

__host__ __device__ static gdn_local_layout gdn_local_make(int dk, int dv) {
    gdn_local_layout L;
    size_t off = 0;
    L.ks = off; off += sizeof(float) * LC * (dk + 4);
    L.vs = off; off += sizeof(float) * LC * (dv + 4);
    L.gm = off; off += sizeof(float) * LC * LA_LDA;
    L.xm = off; off += sizeof(float) * LC * LA_LDA;
    L.bet = off; off += sizeof(float) * LC;
    L.bd = off; off += sizeof(double) * LC;
    L.total = off;
    return L;
}

__global__ static void __launch_bounds__(GDN_THREADS) gdn_local_kernel(gdn_args a) {
    LA_SMEM(unsigned char, smb);
    const int dk = a.dk, dv = a.dv, LDK = dk + 4, LDV = dv + 4;
    const gdn_local_layout Ly = gdn_local_make(dk, dv);
    float *ks = (float *)(smb + Ly.ks), *vs = (float *)(smb + Ly.vs), *gm = (float *)(smb + Ly.gm);
    float *xm = (float *)(smb + Ly.xm), *bet = (float *)(smb + Ly.bet);
    double *bd = (double *)(smb + Ly.bd);
    const int n = blockIdx.x, h = blockIdx.y, tid = threadIdx.x, warp = tid >> 5;
    const int t0 = n * LC;
    la_load_tile(ks, LDK, a.k, (size_t)a.H * dk, (size_t)h * dk, t0, a.T, dk);
    la_load_tile(vs, LDV, a.v, (size_t)a.H * dv, (size_t)h * dv, t0, a.T, dv);
    for (int s = tid; s < LC; s += blockDim.x) bet[s] = t0 + s < a.T ? a.beta[(size_t)(t0 + s) * a.H + h] : 0.0f;
    gdn_cumsum(bd, a, n, h);
    __syncthreads();
    /* K K^T, the lower 4 x 4 blocks (the upper ones are not needed). K K^T and W enter the
     * chunk's state transition (gamma_last I - Khat^T W), which every later state goes
     * through: both in 3xTF32, like the state product, so the transition is fp32-accurate. */
    for (int tile = warp; tile < 16; tile += GDN_WARPS) {
        const int rb = tile >> 2, cb = tile & 3;
        if (cb > rb) continue;
        la_acc c;
        wmma::fill_fragment(c, 0.0f);
        la_mma_3x<la_a_row, la_b_col>(c, ks + rb * 16 * LDK, LDK, 8, ks + cb * 16 * LDK, LDK, 8, dk);
        wmma::store_matrix_sync(gm + rb * 16 * LA_LDA + cb * 16, c, LA_LDA, wmma::mem_row_major);
    }
    __syncthreads();
    for (int e = tid; e < LC * LC; e += blockDim.x) {
        const int t = e / LC, s = e % LC;
        gm[t * LA_LDA + s] = s < t ? bet[t] * expf((float)(bd[t] - bd[s])) * gm[t * LA_LDA + s] : 0.0f;
    }
    __syncthreads();
    /* X = (I + Lm)^{-1}: column c by the four lanes 4c..4c+3 (one warp holds 8 columns);
     * X[t][c] = [t == c] - sum_{s < t} Lm[t][s] X[s][c], rows in order (X[s][c] = 0 for s < c) */
    {
        const int c = tid >> 2, p = tid & 3;
        for (int t = 0; t < LC; t++) {
            float part = 0.0f;
            for (int s = p; s < t; s += 4) part += gm[t * LA_LDA + s] * xm[s * LA_LDA + c];
            part += __shfl_xor_sync(0xffffffffu, part, 1);
            part += __shfl_xor_sync(0xffffffffu, part, 2);
            if (p == 0) xm[t * LA_LDA + c] = (t == c ? 1.0f : 0.0f) - part;
            __syncwarp();
        }
    }
    __syncthreads();
    /* Tm = X diag(beta); gamma o K in place of K (raw K is not needed any more) */
    for (int e = tid; e < LC * LC; e += blockDim.x) xm[(e / LC) * LA_LDA + e % LC] *= bet[e % LC];
    for (int i = tid; i < LC * dk; i += blockDim.x) {
        const int t = i / dk;
        ks[t * LDK + i % dk] *= expf((float)bd[t]);
    }
    __syncthreads();
    /* W = Tm (gamma o K), U = Tm V (Tm lower triangular: k-range up to the row block) */
    const int nbk = dk / 16, nbv = dv / 16;
    for (int tile = warp; tile < 4 * (nbk + nbv); tile += GDN_WARPS) {
        const bool isw = tile < 4 * nbk;
        const int tt = isw ? tile : tile - 4 * nbk, nb = isw ? nbk : nbv;
        const int rb = tt / nb, cb = tt % nb;
        la_acc c;
        wmma::fill_fragment(c, 0.0f);
        if (isw) {
            la_mma_3x<la_a_row, la_b_row>(c, xm + rb * 16 * LA_LDA, LA_LDA, 8, ks + cb * 16, LDK, (size_t)8 * LDK,
                                          (rb + 1) * 16);
            wmma::store_matrix_sync(a.Wb + (size_t)(t0 + rb * 16) * a.H * dk + (size_t)h * dk + cb * 16, c,
                                    (unsigned)(a.H * dk), wmma::mem_row_major);
        } else {
            la_mma<la_a_row, la_b_row>(c, xm + rb * 16 * LA_LDA, LA_LDA, 8, vs + cb * 16, LDV, (size_t)8 * LDV, (rb + 1) * 16);
            wmma::store_matrix_sync(a.Ub + (size_t)(t0 + rb * 16) * a.H * dv + (size_t)h * dv + cb * 16, c,
                                    (unsigned)(a.H * dv), wmma::mem_row_major);
        }
    }
}

/* ---- state pass: sequential over chunks, 16 value columns per block --------------------- */

/* Shared memory of the state pass: two buffers of {W, k} [LC][dk+4], U columns [LC][LDS] and
 * ln alpha [LC] (chunk n and the prefetch of n+1), the state [dk][LDS], Vn [LC][LDS], b
 * (double) and the Khat row factors. */
struct gdn_state_layout {
    size_t buf, w, k, u, la, ss, vn, bd, fac, total; /* float offsets; w, k, u, la within a buffer */
};

__host__ __device__ static gdn_state_layout gdn_state_make(int dk) {
    gdn_state_layout L;
    L.w = 0;
    L.k = L.w + (size_t)LC * (dk + 4);
    L.u = L.k + (size_t)LC * (dk + 4);
    L.la = L.u + (size_t)LC * GDN_LDS;
    L.buf = L.la + LC;                          /* one buffer; a multiple of 8 floats */
    size_t off = 2 * L.buf;
    L.ss = off; off += (size_t)dk * GDN_LDS;
    L.vn = off; off += (size_t)LC * GDN_LDS;
    L.bd = off; off += 2 * LC;                  /* LC doubles */
    L.fac = off; off += LC;
    L.total = off;
    return L;
}

/* Chunk n's W, k, this block's U columns and ln alpha into buffer b, by cp.async (rows past T
 * zero-filled; W and U exist for every row of the last chunk). */
__device__ static void gdn_state_prefetch(const gdn_args &a, const gdn_state_layout &Ly, float *sm, int b, int n,
                                          int h, int col0) {
    const int dk = a.dk, LDK = dk + 4, t0 = n * LC;
    const size_t ldw = (size_t)a.H * dk, ldu = (size_t)a.H * a.dv;
    float *base = sm + (size_t)b * Ly.buf;
    la_load_tile_async(base + Ly.w, LDK, a.Wb, ldw, (size_t)h * dk, t0, a.N * LC, dk);
    la_load_tile_async(base + Ly.k, LDK, a.k, ldw, (size_t)h * dk, t0, a.T, dk);
    for (int i = threadIdx.x; i < LC * (GDN_BV / 4); i += blockDim.x) {
        const int r = i / (GDN_BV / 4), c = (i % (GDN_BV / 4)) * 4;
        __pipeline_memcpy_async(base + Ly.u + r * GDN_LDS + c, a.Ub + (size_t)(t0 + r) * ldu + (size_t)h * a.dv + col0 + c, 16);
    }
    for (int s = threadIdx.x; s < LC; s += blockDim.x) {
        const bool ok = t0 + s < a.T;
        __pipeline_memcpy_async(base + Ly.la + s, a.la + (size_t)(ok ? t0 + s : t0) * a.H + h, 4, ok ? 0 : 4);
    }
}

/* Everything chunk n+1 needs is copied (cp.async) into the second buffer while chunk n is
 * computed, so the sequential loop waits on memory only when a copy is slower than a step. */
__global__ static void __launch_bounds__(GDN_ST_THREADS) gdn_state_kernel(gdn_args a) {
    LA_SMEM(float, sm);
    const int dk = a.dk, LDK = dk + 4;
    const gdn_state_layout Ly = gdn_state_make(dk);
    float *ss = sm + Ly.ss, *vn = sm + Ly.vn, *fac = sm + Ly.fac;
    double *bd = (double *)(sm + Ly.bd);
    const int cb = blockIdx.x, h = blockIdx.y, tid = threadIdx.x, warp = tid >> 5;
    const int col0 = cb * GDN_BV;
    const size_t ldu = (size_t)a.H * a.dv;
    /* chunks [n_out, n_end) get their S_n and Vn from this block; without SWLA that is every
     * chunk, with overlap SWLA the chunks of block z, whose recurrence restarts from zero at
     * chunk n_beg = max(0, (z+1) sc - wc) (the spec's restart point in chunks) */
    int n_beg = 0, n_out = 0, n_end = a.N;
    if (a.sc > 0) la_overlap_pass((int)blockIdx.z, a.N, a.sc, a.wc, &n_beg, &n_out, &n_end);
    for (int i = tid; i < dk * GDN_LDS; i += blockDim.x) ss[i] = 0.0f;
    gdn_state_prefetch(a, Ly, sm, 0, n_beg, h, col0);
    __pipeline_commit();
    for (int n = n_beg; n < n_end; n++) {
        const int t0 = n * LC, b = (n - n_beg) & 1;
        const bool own = n >= n_out;
        float *base = sm + (size_t)b * Ly.buf, *ks = base + Ly.k;
        const float *ws = base + Ly.w, *us = base + Ly.u, *las = base + Ly.la;
        __syncthreads();                   /* step n-1 is done with ss, vn, bd, fac and buffer b^1 */
        if (n + 1 < n_end) gdn_state_prefetch(a, Ly, sm, b ^ 1, n + 1, h, col0);
        __pipeline_commit();               /* possibly empty: one group per step */
        if (own) {                         /* S_n for the output kernel */
            float *sn = a.Sb + ((size_t)n * a.H + h) * dk * a.dv + col0;
            for (int i = tid; i < dk * GDN_BV; i += blockDim.x)
                sn[(size_t)(i / GDN_BV) * a.dv + i % GDN_BV] = ss[(i / GDN_BV) * GDN_LDS + i % GDN_BV];
        }
        __pipeline_wait_prior(1);          /* this chunk's copies (all but the newest group) */
        __syncthreads();
        /* Vn = U - W S (rows of this chunk, this block's columns) */
        if (warp < 4) {
            la_acc c;
            wmma::load_matrix_sync(c, us + warp * 16 * GDN_LDS, GDN_LDS, wmma::mem_row_major);
            #pragma unroll
            for (int i = 0; i < c.num_elements; i++) c.x[i] = -c.x[i];
            la_mma_3x<la_a_row, la_b_row>(c, ws + warp * 16 * LDK, LDK, 8, ss, GDN_LDS, (size_t)8 * GDN_LDS, dk);
            #pragma unroll
            for (int i = 0; i < c.num_elements; i++) c.x[i] = -c.x[i];
            wmma::store_matrix_sync(vn + warp * 16 * GDN_LDS, c, GDN_LDS, wmma::mem_row_major);
            if (own)
                wmma::store_matrix_sync(a.Vb + (size_t)(t0 + warp * 16) * ldu + (size_t)h * a.dv + col0, c,
                                        (unsigned)ldu, wmma::mem_row_major);
        }
        if (n + 1 == n_end) break;
        if (warp == 0) {                   /* b_t, then the Khat row factors exp(b_last - b_s) */
            gdn_scan64(bd, (double)las[2 * tid], (double)las[2 * tid + 1]);
            __syncwarp();
            const double bl = bd[LC - 1];
            fac[2 * tid] = expf((float)(bl - bd[2 * tid]));
            fac[2 * tid + 1] = expf((float)(bl - bd[2 * tid + 1]));
        }
        __syncthreads();
        for (int i = tid; i < LC * dk; i += blockDim.x) ks[(i / dk) * LDK + i % dk] *= fac[i / dk];
        __syncthreads();
        /* S = gamma_last S + Khat^T Vn */
        const float gl = expf((float)bd[LC - 1]);
        for (int tile = warp; tile < dk / 16; tile += GDN_ST_WARPS) {
            la_acc c;
            wmma::load_matrix_sync(c, ss + tile * 16 * GDN_LDS, GDN_LDS, wmma::mem_row_major);
            #pragma unroll
            for (int i = 0; i < c.num_elements; i++) c.x[i] *= gl;
            la_mma<la_a_col, la_b_row>(c, ks + tile * 16, LDK, (size_t)8 * LDK, vn, GDN_LDS, (size_t)8 * GDN_LDS, LC);
            wmma::store_matrix_sync(ss + tile * 16 * GDN_LDS, c, GDN_LDS, wmma::mem_row_major);
        }
    }
    __pipeline_wait_prior(0);
}

static size_t gdn_state_smem(int dk) { return gdn_state_make(dk).total * sizeof(float); }

/* ---- output --------------------------------------------------------------------------- */

static size_t gdn_out_smem(int dk, int dv) {
    return sizeof(float) * ((size_t)2 * LC * (dk + 4) + (size_t)LC * (dv + 4) + (size_t)LC * LA_LDA) +
           sizeof(double) * LC;
}

__global__ static void __launch_bounds__(GDN_THREADS) gdn_out_kernel(gdn_args a) {
    LA_SMEM(unsigned char, smb);
    const int dk = a.dk, dv = a.dv, LDK = dk + 4, LDV = dv + 4;
    float *qs = (float *)smb, *ks = qs + LC * LDK, *vs = ks + LC * LDK, *as = vs + LC * LDV;
    double *bd = (double *)(as + LC * LA_LDA);
    const int n = blockIdx.x, h = blockIdx.y, tid = threadIdx.x, warp = tid >> 5;
    const int t0 = n * LC, L = min(LC, a.T - t0);
    la_load_tile(qs, LDK, a.q, (size_t)a.H * dk, (size_t)h * dk, t0, a.T, dk);
    la_load_tile(ks, LDK, a.k, (size_t)a.H * dk, (size_t)h * dk, t0, a.T, dk);
    la_load_tile(vs, LDV, a.Vb, (size_t)a.H * dv, (size_t)h * dv, t0, a.N * LC, dv);
    gdn_cumsum(bd, a, n, h);
    __syncthreads();
    for (int tile = warp; tile < 16; tile += GDN_WARPS) {
        const int rb = tile >> 2, cb = tile & 3;
        if (cb > rb) continue;
        la_acc c;
        wmma::fill_fragment(c, 0.0f);
        la_mma<la_a_row, la_b_col>(c, qs + rb * 16 * LDK, LDK, 8, ks + cb * 16 * LDK, LDK, 8, dk);
        wmma::store_matrix_sync(as + rb * 16 * LA_LDA + cb * 16, c, LA_LDA, wmma::mem_row_major);
    }
    __syncthreads();
    for (int e = tid; e < LC * LC; e += blockDim.x) {
        const int t = e / LC, s = e % LC;
        as[t * LA_LDA + s] = s <= t ? a.scale * expf((float)(bd[t] - bd[s])) * as[t * LA_LDA + s] : 0.0f;
    }
    for (int i = tid; i < LC * dk; i += blockDim.x) {
        const int t = i / dk;
        qs[t * LDK + i % dk] *= a.scale * expf((float)bd[t]);
    }
    __syncthreads();
    const int nbv = dv / 16, ntile = 4 * nbv;
    const float *sn = a.Sb + ((size_t)n * a.H + h) * dk * dv;
    la_acc acc[4];
    #pragma unroll
    for (int u = 0; u < 4; u++) {
        wmma::fill_fragment(acc[u], 0.0f);
        const int tile = warp + GDN_WARPS * u;
        if (tile < ntile) {
            const int rb = tile / nbv, cb = tile % nbv;
            la_mma<la_a_row, la_b_row>(acc[u], as + rb * 16 * LA_LDA, LA_LDA, 8, vs + cb * 16, LDV, (size_t)8 * LDV,
                                       (rb + 1) * 16);
            if (n > 0)                     /* S_0 = 0 (under overlap S_n may be 0 too: stored as such) */
                la_mma<la_a_row, la_b_row>(acc[u], qs + rb * 16 * LDK, LDK, 8, sn + cb * 16, dv, (size_t)8 * dv, dk);
        }
    }
    __syncthreads();                       /* vs becomes the output staging area */
    #pragma unroll
    for (int u = 0; u < 4; u++) {
        const int tile = warp + GDN_WARPS * u;
        if (tile < ntile) {
            const int rb = tile / nbv, cb = tile % nbv;
            wmma::store_matrix_sync(vs + rb * 16 * LDV + cb * 16, acc[u], LDV, wmma::mem_row_major);
        }
    }
    __syncthreads();
    const int q4 = dv >> 2;
    for (int i = tid; i < L * q4; i += blockDim.x) {
        const int t = i / q4, c = (i % q4) * 4;
        *(float4 *)(a.out + (size_t)(t0 + t) * a.H * dv + (size_t)h * dv + c) = *(const float4 *)(vs + t * LDV + c);
    }
}

#endif
