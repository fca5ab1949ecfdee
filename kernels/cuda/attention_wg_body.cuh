/* Causal attention on Hopper's warpgroup MMA (wgmma, sm_90a), FlashAttention-3 style without
 * warp specialization: the same contract and scratch as the FA2 kernel (attention_fa2_body.cuh)
 * except that V's bf16 copy is transposed, [Hkv][D][Tp] with Tp = T rounded up to 8 (16-byte
 * rows; the pad keys zero), so both MMAs read K-major operands. Written against primitives the includer
 * supplies (attention_wg.cu: PTX; tests/gpu/fa2_emu.cpp: CPU emulation), those of
 * attention_fa2_body.cuh plus:
 *   wg_smem_addr(p)                         shared-space byte address of p
 *   wg_fence(), wg_commit(), wg_wait0()     wgmma.fence / commit_group / wait_group 0
 *   wg_proxy_fence()                        fence.proxy.async.shared::cta
 *   wg_bar_sync(id, n), wg_bar_arrive(id, n) named barrier id over n threads: wait / arrive only
 *   wg_mma_ss(s, da, db, scale_d)           s[64] (+)= A(64x16, smem desc) B(16x128, smem desc)
 *   wg_mma_rs<N>(o, a, db)                  o[N/2] += A(64x16, registers a[4]) B(16xN, smem desc)
 *
 * Shape: a block owns WG_BM = 128 query rows of one head, two warpgroups of 64 rows; key tiles
 * of WG_BN = 128 (so exactly one tile per block crosses the diagonal) stream through two
 * shared-memory stages by cp.async. Every tile lives in shared memory as 128-byte-swizzled
 * K-major blocks: a [R][C] bf16 tile is C/64 column blocks of [R][64], row r's 16-byte chunk c
 * stored at chunk c ^ (r % 8) (the wgmma SWIZZLE_128B layout; 8-row groups 1024 bytes apart).
 * S = Q K^T (A and B from shared memory), online softmax on the accumulators in registers (as
 * in the FA2 kernel: the wgmma accumulator layout is mma.sync's per 8 columns), then
 * O += P V with P from registers (the A-fragment layout) and V^T from shared memory. The two
 * warpgroups ping-pong (see the S product below). */
#ifndef HS_ATTENTION_WG_BODY_CUH
#define HS_ATTENTION_WG_BODY_CUH

#include "attention_span.cuh"

#define WG_BM 128
#define WG_BN 128
#define WG_THREADS 256

template <int D> struct wg_geom {
    static constexpr int Q_BYTES = WG_BM * D * 2;
    static constexpr int K_BYTES = WG_BN * D * 2;   /* one stage */
    static constexpr int V_BYTES = D * WG_BN * 2;   /* one stage (V^T) */
    static constexpr size_t SMEM_BYTES = (size_t)Q_BYTES + 2 * K_BYTES + 2 * V_BYTES + 1024; /* + alignment slack */
};

/* byte offset of element (r, c) (c a multiple of 8 here, or of 4 for the half-chunk Q stores)
 * in an R-row swizzled K-major tile */
FA2_FN int wg_sw(int R, int r, int c) {
    return (c >> 6) * R * 128 + r * 128 + ((((c & 63) >> 3) ^ (r & 7)) << 4) + (c & 7) * 2;
}

/* wgmma shared-memory matrix descriptor: K-major, 128-byte swizzle, 8-row groups 1024 bytes
 * apart (stride byte offset), leading byte offset unused by this layout (1 by convention). */
FA2_FN uint64_t wg_desc(uint32_t saddr) {
    return (uint64_t)((saddr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 62);
}

template <int D>
FA2_FN void wg_load_kv(unsigned char *sk, unsigned char *sv, const uint16_t *kh, const uint16_t *vth, int j, int T,
                       int Tp) {
    const int tid = fa2_tid();
    constexpr int KCH = WG_BN * D / 8;               /* 16-byte chunks of the K tile (and of V^T) */
#pragma unroll
    for (int it = 0; it < KCH / WG_THREADS; it++) {
        const int i = tid + it * WG_THREADS;
        {   /* K: row = key, D/8 chunks per row */
            const int r = i / (D / 8), c = (i % (D / 8)) * 8, s = j * WG_BN + r;
            const bool in = s < T;
            fa2_cp_async16(sk + wg_sw(WG_BN, r, c), in ? kh + (size_t)s * D + c : kh, in ? 16 : 0);
        }
        {   /* V^T: row = dim, WG_BN/8 chunks of 8 keys per row; keys T..Tp-1 are zeros in global,
               chunks at or past Tp are zero-filled */
            const int r = i / (WG_BN / 8), c = (i % (WG_BN / 8)) * 8, s = j * WG_BN + c;
            const bool in = s < Tp;
            fa2_cp_async16(sv + wg_sw(D, r, c), in ? vth + (size_t)r * Tp + s : vth, in ? 16 : 0);
        }
    }
}

/* Pieces of one key tile's step, shared by this kernel and the TMA-fed one
 * (attention_wgt_body.cuh). A thread holds rows wrow + g and wrow + g + 8 of the block's
 * query tile, halves hf = 0 and 1 of its accumulator elements. */

/* Four consecutive dims c..c+3 of one head's row, rotated (NeoX half split) by the angles of
 * rope ([T][D/2] (cos, sin), cu_rope_table) at position t: the arithmetic of rope_kernel
 * (elementwise_body.cuh), x[p] cos - x[p + D/2] sin and x[p + D/2] cos + x[p] sin. row points at
 * the head's first dim. */
template <int D> FA2_FN float4 wg_rope4(const float *row, const float2 *rope, int t, int c) {
    constexpr int half = D / 2;
    const bool lo = c < half;
    const float4 x = *(const float4 *)(row + c), y = *(const float4 *)(row + (lo ? c + half : c - half));
    const float4 *cs = (const float4 *)(rope + (size_t)t * half + (lo ? c : c - half));
    const float4 a = cs[0], b = cs[1];               /* (cos, sin) of dims p, p+1; p+2, p+3 */
    if (lo) return make_float4(x.x * a.x - y.x * a.y, x.y * a.z - y.y * a.w, x.z * b.x - y.z * b.y, x.w * b.z - y.w * b.w);
    return make_float4(x.x * a.x + y.x * a.y, x.y * a.z + y.y * a.w, x.z * b.x + y.z * b.y, x.w * b.z + y.w * b.w);
}

/* The Q tile, scaled by c_t log2(e)/sqrt(D), as bf16 into the swizzled layout (rows past T zero);
 * with rope (not NULL) rotated first, as a separate RoPE pass would have left it */
template <int D>
FA2_FN void wg_load_q(unsigned char *sQ, const float *q, const float *row_scale, int q0, int T, int H, int h,
                      float qscale, const float2 *rope) {
    constexpr int C4 = D / 4;
    const int tid = fa2_tid();
    const size_t qld = (size_t)H * D;
#pragma unroll 4
    for (int it = 0; it < WG_BM * C4 / WG_THREADS; it++) {
        const int i = tid + it * WG_THREADS, r = i / C4, c = (i % C4) * 4, t = q0 + r;
        float x0 = 0.0f, x1 = 0.0f, x2 = 0.0f, x3 = 0.0f;
        if (t < T) {
            const float sc = qscale * (row_scale ? row_scale[t] : 1.0f);
            const float *qrow = q + (size_t)t * qld + (size_t)h * D;
            const float4 v4 = rope ? wg_rope4<D>(qrow, rope, t, c) : *(const float4 *)(qrow + c);
            x0 = v4.x * sc; x1 = v4.y * sc; x2 = v4.z * sc; x3 = v4.w * sc;
        }
        uint32_t *dst = (uint32_t *)(sQ + wg_sw(WG_BM, r, c));
        dst[0] = fa2_pack_bf16x2(x0, x1);
        dst[1] = fa2_pack_bf16x2(x2, x3);
    }
}

/* S = Q K^T over D/16 k-steps: 64-dim column blocks of 16384 (Q, K) bytes, 32 bytes per step */
template <int D> FA2_FN void wg_issue_s(float (&s)[64], uint32_t q_addr, uint32_t k_addr) {
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++)
        wg_mma_ss(s, wg_desc(q_addr + (kk >> 2) * (WG_BM * 128) + (kk & 3) * 32),
                  wg_desc(k_addr + (kk >> 2) * (WG_BN * 128) + (kk & 3) * 32), kk > 0);
}

/* O += P V: k-step kk covers keys 16kk..16kk+15 = accumulator tiles 2kk, 2kk+1 */
template <int D> FA2_FN void wg_issue_pv(float (&o)[D / 2], const uint32_t (&a)[WG_BN / 16][4], uint32_t v_addr) {
#pragma unroll
    for (int kk = 0; kk < WG_BN / 16; kk++)
        wg_mma_rs<D>(o, a[kk], wg_desc(v_addr + (kk >> 2) * (D * 128) + (kk & 3) * 32));
}

/* the causal and window masks on key tile k0.. (only a tile crossing the diagonal or the
 * window edge has masked entries) */
FA2_FN void wg_mask(float (&s)[64], int k0, int q0, int q_last, int wrow, int g, int tig, int window) {
    if (k0 + WG_BN - 1 > q0 || (window > 0 && k0 <= q_last - window)) {
#pragma unroll
        for (int nt = 0; nt < WG_BN / 8; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int t = q0 + wrow + g + (e >> 1) * 8;
                const int sk_ = k0 + nt * 8 + 2 * tig + (e & 1);
                if (sk_ > t || (window > 0 && sk_ <= t - window)) s[nt * 4 + e] = -INFINITY;
            }
    }
}

/* Online softmax of one tile: s becomes P = exp2(s - the new max), m and l move on, and
 * corr[hf] is what O, accumulated under the old max, must be multiplied by. */
FA2_FN void wg_softmax(float (&s)[64], float (&m)[2], float (&l)[2], float (&corr)[2]) {
#pragma unroll
    for (int hf = 0; hf < 2; hf++) {
        float mx = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < WG_BN / 8; nt++) mx = fmaxf(mx, fmaxf(s[nt * 4 + 2 * hf], s[nt * 4 + 2 * hf + 1]));
        mx = fmaxf(mx, fa2_shfl_xor(mx, 1));
        mx = fmaxf(mx, fa2_shfl_xor(mx, 2));
        const float m_new = fmaxf(m[hf], mx);
        const float base = m_new == -INFINITY ? 0.0f : m_new;
        corr[hf] = fa2_exp2(m[hf] - base);
        m[hf] = m_new;
        float rs = 0.0f;
#pragma unroll
        for (int nt = 0; nt < WG_BN / 8; nt++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const float p = fa2_exp2(s[nt * 4 + 2 * hf + e] - base);
                s[nt * 4 + 2 * hf + e] = p;
                rs += p;
            }
        l[hf] = l[hf] * corr[hf] + rs;
    }
}

template <int D> FA2_FN void wg_rescale(float (&o)[D / 2], const float (&corr)[2]) {
#pragma unroll
    for (int dn = 0; dn < D / 8; dn++) {
        o[dn * 4 + 0] *= corr[0];
        o[dn * 4 + 1] *= corr[0];
        o[dn * 4 + 2] *= corr[1];
        o[dn * 4 + 3] *= corr[1];
    }
}

/* P into the A-fragment registers of the P V product, as bf16 */
FA2_FN void wg_pack_p(uint32_t (&a)[WG_BN / 16][4], const float (&s)[64]) {
#pragma unroll
    for (int kk = 0; kk < WG_BN / 16; kk++) {
        a[kk][0] = fa2_pack_bf16x2(s[8 * kk + 0], s[8 * kk + 1]);
        a[kk][1] = fa2_pack_bf16x2(s[8 * kk + 2], s[8 * kk + 3]);
        a[kk][2] = fa2_pack_bf16x2(s[8 * kk + 4], s[8 * kk + 5]);
        a[kk][3] = fa2_pack_bf16x2(s[8 * kk + 6], s[8 * kk + 7]);
    }
}

/* O / l into rows t and t + 8 (those before T) */
template <int D>
FA2_FN void wg_store(float *out, const float (&o)[D / 2], const float (&l)[2], int t, int T, int H, int h, int tig) {
#pragma unroll
    for (int hf = 0; hf < 2; hf++) {
        float lt = l[hf];
        lt += fa2_shfl_xor(lt, 1);
        lt += fa2_shfl_xor(lt, 2);
        const float inv = lt > 0.0f ? 1.0f / lt : 0.0f;
        if (t + hf * 8 < T) {
            float *dst = out + (size_t)(t + hf * 8) * H * D + (size_t)h * D + 2 * tig;
#pragma unroll
            for (int dn = 0; dn < D / 8; dn++) {
                float2 r2;
                r2.x = o[dn * 4 + 2 * hf] * inv;
                r2.y = o[dn * 4 + 2 * hf + 1] * inv;
                *(float2 *)(dst + dn * 8) = r2;
            }
        }
    }
}

template <int D>
FA2_FN void wg_attention_body(float *out, const float *q, const uint16_t *kb, const uint16_t *vtb,
                              const float *row_scale, int T, int Tp, int H, int Hkv, int window, float qscale,
                              unsigned char *smem_raw) {
    typedef wg_geom<D> G;
    /* 1024-byte aligned base: the swizzle pattern is a function of the shared address */
    unsigned char *smem = smem_raw + ((1024 - (wg_smem_addr(smem_raw) & 1023)) & 1023);
    unsigned char *sQ = smem, *sK = sQ + G::Q_BYTES, *sV = sK + 2 * G::K_BYTES;
    const int tid = fa2_tid(), wg = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31;
    const int g = lane >> 2, tig = lane & 3;
    const fa2_span sp = fa2_span_make(T, H, Hkv, window, WG_BM, WG_BN);
    const int q0 = sp.q0, h = sp.h, kvh = sp.kvh, q_last = sp.q_last, j_first = sp.j_first, j_end = sp.j_end;
    const uint16_t *kh = kb + (size_t)kvh * T * D, *vth = vtb + (size_t)kvh * D * Tp;

    wg_load_kv<D>(sK, sV, kh, vth, j_first, T, Tp);
    fa2_cp_commit();
    wg_load_q<D>(sQ, q, row_scale, q0, T, H, h, qscale, NULL);

    float o[D / 2];                                  /* m64nD accumulator: [8-col tile j][4] */
    float m[2], l[2];                                /* rows g and g+8 of this warp's 16; l per thread */
#pragma unroll
    for (int i = 0; i < D / 2; i++) o[i] = 0.0f;
    m[0] = m[1] = -INFINITY;
    l[0] = l[1] = 0.0f;
    const int wrow = wg * 64 + warp * 16;            /* this warp's first row in the tile */
    const uint32_t q_addr = wg_smem_addr(sQ) + wg * 64 * 128;

    for (int j = j_first; j < j_end; j++) {
        const int st = (j - j_first) & 1;
        if (j + 1 < j_end) {
            wg_load_kv<D>(sK + (st ^ 1) * G::K_BYTES, sV + (st ^ 1) * G::V_BYTES, kh, vth, j + 1, T, Tp);
            fa2_cp_commit();
            fa2_cp_wait1();
        } else {
            fa2_cp_wait0();
        }
        wg_proxy_fence();                            /* this thread's shared writes, visible to the tensor cores */
        fa2_sync();
        const uint32_t k_addr = wg_smem_addr(sK + st * G::K_BYTES), v_addr = wg_smem_addr(sV + st * G::V_BYTES);

        /* Ping-pong: warpgroup 1 issues its S product only once warpgroup 0's is done, so from
         * then on one group's softmax runs while the other's products use the tensor cores
         * (named barrier 1: group 0 arrives, group 1 waits). */
        float s[64];
        if (wg == 1) wg_bar_sync(1, WG_THREADS);
        wg_fence();
        wg_issue_s<D>(s, q_addr, k_addr);
        wg_commit();
        wg_wait0();
        if (wg == 0) wg_bar_arrive(1, WG_THREADS);

        wg_mask(s, j * WG_BN, q0, q_last, wrow, g, tig, window);
        float corr[2];
        wg_softmax(s, m, l, corr);
        wg_rescale<D>(o, corr);
        uint32_t a[WG_BN / 16][4];
        wg_pack_p(a, s);
        wg_fence();
        wg_issue_pv<D>(o, a, v_addr);
        wg_commit();
        wg_wait0();
        fa2_sync();                                  /* stage st fully read before it is refilled */
    }
    wg_store<D>(out, o, l, q0 + wrow + g, T, H, h, tig);
}

/* V fp32 [T, Hkv*D] -> bf16 V^T [Hkv][D][Tp], zeros for T <= t < Tp (K's copy is the FA2
 * kernel's, fa2_convert_kv_body). Element i of Hkv*(D/4)*Tp: t fastest, so a warp writes
 * consecutive tokens of 4 rows. */
template <int D>
FA2_FN void wg_convert_vt_body(uint16_t *vtb, const float *v, int T, int Tp, int Hkv, size_t i) {
    constexpr int C4 = D / 4;
    const size_t t = i % (size_t)Tp, rest = i / (size_t)Tp, c = (rest % C4) * 4, hh = rest / C4;
    float4 b = {0.0f, 0.0f, 0.0f, 0.0f};
    if (t < (size_t)T) b = *(const float4 *)(v + t * Hkv * D + hh * D + c);
    uint16_t *vd = vtb + (hh * D + c) * Tp + t;
    const uint32_t p01 = fa2_pack_bf16x2(b.x, b.y), p23 = fa2_pack_bf16x2(b.z, b.w);
    vd[0] = (uint16_t)(p01 & 0xffffu);
    vd[(size_t)Tp] = (uint16_t)(p01 >> 16);
    vd[(size_t)2 * Tp] = (uint16_t)(p23 & 0xffffu);
    vd[(size_t)3 * Tp] = (uint16_t)(p23 >> 16);
}

#endif
