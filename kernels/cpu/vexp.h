/* exp(x) for float written so that compilers vectorise it inside `#pragma omp simd` loops
 * (no calls, no branches): Cody-Waite reduction x = n ln2 + r with |r| <= ln2/2, the Cephes
 * degree-7 polynomial for e^r, and 2^n built from the exponent bits. Max relative error
 * against exp() in double is 8.1e-8 (libm expf: 6.0e-8; checked by tests/test_kernels.c), the same
 * class of accuracy as libm's expf: this is not a fast-math approximation. x < -86.6 (where
 * the result is below 2.4e-38) returns 0, x > 88.72 returns +inf, NaN returns NaN. */
#ifndef HS_VEXP_H
#define HS_VEXP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline __attribute__((always_inline)) float hs_expf(float x) {
    const float lo = -86.6f, hi = 88.72f;
    float xc = x < lo ? lo : x;
    xc = xc > hi ? hi : xc;
    /* n = round(x / ln2) with the 1.5 * 2^23 trick; its bits also carry n as an integer */
    float t = xc * 1.44269504088896341f + 12582912.0f;
    float n = t - 12582912.0f;
    uint32_t ni; /* unsigned: NaN inputs must not overflow (the result is replaced below) */
    memcpy(&ni, &t, sizeof ni);
    ni -= 0x4B400000u;
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float y = 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * (r * r) + r + 1.0f;
    /* 2^(n-1) * 2 keeps n = 128 (x just below the overflow point) representable */
    uint32_t bits = (ni + 126u) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    float res = y * scale * 2.0f;
    res = x < lo ? 0.0f : res;
    res = x > hi ? INFINITY : res;
    res = x != x ? x : res;
    return res;
}

/* log1p(u) for u in [0, 1] (NaN stays NaN), written like hs_expf to vectorise inside `#pragma
 * omp simd` loops: w = 1 + u with the rounding of that sum carried as a correction (u - (w - 1))
 * / w (w - 1 is exact for w in [1, 2]), log w by the Cephes logf reduction to [sqrt(1/2),
 * sqrt(2)) and its degree-8 polynomial. Max relative error against log1p() in double 1.3e-7
 * (libm log1pf: 7.8e-8, same grid; checked by tests/test_kernels.c). For logsigmoid / softplus, whose
 * log1p(exp(-|z|)) has its argument in (0, 1]. */
static inline __attribute__((always_inline)) float hs_log1pf_unit(float u) {
    float w = 1.0f + u;
    float c = (u - (w - 1.0f)) / w;
    int big = w > 1.41421356237f;
    float f = big ? w * 0.5f : w;
    float e = big ? 1.0f : 0.0f;
    float t = f - 1.0f;
    float z = t * t;
    float y = 7.0376836292e-2f;
    y = y * t - 1.1514610310e-1f;
    y = y * t + 1.1676998740e-1f;
    y = y * t - 1.2420140846e-1f;
    y = y * t + 1.4249322787e-1f;
    y = y * t - 1.6668057665e-1f;
    y = y * t + 2.0000714765e-1f;
    y = y * t - 2.4999993993e-1f;
    y = y * t + 3.3333331174e-1f;
    y = y * t * z;
    y = y + e * -2.12194440e-4f;
    y = y - 0.5f * z;
    return (t + y + e * 0.693359375f) + c;
}

/* Hot elementwise loops get AVX-512 / AVX2 clones chosen at load time (the build itself
 * targets baseline x86-64). */
#if defined(__x86_64__) && !defined(__clang__)
#define HS_VEC_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HS_VEC_CLONES
#endif

#endif
