/* The FlashAttention-2 style causal attention kernel body (bf16 mma.sync m16n8k16, fp32
 * accumulation), written against a handful of warp primitives so that the same text runs on
 * the GPU (attention_fa2.cu supplies them as PTX) and in the CPU emulator of
 * tests/gpu/fa2_emu.cpp (which supplies them as plain C++ over emulated threads): the
 * fragment layouts, tile index math, masks and the cp.async pipeline are tested without a
 * GPU. The includer supplies, before including this file (attention_ptx.cuh on the GPU):
 *   FA2_FN                           qualifier of every function here
 *   fa2_tid(), fa2_bid_x(), fa2_bid_y()
 *   fa2_sync()                       block barrier
 *   fa2_shfl_xor(float v, int mask)  warp shuffle (all 32 lanes)
 *   fa2_ldsm_x4(r, p), fa2_ldsm_x4_t(r, p)   ldmatrix.x4 (.trans) of bf16 8x8 matrices from shared memory
 *   fa2_mma(c, a, b0, b1)            c[4] += A(16x16, a[4]) B(16x8, b0 b1), bf16 in, fp32 accumulate
 *   fa2_cp_async16(dst, src, n)      16-byte async copy to shared memory, bytes past n zero-filled
 *   fa2_cp_commit(), fa2_cp_wait1(), fa2_cp_wait0()   commit a group; wait for all but the newest / all
 *   fa2_pack_bf16x2(lo, hi)          two floats rounded to bf16 (lo in the low half)
 *   fa2_exp2(x)                      2^x, full precision (no fast-math: softmax path)
 *
 * Contract (the same as cu_attention): z_{t,s} = c_t (q_t . k_s) / sqrt(dk) for visible s
 * (s <= t, and s > t - window when window > 0), out_t = softmax_s(z) . v. q is fp32
 * [T, H*D]; K and V are bf16 head-major copies [Hkv][T][D] (fa2_convert_body writes them);
 * out is fp32 [T, H*D]; GQA: head h reads kv head h / (H/Hkv).
 *
 * Shape: a block owns BM = 128 query rows of one head, 4 warps x 32 rows (two 16-row m-tiles
 * per warp, so each K/V fragment read from shared memory feeds two mma). Key tiles of BN = 64
 * stream through two shared-memory stages (cp.async, the next tile loads while this one is
 * computed). Q is scaled by c_t log2(e)/sqrt(dk) as it is loaded (so scores are in log2 units
 * and the softmax uses exp2), kept in shared memory and read back as A fragments per tile.
 * S = Q K^T and O += P V run on the tensor cores; the online softmax (running max m and sum l
 * per row) runs on the S accumulators in registers; P goes from the accumulators straight
 * into A fragments (the m16n8 accumulator layout is the A layout's two halves). Masks are
 * applied only on tiles that cross the diagonal or the window edge; tiles wholly left of the
 * window are never visited. Rows of the padded last query tile (t >= T) are computed on zero
 * queries and never stored. */
#ifndef HS_ATTENTION_FA2_BODY_CUH
#define HS_ATTENTION_FA2_BODY_CUH

#include "attention_span.cuh"

#define FA2_BM 128                 /* query rows per block */
#define FA2_BN 64                  /* keys per tile */
#define FA2_WARPS 4
#define FA2_THREADS (FA2_WARPS * 32)
#define FA2_PAD 8                  /* bf16 padding per shared row (16 bytes): rows fall on
                                      distinct bank groups, so ldmatrix is conflict-free */

template <int D> struct fa2_geom {
    static constexpr int LD = D + FA2_PAD;           /* shared row stride, bf16 elements */
    static constexpr int Q_ELEMS = FA2_BM * LD;
    static constexpr int KV_ELEMS = FA2_BN * LD;     /* one stage of K (or V) */
    static constexpr size_t SMEM_BYTES = (size_t)(Q_ELEMS + 4 * KV_ELEMS) * 2; /* Q, K[2], V[2] */
};

/* Issues the async loads of key tile j (keys j*BN ...) into one stage; rows at or past T are
 * zero-filled (their source address is clamped to row 0, which always exists). */
template <int D>
FA2_FN void fa2_load_kv(uint16_t *sk, uint16_t *sv, const uint16_t *kh, const uint16_t *vh, int j, int T) {
    constexpr int CPR = D / 8;                       /* 16-byte chunks per row */
    constexpr int RSTEP = FA2_THREADS / CPR;         /* rows one pass of the block covers */
    static_assert(FA2_THREADS % CPR == 0 && FA2_BN % RSTEP == 0, "tile rows split evenly over the threads");
    const int tid = fa2_tid(), r0 = tid / CPR, c = (tid % CPR) * 8;
    const int s0 = j * FA2_BN + r0;                  /* this thread's first key row */
    const uint16_t *kg = kh + (size_t)s0 * D + c, *vg = vh + (size_t)s0 * D + c;
    uint16_t *ks = sk + r0 * fa2_geom<D>::LD + c, *vs = sv + r0 * fa2_geom<D>::LD + c;
#pragma unroll
    for (int it = 0; it < FA2_BN / RSTEP; it++) {
        const bool in = s0 + it * RSTEP < T;
        fa2_cp_async16(ks + it * RSTEP * fa2_geom<D>::LD, in ? kg + (size_t)it * RSTEP * D : kh, in ? 16 : 0);
        fa2_cp_async16(vs + it * RSTEP * fa2_geom<D>::LD, in ? vg + (size_t)it * RSTEP * D : vh, in ? 16 : 0);
    }
}

/* One block (its span: attention_span.cuh). qscale = log2(e)/sqrt(D). */
template <int D>
FA2_FN void fa2_attention_body(float *out, const float *q, const uint16_t *kb, const uint16_t *vb,
                               const float *row_scale, int T, int H, int Hkv, int window, float qscale,
                               unsigned char *smem) {
    typedef fa2_geom<D> G;
    constexpr int LD = G::LD;
    uint16_t *sQ = (uint16_t *)smem;
    uint16_t *sK = sQ + G::Q_ELEMS;                  /* stage st at sK + st * KV_ELEMS */
    uint16_t *sV = sK + 2 * G::KV_ELEMS;
    const int tid = fa2_tid(), warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, tig = lane & 3;         /* mma group and thread in group */
    const fa2_span sp = fa2_span_make(T, H, Hkv, window, FA2_BM, FA2_BN);
    const int q0 = sp.q0, h = sp.h, kvh = sp.kvh, q_last = sp.q_last, j_first = sp.j_first, j_end = sp.j_end;
    const uint16_t *kh = kb + (size_t)kvh * T * D, *vh = vb + (size_t)kvh * T * D;

    fa2_load_kv<D>(sK, sV, kh, vh, j_first, T);
    fa2_cp_commit();

    /* Q tile: fp32 -> scaled bf16 in shared memory (rows past T are zeros) */
    {
        constexpr int C4 = D / 4;
        const size_t qld = (size_t)H * D;
#pragma unroll 4
        for (int it = 0; it < FA2_BM * C4 / FA2_THREADS; it++) {
            const int i = tid + it * FA2_THREADS, r = i / C4, c = (i % C4) * 4, t = q0 + r;
            float x0 = 0.0f, x1 = 0.0f, x2 = 0.0f, x3 = 0.0f;
            if (t < T) {
                const float sc = qscale * (row_scale ? row_scale[t] : 1.0f);
                const float4 v4 = *(const float4 *)(q + (size_t)t * qld + (size_t)h * D + c);
                x0 = v4.x * sc; x1 = v4.y * sc; x2 = v4.z * sc; x3 = v4.w * sc;
            }
            uint32_t *dst = (uint32_t *)(sQ + r * LD + c);
            dst[0] = fa2_pack_bf16x2(x0, x1);
            dst[1] = fa2_pack_bf16x2(x2, x3);
        }
    }

    float o[2][D / 8][4];                            /* [m-tile][8-wide dim tile][fragment] */
    float m[2][2], l[2][2];                          /* [m-tile][row g / g+8]; l per thread, summed over the quad at the end */
#pragma unroll
    for (int mt = 0; mt < 2; mt++) {
#pragma unroll
        for (int hf = 0; hf < 2; hf++) { m[mt][hf] = -INFINITY; l[mt][hf] = 0.0f; }
#pragma unroll
        for (int dn = 0; dn < D / 8; dn++)
#pragma unroll
            for (int e = 0; e < 4; e++) o[mt][dn][e] = 0.0f;
    }
    const int wrow = warp * 32;                      /* this warp's first row in the tile */

    for (int j = j_first; j < j_end; j++) {
        const int st = (j - j_first) & 1;
        if (j + 1 < j_end) {                         /* prefetch the next tile into the other stage */
            fa2_load_kv<D>(sK + (st ^ 1) * G::KV_ELEMS, sV + (st ^ 1) * G::KV_ELEMS, kh, vh, j + 1, T);
            fa2_cp_commit();
            fa2_cp_wait1();
        } else {
            fa2_cp_wait0();
        }
        fa2_sync();                                  /* tile j (and the Q tile) visible to all */
        const uint16_t *sk = sK + st * G::KV_ELEMS, *sv = sV + st * G::KV_ELEMS;

        /* S = Q K^T: s[mt][nt] holds rows wrow + mt*16 + {g, g+8}, keys nt*8 + 2*tig + {0,1} */
        float s[2][FA2_BN / 8][4];
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int nt = 0; nt < FA2_BN / 8; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) s[mt][nt][e] = 0.0f;
#pragma unroll
        for (int kc = 0; kc < D / 16; kc++) {
            uint32_t a[2][4];
#pragma unroll
            for (int mt = 0; mt < 2; mt++)           /* lanes 0-15 rows 0-15 at dims +0, lanes 16-31 at dims +8 */
                fa2_ldsm_x4(a[mt], sQ + (wrow + mt * 16 + (lane & 15)) * LD + kc * 16 + (lane >> 4) * 8);
#pragma unroll
            for (int np = 0; np < FA2_BN / 16; np++) {
                /* matrices: keys 0-7 dims +0 | keys 0-7 dims +8 | keys 8-15 dims +0 | keys 8-15 dims +8
                   = b0, b1 of key tile 2np, then b0, b1 of key tile 2np+1 */
                uint32_t b[4];
                fa2_ldsm_x4(b, sk + (np * 16 + (lane & 7) + (lane >> 4) * 8) * LD + kc * 16 + ((lane >> 3) & 1) * 8);
#pragma unroll
                for (int mt = 0; mt < 2; mt++) {
                    fa2_mma(s[mt][2 * np], a[mt], b[0], b[1]);
                    fa2_mma(s[mt][2 * np + 1], a[mt], b[2], b[3]);
                }
            }
        }

        /* masks, only where the tile crosses the diagonal or the window's left edge */
        const int k0 = j * FA2_BN;
        if (k0 + FA2_BN - 1 > q0 || (window > 0 && k0 <= q_last - window)) {
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int nt = 0; nt < FA2_BN / 8; nt++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const int t = q0 + wrow + mt * 16 + g + (e >> 1) * 8;
                        const int sk_ = k0 + nt * 8 + 2 * tig + (e & 1);
                        if (sk_ > t || (window > 0 && sk_ <= t - window)) s[mt][nt][e] = -INFINITY;
                    }
        }

        /* online softmax per row; a row's 64 scores sit in the 4 lanes of one quad */
#pragma unroll
        for (int mt = 0; mt < 2; mt++)
#pragma unroll
            for (int hf = 0; hf < 2; hf++) {
                float mx = -INFINITY;
#pragma unroll
                for (int nt = 0; nt < FA2_BN / 8; nt++) mx = fmaxf(mx, fmaxf(s[mt][nt][2 * hf], s[mt][nt][2 * hf + 1]));
                mx = fmaxf(mx, fa2_shfl_xor(mx, 1));
                mx = fmaxf(mx, fa2_shfl_xor(mx, 2));
                const float m_new = fmaxf(m[mt][hf], mx);
                const float base = m_new == -INFINITY ? 0.0f : m_new; /* nothing visible yet: keep exp2(-inf) = 0, no NaN */
                const float corr = fa2_exp2(m[mt][hf] - base);
                m[mt][hf] = m_new;
                float rs = 0.0f;
#pragma unroll
                for (int nt = 0; nt < FA2_BN / 8; nt++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const float p = fa2_exp2(s[mt][nt][2 * hf + e] - base);
                        s[mt][nt][2 * hf + e] = p;
                        rs += p;
                    }
                l[mt][hf] = l[mt][hf] * corr + rs;
#pragma unroll
                for (int dn = 0; dn < D / 8; dn++) {
                    o[mt][dn][2 * hf] *= corr;
                    o[mt][dn][2 * hf + 1] *= corr;
                }
            }

        /* O += P V: the accumulators of key tiles 2kc, 2kc+1 are the A fragment of keys kc*16.. */
#pragma unroll
        for (int kc = 0; kc < FA2_BN / 16; kc++) {
            uint32_t a[2][4];
#pragma unroll
            for (int mt = 0; mt < 2; mt++) {
                a[mt][0] = fa2_pack_bf16x2(s[mt][2 * kc][0], s[mt][2 * kc][1]);
                a[mt][1] = fa2_pack_bf16x2(s[mt][2 * kc][2], s[mt][2 * kc][3]);
                a[mt][2] = fa2_pack_bf16x2(s[mt][2 * kc + 1][0], s[mt][2 * kc + 1][1]);
                a[mt][3] = fa2_pack_bf16x2(s[mt][2 * kc + 1][2], s[mt][2 * kc + 1][3]);
            }
#pragma unroll
            for (int dp = 0; dp < D / 16; dp++) {
                /* transposed matrices: keys 0-7 dims +0 | keys 8-15 dims +0 | keys 0-7 dims +8 | keys 8-15 dims +8
                   = b0, b1 of dim tile 2dp, then b0, b1 of dim tile 2dp+1 */
                uint32_t b[4];
                fa2_ldsm_x4_t(b, sv + (kc * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * LD + dp * 16 + (lane >> 4) * 8);
#pragma unroll
                for (int mt = 0; mt < 2; mt++) {
                    fa2_mma(o[mt][2 * dp], a[mt], b[0], b[1]);
                    fa2_mma(o[mt][2 * dp + 1], a[mt], b[2], b[3]);
                }
            }
        }
        fa2_sync();                                  /* stage st fully read before it is refilled */
    }

    const size_t old = (size_t)H * D;
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int hf = 0; hf < 2; hf++) {
            float lt = l[mt][hf];
            lt += fa2_shfl_xor(lt, 1);
            lt += fa2_shfl_xor(lt, 2);
            const float inv = lt > 0.0f ? 1.0f / lt : 0.0f;
            const int t = q0 + wrow + mt * 16 + g + hf * 8;
            if (t < T) {
                float *dst = out + (size_t)t * old + (size_t)h * D + 2 * tig;
#pragma unroll
                for (int dn = 0; dn < D / 8; dn++) {
                    float2 r2;
                    r2.x = o[mt][dn][2 * hf] * inv;
                    r2.y = o[mt][dn][2 * hf + 1] * inv;
                    *(float2 *)(dst + dn * 8) = r2;
                }
            }
        }
}

/* K (or V) fp32 [T, Hkv*D] -> bf16 head-major [Hkv][T][D]; element group i (4 floats). */
template <int D>
FA2_FN void fa2_convert_body(uint16_t *dst, const float *src, int T, int Hkv, size_t i) {
    constexpr int C4 = D / 4;
    const size_t per_t = (size_t)Hkv * C4;
    const size_t t = i / per_t, rem = i % per_t, hh = rem / C4, c = (rem % C4) * 4;
    const float4 a = *(const float4 *)(src + t * Hkv * D + hh * D + c);
    uint32_t *d = (uint32_t *)(dst + (hh * T + t) * D + c);
    d[0] = fa2_pack_bf16x2(a.x, a.y);
    d[1] = fa2_pack_bf16x2(a.z, a.w);
}

#endif
