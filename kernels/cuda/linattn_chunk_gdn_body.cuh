/* The kernels of linattn_chunk_gdn.cu (its header comment describes them), apart from its host side
 * so that tests/gpu/la_emu.cpp can run them on the CPU. Internal to kernels/cuda. */
#ifndef HS_LINATTN_CHUNK_GDN_BODY_CUH
#define HS_LINATTN_CHUNK_GDN_BODY_CUH

#include "linattn_chunk_common.cuh"

#include <math.h>

using namespace nvcuda;

#define GDN_THREADS 256
/* The output kernel holds ~170 KB of shared memory (staged), one block a SM: 16 warps rather
 * than 8 halve each warp's chain of tile products (as in the gla output kernel). */
#ifndef GDN_OUT_THREADS
#define GDN_OUT_THREADS 512
#endif
#define GDN_OUT_WARPS (GDN_OUT_THREADS / 32)
#define GDN_OUT_TPW ((4 * (CU_LA_CHUNK_MAXD / 16) + GDN_OUT_WARPS - 1) / GDN_OUT_WARPS)
#define GDN_OUT_QKT ((16 + GDN_OUT_WARPS - 1) / GDN_OUT_WARPS)   /* Q K^T tiles a warp holds */
/* Same-run A/B builds (tests/gpu/la_build.sh LA_VARIANT=gdnout2): -DGDN_OUT_THREADS=256
 * -DGDN_OUT_BLOCKS=2 -DGDN_OUT_STAGED=0 is an 8-warp output kernel with S_n read from global
 * memory, ~102 KB at dk = dv = 128, two blocks a SM (one's loads under the other's products). */
#ifndef GDN_OUT_BLOCKS
#define GDN_OUT_BLOCKS 1
#endif
#ifndef GDN_OUT_STAGED
#define GDN_OUT_STAGED 1
#endif
/* the local and output kernels' values load after what is needed first (k; q and k) and are
 * waited for only before their products (la_build.sh LA_VARIANT=ld1: all in one group) */
#ifndef GDN_V_LATE
#define GDN_V_LATE 1
#endif

static_assert(LC == 64, "gdn_cumsum scans two rows per lane of one warp");
#define GDN_WARPS (GDN_THREADS / 32)
/* The state pass: 8 warps, Vn's product over dk split in two halves (GDN_KS partial sums, added
 * by whoever reads them), so each warp's chain of dependent tile products per step halves.
 * -DGDN_ST_THREADS=128 builds the 4-warp pass (one partial) for same-run comparisons. */
#ifndef GDN_ST_THREADS
#define GDN_ST_THREADS 256
#endif
#define GDN_ST_WARPS (GDN_ST_THREADS / 32)
#define GDN_KS (GDN_ST_WARPS / 4)
static_assert(GDN_ST_WARPS == 4 || GDN_ST_WARPS == 8, "four row tiles of Vn, one or two dk halves");
#define GDN_SUF_THREADS 128      /* the suffix pass: one warp per 16 columns of Y (LC = 64) */
#define GDN_BV 16                /* value columns per state block */
#define GDN_LDS (GDN_BV + 4)

struct gdn_args {
    float *out;
    const float *q, *k, *v, *beta, *la;
    float *Wb, *Ub, *Sb;         /* W [N*LC, H*dk], U [N*LC, H*dv], states [N, H, dk, dv] */
    float *Vb;                   /* Vn = U - W S_n [N*LC, H*dv]: Ub itself without SWLA (in place) */
    /* what the sequential passes take from the local kernel besides W and U: Khat [N*LC, H*dk]
     * (Khat_s = exp(b_last - b_s) k_s, zero past T) and b_last [N, H] (the double sum as float) */
    float *Kh, *Lb;
    int T, H, dk, dv, N;
    int sc, wc;                  /* overlap SWLA: stride and window in chunks (0: no SWLA) */
    /* exact SWLA (window a multiple of LC, B = W/LC - 1 >= 1 full chunks): ke = Tm^T Khat
     * [N*LC, H*dk], block prefix transitions Pf [N, H, dk, dk] (prefix states in Sb), block
     * suffix states Sf [N, H, dk, dv] and transitions Ps [N, H, dk, dk] */
    float *Keb, *Pf, *Sf, *Ps;
    int B;
    float scale;
    /* 1 where the device's shared memory allows (Hopper: 227 KB a block): the output kernel
     * stages S_n in shared memory, the suffix pass double-buffers its tiles */
    int stage;
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
    size_t ks, vs, gm, xm, bet, bd, kh, total;  /* byte offsets */
};

/* Khat's tile (kh) only for exact SWLA, last: without it the kernel takes ~101 KB at
 * dk = dv = 128, so two blocks share an SM and one's loads overlap the other's products. */
__host__ __device__ static gdn_local_layout gdn_local_make(int dk, int dv, bool exact) {
    gdn_local_layout L;
    size_t off = 0;
    L.ks = off; off += sizeof(float) * LC * (dk + 4);
    L.vs = off; off += sizeof(float) * LC * (dv + 4);
    L.gm = off; off += sizeof(float) * LC * LA_LDA;
    L.xm = off; off += sizeof(float) * LC * LA_LDA;
    L.bet = off; off += sizeof(float) * LC;
    L.bd = off; off += sizeof(double) * LC;
    L.kh = off; if (exact) off += sizeof(float) * LC * (dk + 4);
    L.total = off;
    return L;
}

__global__ static void __launch_bounds__(GDN_THREADS) gdn_local_kernel(gdn_args a) {
    LA_SMEM(unsigned char, smb);
    const int dk = a.dk, dv = a.dv, LDK = dk + 4, LDV = dv + 4;
    const gdn_local_layout Ly = gdn_local_make(dk, dv, a.Keb != NULL);
    float *ks = (float *)(smb + Ly.ks), *vs = (float *)(smb + Ly.vs), *gm = (float *)(smb + Ly.gm);
    float *xm = (float *)(smb + Ly.xm), *bet = (float *)(smb + Ly.bet);
    double *bd = (double *)(smb + Ly.bd);
    const int n = blockIdx.x, h = blockIdx.y, tid = threadIdx.x, warp = tid >> 5;
    const int t0 = n * LC;
    /* the two tiles by cp.async, under the gate loads and their scan; v in a group of its own,
     * waited for only before W and U (GDN_V_LATE) */
    la_load_tile_async(ks, LDK, a.k, (size_t)a.H * dk, (size_t)h * dk, t0, a.T, dk);
#if GDN_V_LATE
    __pipeline_commit();
#endif
    la_load_tile_async(vs, LDV, a.v, (size_t)a.H * dv, (size_t)h * dv, t0, a.T, dv);
    __pipeline_commit();
    for (int s = tid; s < LC; s += blockDim.x) bet[s] = t0 + s < a.T ? a.beta[(size_t)(t0 + s) * a.H + h] : 0.0f;
    gdn_cumsum(bd, a, n, h);
#if GDN_V_LATE
    __pipeline_wait_prior(1);            /* k */
#else
    __pipeline_wait_prior(0);
#endif
    __syncthreads();
    /* K K^T, the lower 4 x 4 blocks (the upper ones are not needed). K K^T and W enter the
     * chunk's state transition (gamma_last I - Khat^T W). Exact SWLA multiplies transitions
     * together (the suffix pass), so there both are 3xTF32 and the transition fp32-accurate;
     * elsewhere the state passes read W in 1xTF32 anyway, and 1xTF32 here takes the emulator's
     * error against the double-precision reference at T = 4099 (65 chunks, dk = dv = 128) from
     * 5.96e-4 to 6.31e-4 rel_rms with weak decay, 5.48e-4 to 5.60e-4 with moderate decay (la_check's
     * bound: 3e-3), for a third of the local pass's tensor-core work without the hi/lo splits. */
    const bool x3 = a.Keb != NULL;
    for (int tile = warp; tile < 16; tile += GDN_WARPS) {
        const int rb = tile >> 2, cb = tile & 3;
        if (cb > rb) continue;
        la_acc c;
        wmma::fill_fragment(c, 0.0f);
        la_mma_prec<la_a_row, la_b_col>(x3, c, ks + rb * 16 * LDK, LDK, 8, ks + cb * 16 * LDK, LDK, 8, dk);
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
    /* Tm = X diag(beta); Khat_s = exp(b_last - b_s) k_s to the scratch (the state passes take
     * it and b_last from there, so their sequential steps do no scan and no rescale; exact
     * SWLA: into kh as well), then gamma o K in place of K */
    for (int e = tid; e < LC * LC; e += blockDim.x) xm[(e / LC) * LA_LDA + e % LC] *= bet[e % LC];
    float *kh = (float *)(smb + Ly.kh);
    la_tile_each4(dk, [&](int t, int c) {
        const float f = expf((float)(bd[LC - 1] - bd[t])), g = expf((float)bd[t]);
        float4 x = *(const float4 *)(ks + t * LDK + c);
        const float4 y = make_float4(x.x * f, x.y * f, x.z * f, x.w * f);
        *(float4 *)(a.Kh + (size_t)(t0 + t) * a.H * dk + (size_t)h * dk + c) = y;
        if (a.Keb) *(float4 *)(kh + t * LDK + c) = y;
        x.x *= g; x.y *= g; x.z *= g; x.w *= g;
        *(float4 *)(ks + t * LDK + c) = x;
    });
    if (tid == 0) a.Lb[(size_t)n * a.H + h] = (float)bd[LC - 1];
#if GDN_V_LATE
    __pipeline_wait_prior(0);            /* v */
#endif
    __syncthreads();
    if (a.Keb) {
        /* ke = Tm^T Khat (each source's key carried to the chunk end) */
        for (int tile = warp; tile < 4 * (dk / 16); tile += GDN_WARPS) {
            const int rb = tile / (dk / 16), cb = tile % (dk / 16), k0 = rb * 16; /* Tm^T is upper triangular */
            la_acc c;
            wmma::fill_fragment(c, 0.0f);
            la_mma<la_a_col, la_b_row>(c, xm + k0 * LA_LDA + rb * 16, LA_LDA, (size_t)8 * LA_LDA, kh + (size_t)k0 * LDK + cb * 16,
                                       LDK, (size_t)8 * LDK, LC - k0);
            wmma::store_matrix_sync(a.Keb + (size_t)(t0 + rb * 16) * a.H * dk + (size_t)h * dk + cb * 16, c,
                                    (unsigned)(a.H * dk), wmma::mem_row_major);
        }
    }
    /* W = Tm (gamma o K), U = Tm V (Tm lower triangular: k-range up to the row block) */
    const int nbk = dk / 16, nbv = dv / 16;
    for (int tile = warp; tile < 4 * (nbk + nbv); tile += GDN_WARPS) {
        const bool isw = tile < 4 * nbk;
        const int tt = isw ? tile : tile - 4 * nbk, nb = isw ? nbk : nbv;
        const int rb = tt / nb, cb = tt % nb;
        la_acc c;
        wmma::fill_fragment(c, 0.0f);
        if (isw) {
            la_mma_prec<la_a_row, la_b_row>(x3, c, xm + rb * 16 * LA_LDA, LA_LDA, 8, ks + cb * 16, LDK, (size_t)8 * LDK,
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

/* Shared memory of a state pass: two buffers of W [LC][dk+4], Khat [LC][dk+kpad], U columns
 * [LC][lds] and b_last (chunk n and the prefetch of n+1), the state [dk][lds] and `parts`
 * partial sums of Vn [LC][lds] each (this pass: kpad 4, lds GDN_LDS, GDN_KS parts; the
 * 8-column pass, linattn_chunk_gdn_state8.cuh, its own). */
struct gdn_state_layout {
    size_t buf, w, k, u, lb, ss, vn, total; /* float offsets; w, k, u, lb within a buffer */
};

__host__ __device__ static gdn_state_layout gdn_state_layout_make(int dk, int kpad, int lds, int parts) {
    gdn_state_layout L;
    L.w = 0;
    L.k = L.w + (size_t)LC * (dk + 4);
    L.u = L.k + (size_t)LC * (dk + kpad);
    L.lb = L.u + (size_t)LC * lds;
    L.buf = L.lb + 8;                           /* one buffer; a multiple of 8 floats */
    size_t off = 2 * L.buf;
    L.ss = off; off += (size_t)dk * lds;
    L.vn = off; off += (size_t)parts * LC * lds;
    L.total = off;
    return L;
}

__host__ __device__ static gdn_state_layout gdn_state_make(int dk) { return gdn_state_layout_make(dk, 4, GDN_LDS, GDN_KS); }

/* Chunk n's W, Khat, this block's U columns and b_last into buffer b, by cp.async (rows past T
 * zero-filled; W and U exist for every row of the last chunk). */
__device__ static void gdn_state_prefetch(const gdn_args &a, const gdn_state_layout &Ly, float *sm, int b, int n,
                                          int h, int col0, bool phi) {
    const int dk = a.dk, LDK = dk + 4, t0 = n * LC;
    const size_t ldw = (size_t)a.H * dk, ldu = (size_t)a.H * a.dv;
    float *base = sm + (size_t)b * Ly.buf;
    la_load_tile_async(base + Ly.w, LDK, a.Wb, ldw, (size_t)h * dk, t0, a.N * LC, dk);
    la_load_tile_async(base + Ly.k, LDK, a.Kh, ldw, (size_t)h * dk, t0, a.T, dk);
    for (int i = threadIdx.x; i < LC * (GDN_BV / 4); i += blockDim.x) {
        const int r = i / (GDN_BV / 4), c = (i % (GDN_BV / 4)) * 4;
        /* transition columns (exact SWLA's Phi) have no input: zeros */
        __pipeline_memcpy_async(base + Ly.u + r * GDN_LDS + c, a.Ub + (size_t)(t0 + r) * ldu + (phi ? 0 : (size_t)h * a.dv + col0 + c),
                                16, phi ? 16 : 0);
    }
    if (threadIdx.x == 0) __pipeline_memcpy_async(base + Ly.lb, a.Lb + (size_t)n * a.H + h, 4);
}

/* Everything chunk n+1 needs is copied (cp.async) into the second buffer while chunk n is
 * computed, so the sequential loop waits on memory only when a copy is slower than a step. */
__global__ static void __launch_bounds__(GDN_ST_THREADS, 1) gdn_state_kernel(gdn_args a) {
    LA_SMEM(float, sm);
    const int dk = a.dk, LDK = dk + 4;
    const gdn_state_layout Ly = gdn_state_make(dk);
    float *ss = sm + Ly.ss, *vn = sm + Ly.vn;
    const int cb = blockIdx.x, h = blockIdx.y, tid = threadIdx.x, warp = tid >> 5;
    /* exact SWLA: blocks past dv/16 carry the columns j0.. of the block-prefix transition Phi
     * (started at I, no input) beside the state */
    const bool phi = cb * GDN_BV >= a.dv;
    const int col0 = phi ? 0 : cb * GDN_BV, j0 = phi ? cb * GDN_BV - a.dv : 0;
    const size_t ldu = (size_t)a.H * a.dv;
    /* chunks [n_out, n_end) get their S_n and Vn from this block; without SWLA that is every
     * chunk, with overlap SWLA the chunks of block z, whose recurrence restarts from zero at
     * chunk n_beg = max(0, (z+1) sc - wc) (the spec's restart point in chunks) */
    int n_beg = 0, n_out = 0, n_end = a.N;
    if (a.sc > 0) la_overlap_pass((int)blockIdx.z, a.N, a.sc, a.wc, &n_beg, &n_out, &n_end);
    for (int i = tid; i < dk * GDN_LDS; i += blockDim.x)
        ss[i] = phi && i % GDN_LDS < GDN_BV && i / GDN_LDS == j0 + i % GDN_LDS ? 1.0f : 0.0f;
    gdn_state_prefetch(a, Ly, sm, 0, n_beg, h, col0, phi);
    __pipeline_commit();
    for (int n = n_beg; n < n_end; n++) {
        const int t0 = n * LC, b = (n - n_beg) & 1;
        const bool own = n >= n_out;
        const float *base = sm + (size_t)b * Ly.buf, *ws = base + Ly.w, *ks = base + Ly.k, *us = base + Ly.u;
        __pipeline_wait_prior(0);          /* this thread's copies of chunk n (the only group in flight) */
        __syncthreads();                   /* everyone's have landed; step n-1 is done with ss, vn and buffer b^1 */
        if (n + 1 < n_end) {
            gdn_state_prefetch(a, Ly, sm, b ^ 1, n + 1, h, col0, phi);
            __pipeline_commit();
        }
        if (own) {                         /* S_n (or Phi_n) for the output kernel */
            const int ld = phi ? dk : a.dv;
            float *sn = phi ? a.Pf + ((size_t)n * a.H + h) * dk * dk + j0 : a.Sb + ((size_t)n * a.H + h) * dk * a.dv + col0;
            for (int i = tid; i < dk * GDN_BV; i += blockDim.x)
                sn[(size_t)(i / GDN_BV) * ld + i % GDN_BV] = ss[(i / GDN_BV) * GDN_LDS + i % GDN_BV];
        }
        /* Vn = U - W S (rows of this chunk, this block's columns): warp w takes row tile w % 4
         * and the dk part w / 4; part 0 starts from -U. vn holds the parts, negated back.
         * 1xTF32 (was 3xTF32): the emulator's error against the double-precision reference is
         * unchanged (5.65e-4 -> 5.69e-4 rel_rms at T = 200; the output kernel's TF32 dominates),
         * and the step's chain is a third of the products without the hi/lo splits. */
        {
            const int rt = warp & 3, part = warp >> 2, kp = dk / GDN_KS;
            float *vp = vn + (size_t)part * LC * GDN_LDS + rt * 16 * GDN_LDS;
            la_acc c;
            if (part == 0) {
                wmma::load_matrix_sync(c, us + rt * 16 * GDN_LDS, GDN_LDS, wmma::mem_row_major);
                #pragma unroll
                for (int i = 0; i < c.num_elements; i++) c.x[i] = -c.x[i];
            } else {
                wmma::fill_fragment(c, 0.0f);
            }
            la_mma_ilp<la_a_row, la_b_row>(c, ws + rt * 16 * LDK + part * kp, LDK, 8, ss + (size_t)part * kp * GDN_LDS,
                                          GDN_LDS, (size_t)8 * GDN_LDS, kp);
            #pragma unroll
            for (int i = 0; i < c.num_elements; i++) c.x[i] = -c.x[i];
            wmma::store_matrix_sync(vp, c, GDN_LDS, wmma::mem_row_major);
            if (GDN_KS == 1 && own && a.Vb && !phi)
                wmma::store_matrix_sync(a.Vb + (size_t)(t0 + rt * 16) * ldu + (size_t)h * a.dv + col0, c,
                                        (unsigned)ldu, wmma::mem_row_major);
        }
        if (GDN_KS == 1 && n + 1 == n_end) break;
        __syncthreads();                   /* Vn's parts are whole and every warp is done reading S */
        if (GDN_KS > 1 && own && a.Vb && !phi)
            for (int i = tid; i < LC * GDN_BV; i += blockDim.x) {
                const int r = i / GDN_BV, j = i % GDN_BV;
                a.Vb[(size_t)(t0 + r) * ldu + (size_t)h * a.dv + col0 + j] = vn[r * GDN_LDS + j] + vn[LC * GDN_LDS + r * GDN_LDS + j];
            }
        if (n + 1 == n_end) break;
        /* S = gamma_last S + Khat^T Vn (Khat and b_last from the local kernel) */
        const float gl = expf(base[Ly.lb]);
        for (int tile = warp; tile < dk / 16; tile += GDN_ST_WARPS) {
            la_acc c;
            wmma::load_matrix_sync(c, ss + tile * 16 * GDN_LDS, GDN_LDS, wmma::mem_row_major);
            #pragma unroll
            for (int i = 0; i < c.num_elements; i++) c.x[i] *= gl;
            if (GDN_KS == 1)
                la_mma<la_a_col, la_b_row>(c, ks + tile * 16, LDK, (size_t)8 * LDK, vn, GDN_LDS, (size_t)8 * GDN_LDS, LC);
            else
                la_mma_sumb<la_a_col, la_b_row>(c, ks + tile * 16, LDK, (size_t)8 * LDK, vn, vn + LC * GDN_LDS, GDN_LDS,
                                                (size_t)8 * GDN_LDS, LC);
            wmma::store_matrix_sync(ss + tile * 16 * GDN_LDS, c, GDN_LDS, wmma::mem_row_major);
        }
    }
    __pipeline_wait_prior(0);
}

static size_t gdn_state_smem(int dk) { return gdn_state_make(dk).total * sizeof(float); }

/* ---- output --------------------------------------------------------------------------- */

/* the row stride of the k tile's region, which then holds the chunk's matrix [LC][LA_LDA] */
__host__ __device__ static int gdn_out_ldka(int dk) { return dk + 4 > LA_LDA ? dk + 4 : LA_LDA; }

/* q [LC][dk+4], k (then the chunk's matrix) [LC][gdn_out_ldka], V [LC][dv+4], S_n [dk][dv+4]
 * (staged only), then b. */
static size_t gdn_out_smem(int dk, int dv, int stage) {
    return sizeof(float) * ((size_t)LC * (dk + 4) + (size_t)LC * gdn_out_ldka(dk) + (size_t)LC * (dv + 4) +
                            (stage && GDN_OUT_STAGED ? (size_t)dk * (dv + 4) : 0)) +
           sizeof(double) * LC;
}

__global__ static void __launch_bounds__(GDN_OUT_THREADS, GDN_OUT_BLOCKS) gdn_out_kernel(gdn_args a) {
    LA_SMEM(unsigned char, smb);
    const int dk = a.dk, dv = a.dv, LDK = dk + 4, LDV = dv + 4;
    const bool stage = GDN_OUT_STAGED && a.stage;
    /* the chunk's matrix M takes the k tile's place: K is dead once Q K^T is in registers, and
     * the 17 KB saved is what lets two 8-warp blocks share a SM unstaged (GDN_OUT_BLOCKS) */
    float *qs = (float *)smb, *ks = qs + LC * LDK, *as = ks, *vs = ks + LC * gdn_out_ldka(dk), *ss = vs + LC * LDV;
    double *bd = (double *)(ss + (stage ? dk * LDV : 0));
    const int n = blockIdx.x, h = blockIdx.y, tid = threadIdx.x, warp = tid >> 5;
    const int t0 = n * LC, L = min(LC, a.T - t0);
    /* q and k in one round trip (cp.async: with one block a SM nothing else hides a load's
     * latency), then the chunk's new values and S_n in a second group that lands under the
     * intra-chunk product, so neither A V nor the last product's k-slices wait on global memory
     * (GDN_V_LATE 0: the values with q and k, before session 22) */
    la_load_tile_async(qs, LDK, a.q, (size_t)a.H * dk, (size_t)h * dk, t0, a.T, dk);
    la_load_tile_async(ks, LDK, a.k, (size_t)a.H * dk, (size_t)h * dk, t0, a.T, dk);
#if !GDN_V_LATE
    la_load_tile_async(vs, LDV, a.Vb, (size_t)a.H * dv, (size_t)h * dv, t0, a.N * LC, dv);
#endif
    __pipeline_commit();
#if GDN_V_LATE
    la_load_tile_async(vs, LDV, a.Vb, (size_t)a.H * dv, (size_t)h * dv, t0, a.N * LC, dv);
#endif
    const float *sn = a.Sb + ((size_t)n * a.H + h) * dk * dv;
    if (stage && n > 0)
        la_rows_each4(dk, dv, [&](int r, int c) { __pipeline_memcpy_async(ss + r * LDV + c, sn + (size_t)r * dv + c, 16); });
    __pipeline_commit();
    gdn_cumsum(bd, a, n, h);
    __pipeline_wait_prior(1);              /* q, k (the values and S_n may still be in flight) */
    __syncthreads();
    {
        la_acc qk[GDN_OUT_QKT];
        #pragma unroll
        for (int u = 0; u < GDN_OUT_QKT; u++) {
            const int tile = warp + GDN_OUT_WARPS * u, rb = tile >> 2, cb = tile & 3;
            if (tile < 16 && cb <= rb) {
                wmma::fill_fragment(qk[u], 0.0f);
                la_mma<la_a_row, la_b_col>(qk[u], qs + rb * 16 * LDK, LDK, 8, ks + cb * 16 * LDK, LDK, 8, dk);
            }
        }
        __syncthreads();                   /* every warp is done reading k: M overwrites it */
        #pragma unroll
        for (int u = 0; u < GDN_OUT_QKT; u++) {
            const int tile = warp + GDN_OUT_WARPS * u, rb = tile >> 2, cb = tile & 3;
            if (tile < 16 && cb <= rb)
                wmma::store_matrix_sync(as + rb * 16 * LA_LDA + cb * 16, qk[u], LA_LDA, wmma::mem_row_major);
        }
    }
    __syncthreads();
    for (int e = tid; e < LC * LC; e += blockDim.x) {
        const int t = e / LC, s = e % LC;
        as[t * LA_LDA + s] = s <= t ? a.scale * expf((float)(bd[t] - bd[s])) * as[t * LA_LDA + s] : 0.0f;
    }
    la_tile_each4(dk, [&](int t, int c) {
        const float f = a.scale * expf((float)bd[t]);
        la_mul4(qs + t * LDK + c, make_float4(f, f, f, f));
    });
    __pipeline_wait_prior(0);              /* this thread's part of the values and S_n; the barrier makes them whole */
    __syncthreads();
    const int nbv = dv / 16, ntile = 4 * nbv;
    la_acc acc[GDN_OUT_TPW];
    #pragma unroll
    for (int u = 0; u < GDN_OUT_TPW; u++) {
        wmma::fill_fragment(acc[u], 0.0f);
        const int tile = warp + GDN_OUT_WARPS * u;
        if (tile < ntile) {
            const int rb = tile / nbv, cb = tile % nbv;
            la_mma<la_a_row, la_b_row>(acc[u], as + rb * 16 * LA_LDA, LA_LDA, 8, vs + cb * 16, LDV, (size_t)8 * LDV,
                                       (rb + 1) * 16);
            if (n > 0)                     /* S_0 = 0 (under overlap S_n may be 0 too: stored as such) */
                la_mma<la_a_row, la_b_row>(acc[u], qs + rb * 16 * LDK, LDK, 8, stage ? ss + cb * 16 : sn + cb * 16,
                                           stage ? LDV : dv, (size_t)8 * (stage ? LDV : dv), dk);
        }
    }
    __syncthreads();                       /* vs becomes the output staging area */
    #pragma unroll
    for (int u = 0; u < GDN_OUT_TPW; u++) {
        const int tile = warp + GDN_OUT_WARPS * u;
        if (tile < ntile) {
            const int rb = tile / nbv, cb = tile % nbv;
            wmma::store_matrix_sync(vs + rb * 16 * LDV + cb * 16, acc[u], LDV, wmma::mem_row_major);
        }
    }
    __syncthreads();
    la_rows_each4(L, dv, [&](int t, int c) {
        *(float4 *)(a.out + (size_t)(t0 + t) * a.H * dv + (size_t)h * dv + c) = *(const float4 *)(vs + t * LDV + c);
    });
}

/* ---- exact SWLA (window W = (B+1) LC): block suffixes and the windowed output --------------
 * Blocks of B chunks. Query chunk n (n >= B) sees in full the chunks [n-B, n-1], which are a
 * suffix of the block before n's block (start b = n - n % B) and a prefix of n's block:
 *   Z_n = Pf_n Sf(n-B) + Sp_n,  Pf_n = P_{n-1} ... P_b (I at n = b), Sp_n = the state from
 *   [b, n-1] restarted at b (the prefix pass, gdn_state_kernel with restarts every B chunks),
 *   Sf(j) = the state at the end of the earlier block from its chunks [j, end] (suffix pass).
 * The chunk n-B-1 is cut by the window edge: query t sees its sources s >= t - W + 1 with
 * coefficient X_t . ke_s, X = qe Pf_n Ps(n-B), Ps(j) = P_end ... P_j. The chunk's own part
 * is M U (= (M Tm) V) and the state enters through qe = Qt - M W (the form of gdn.c).
 * Chunks n < B see everything before them: Z_n = Sp_n, nothing cut. */

/* Suffix pass: one block per 16 rows of Ps/Sf, head and chunk block z, backwards over the
 * block's chunks j: Y = Ps(j+1) Khat_j^T, Sf(j) = Sf(j+1) + Y U_j, Ps(j) = gamma_j Ps(j+1) - Y W_j
 * (Ps(end+1) = I, Sf(end+1) = 0). */
/* Two buffers of {Khat, W, U} (chunk j and the prefetch of j-1) where they fit (db: 215 KB at
 * dk = dv = 128, within Hopper's 227 KB a block), so a chunk's loads overlap the previous one's
 * products; else one, loaded after each chunk's products. */
struct gdn_suffix_layout {
    size_t ps, sf, y, b0, buf, ks, ws, us, total;  /* float offsets; the buffers from b0, buf apart; ks, ws, us within one */
};

__host__ __device__ static gdn_suffix_layout gdn_suffix_make(int dk, int dv, int db) {
    gdn_suffix_layout L;
    size_t off = 0;
    L.ps = off; off += (size_t)16 * (dk + 4);
    L.sf = off; off += (size_t)16 * (dv + 4);
    L.y = off; off += (size_t)16 * LA_LDA;
    L.b0 = off;
    L.ks = 0;
    L.ws = L.ks + (size_t)LC * (dk + 4);
    L.us = L.ws + (size_t)LC * (dk + 4);
    L.buf = L.us + (size_t)LC * (dv + 4);
    off += (db ? 2 : 1) * L.buf;
    L.total = off;
    return L;
}

__device__ static void gdn_suffix_prefetch(const gdn_args &a, const gdn_suffix_layout &Ly, float *buf, int j, int h) {
    const int dk = a.dk, dv = a.dv, t0 = j * LC;
    la_load_tile_async(buf + Ly.ks, dk + 4, a.Kh, (size_t)a.H * dk, (size_t)h * dk, t0, a.T, dk);  /* Khat_j */
    la_load_tile_async(buf + Ly.ws, dk + 4, a.Wb, (size_t)a.H * dk, (size_t)h * dk, t0, a.N * LC, dk);
    la_load_tile_async(buf + Ly.us, dv + 4, a.Ub, (size_t)a.H * dv, (size_t)h * dv, t0, a.N * LC, dv);
}

__global__ static void __launch_bounds__(GDN_SUF_THREADS) gdn_suffix_kernel(gdn_args a) {
    LA_SMEM(float, sm);
    const int dk = a.dk, dv = a.dv, LDK = dk + 4, LDV = dv + 4;
    const gdn_suffix_layout Ly = gdn_suffix_make(dk, dv, a.stage);
    const int db = a.stage;
    float *ps = sm + Ly.ps, *sf = sm + Ly.sf, *y = sm + Ly.y, *bufs = sm + Ly.b0;
    const int r0 = blockIdx.x * 16, h = blockIdx.y, z = blockIdx.z, tid = threadIdx.x, warp = tid >> 5;
    const int j_beg = z * a.B, j_end = min(a.N, j_beg + a.B);
    for (int i = tid; i < 16 * LDK; i += blockDim.x) ps[i] = i % LDK == r0 + i / LDK ? 1.0f : 0.0f;
    for (int i = tid; i < 16 * LDV; i += blockDim.x) sf[i] = 0.0f;
    if (j_end > j_beg) gdn_suffix_prefetch(a, Ly, bufs, j_end - 1, h);
    __pipeline_commit();
    for (int j = j_end - 1; j >= j_beg; j--) {
        const float *buf = bufs + (size_t)(db ? (j_end - 1 - j) & 1 : 0) * Ly.buf;
        const float *ks = buf + Ly.ks, *ws = buf + Ly.ws, *us = buf + Ly.us;
        __pipeline_wait_prior(0);          /* this thread's copies of chunk j (the only group in flight) */
        __syncthreads();                   /* everyone's have landed; chunk j+1 is done with y and the other buffer */
        if (db && j > j_beg) {
            gdn_suffix_prefetch(a, Ly, bufs + (size_t)((j_end - j) & 1) * Ly.buf, j - 1, h);
            __pipeline_commit();
        }
        /* Y = Ps Khat^T (16 x LC), 3xTF32: Ps is a product of transitions */
        {
            la_acc c;
            wmma::fill_fragment(c, 0.0f);
            la_mma_3x<la_a_row, la_b_col>(c, ps, LDK, 8, ks + warp * 16 * LDK, LDK, 8, dk);
            wmma::store_matrix_sync(y + warp * 16, c, LA_LDA, wmma::mem_row_major);
        }
        __syncthreads();
        const float gj = expf(a.Lb[(size_t)j * a.H + h]);
        /* Sf += Y U (each warp its own column tiles) and Ps = gamma Ps - Y W */
        for (int tile = warp; tile < dv / 16 + dk / 16; tile += GDN_SUF_THREADS / 32) {
            const bool isf = tile < dv / 16;
            const int cb = isf ? tile : tile - dv / 16;
            float *dst = isf ? sf + cb * 16 : ps + cb * 16;
            const unsigned ld = isf ? LDV : LDK;
            la_acc c;
            wmma::load_matrix_sync(c, dst, ld, wmma::mem_row_major);
            if (isf) {
                la_mma<la_a_row, la_b_row>(c, y, LA_LDA, 8, us + cb * 16, LDV, (size_t)8 * LDV, LC);
            } else {
                #pragma unroll
                for (int i = 0; i < c.num_elements; i++) c.x[i] = -gj * c.x[i];
                la_mma_3x<la_a_row, la_b_row>(c, y, LA_LDA, 8, ws + cb * 16, LDK, (size_t)8 * LDK, LC);
                #pragma unroll
                for (int i = 0; i < c.num_elements; i++) c.x[i] = -c.x[i];
            }
            wmma::store_matrix_sync(dst, c, ld, wmma::mem_row_major);
        }
        __syncthreads();
        if (!db && j > j_beg) {            /* every warp is done with the one buffer */
            gdn_suffix_prefetch(a, Ly, bufs, j - 1, h);
            __pipeline_commit();
        }
        float *sfg = a.Sf + ((size_t)j * a.H + h) * dk * dv + (size_t)r0 * dv;
        float *psg = a.Ps + ((size_t)j * a.H + h) * dk * dk + (size_t)r0 * dk;
        la_rows_each4(16, dv, [&](int r, int c) {
            for (int u = 0; u < 4; u++) sfg[(size_t)r * dv + c + u] = sf[r * LDV + c + u];
        });
        la_rows_each4(16, dk, [&](int r, int c) {
            for (int u = 0; u < 4; u++) psg[(size_t)r * dk + c + u] = ps[r * LDK + c + u];
        });
    }
}

/* Output under exact SWLA, one block per chunk and head. */
struct gdn_ox_layout {
    size_t qs, xs, ks, as, bd, lo, total;  /* float offsets */
};

__host__ __device__ static gdn_ox_layout gdn_ox_make(int dk, int dv) {
    gdn_ox_layout L;
    (void)dv;
    size_t off = 0;
    L.qs = off; off += (size_t)LC * (dk + 4);
    L.xs = off; off += (size_t)LC * (dk + 4);
    L.ks = off; off += (size_t)LC * (dk + 4);
    L.as = off; off += (size_t)LC * LA_LDA;
    L.bd = off; off += 2 * LC;
    L.lo = off; off += LC;
    L.total = off;
    return L;
}

__global__ static void __launch_bounds__(GDN_THREADS) gdn_out_exact_kernel(gdn_args a) {
    LA_SMEM(float, sm);
    const int dk = a.dk, dv = a.dv, LDK = dk + 4;
    const gdn_ox_layout Ly = gdn_ox_make(dk, dv);
    float *qs = sm + Ly.qs, *xs = sm + Ly.xs, *ks = sm + Ly.ks, *as = sm + Ly.as;
    double *bd = (double *)(sm + Ly.bd);
    int *lo = (int *)(sm + Ly.lo);
    const int n = blockIdx.x, h = blockIdx.y, tid = threadIdx.x, warp = tid >> 5;
    const int t0 = n * LC, L = min(LC, a.T - t0), W = (a.B + 1) * LC;
    const size_t ldk = (size_t)a.H * dk, ldv = (size_t)a.H * dv;
    la_load_tile(qs, LDK, a.q, ldk, (size_t)h * dk, t0, a.T, dk);
    la_load_tile(ks, LDK, a.k, ldk, (size_t)h * dk, t0, a.T, dk);
    for (int t = tid; t < LC; t += blockDim.x) lo[t] = (int)la_chunk_lo((long)t0 + t, CU_SWLA_EXACT, W, 0);
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
    /* M (lower, diagonal included) and Qt */
    for (int e = tid; e < LC * LC; e += blockDim.x) {
        const int t = e / LC, s = e % LC;
        as[t * LA_LDA + s] = s <= t ? a.scale * expf((float)(bd[t] - bd[s])) * as[t * LA_LDA + s] : 0.0f;
    }
    la_tile_each4(dk, [&](int t, int c) {
        const float f = a.scale * expf((float)bd[t]);
        for (int u = 0; u < 4; u++) qs[t * LDK + c + u] *= f;
    });
    __syncthreads();
    /* qe = Qt - M W (through xs) */
    const float *wg = a.Wb + (size_t)t0 * ldk + (size_t)h * dk;
    for (int tile = warp; tile < 4 * (dk / 16); tile += GDN_WARPS) {
        const int rb = tile / (dk / 16), cb = tile % (dk / 16);
        la_acc c;
        wmma::load_matrix_sync(c, qs + rb * 16 * LDK + cb * 16, LDK, wmma::mem_row_major);
        #pragma unroll
        for (int i = 0; i < c.num_elements; i++) c.x[i] = -c.x[i];
        la_mma<la_a_row, la_b_row>(c, as + rb * 16 * LA_LDA, LA_LDA, 8, wg + cb * 16, (unsigned)ldk, (size_t)8 * ldk,
                                   (rb + 1) * 16);
        #pragma unroll
        for (int i = 0; i < c.num_elements; i++) c.x[i] = -c.x[i];
        wmma::store_matrix_sync(xs + rb * 16 * LDK + cb * 16, c, LDK, wmma::mem_row_major);
    }
    __syncthreads();
    la_tile_each4(dk, [&](int t, int c) {
        for (int u = 0; u < 4; u++) qs[t * LDK + c + u] = xs[t * LDK + c + u];
    });
    __syncthreads();
    /* qs = qe. o = M U (the chunk's own sources: W >= 2 LC never cuts into it) + qe Sp_n
     * (+ X1 Sf(n-B) with X1 = qe Pf_n, for n >= B) */
    const int nbv = dv / 16, ntile = 4 * nbv;
    const float *ug = a.Ub + (size_t)t0 * ldv + (size_t)h * dv;
    const float *spg = a.Sb + ((size_t)n * a.H + h) * dk * dv;
    const bool cut = n >= a.B;
    la_acc acc[4];
    #pragma unroll
    for (int u = 0; u < 4; u++) {
        wmma::fill_fragment(acc[u], 0.0f);
        const int tile = warp + GDN_WARPS * u;
        if (tile < ntile) {
            const int rb = tile / nbv, cb = tile % nbv;
            la_mma<la_a_row, la_b_row>(acc[u], as + rb * 16 * LA_LDA, LA_LDA, 8, ug + cb * 16, (unsigned)ldv, (size_t)8 * ldv,
                                       (rb + 1) * 16);
            if (n > 0)
                la_mma<la_a_row, la_b_row>(acc[u], qs + rb * 16 * LDK, LDK, 8, spg + cb * 16, (unsigned)dv, (size_t)8 * dv, dk);
        }
    }
    if (cut) {
        const float *pfg = a.Pf + ((size_t)n * a.H + h) * dk * dk;
        const float *sfg = a.Sf + ((size_t)(n - a.B) * a.H + h) * dk * dv;
        const float *psg = a.Ps + ((size_t)(n - a.B) * a.H + h) * dk * dk;
        /* X1 = qe Pf_n into xs */
        for (int tile = warp; tile < 4 * (dk / 16); tile += GDN_WARPS) {
            const int rb = tile / (dk / 16), cb = tile % (dk / 16);
            la_acc c;
            wmma::fill_fragment(c, 0.0f);
            la_mma<la_a_row, la_b_row>(c, qs + rb * 16 * LDK, LDK, 8, pfg + cb * 16, (unsigned)dk, (size_t)8 * dk, dk);
            wmma::store_matrix_sync(xs + rb * 16 * LDK + cb * 16, c, LDK, wmma::mem_row_major);
        }
        __syncthreads();
        #pragma unroll
        for (int u = 0; u < 4; u++) {
            const int tile = warp + GDN_WARPS * u;
            if (tile < ntile) {
                const int rb = tile / nbv, cb = tile % nbv;
                la_mma<la_a_row, la_b_row>(acc[u], xs + rb * 16 * LDK, LDK, 8, sfg + cb * 16, (unsigned)dv, (size_t)8 * dv, dk);
            }
        }
        /* X = X1 Ps(n-B) into qs (qe is done with), then the cut chunk p = n-B-1 */
        __syncthreads();
        for (int tile = warp; tile < 4 * (dk / 16); tile += GDN_WARPS) {
            const int rb = tile / (dk / 16), cb = tile % (dk / 16);
            la_acc c;
            wmma::fill_fragment(c, 0.0f);
            la_mma<la_a_row, la_b_row>(c, xs + rb * 16 * LDK, LDK, 8, psg + cb * 16, (unsigned)dk, (size_t)8 * dk, dk);
            wmma::store_matrix_sync(qs + rb * 16 * LDK + cb * 16, c, LDK, wmma::mem_row_major);
        }
        const int p = n - a.B - 1;
        if (p >= 0) {
            const float *keg = a.Keb + (size_t)p * LC * ldk + (size_t)h * dk;
            __syncthreads();
            for (int tile = warp; tile < 16; tile += GDN_WARPS) {
                const int rb = tile >> 2, cb = tile & 3;
                la_acc c;
                wmma::fill_fragment(c, 0.0f);
                if (cb >= rb)   /* query row t sees key rows s > t of chunk p (W a multiple of LC) */
                    la_mma<la_a_row, la_b_col>(c, qs + rb * 16 * LDK, LDK, 8, keg + (size_t)cb * 16 * ldk, (unsigned)ldk, 8, dk);
                wmma::store_matrix_sync(as + rb * 16 * LA_LDA + cb * 16, c, LA_LDA, wmma::mem_row_major);
            }
            __syncthreads();
            for (int e = tid; e < LC * LC; e += blockDim.x) {
                const int t = e / LC, s = e % LC;
                if ((long)p * LC + s < lo[t]) as[t * LA_LDA + s] = 0.0f;
            }
            __syncthreads();
            const float *vg = a.v + (size_t)p * LC * ldv + (size_t)h * dv;
            #pragma unroll
            for (int u = 0; u < 4; u++) {
                const int tile = warp + GDN_WARPS * u;
                if (tile < ntile) {
                    const int rb = tile / nbv, cb = tile % nbv;
                    la_mma<la_a_row, la_b_row>(acc[u], as + rb * 16 * LA_LDA + rb * 16, LA_LDA, 8,
                                               vg + (size_t)rb * 16 * ldv + cb * 16, (unsigned)ldv, (size_t)8 * ldv, LC - rb * 16);
                }
            }
        }
    }
    __syncthreads();                       /* xs becomes the output staging area (dv <= dk + 4 not assumed: rows of dv) */
    float *stage = xs;                     /* LC x (dk + 4) floats; the output goes through in two halves if dv > dk */
    for (int c0 = 0; c0 < dv; c0 += dk) {
        #pragma unroll
        for (int u = 0; u < 4; u++) {
            const int tile = warp + GDN_WARPS * u;
            if (tile < ntile) {
                const int rb = tile / nbv, cb = tile % nbv;
                if (cb * 16 >= c0 && cb * 16 < c0 + dk)
                    wmma::store_matrix_sync(stage + rb * 16 * LDK + (cb * 16 - c0), acc[u], LDK, wmma::mem_row_major);
            }
        }
        __syncthreads();
        const int w = min(dk, dv - c0);
        for (int i = tid; i < L * w; i += blockDim.x) {
            const int t = i / w, c = i % w;
            a.out[(size_t)(t0 + t) * ldv + (size_t)h * dv + c0 + c] = stage[t * LDK + c];
        }
        __syncthreads();
    }
}

/* ---- scratch layout (shared by the host side and tests/gpu/la_emu.cpp) ------------------ */

static size_t gdn_align256(size_t n) { return (n + 255) / 256 * 256; }

/* Bytes of scratch: states, W, Khat, U and Vn, b_last, and for exact SWLA ke, Pf, Sf, Ps. */
static size_t gdn_work_bytes(int T, int H, int dk, int dv) {
    const size_t N = ((size_t)T + LC - 1) / LC, st = gdn_align256(N * H * dk * dv * 4), tr = gdn_align256(N * H * dk * dk * 4);
    return 2 * st + 2 * tr + gdn_align256(N * LC * H * dk * 4) * 3 + gdn_align256(2 * N * LC * H * dv * 4) +
           gdn_align256(N * H * 4);
}

/* Points a's scratch arrays into work and sets the SWLA fields (the modes cu_gdn_chunk takes). */
static void gdn_carve(gdn_args &a, void *work, int swla, int W, int S) {
    const size_t N = (size_t)a.N, H = (size_t)a.H, dk = (size_t)a.dk, dv = (size_t)a.dv;
    char *p = (char *)work;
    a.Sb = (float *)p; p += gdn_align256(N * H * dk * dv * 4);
    a.Wb = (float *)p; p += gdn_align256(N * LC * H * dk * 4);
    a.Kh = (float *)p; p += gdn_align256(N * LC * H * dk * 4);
    a.Ub = (float *)p; p += gdn_align256(2 * N * LC * H * dv * 4);
    a.Lb = (float *)p; p += gdn_align256(N * H * 4);
    a.Keb = a.Pf = a.Sf = a.Ps = NULL;
    a.sc = a.wc = a.B = 0;
    /* without SWLA Vn overwrites U; with it U must outlive the pass */
    a.Vb = swla == CU_SWLA_OVERLAP ? a.Ub + N * LC * H * dv : swla == CU_SWLA_EXACT ? NULL : a.Ub;
    if (swla == CU_SWLA_OVERLAP) { a.sc = S / LC; a.wc = W / LC; }
    if (swla == CU_SWLA_EXACT) {
        a.B = W / LC - 1;
        a.sc = a.wc = a.B;       /* the prefix pass restarts every B chunks */
        a.Keb = (float *)p; p += gdn_align256(N * LC * H * dk * 4);
        a.Pf = (float *)p; p += gdn_align256(N * H * dk * dk * 4);
        a.Ps = (float *)p; p += gdn_align256(N * H * dk * dk * 4);
        a.Sf = (float *)p;
    }
}

#endif
