/* CPU stand-in for the WMMA API (tests/gpu/la_emu.cpp). Every lane holds the whole tile, so
 * the element-wise operations the kernels apply (uniform over x[]) mean the same as on the GPU
 * whatever the real fragment layout; loads and stores are warp-collective (no lane stores
 * before every lane has loaded), pointers must be 32-byte aligned and ldm a multiple of 4. */
#ifndef LA_EMU_MMA_H
#define LA_EMU_MMA_H
#include <string.h>
#include <type_traits>
#include "cuda_runtime.h"

/* cvt.rn.tf32.f32 (the kernels' la_tf32): 10 mantissa bits, ties to even */
static inline float la_emu_tf32_rn(float f) {
    if (!isfinite(f)) return f;
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu;
    memcpy(&f, &u, 4);
    return f;
}

namespace nvcuda {
namespace wmma {
struct row_major {};
struct col_major {};
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
namespace precision { struct tf32 {}; }
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment {
    static constexpr int R = std::is_same<Use, matrix_b>::value ? K : M;
    static constexpr int C = std::is_same<Use, matrix_a>::value ? K : N;
    enum { num_elements = R * C };
    float x[R * C];
};

static inline float __float_to_tf32(float f) {   /* cvt.rna.tf32.f32: 10 mantissa bits, ties away */
    if (!isfinite(f)) return f;
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0x1000u) & ~0x1fffu;
    memcpy(&f, &u, 4);
    return f;
}

template <class Use, int M, int N, int K, class T, class L>
void load_matrix_sync(fragment<Use, M, N, K, T, L> &f, const float *p, unsigned ldm) {
    emu::warp_collective();
    emu::check_tile(p, ldm, "load_matrix_sync");
    typedef fragment<Use, M, N, K, T, L> F;
    for (int r = 0; r < F::R; r++)
        for (int c = 0; c < F::C; c++)
            f.x[r * F::C + c] = std::is_same<L, row_major>::value ? p[(size_t)r * ldm + c] : p[(size_t)c * ldm + r];
    emu::warp_collective();
}

template <int M, int N, int K, class T>
void load_matrix_sync(fragment<accumulator, M, N, K, T> &f, const float *p, unsigned ldm, layout_t l) {
    emu::warp_collective();
    emu::check_tile(p, ldm, "load_matrix_sync(accumulator)");
    for (int r = 0; r < M; r++)
        for (int c = 0; c < N; c++) f.x[r * N + c] = l == mem_row_major ? p[(size_t)r * ldm + c] : p[(size_t)c * ldm + r];
    emu::warp_collective();
}

template <int M, int N, int K, class T>
void store_matrix_sync(float *p, const fragment<accumulator, M, N, K, T> &f, unsigned ldm, layout_t l) {
    emu::warp_collective();
    emu::check_tile(p, ldm, "store_matrix_sync");
    if (emu::thread_idx().x % 32 == 0)
        for (int r = 0; r < M; r++)
            for (int c = 0; c < N; c++) (l == mem_row_major ? p[(size_t)r * ldm + c] : p[(size_t)c * ldm + r]) = f.x[r * N + c];
    emu::warp_collective();
}

template <class F> void fill_fragment(F &f, float v) {
    for (int i = 0; i < F::num_elements; i++) f.x[i] = v;
}

template <int M, int N, int K, class T, class LA, class LB>
void mma_sync(fragment<accumulator, M, N, K, float> &d, const fragment<matrix_a, M, N, K, T, LA> &a,
              const fragment<matrix_b, M, N, K, T, LB> &b, const fragment<accumulator, M, N, K, float> &c) {
    float out[M * N];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = c.x[i * N + j];
            for (int k = 0; k < K; k++) s += a.x[i * K + k] * b.x[k * N + j];
            out[i * N + j] = s;
        }
    memcpy(d.x, out, sizeof out);
}
} // namespace wmma
} // namespace nvcuda
#endif
