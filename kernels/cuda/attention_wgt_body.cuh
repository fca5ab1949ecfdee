/* Causal attention on wgmma, fed by the copy engine (TMA), FlashAttention-3's schedule: the
 * same contract, tiles and step pieces as attention_wg_body.cuh, with three changes that keep
 * the tensor cores busy through the softmax:
 *   - K and V^T are converted once into tile images, [Hkv][NT][tile] with NT = ceil(T/128):
 *     each tile's bytes are exactly its 128-byte-swizzled shared-memory layout (keys past T
 *     zero), so one bulk copy per operand lands it, issued by one thread, and an mbarrier per
 *     stage says when it is in (no block barrier, no cp.async by every thread);
 *   - within a warpgroup, tile i's S = Q K^T is issued together with tile i-1's O += P V, and
 *     the softmax of tile i runs while P V is still on the tensor cores (registers: S, O and
 *     P's bf16 A fragments);
 *   - the two warpgroups take turns to issue (named barriers 1 and 2), so one group's softmax
 *     overlaps the other's products.
 * Three stages (K + V^T each): tile i+2 is copied in while tiles i and i-1 are read. A stage
 * is refilled after its "empty" barrier saw all eight warps finish with it (their P V wait);
 * the refill is issued by the first thread of warpgroup 1, the group that runs behind, so it
 * rarely waits. Written against the primitives of attention_wg_body.cuh plus
 *   wg_wait1()                          wgmma.wait_group 1
 *   wg_pin(x)                           keeps the compiler from moving x across the point
 *   wg_mbar_init(bar, n), wg_mbar_init_fence(), wg_mbar_arrive(bar), wg_mbar_arrive_tx(bar, bytes),
 *   wg_mbar_wait(bar, parity)           mbarrier (shared::cta)
 *   wg_bulk_load(dst, src, bytes, bar)  cp.async.bulk global -> shared, completing on bar
 *   fa2_syncwarp()                      __syncwarp
 * supplied by attention_ptx.cuh (GPU) and tests/gpu/fa2_emu.cpp (CPU emulation). */
#ifndef HS_ATTENTION_WGT_BODY_CUH
#define HS_ATTENTION_WGT_BODY_CUH

#include "attention_wg_body.cuh"

#define WGT_STAGES 3

template <int D> struct wgt_geom {
    static constexpr int Q_BYTES = WG_BM * D * 2;
    static constexpr int K_BYTES = WG_BN * D * 2;
    static constexpr int V_BYTES = D * WG_BN * 2;
    static constexpr int TILE_BYTES = K_BYTES + V_BYTES;
    /* Q, the stages, their full and empty barriers, alignment slack: 225 KB at D = 128 */
    static constexpr size_t SMEM_BYTES = (size_t)Q_BYTES + WGT_STAGES * (size_t)TILE_BYTES + 2 * WGT_STAGES * 8 + 1024;
};

#define WGT_NTILES(T) (((T) + WG_BN - 1) / WG_BN)   /* key tiles of T tokens */

/* K and V fp32 [T, Hkv*D] -> the tile images of key tile j of kv head hh: K's [Hkv][NT][K_BYTES],
 * element (key r of the tile, dim c) at wg_sw(WG_BN, r, c); V^T's [Hkv][NT][V_BYTES], element
 * (dim r, key c of the tile) at wg_sw(D, r, c). e over the tile's WG_BN*D/8 16-byte chunks of
 * each: for K the chunk fastest (a warp reads consecutive floats of 2 keys), for V the dim
 * fastest (a warp reads one key row's consecutive floats for each of its 8 keys). A block per
 * tile (wgt_convert_kernel) takes the tile and head from its grid index: the flat form's i over
 * all tiles was split by two 64-bit divisions by the tile count per item, twice (K and V). */
template <int D>
FA2_FN void wgt_convert_tile(uint16_t *kt, uint16_t *vt, const float *k, const float *v, int T, int Hkv, int NT,
                             int hh, int j, int e, const float2 *rope) {
    {   /* K: key r, dims c..c+7 */
        const int c = e % (D / 8) * 8, r = e / (D / 8), t = j * WG_BN + r;
        float x[8];
#pragma unroll
        for (int u = 0; u < 8; u++) x[u] = 0.0f;
        if (t < T) {
            /* with rope, rotated first (wg_rope4), as a separate RoPE pass would have left it */
            const float *row = k + (size_t)t * Hkv * D + (size_t)hh * D;
            const float4 lo = rope ? wg_rope4<D>(row, rope, t, c) : *(const float4 *)(row + c);
            const float4 hi = rope ? wg_rope4<D>(row, rope, t, c + 4) : *(const float4 *)(row + c + 4);
            x[0] = lo.x; x[1] = lo.y; x[2] = lo.z; x[3] = lo.w; x[4] = hi.x; x[5] = hi.y; x[6] = hi.z; x[7] = hi.w;
        }
        *(uint4 *)((unsigned char *)kt + ((size_t)hh * NT + j) * wgt_geom<D>::K_BYTES + wg_sw(WG_BN, r, c)) =
            make_uint4(fa2_pack_bf16x2(x[0], x[1]), fa2_pack_bf16x2(x[2], x[3]), fa2_pack_bf16x2(x[4], x[5]),
                       fa2_pack_bf16x2(x[6], x[7]));
    }
    {   /* V^T: dim r, keys c..c+7 */
        const int r = e % D, c = e / D * 8;
        float x[8];
#pragma unroll
        for (int u = 0; u < 8; u++) {
            const int t = j * WG_BN + c + u;
            x[u] = t < T ? v[(size_t)t * Hkv * D + (size_t)hh * D + r] : 0.0f;
        }
        *(uint4 *)((unsigned char *)vt + ((size_t)hh * NT + j) * wgt_geom<D>::V_BYTES + wg_sw(D, r, c)) =
            make_uint4(fa2_pack_bf16x2(x[0], x[1]), fa2_pack_bf16x2(x[2], x[3]), fa2_pack_bf16x2(x[4], x[5]),
                       fa2_pack_bf16x2(x[6], x[7]));
    }
}
#define WGT_TILE_CHUNKS(D) (WG_BN * (D) / 8)   /* 16-byte chunks of K (and of V^T) per tile */

/* Key tile i of the block (tile images kimg, vimg from its first tile) into stage s: one
 * arrival announcing the bytes, two bulk copies completing on the stage's full barrier. */
template <int D>
FA2_FN void wgt_issue_tile(unsigned char *sT, uint64_t *full, const unsigned char *kimg, const unsigned char *vimg,
                           int i, int s) {
    typedef wgt_geom<D> G;
    unsigned char *sk = sT + s * G::TILE_BYTES;
    wg_mbar_arrive_tx(&full[s], G::TILE_BYTES);
    wg_bulk_load(sk, kimg + (size_t)i * G::K_BYTES, G::K_BYTES, &full[s]);
    wg_bulk_load(sk + G::K_BYTES, vimg + (size_t)i * G::V_BYTES, G::V_BYTES, &full[s]);
}

template <int D>
FA2_FN void wgt_attention_body(float *out, const float *q, const uint16_t *kt, const uint16_t *vt,
                               const float *row_scale, int T, int H, int Hkv, int window, float qscale,
                               const float2 *rope, unsigned char *smem_raw) {
    typedef wgt_geom<D> G;
    unsigned char *smem = smem_raw + ((1024 - (wg_smem_addr(smem_raw) & 1023)) & 1023);
    unsigned char *sQ = smem, *sT = sQ + G::Q_BYTES;   /* stage s: K at sT + s TILE_BYTES, V^T after it */
    uint64_t *full = (uint64_t *)(sT + WGT_STAGES * G::TILE_BYTES), *empty = full + WGT_STAGES;
    const int tid = fa2_tid(), wg = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31;
    const int g = lane >> 2, tig = lane & 3;
    const fa2_span sp = fa2_span_make(T, H, Hkv, window, WG_BM, WG_BN);
    const int q0 = sp.q0, h = sp.h, q_last = sp.q_last, j_first = sp.j_first;
    const int n = sp.j_end - j_first;                /* key tiles of this block */
    const int NT = WGT_NTILES(T);
    const unsigned char *kimg = (const unsigned char *)kt + ((size_t)sp.kvh * NT + j_first) * G::K_BYTES;
    const unsigned char *vimg = (const unsigned char *)vt + ((size_t)sp.kvh * NT + j_first) * G::V_BYTES;
    const bool producer = tid == WG_THREADS / 2;

    if (tid == 0) {
        for (int s = 0; s < WGT_STAGES; s++) {
            wg_mbar_init(&full[s], 1);               /* the producer's arrival (+ the copies' bytes) */
            wg_mbar_init(&empty[s], 8);              /* one arrival per warp */
        }
        wg_mbar_init_fence();
    }
    wg_load_q<D>(sQ, q, row_scale, q0, T, H, h, qscale, rope);
    wg_proxy_fence();                                /* Q, visible to the tensor cores */
    fa2_sync();                                      /* Q and the barriers, for everyone */
    if (producer)
        for (int i = 0; i < n && i < WGT_STAGES; i++) wgt_issue_tile<D>(sT, full, kimg, vimg, i, i);
    fa2_syncwarp();                                  /* the producer's warp whole again before aligned barriers */

    float o[D / 2], s[64], m[2], l[2], corr[2];
    uint32_t a[WG_BN / 16][4];
#pragma unroll
    for (int i = 0; i < D / 2; i++) o[i] = 0.0f;
    m[0] = m[1] = -INFINITY;
    l[0] = l[1] = 0.0f;
    const int wrow = wg * 64 + warp * 16;
    const uint32_t q_addr = wg_smem_addr(sQ) + wg * 64 * 128, t_addr = wg_smem_addr(sT);
    /* turn-taking: group w issues after barrier 1 + w, which the other group arrives at after
     * its own issue; group 1 arrives once up front so group 0 goes first, and skips its last
     * arrival so every barrier generation completes */
    if (wg == 1) wg_bar_arrive(1, WG_THREADS);

    /* issue point 0: S of tile 0 */
    wg_mbar_wait(&full[0], 0);
    wg_bar_sync(1 + wg, WG_THREADS);
    wg_fence();
    wg_issue_s<D>(s, q_addr, t_addr);
    wg_commit();
    wg_bar_arrive(2 - wg, WG_THREADS);
    wg_wait0();
#pragma unroll
    for (int e = 0; e < 64; e++) wg_pin(s[e]);
    wg_mask(s, j_first * WG_BN, q0, q_last, wrow, g, tig, window);
    wg_softmax(s, m, l, corr);                      /* O is zero: nothing to rescale */
    wg_pack_p(a, s);

    for (int i = 1; i < n; i++) {
        const int st = i % WGT_STAGES, sp = (i - 1) % WGT_STAGES;
        wg_mbar_wait(&full[st], (i / WGT_STAGES) & 1);
        wg_bar_sync(1 + wg, WG_THREADS);
        wg_fence();
        wg_issue_s<D>(s, q_addr, t_addr + st * G::TILE_BYTES);
        wg_commit();
        wg_issue_pv<D>(o, a, t_addr + sp * G::TILE_BYTES + G::K_BYTES);
        wg_commit();
        wg_bar_arrive(2 - wg, WG_THREADS);
        wg_wait1();                                  /* S of tile i (P V of tile i-1 may still run) */
#pragma unroll
        for (int e = 0; e < 64; e++) wg_pin(s[e]);
        wg_mask(s, (j_first + i) * WG_BN, q0, q_last, wrow, g, tig, window);
        wg_softmax(s, m, l, corr);
        wg_wait0();                                  /* P V of tile i-1: O and the A registers are free */
#pragma unroll
        for (int e = 0; e < D / 2; e++) wg_pin(o[e]);
#pragma unroll
        for (int kk = 0; kk < WG_BN / 16; kk++)
#pragma unroll
            for (int e = 0; e < 4; e++) wg_pin(a[kk][e]);
        if (lane == 0) wg_mbar_arrive(&empty[sp]);  /* this warp is done with tile i-1's stage */
        wg_rescale<D>(o, corr);
        wg_pack_p(a, s);
        if (producer && i + 2 < n) {                 /* tile i+2 into tile i-1's stage */
            wg_mbar_wait(&empty[sp], ((i - 1) / WGT_STAGES) & 1);
            wgt_issue_tile<D>(sT, full, kimg, vimg, i + 2, sp);
        }
        fa2_syncwarp();
    }

    /* issue point n: P V of the last tile */
    wg_bar_sync(1 + wg, WG_THREADS);
    wg_fence();
    wg_issue_pv<D>(o, a, t_addr + ((n - 1) % WGT_STAGES) * G::TILE_BYTES + G::K_BYTES);
    wg_commit();
    if (wg == 0) wg_bar_arrive(2, WG_THREADS);
    wg_wait0();
#pragma unroll
    for (int e = 0; e < D / 2; e++) wg_pin(o[e]);
    wg_store<D>(out, o, l, q0 + wrow + g, T, H, h, tig);
}

#endif
