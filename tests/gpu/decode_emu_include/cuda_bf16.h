/* CPU stand-in (tests/gpu/decode_emu.cpp): bf16 as its bit pattern, widened exactly. */
#ifndef DECODE_EMU_CUDA_BF16_H
#define DECODE_EMU_CUDA_BF16_H
#include <stdint.h>
#include <string.h>
struct __nv_bfloat16 { uint16_t bits; };
static inline float __bfloat162float(__nv_bfloat16 b) {
    uint32_t u = (uint32_t)b.bits << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
#endif
