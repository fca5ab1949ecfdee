/* Pieces shared by the chunked gla and gdn kernels (linattn_chunk*.cu): TF32 WMMA tile
 * products, tile loads, the SWLA visibility rule. Internal to kernels/cuda. */
#ifndef HS_LINATTN_CHUNK_COMMON_CUH
#define HS_LINATTN_CHUNK_COMMON_CUH

#include "kernels.cuh"
#include "linattn_chunk.cuh"
#include "linattn_window.h"

#include <cuda_pipeline.h>
#include <mma.h>

#define LC CU_LA_CHUNK
/* The block's dynamic shared memory (the CPU emulator, tests/gpu/la_emu.cpp, defines its own). */
#ifndef LA_SMEM
#define LA_SMEM(type, name) extern __shared__ __align__(128) type name[]
#endif
static_assert(CU_LA_CHUNK == LA_CHUNK, "one chunk size");
static_assert(CU_SWLA_EXACT == LA_SWLA_EXACT && CU_SWLA_OVERLAP == LA_SWLA_OVERLAP, "one set of SWLA modes");
#define LA_LDA (LC + 4)          /* row stride of a chunk x chunk matrix in shared memory */

typedef nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 8, float> la_acc;
typedef nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 8, nvcuda::wmma::precision::tf32,
                               nvcuda::wmma::row_major> la_a_row;
typedef nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 8, nvcuda::wmma::precision::tf32,
                               nvcuda::wmma::col_major> la_a_col;
typedef nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 8, nvcuda::wmma::precision::tf32,
                               nvcuda::wmma::row_major> la_b_row;
typedef nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 8, nvcuda::wmma::precision::tf32,
                               nvcuda::wmma::col_major> la_b_col;

/* x rounded to TF32 (10 mantissa bits), ties to even. cvt.rn.tf32 is one instruction on sm_90
 * (F2FP.TF32); WMMA's own conversion (cvt.rna, ties away from zero) is two, a compare and a
 * predicated add, and the chunk kernels round every fragment element of every tile product.
 * The two differ only on exact ties (the 13 dropped bits 0x1000). */
__device__ __forceinline__ float la_tf32(float x) {
#ifdef LA_EMU_RUNTIME_H
    return la_emu_tf32_rn(x);
#else
    uint32_t u;
    asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(u) : "f"(x));
    return __uint_as_float(u);
#endif
}

template <typename F> __device__ __forceinline__ void la_round_tf32(F &f) {
    #pragma unroll
    for (int i = 0; i < f.num_elements; i++) f.x[i] = la_tf32(f.x[i]);
}

/* c += A B for one 16 x 16 output tile over K (a multiple of 8). a, b point at the tile's
 * first k-slice; a_step / b_step are the pointer steps (in floats) from one k-slice of 8 to
 * the next (row-major A: 8; column-major A: 8 * lda; row-major B: 8 * ldb; column-major B: 8).
 * All 32 lanes of the warp must call it together. */
template <typename FA, typename FB>
__device__ __forceinline__ void la_mma(la_acc &c, const float *a, unsigned lda, size_t a_step, const float *b,
                                       unsigned ldb, size_t b_step, int K) {
    FA fa;
    FB fb;
    for (int kk = 0; kk < K; kk += 8) {
        nvcuda::wmma::load_matrix_sync(fa, a, lda);
        nvcuda::wmma::load_matrix_sync(fb, b, ldb);
        la_round_tf32(fa);
        la_round_tf32(fb);
        nvcuda::wmma::mma_sync(c, fa, fb, c);
        a += a_step;
        b += b_step;
    }
}

/* c += A B with both operands split into two tf32 halves (x = hi + lo, the lo*lo term
 * dropped): about fp32 accuracy, three tensor-core products per k-slice. The three terms go
 * into separate accumulators, summed at the end: in the sequential passes (one block per
 * head and column block, few warps) the time of a chain of tile products is the tensor
 * cores' latency, and independent accumulators let consecutive products overlap. */
template <typename FA, typename FB>
__device__ __forceinline__ void la_mma_3x(la_acc &c, const float *a, unsigned lda, size_t a_step, const float *b,
                                          unsigned ldb, size_t b_step, int K) {
    FA fa, fa_lo;
    FB fb, fb_lo;
    la_acc l1, l2;
    nvcuda::wmma::fill_fragment(l1, 0.0f);
    nvcuda::wmma::fill_fragment(l2, 0.0f);
    #pragma unroll 4
    for (int kk = 0; kk < K; kk += 8) {
        nvcuda::wmma::load_matrix_sync(fa, a, lda);
        nvcuda::wmma::load_matrix_sync(fb, b, ldb);
        #pragma unroll
        for (int i = 0; i < fa.num_elements; i++) {
            float hi = la_tf32(fa.x[i]);
            fa_lo.x[i] = la_tf32(fa.x[i] - hi);
            fa.x[i] = hi;
        }
        #pragma unroll
        for (int i = 0; i < fb.num_elements; i++) {
            float hi = la_tf32(fb.x[i]);
            fb_lo.x[i] = la_tf32(fb.x[i] - hi);
            fb.x[i] = hi;
        }
        nvcuda::wmma::mma_sync(l1, fa_lo, fb, l1);
        nvcuda::wmma::mma_sync(l2, fa, fb_lo, l2);
        nvcuda::wmma::mma_sync(c, fa, fb, c);
        a += a_step;
        b += b_step;
    }
    #pragma unroll
    for (int i = 0; i < c.num_elements; i++) c.x[i] += l1.x[i] + l2.x[i];
}

/* c += A (B0 + B1) (1xTF32; B1 only where SUMB): B0 + B1 summed in fp32 in the fragments (both
 * have one layout) and rounded once, as if B were whole; even and odd k-slices in separate
 * accumulators (for the sequential passes, where a warp's chain of dependent tile products
 * is the step's latency). */
template <typename FA, typename FB, bool SUMB>
__device__ __forceinline__ void la_mma_2acc(la_acc &c, const float *a, unsigned lda, size_t a_step, const float *b0,
                                            const float *b1, unsigned ldb, size_t b_step, int K) {
    FA fa;
    FB fb, fb1;
    la_acc c1;
    nvcuda::wmma::fill_fragment(c1, 0.0f);
    #pragma unroll 4
    for (int kk = 0; kk < K; kk += 8) {
        nvcuda::wmma::load_matrix_sync(fa, a, lda);
        nvcuda::wmma::load_matrix_sync(fb, b0, ldb);
        if (SUMB) {
            nvcuda::wmma::load_matrix_sync(fb1, b1, ldb);
            #pragma unroll
            for (int i = 0; i < fb.num_elements; i++) fb.x[i] += fb1.x[i];
            b1 += b_step;
        }
        la_round_tf32(fa);
        la_round_tf32(fb);
        if ((kk >> 3) & 1)
            nvcuda::wmma::mma_sync(c1, fa, fb, c1);
        else
            nvcuda::wmma::mma_sync(c, fa, fb, c);
        a += a_step;
        b0 += b_step;
    }
    #pragma unroll
    for (int i = 0; i < c.num_elements; i++) c.x[i] += c1.x[i];
}

/* la_mma_3x where x3, else la_mma */
template <typename FA, typename FB>
__device__ __forceinline__ void la_mma_prec(bool x3, la_acc &c, const float *a, unsigned lda, size_t a_step, const float *b,
                                            unsigned ldb, size_t b_step, int K) {
    if (x3)
        la_mma_3x<FA, FB>(c, a, lda, a_step, b, ldb, b_step, K);
    else
        la_mma<FA, FB>(c, a, lda, a_step, b, ldb, b_step, K);
}

template <typename FA, typename FB>
__device__ __forceinline__ void la_mma_sumb(la_acc &c, const float *a, unsigned lda, size_t a_step, const float *b0,
                                            const float *b1, unsigned ldb, size_t b_step, int K) {
    la_mma_2acc<FA, FB, true>(c, a, lda, a_step, b0, b1, ldb, b_step, K);
}

template <typename FA, typename FB>
__device__ __forceinline__ void la_mma_ilp(la_acc &c, const float *a, unsigned lda, size_t a_step, const float *b,
                                           unsigned ldb, size_t b_step, int K) {
    la_mma_2acc<FA, FB, false>(c, a, lda, a_step, b, b, ldb, b_step, K);
}

/* {a / b, a % b}, out of line: the general walks' set-up is dead code for every head dim a model
 * has, and inlined at every walk it made the kernels ~10% larger */
__device__ __noinline__ static int2 la_divmod(int a, int b) { return make_int2(a / b, a % b); }

/* f(r, c) for every row r < rows (la_tile_each4: a chunk tile's LC) and every fourth column
 * c < d (d a multiple of 4), the block's threads strided over them. The walk carries (r, c) instead of dividing the
 * flat index by a runtime width per element: those divisions were a large share of the gla
 * output kernel's instructions. */
template <typename F> __device__ __forceinline__ void la_rows_each4(int rows, int d, F f) {
    const int q4 = d >> 2, nt = blockDim.x;
    int r, c, dr, dc;
    if (!(q4 & (q4 - 1)) && !(nt & (q4 - 1))) {
        /* d / 4 a power of two that divides the block (every head dim a model has): shifts
         * and masks, and each thread keeps its column (dc = 0). The set-up's division and
         * remainder by the runtime width were ~50 instructions a call. One loop for both
         * cases, so f is inlined once (the kernels are large enough for code size to matter). */
        const int sh = __popc((unsigned)q4 - 1u);
        r = threadIdx.x >> sh; c = threadIdx.x & (q4 - 1); dr = nt >> sh; dc = 0;
    } else {
        const int2 a = la_divmod(threadIdx.x, q4), b = la_divmod(nt, q4);
        r = a.x; c = a.y; dr = b.x; dc = b.y;
    }
    while (r < rows) {
        f(r, 4 * c);
        r += dr;
        c += dc;
        if (c >= q4) { c -= q4; r++; }
    }
}
template <typename F> __device__ __forceinline__ void la_tile_each4(int d, F f) { la_rows_each4(LC, d, f); }

/* 2^x with a subnormal result flushed to zero: every use is a decay factor <= 1 (or a
 * product with one), and the non-ftz instruction needs a range fix-up of three more
 * instructions per call, in the gla output kernel's innermost loop */
__device__ __forceinline__ float la_exp2(float x) {
#ifdef __CUDA_ARCH__
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#else
    return exp2f(x);
#endif
}
#define LA_LOG2E 1.4426950408889634

/* p[0..3] *= s[0..3] (16-byte aligned) */
__device__ __forceinline__ void la_mul4(float *p, float4 s) {
    float4 x = *(float4 *)p;
    x.x *= s.x; x.y *= s.y; x.z *= s.z; x.w *= s.w;
    *(float4 *)p = x;
}

/* dst[r * ldd + c] = src[(t0 + r) * ld + col0 + c] for r < LC, c < d (d a multiple of 4),
 * zero for rows t0 + r >= T. 16-byte loads and stores (every offset is a multiple of 4
 * floats and the buffers are 16-byte aligned), four loads in flight per thread before the
 * stores. */
__device__ __forceinline__ void la_load_tile(float *dst, int ldd, const float *__restrict__ src, size_t ld,
                                             size_t col0, int t0, int T, int d) {
    const int q = d >> 2, total = LC * q, nt = blockDim.x;
    for (int i0 = threadIdx.x; i0 < total; i0 += 4 * nt) {
        float4 x[4];
        #pragma unroll
        for (int u = 0; u < 4; u++) {
            const int i = i0 + u * nt, r = i / q, t = t0 + r;
            x[u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (i < total && t < T) x[u] = __ldg((const float4 *)(src + (size_t)t * ld + col0 + (i % q) * 4));
        }
        #pragma unroll
        for (int u = 0; u < 4; u++) {
            const int i = i0 + u * nt;
            if (i < total) *(float4 *)(dst + (i / q) * ldd + (i % q) * 4) = x[u];
        }
    }
}

/* The same copy through cp.async (no registers, completes at __pipeline_wait_prior). */
__device__ __forceinline__ void la_load_tile_async(float *dst, int ldd, const float *src, size_t ld, size_t col0,
                                                   int t0, int T, int d) {
    const int q4 = d >> 2, nt = blockDim.x;
    if (!(q4 & (q4 - 1)) && !(nt & (q4 - 1))) {
        /* la_rows_each4's fixed-column walk with the addresses as bumped pointers: a row is a
         * copy, two pointer additions and the loop test (the lambda form recomputed a 64-bit
         * row address a row, ~26 instructions a copy in the gdn state pass) */
        const int sh = __popc((unsigned)q4 - 1u), c = 4 * (threadIdx.x & (q4 - 1)), dr = nt >> sh;
        const int rows = min(LC, T - t0);          /* rows with data; the rest are zero-filled */
        int r = threadIdx.x >> sh;
        float *o = dst + r * ldd + c;
        const int ostep = dr * ldd;
        if (r < rows) {
            const float *s = src + (size_t)(t0 + r) * ld + col0 + c;
            const size_t sstep = (size_t)dr * ld;
            for (; r < rows; r += dr, s += sstep, o += ostep) __pipeline_memcpy_async(o, s, 16);
        }
        /* rows past T read nothing; the source address given is row 0's, in bounds */
        for (; r < LC; r += dr, o += ostep) __pipeline_memcpy_async(o, src + col0 + c, 16, 16);
        return;
    }
    /* other widths (head dims like 48 or 96): la_rows_each4's carried walk, kept small in code */
    const int2 a = la_divmod(threadIdx.x, q4), b = la_divmod(nt, q4);
    int r = a.x, c = a.y;
    #pragma unroll 1
    while (r < LC) {
        const int t = t0 + r;
        const bool ok = t < T;
        __pipeline_memcpy_async(dst + r * ldd + 4 * c, src + (size_t)(ok ? t : 0) * ld + col0 + 4 * c, 16, ok ? 0 : 16);
        r += b.x;
        c += b.y;
        if (c >= q4) { c -= q4; r++; }
    }
}

#endif
