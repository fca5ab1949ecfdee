/* CPU stand-in for mma.sync.m16n8k8 (TF32) with the PTX fragment layouts, for the kernels
 * that call la_mma_16x8x8 (kernels/cuda/linattn_chunk_gdn_state8.cuh). Unlike the WMMA
 * stand-in (mma.h: every lane holds the whole tile), each lane holds only its own fragment
 * elements, so a kernel that reads a fragment element from the wrong place computes a wrong
 * product here as on the GPU: lane (g = lane / 4, t = lane % 4) holds A (g, t), (g+8, t),
 * (g, t+4), (g+8, t+4); B (t, g), (t+4, g); C (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1).
 * Operands are rounded as cvt.rn.tf32 (la_tf32); products summed in double, then added to C. */
#ifndef LA_EMU_MMA_M16N8K8_H
#define LA_EMU_MMA_M16N8K8_H
#include "mma.h"

namespace emu {
static float mma8_slots[2][32][32][6];     /* [buffer][warp][lane][a0..a3, b0, b1] */
}

static inline void la_mma_16x8x8(float (&c)[4], const float (&a)[4], const float (&b)[2]) {
    const int lane = emu::cur->idx.x % 32, w = emu::cur->idx.x / 32, buf = emu::cur->xseq++ & 1;
    float *s = emu::mma8_slots[buf][w][lane];
    for (int i = 0; i < 4; i++) s[i] = la_emu_tf32_rn(a[i]);
    s[4] = la_emu_tf32_rn(b[0]);
    s[5] = la_emu_tf32_rn(b[1]);
    emu::warp_collective();                 /* every lane's operands are in (see emu::exchange) */
    const int g = lane / 4, t = lane % 4;
    for (int e = 0; e < 4; e++) {
        const int row = g + 8 * (e / 2), col = 2 * t + e % 2;
        double acc = 0.0;
        for (int k = 0; k < 8; k++) {
            const float av = emu::mma8_slots[buf][w][(row % 8) * 4 + k % 4][(row >= 8) + 2 * (k >= 4)];
            const float bv = emu::mma8_slots[buf][w][col * 4 + k % 4][4 + (k >= 4)];
            acc += (double)av * bv;
        }
        c[e] = (float)((double)c[e] + acc);
    }
}
#endif
