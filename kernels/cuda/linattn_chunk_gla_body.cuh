/* The kernels of linattn_chunk.cu (its header comment describes them), apart from its host side
 * so that tests/gpu/la_emu.cpp can run them on the CPU. Internal to kernels/cuda. */
#ifndef HS_LINATTN_CHUNK_GLA_BODY_CUH
#define HS_LINATTN_CHUNK_GLA_BODY_CUH

#include "linattn_chunk_common.cuh"

#include <math.h>
#include <stdlib.h>
#include <string.h>

using namespace nvcuda;

/* The output kernel holds ~150 KB of shared memory, so one block runs per SM and its own warps
 * must hide every latency: 16 warps rather than 8 halve each warp's serial chain of tile
 * products and row walks. (-DGLA_THREADS=256 builds the 8-warp kernel for comparison.) */
#ifndef GLA_THREADS
#define GLA_THREADS 512
#endif
#define GLA_WARPS (GLA_THREADS / 32)
#define GLA_SCR 1152             /* per-warp scratch floats: two 16 x 36 slabs */
#define GLA_OFFDIAG 6            /* warps that build the 6 off-diagonal 16 x 16 blocks */
/* A diagonal 16 x 16 block as a tile product like the off-diagonal ones, q_t 2^(b_t - b_r) and
 * k_s 2^(b_r - b_s) about its last row r: the q factor grows up to 2^(the block's decay), so the
 * block is factored only while every channel decays by at most 2^GLA_DIAG_SPAN across it (the
 * entries above the diagonal, zeroed after, stay finite too), else every diagonal block is taken
 * pairwise. Factored: 4 x 16 x 128 x 2 exps a chunk instead of 4 x 136 x 128 (~4.5 us of the
 * MUFU's time a block on the H100, out of ~40), in the off-diagonal phase (GLA_DIAG_OWN). */
#ifndef GLA_DIAG_SPAN
#define GLA_DIAG_SPAN 48.0
#endif
/* Unstaged (plain on Hopper), warps 6-9 build the diagonal blocks alongside the off-diagonal
 * ones, each with a scratch of its own (+18 KB, ~196 KB a block); staged, the shared memory
 * has no room for those, so warps 0-3 build them after their off-diagonal block. */
/* the local and output kernels' first loads as cp.async groups waited for as they are needed (1:
 * one group waited for at once, before session 22) */
#ifndef GLA_LOAD_GROUPS
#define GLA_LOAD_GROUPS 3
#endif
#define GLA_DIAG_OWN (GLA_WARPS >= GLA_OFFDIAG + 4 ? 4 : 0)
/* output tiles (4 row blocks x dv/16) per warp, at most */
#define GLA_TPW ((4 * (CU_LA_CHUNK_MAXD / 16) + GLA_WARPS - 1) / GLA_WARPS)
static_assert(GLA_WARPS >= GLA_OFFDIAG, "one warp per off-diagonal block");
/* the output kernel stages Z (dk x (dv + 4) floats) over ks and bs (2 LC (dk + 4)) */
static_assert(CU_LA_CHUNK_MAXD <= 2 * LC, "Z fits over ks and bs");

struct gla_args {
    float *out;
    const float *q, *k, *v, *gk;
    float *U, *Z, *P, *Lz;       /* chunk contributions, carried states, log decays, window log decays */
    float *Kh;                   /* SWLA: Khat of every chunk [N*LC, H*dk] for the cut chunks (else NULL) */
    /* SWLA by state differences (HS_CUDA_GLA_SWLA_DIFF=1, then Lz is NULL): the plain scan
     * stores every chunk's full state in Z and here the prefix sums of P, C_n = P_0 + ... +
     * P_{n-1} in double, and the output kernel takes the windowed state as
     * Z_n - exp(C_n - C_fz) Z_fz (else NULL) */
    double *Cz;
    int T, H, dk, dv, N, swla, W, S;
    float scale;
    /* under SWLA, where the device's shared memory allows (Hopper: 227 KB a block): 1, the
     * output kernel prefetches the newest cut chunk's Khat and v into tiles of their own; 2, it
     * also builds that chunk's products early (GLA_CUT_WARPS below); 0 neither */
    int stage;
    int diag_pairwise;           /* 1: the diagonal blocks pairwise always (HS_CUDA_GLA_DIAG=pairwise, A/B) */
};

/* ---- local: the chunk's decay and own state contribution ------------------------------ */

static size_t gla_local_smem(int dk, int dv) {
    return sizeof(float) * ((size_t)2 * LC * (dk + 4) + (size_t)LC * (dv + 4));
}

__global__ static void __launch_bounds__(GLA_THREADS) gla_local_kernel(gla_args a) {
    LA_SMEM(float, sm);
    const int dk = a.dk, dv = a.dv, LDK = dk + 4, LDV = dv + 4;
    float *ks = sm, *gs = ks + LC * LDK, *vs = gs + LC * LDK;
    const int n = blockIdx.x, h = blockIdx.y, warp = threadIdx.x >> 5;
    const int t0 = n * LC;
    /* k and gk first (the suffix pass), v after (for U only), as in the output kernel */
    la_load_tile_async(ks, LDK, a.k, (size_t)a.H * dk, (size_t)h * dk, t0, a.T, dk);
    la_load_tile_async(gs, LDK, a.gk, (size_t)a.H * dk, (size_t)h * dk, t0, a.T, dk);
#if GLA_LOAD_GROUPS > 1
    __pipeline_commit();
#endif
    la_load_tile_async(vs, LDV, a.v, (size_t)a.H * dv, (size_t)h * dv, t0, a.T, dv);
    __pipeline_commit();
#if GLA_LOAD_GROUPS > 1
    __pipeline_wait_prior(1);
#else
    __pipeline_wait_prior(0);
#endif
    __syncthreads();
    /* Khat_s = k_s exp(sum of g over the rows after s): one pass from the chunk's end (the
     * suffix sum itself, not the total minus a prefix: one serial walk instead of two). Rows
     * past T hold gk = 0 and k = 0: they add nothing to the sums. */
    for (int c = threadIdx.x; c < dk; c += blockDim.x) {
        double suf = 0.0;
        for (int s = LC - 1; s >= 0; s--) {
            ks[s * LDK + c] *= la_exp2((float)(suf * LA_LOG2E));
            suf += gs[s * LDK + c];
        }
        a.P[((size_t)n * a.H + h) * dk + c] = (float)suf;
    }
#if GLA_LOAD_GROUPS > 1
    __pipeline_wait_prior(0);            /* v */
#endif
    __syncthreads();
    if (a.Kh) {                  /* SWLA: the output kernel reads Khat of the chunks a window edge cuts */
        la_tile_each4(dk, [&](int r, int c) {
            *(float4 *)(a.Kh + (size_t)(t0 + r) * a.H * dk + (size_t)h * dk + c) = *(const float4 *)(ks + r * LDK + c);
        });
    }
    const int nbv = dv / 16, ntile = (dk / 16) * nbv;
    float *u = a.U + ((size_t)n * a.H + h) * dk * dv;
    for (int tile = warp; tile < ntile; tile += GLA_WARPS) {
        const int i0 = tile / nbv * 16, j0 = tile % nbv * 16;
        la_acc acc;
        wmma::fill_fragment(acc, 0.0f);
        /* U[i][j] = sum_s Khat[s][i] V[s][j]: A = Khat^T read column-major from ks */
        la_mma<la_a_col, la_b_row>(acc, ks + i0, LDK, (size_t)8 * LDK, vs + j0, LDV, (size_t)8 * LDV, LC);
        wmma::store_matrix_sync(u + (size_t)i0 * dv + j0, acc, dv, wmma::mem_row_major);
    }
}

/* ---- scan: carried states, one thread per element -------------------------------------- */

/* chunks of U and P loaded ahead (loads in flight per thread): the scan streams U in and Z
 * out once, so it is as fast as the bytes in flight allow (Little's law: ~3.5 MB at the H200's
 * bandwidth and latency; 131K threads x 8 x 4 B at 8 heads x 128 x 128) */
#ifndef GLA_PF
#define GLA_PF 8
#endif
#ifndef GLA_DPF
#define GLA_DPF 4                /* overlap SWLA: steps ahead the dropped chunks' U and P are loaded */
#endif
#ifndef GLA_DPF_EXACT
/* exact SWLA: 8 ahead (its kernel has no burst loop's registers; 128 registers, 4 bytes
 * spilled): exact's row at 64K 3.620 -> 3.479 ms on the H100 with plain's unchanged (session 22) */
#define GLA_DPF_EXACT 8
#endif
#ifndef GLA_BURST
#define GLA_BURST 4              /* SWLA overlap: a burst's dropped chunks loaded together */
#endif
/* No cache hints on the scan's loads and stores: session 21 measured st.cs on Z and ld.cs on the
 * dropped U (so that the window's second read of U might hit the L2) on the H100 at 64K, and the
 * L2 hit rate did not move (36.5% against 35.5%) while plain lost 5% (docs/bench-notes.md).
 * Nor a shared-memory ring of the last 64 chunks' U and P for exact SWLA's drops (one block a SM
 * for its 192 KB, reading U once): its scan took 977 us against this one's 672 at 64K, exact
 * SWLA 3.698 ms against 3.487 (H100, 2026-12-07), so it was removed. */

/* Two adjacent elements of a state row per thread (one head and row: one P), so that every
 * thread of 8 heads of 128 x 128 is resident at once (256 blocks of 256, two a SM at 92
 * registers; one element per thread made 512 blocks at 78 registers, three a SM, and left a
 * second, partial wave) and each load moves 8 bytes. */
#define GLA_SCAN_THREADS 256
/* DPF = 0: the plain scan, without the drop ring's registers and branches (so that the SWLA
 * scan's depth costs plain nothing); DPF > 0: SWLA, drops loaded DPF steps ahead; BURST > 0:
 * overlap SWLA, whose steps may drop several chunks (exact drops at most one a step, so its
 * kernel, BURST = 0, holds no burst registers) */
/* A scan's step n for its thread's two elements: stores the state entering chunk n (and, under
 * SWLA, its window's log decay), then, unless n is the last chunk (false), adds U_n to the state
 * decayed by chunk n's exp(P). */
__device__ static inline bool gla_scan_step(const gla_args &a, float2 *z, size_t s2, size_t pst, size_t pi,
                                            bool lz_writer, int n, int last, float2 &zs, double &wsum, float2 un,
                                            float pn) {
    z[(size_t)n * s2] = zs;
    if (lz_writer) {
        if (a.Cz) a.Cz[(size_t)n * pst + pi] = wsum;
        else a.Lz[(size_t)n * pst + pi] = (float)wsum;
    }
    if (n == last) return false;
    const float g = expf(pn);
    zs.x = g * zs.x + un.x;
    zs.y = g * zs.y + un.y;
    wsum += pn;
    return true;
}

template <int DPF, int BURST>
__global__ static void __launch_bounds__(GLA_SCAN_THREADS, 2) gla_scan_kernel(gla_args a) {
    static_assert(DPF == 0 || GLA_PF % (DPF > 0 ? DPF : 1) == 0, "the drop ring's slot is the step's slot mod DPF");
    static_assert(DPF > 0 || BURST == 0, "bursts are SWLA's");
    constexpr bool SW = DPF > 0;
    constexpr int DR = SW ? DPF : 1;     /* the drop ring's length */
    const size_t per_head = (size_t)a.dk * a.dv, stride = (size_t)a.H * per_head, s2 = stride / 2;
    const size_t e = 2 * ((size_t)blockIdx.x * blockDim.x + threadIdx.x);
    if (e >= stride) return;
    const int h = (int)(e / per_head), i = (int)(e % per_head / a.dv);
    const bool lz_writer = (a.Lz || a.Cz) && e % a.dv == 0;
    const size_t pst = (size_t)a.H * a.dk, pi = (size_t)h * a.dk + i;
    const int last = a.N - 1;    /* U and P of chunks 0..last-1 feed the states; Z of 0..last is stored */
    const float2 *u = (const float2 *)(a.U + e);
    float2 *z = (float2 *)(a.Z + e);
    /* ub[d], pb[d]: U and P of chunk n0 + d. Loaded GLA_PF chunks ahead: without SWLA Z is U
     * itself (in place), and Z_n is stored only after U_n was read, so a load ahead never
     * sees a stored state. */
    float2 ub[GLA_PF];
    float pb[GLA_PF];
    /* SWLA: step n drops chunks [fz(n), fz(n+1)) from the state; db[d], dpb[d] hold U and P of
     * the first of them (chunk fz(n)), loaded DPF steps ahead (U is its own buffer under
     * SWLA). Exact windows drop at most one chunk a step; an overlap burst loads its further
     * chunks in the step. (Loaded one drop ahead, the exact window's scan waited on each
     * drop's load: 2.5x the plain scan's time on the H200. DPF < GLA_PF keeps the kernel
     * within the 128 registers of two blocks a SM.) */
    float2 db[DR];
    float dpb[DR];
    int fpre = 0;                /* fz of the next step to prefetch for */
    #pragma unroll
    for (int d = 0; d < GLA_PF; d++) {
        ub[d] = d < last ? u[(size_t)d * s2] : make_float2(0.0f, 0.0f);
        pb[d] = d < last ? a.P[(size_t)d * pst + pi] : 0.0f;
    }
    #pragma unroll
    for (int d = 0; d < DR; d++) {
        db[d] = make_float2(0.0f, 0.0f);
        dpb[d] = 0.0f;
        if (SW && d < last) {
            const int f1 = la_chunk_fz(d + 1, a.T, a.swla, a.W, a.S);
            if (f1 > fpre) {
                db[d] = u[(size_t)fpre * s2];
                dpb[d] = a.P[(size_t)fpre * pst + pi];
            }
            fpre = f1;
        }
    }
    float2 zs = make_float2(0.0f, 0.0f);
    double wsum = 0.0;           /* sum of P over the chunks in the state: [f, n-1] */
    int f = 0;                   /* = fz(n) at the start of step n */
    for (int n0 = 0; n0 <= last; n0 += GLA_PF) {
        #pragma unroll
        for (int d = 0; d < GLA_PF; d++) {
            const int n = n0 + d;
            if (n > last) break;
            const int dd = d % DR;
            const float2 un = ub[d], dn = db[dd];
            const float pn = pb[d], dpn = dpb[dd];
            if (n + GLA_PF < last) {
                ub[d] = u[(size_t)(n + GLA_PF) * s2];
                pb[d] = a.P[(size_t)(n + GLA_PF) * pst + pi];
            }
            if (SW && n + DPF < last) {
                const int f1 = la_chunk_fz(n + DPF + 1, a.T, a.swla, a.W, a.S);
                if (f1 > fpre) {
                    db[dd] = u[(size_t)fpre * s2];
                    dpb[dd] = a.P[(size_t)fpre * pst + pi];
                }
                fpre = f1;
            }
            if (!gla_scan_step(a, z, s2, pst, pi, lz_writer, n, last, zs, wsum, un, pn)) break;
            if (SW) {
                /* chunks leaving the window: subtract each as the U it was added with, decayed
                 * by the P summed since */
                const int fz = la_chunk_fz(n + 1, a.T, a.swla, a.W, a.S);
                auto drop = [&](float2 uu, float pp) {
                    const float dec = expf((float)(wsum - pp));
                    zs.x -= dec * uu.x;
                    zs.y -= dec * uu.y;
                    wsum -= pp;
                };
                if (f < fz) drop(dn, dpn), f++;   /* the first, loaded ahead */
                /* an overlap burst's further chunks (S/64 of them every S tokens), GLA_BURST
                 * loads in flight at once (loaded one at a time, each waited for its own round
                 * trip: ~0.6 ms more scan than exact SWLA at 64K, session 19) */
                while (BURST > 0 && f < fz) {
                    float2 bu[BURST > 0 ? BURST : 1];
                    float bp[BURST > 0 ? BURST : 1];
                    #pragma unroll
                    for (int i = 0; i < BURST; i++) {
                        bu[i] = make_float2(0.0f, 0.0f);
                        bp[i] = 0.0f;
                        if (f + i < fz) {
                            bu[i] = u[(size_t)(f + i) * s2];
                            bp[i] = a.P[(size_t)(f + i) * pst + pi];
                        }
                    }
                    #pragma unroll
                    for (int i = 0; i < BURST; i++)
                        if (f < fz) drop(bu[i], bp[i]), f++;
                }
                if (f == n + 1) { zs = make_float2(0.0f, 0.0f); wsum = 0.0; } /* empty window: exactly zero, no residue */
            }
        }
    }
}

/* ---- output ---------------------------------------------------------------------------- */

struct gla_out_layout {
    size_t qs, ks, bs, vs, as, pj, ez, lo, scr, vx, kx, ct, total; /* float offsets */
};

/* The warps that sit out the off-diagonal blocks (10 of 16) build the newest cut chunk's
 * Qhat Khat^T tiles meanwhile, when a window edge cuts one chunk only (exact SWLA with W a
 * multiple of the chunk: 10 tiles, one each), each in a 16 x 16 slab of its own (first its
 * 16 x 8 slices of Qhat, then the product), which waits there until A V is done with `as`.
 * Built after the chunk's own terms, as before, they took 10 tile products, Qhat in place and
 * two barriers on the block's serial path: ~0.6 ms of exact SWLA's 1.0 ms over plain at 64K on
 * the H100 (with the cut chunk's A V, which stays). */
#define GLA_CUT_WARPS (GLA_WARPS - GLA_OFFDIAG)
#define GLA_CUT_SLAB 256         /* floats a cut warp holds: its 16 x 12 slice of Qhat, then the tile */
#define GLA_CUT_LDQ 12

/* staged (SWLA on a device with the room): the cut chunk's v tile vx over the off-diagonal
 * scratch (free by the time it is loaded) and its Khat tile kx after it, ~216 KB at
 * dk = dv = 128, and at stage 2 the cut warps' slabs ct after those (~226 KB); unstaged, the
 * loop loads them over ks and vs (~177 KB) */
__host__ __device__ static gla_out_layout gla_out_make(int dk, int dv, int stage) {
    const bool staged = stage > 0;
    gla_out_layout L;
    size_t off = 0;
    L.qs = off; off += (size_t)LC * (dk + 4);
    L.ks = off; off += (size_t)LC * (dk + 4);
    L.bs = off; off += (size_t)LC * (dk + 4);
    L.vs = off; off += (size_t)LC * (dv + 4);
    L.as = off; off += (size_t)LC * LA_LDA;
    L.pj = off; off += CU_LA_CHUNK_MAXD;
    L.ez = off; off += CU_LA_CHUNK_MAXD;
    L.lo = off; off += LC + 8;         /* lo[LC], then the diagonal's range flag (8: alignment) */
    L.scr = L.vx = off;
    const size_t scr = (size_t)(staged ? GLA_OFFDIAG : GLA_OFFDIAG + GLA_DIAG_OWN) * GLA_SCR, vx = (size_t)LC * (dv + 4);
    off += staged && vx > scr ? vx : scr;
    L.kx = off; if (staged) off += (size_t)LC * (dk + 4);
    L.ct = off; if (stage > 1) off += (size_t)GLA_CUT_WARPS * GLA_CUT_SLAB;
    L.total = off;
    return L;
}

/* Khat (k decayed to the chunk end, written by the local kernel) and v of an earlier chunk j,
 * by cp.async (the caller commits and waits) */
__device__ static void gla_issue_key_chunk(const gla_args &a, int j, int h, float *ks, float *vs) {
    const int dk = a.dk;
    la_load_tile_async(ks, dk + 4, a.Kh, (size_t)a.H * dk, (size_t)h * dk, j * LC, a.N * LC, dk);
    la_load_tile_async(vs, a.dv + 4, a.v, (size_t)a.H * a.dv, (size_t)h * a.dv, j * LC, a.T, a.dv);
}

/* ej = exp(log decay of chunk j), per channel */
__device__ static void gla_chunk_decay(const gla_args &a, int j, int h, float *ej) {
    for (int c = threadIdx.x; c < a.dk; c += blockDim.x) ej[c] = expf(a.P[((size_t)j * a.H + h) * a.dk + c]);
}

__global__ static void __launch_bounds__(GLA_THREADS, 1) gla_out_kernel(gla_args a) {
    LA_SMEM(float, sm);
    const int dk = a.dk, dv = a.dv, LDK = dk + 4, LDV = dv + 4;
    const bool win = a.swla != CU_SWLA_OFF, staged = win && a.stage > 0;
    const gla_out_layout Ly = gla_out_make(dk, dv, win ? a.stage : 0);
    float *qs = sm + Ly.qs, *ks = sm + Ly.ks, *bs = sm + Ly.bs, *vs = sm + Ly.vs, *as = sm + Ly.as;
    float *pj = sm + Ly.pj, *ez = sm + Ly.ez;
    int *lo = (int *)(sm + Ly.lo);
    const int n = blockIdx.x, h = blockIdx.y, tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int t0 = n * LC, L = min(LC, a.T - t0);
    const int fz = win ? la_chunk_fz(n, a.T, a.swla, a.W, a.S) : 0;
    const int pd = win ? la_chunk_pd(n, a.swla, a.W, a.S) : 0;
    /* staged: the newest cut chunk's Khat comes with the four tiles and its v once the
     * off-diagonal scratch is free, so the window's extra loads overlap this chunk's work */
    const bool pre = staged && pd < fz;
    float *kc = staged ? sm + Ly.kx : ks, *vc = staged ? sm + Ly.vx : vs;   /* cut chunks' Khat, v */

    /* the four tiles issued at once (cp.async): one block per SM leaves no other block to hide
     * a load's latency behind. In the order they are needed, as three groups (GLA_LOAD_GROUPS;
     * 1: one group, waited for at once): q and gk for the scale and the cumulative decay, then
     * k (with the cut chunk's Khat and the window's log decay) for the intra-chunk products,
     * then v for A V, so the decay pass runs while k and v are still arriving. */
    const bool lzs = pd < fz && fz < n;  /* the window's log decay since the state's first chunk (Qhat) */
    /* by state differences, the state entering the window's first chunk fz, decayed to chunk n,
     * comes off the full state Z_n (nothing to take off when fz = 0) */
    const bool zdiff = a.Cz && fz > 0 && fz < n;
    la_load_tile_async(qs, LDK, a.q, (size_t)a.H * dk, (size_t)h * dk, t0, a.T, dk);
    la_load_tile_async(bs, LDK, a.gk, (size_t)a.H * dk, (size_t)h * dk, t0, a.T, dk);
#if GLA_LOAD_GROUPS > 1
    __pipeline_commit();
#endif
    la_load_tile_async(ks, LDK, a.k, (size_t)a.H * dk, (size_t)h * dk, t0, a.T, dk);
    if (pre) la_load_tile_async(kc, LDK, a.Kh, (size_t)a.H * dk, (size_t)h * dk, (fz - 1) * LC, a.N * LC, dk);
    if (a.Cz) {
        /* the window's log decay as a difference of double prefix sums (exact whatever their size) */
        if ((lzs || zdiff) && tid < dk)
            ez[tid] = (float)(a.Cz[((size_t)n * a.H + h) * dk + tid] - a.Cz[((size_t)fz * a.H + h) * dk + tid]);
#ifdef __CUDA_ARCH__
        /* Z_fz into the L2 now, so its loads after the state's copy wait ~L2 latency, not HBM's
         * (one 128-byte line a thread: 64 KB at dk = dv = 128) */
        if (zdiff)
            for (size_t o = (size_t)tid * 32; o < (size_t)dk * dv; o += (size_t)blockDim.x * 32)
                asm volatile("prefetch.global.L2 [%0];" ::"l"(a.Z + ((size_t)fz * a.H + h) * dk * dv + o));
#endif
    } else if (lzs && tid < dk / 4) {
        __pipeline_memcpy_async(ez + 4 * tid, a.Lz + ((size_t)n * a.H + h) * dk + 4 * tid, 16);
    }
#if GLA_LOAD_GROUPS > 1
    __pipeline_commit();
#endif
    la_load_tile_async(vs, LDV, a.v, (size_t)a.H * dv, (size_t)h * dv, t0, a.T, dv);
    __pipeline_commit();
    for (int t = tid; t < LC; t += blockDim.x) lo[t] = (int)la_chunk_lo((long)t0 + t, a.swla, a.W, a.S);
    int *wide = lo + LC;                 /* set where a diagonal block's decay is too wide to factor */
    if (tid == 0) *wide = a.diag_pairwise;
#if GLA_LOAD_GROUPS > 1
    __pipeline_wait_prior(2);            /* q, gk */
#else
    __pipeline_wait_prior(0);
#endif
    __syncthreads();
    /* key columns of cut chunk j before kfirst(rb) are masked for every row of row block rb
     * (the visible start never decreases with t): those tiles are neither computed nor read */
    #define KFIRST(rb, j) (min(LC, max(0, lo[(rb) * 16] - (j) * LC)) & ~15)
    /* one cut chunk whose tiles the idle warps can take (every thread counts them alike) */
    int ncut = 0;
    if (pre && a.stage > 1 && pd == fz - 1)
        for (int rb = 0; rb < 4; rb++) ncut += 4 - KFIRST(rb, pd) / 16;
    const bool early = pre && a.stage > 1 && pd == fz - 1 && ncut <= GLA_CUT_WARPS;
    /* the i-th of those tiles (row blocks in order, key blocks from kfirst): its row block, key block */
    auto cut_tile = [&](int i, int &rb, int &cb) {
        rb = 0;
        while (i >= 4 - KFIRST(rb, pd) / 16) i -= 4 - KFIRST(rb, pd) / 16, rb++;
        cb = KFIRST(rb, pd) / 16 + i;
    };
    la_tile_each4(dk, [&](int r, int c) { la_mul4(qs + r * LDK + c, make_float4(a.scale, a.scale, a.scale, a.scale)); });
    /* bs: the in-chunk cumulative log decay, in log2 units (every use below is 2^(difference)),
     * and whether any channel decays by more than 2^GLA_DIAG_SPAN across a 16-row block */
    for (int c = tid; c < dk; c += blockDim.x) {
        double b = 0.0, b0 = 0.0;
        bool w = false;
        for (int s = 0; s < LC; s++) {
            b += bs[s * LDK + c];
            bs[s * LDK + c] = (float)(b * LA_LOG2E);
            if ((s & 15) == 0) b0 = b;
            else if ((s & 15) == 15) w |= (b0 - b) * LA_LOG2E > GLA_DIAG_SPAN;
        }
        if (w) *wide = 1;
    }
#if GLA_LOAD_GROUPS > 1
    __pipeline_wait_prior(1);            /* k, the cut chunk's Khat, Lz */
#endif
    __syncthreads();
    const bool diagf = !*wide;           /* the diagonal blocks factored, as tile products */

    /* off-diagonal 16 x 16 blocks of the intra-chunk matrix (6 of them, one per warp) and,
     * where the decays allow, the diagonal blocks the same way: on warps 6-9 unstaged, else on
     * warps 0-3 after their off-diagonal block (a job 1) */
    const bool diag_own = !staged && GLA_DIAG_OWN > 0, offdiag_warp = warp < GLA_OFFDIAG;
    const bool diag_warp = diagf && (diag_own ? warp >= GLA_OFFDIAG && warp < GLA_OFFDIAG + 4 : warp < 4);
    if (offdiag_warp || diag_warp) for (int job = offdiag_warp ? 0 : 1; job < (diag_warp ? 2 : 1); job++) {
        const int dw = diag_own ? warp - GLA_OFFDIAG : warp;      /* the diagonal block of a job 1 */
        const int bi = job ? dw : warp < 3 ? warp + 1 : (warp < 5 ? warp - 1 : 3);
        const int bj = job ? dw : warp < 3 ? 0 : (warp < 5 ? 1 : 2);
        const int r = bj * 16 + 15;
        float *qh = sm + Ly.scr + (size_t)warp * GLA_SCR, *kh = qh + 16 * 36;
        la_acc acc;
        wmma::fill_fragment(acc, 0.0f);
        for (int c0 = 0; c0 < dk; c0 += 32) {
            const int w = dk - c0 < 32 ? dk - c0 : 32;   /* 16 or 32 */
            for (int e = lane; e < 16 * w; e += 32) {
                const int row = w == 32 ? e >> 5 : e >> 4, c = w == 32 ? e & 31 : e & 15, cc = c0 + c;
                const float br = bs[r * LDK + cc];
                const int tq = bi * 16 + row, tk = bj * 16 + row;
                qh[row * 36 + c] = qs[tq * LDK + cc] * la_exp2(bs[tq * LDK + cc] - br);
                kh[row * 36 + c] = ks[tk * LDK + cc] * la_exp2(br - bs[tk * LDK + cc]);
            }
            __syncwarp();
            /* a diagonal block in 3xTF32 (about fp32, as the pairwise form): its entries are the
             * biggest terms of a row's output under fast decay, and in 1xTF32 a single
             * cancelling q_t . k_t (T = 1 in la_check, session 22) came out 4.9e-3 off */
            if (job) la_mma_3x<la_a_row, la_b_col>(acc, qh, 36, 8, kh, 36, 8, w);
            else la_mma<la_a_row, la_b_col>(acc, qh, 36, 8, kh, 36, 8, w);
            __syncwarp();
        }
        wmma::store_matrix_sync(as + bi * 16 * LA_LDA + bj * 16, acc, LA_LDA, wmma::mem_row_major);
    } else if (early && warp - GLA_OFFDIAG < ncut) {
        /* the cut warps, a needed tile each: Qhat = q/sqrt(dk) exp(b_t) exp(Lz) built a 16 x 8
         * slice at a time (the exponent b_t + Lz <= 0, as the two factors it stands for) */
        int rb, cb;
        cut_tile(warp - GLA_OFFDIAG, rb, cb);
        float *qh = sm + Ly.ct + (size_t)(warp - GLA_OFFDIAG) * GLA_CUT_SLAB;
        la_acc acc;
        wmma::fill_fragment(acc, 0.0f);
        for (int c0 = 0; c0 < dk; c0 += 8) {
            for (int e = lane; e < 16 * 8; e += 32) {
                const int row = e >> 3, cc = c0 + (e & 7), t = rb * 16 + row;
                const float lz = lzs ? ez[cc] * (float)LA_LOG2E : 0.0f;
                qh[row * GLA_CUT_LDQ + (e & 7)] = qs[t * LDK + cc] * la_exp2(bs[t * LDK + cc] + lz);
            }
            __syncwarp();
            la_mma<la_a_row, la_b_col>(acc, qh, GLA_CUT_LDQ, 8, kc + cb * 16 * LDK + c0, LDK, 8, 8);
            __syncwarp();
        }
        wmma::store_matrix_sync(qh, acc, 16, wmma::mem_row_major);
    }
    __syncthreads();
    if (pre) {                             /* the off-diagonal scratch is free: the cut chunk's v over it */
        la_load_tile_async(vc, LDV, a.v, (size_t)a.H * dv, (size_t)h * dv, (fz - 1) * LC, a.T, dv);
        __pipeline_commit();
    }
    /* diagonal blocks pairwise (where a block's decay is too wide to factor): a warp takes rows
     * p and 15 - p of one 16 x 16 block (17 entries on or below the diagonal), a lane one entry
     * (lanes 0-15 row p, 16-31 row 15 - p, key lane & 15) over every channel, so no reduction
     * across lanes; the float4 reads are
     * broadcasts (the row's q and b) or meet 32 distinct banks (k and b of 8 keys: rows 4
     * banks apart). (One warp an entry, channels over the lanes and a shuffle reduction, took
     * ~2x the instructions.) Then, for every other entry, the causal zero or the window mask
     * inside the chunk. */
    for (int e = warp; !diagf && e < 4 * 8; e += GLA_WARPS) {
        const int ti = lane < 16 ? (e & 7) : 15 - (e & 7), si = lane & 15;
        const int t = (e >> 3) * 16 + ti, s = (e >> 3) * 16 + si;
        if (si > ti) continue;
        const float *qr = qs + t * LDK, *kr = ks + s * LDK, *bt = bs + t * LDK, *bq = bs + s * LDK;
        float acc = 0.0f;
        for (int c = 0; c < dk; c += 4) {
            const float4 q = *(const float4 *)(qr + c), k = *(const float4 *)(kr + c);
            const float4 g = *(const float4 *)(bt + c), h = *(const float4 *)(bq + c);
            acc += q.x * k.x * la_exp2(g.x - h.x);
            acc += q.y * k.y * la_exp2(g.y - h.y);
            acc += q.z * k.z * la_exp2(g.z - h.z);
            acc += q.w * k.w * la_exp2(g.w - h.w);
        }
        as[t * LA_LDA + s] = win && t0 + s < lo[t] ? 0.0f : acc;
    }
    for (int e = tid; e < LC * LC; e += blockDim.x) {
        const int t = e / LC, s = e % LC;
        if (s > t) as[t * LA_LDA + s] = 0.0f;
        else if ((diagf || (t >> 4) != (s >> 4)) && win && t0 + s < lo[t]) as[t * LA_LDA + s] = 0.0f;
    }
    __syncthreads();
    /* Qt = q/sqrt(dk) exp(b_t), in place (the intra products above are done with q) */
    la_tile_each4(dk, [&](int t, int c) {
        const float4 b = *(const float4 *)(bs + t * LDK + c);
        la_mul4(qs + t * LDK + c, make_float4(la_exp2(b.x), la_exp2(b.y), la_exp2(b.z), la_exp2(b.w)));
    });
    /* The carried state Z_n (dk x dv) is copied into shared memory over ks and bs, which are
     * free once Qt is complete (dk (dv + 4) <= 2 LC (dk + 4) for dk, dv <= 128), while the
     * warps do A V. (Read from global memory inside the tile products, every k-slice waited
     * for its own load: that was the kernel's largest cost.) */
    float *zs = ks;
    const bool carried = fz < n;
#if GLA_LOAD_GROUPS > 1
    if (pre) __pipeline_wait_prior(1);     /* v (the cut chunk's v, committed after it, may fly on) */
    else __pipeline_wait_prior(0);
#endif
    __syncthreads();                       /* Qt complete, ks and bs free; v in */
    if (carried) {
        const float *zn = a.Z + ((size_t)n * a.H + h) * dk * dv;
        la_rows_each4(dk, dv, [&](int r, int c) { __pipeline_memcpy_async(zs + r * LDV + c, zn + (size_t)r * dv + c, 16); });
        __pipeline_commit();
    }

    const int nbv = dv / 16, ntile = 4 * nbv;
    la_acc acc[GLA_TPW];
    #pragma unroll
    for (int u = 0; u < GLA_TPW; u++) {
        wmma::fill_fragment(acc[u], 0.0f);
        const int tile = warp + GLA_WARPS * u;
        if (tile < ntile) {
            const int rb = tile / nbv, cb = tile % nbv;
            /* A is lower triangular: key columns past the row block are zero */
            la_mma<la_a_row, la_b_row>(acc[u], as + rb * 16 * LA_LDA, LA_LDA, 8, vs + cb * 16, LDV, (size_t)8 * LDV,
                                       (rb + 1) * 16);
        }
    }
    if (carried) {
        __pipeline_wait_prior(0);
        __syncthreads();                   /* Z_n in zs */
        if (zdiff) {
            /* Z^W_n = Z_n - diag(exp(Lz)) Z_fz in fp32 before the product (a tf32 product of
             * each would cancel its own rounding, ~1e-3 of the full state, against the other's) */
            const float *zf = a.Z + ((size_t)fz * a.H + h) * dk * dv;
            la_rows_each4(dk, dv, [&](int r, int c) {
                const float4 f = *(const float4 *)(zf + (size_t)r * dv + c);
                const float d = expf(ez[r]);
                float4 *zp = (float4 *)(zs + r * LDV + c);
                float4 z = *zp;
                z.x -= d * f.x; z.y -= d * f.y; z.z -= d * f.z; z.w -= d * f.w;
                *zp = z;
            });
            __syncthreads();
        }
        #pragma unroll
        for (int u = 0; u < GLA_TPW; u++) {
            const int tile = warp + GLA_WARPS * u;
            if (tile < ntile) {
                const int rb = tile / nbv, cb = tile % nbv;
                la_mma<la_a_row, la_b_row>(acc[u], qs + rb * 16 * LDK, LDK, 8, zs + cb * 16, LDV, (size_t)8 * LDV, dk);
            }
        }
    }
    /* a cut chunk j's A V: key columns from kfirst on, against its v in vc */
    auto cut_av = [&](int j) {
        #pragma unroll
        for (int u = 0; u < GLA_TPW; u++) {
            const int tile = warp + GLA_WARPS * u;
            if (tile < ntile) {
                const int rb = tile / nbv, cb = tile % nbv, k0 = KFIRST(rb, j);
                la_mma<la_a_row, la_b_row>(acc[u], as + rb * 16 * LA_LDA + k0, LA_LDA, 8, vc + (size_t)k0 * LDV + cb * 16,
                                           LDV, (size_t)8 * LDV, LC - k0);
            }
        }
    };
    if (early) {
        /* the cut warps' tiles into A, masked; then A V with the cut chunk's v */
        __syncthreads();                   /* every warp is done with A for its own terms */
        for (int e = tid; e < ncut * 256; e += blockDim.x) {
            int rb, cb;
            cut_tile(e >> 8, rb, cb);
            const int r = (e >> 4) & 15, c = e & 15, t = rb * 16 + r, s = cb * 16 + c;
            as[t * LA_LDA + s] = (long)pd * LC + s < lo[t] ? 0.0f : sm[Ly.ct + (size_t)(e >> 8) * GLA_CUT_SLAB + r * 16 + c];
        }
        __pipeline_wait_prior(0);          /* the cut chunk's v */
        __syncthreads();
        cut_av(pd);
    } else if (pd < fz) {
        /* chunks cut by a window edge, newest first; Qhat = Qt exp(G_{end of n-1} - G_{end of j}) */
        if (lzs)
            for (int c = tid; c < dk; c += blockDim.x) ez[c] = expf(ez[c]);
        __syncthreads();                   /* every warp is done with Qt for the state term; ez */
        if (lzs)
            la_tile_each4(dk, [&](int r, int c) { la_mul4(qs + r * LDK + c, *(const float4 *)(ez + c)); });
        for (int j = fz - 1; j >= pd; j--) {
            __syncthreads();               /* kc, vc, as, pj free; Qhat complete */
            if (!(pre && j == fz - 1)) {   /* (the prefetched chunk's copies are in flight or in) */
                gla_issue_key_chunk(a, j, h, kc, vc);
                __pipeline_commit();
            }
            if (j > pd) gla_chunk_decay(a, j, h, pj);   /* (only to carry Qhat past j) */
            __pipeline_wait_prior(0);
            __syncthreads();
            for (int tile = warp; tile < 16; tile += GLA_WARPS) {
                const int rb = tile >> 2, cb = tile & 3;
                if (cb * 16 < KFIRST(rb, j)) continue;
                la_acc c;
                wmma::fill_fragment(c, 0.0f);
                la_mma<la_a_row, la_b_col>(c, qs + rb * 16 * LDK, LDK, 8, kc + cb * 16 * LDK, LDK, 8, dk);
                wmma::store_matrix_sync(as + rb * 16 * LA_LDA + cb * 16, c, LA_LDA, wmma::mem_row_major);
            }
            __syncthreads();
            for (int e = tid; e < LC * LC; e += blockDim.x) {
                const int t = e / LC, s = e % LC;
                if (s >= KFIRST(t >> 4, j) && (long)j * LC + s < lo[t]) as[t * LA_LDA + s] = 0.0f;
            }
            if (j > pd)                    /* carry Qhat back across chunk j for the next one */
                la_tile_each4(dk, [&](int r, int c) { la_mul4(qs + r * LDK + c, *(const float4 *)(pj + c)); });
            __syncthreads();
            cut_av(j);
        }
    }
    #undef KFIRST
    __syncthreads();                       /* vs becomes the output staging area */
    #pragma unroll
    for (int u = 0; u < GLA_TPW; u++) {
        const int tile = warp + GLA_WARPS * u;
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

#endif
