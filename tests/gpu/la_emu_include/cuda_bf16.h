/* CPU stand-in (tests/gpu/la_emu.cpp, ew_emu.cpp): the type and its two conversions. */
#ifndef LA_EMU_CUDA_BF16_H
#define LA_EMU_CUDA_BF16_H
#include <stdint.h>
#include <string.h>
typedef unsigned short __nv_bfloat16;
/* round to nearest even, as __float2bfloat16 (tests/gpu/ew_emu.cpp; NaN kept a NaN) */
static inline __nv_bfloat16 __float2bfloat16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (__nv_bfloat16)((u >> 16) | 0x40);
    return (__nv_bfloat16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static inline float __bfloat162float(__nv_bfloat16 b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { return u; }
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b; }
#endif
