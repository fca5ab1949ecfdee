/* tests/gpu/la_check.cu's case list and input generator, shared with tests/gpu/la_emu.cpp's
 * `lacheck` mode, which replays the same cases on the same inputs on the CPU (so a case that
 * fails on a GPU can be looked at there). Host code only; needs CU_SWLA_* (kernels.cuh). */
#ifndef HS_LA_CHECK_CASES_H
#define HS_LA_CHECK_CASES_H

#include <stddef.h>

static unsigned la_check_rng = 12345u;
static float la_check_urand(void) { /* [0, 1) */
    la_check_rng = la_check_rng * 1664525u + 1013904223u;
    return (float)((la_check_rng >> 8) & 0xffffff) / 16777216.0f;
}

/* One case's inputs, each array whole and in this order: q, k, v uniform in [-1, 1), gk uniform
 * in [-g, 0), beta uniform in [0, bmax), ln alpha uniform in [-g, 0) (gdn then normalises q and
 * k per head; that draws nothing). */
static void la_check_fill(float *q, float *k, float *v, float *gk, float *be, float *la, int T, int H, int dk,
                          int dv, float g, float bmax) {
    const size_t nk = (size_t)T * H * dk, nv = (size_t)T * H * dv, nr = (size_t)T * H;
    for (size_t i = 0; i < nk; i++) q[i] = 2.0f * la_check_urand() - 1.0f;
    for (size_t i = 0; i < nk; i++) k[i] = 2.0f * la_check_urand() - 1.0f;
    for (size_t i = 0; i < nv; i++) v[i] = 2.0f * la_check_urand() - 1.0f;
    for (size_t i = 0; i < nk; i++) gk[i] = -g * la_check_urand();
    for (size_t i = 0; i < nr; i++) be[i] = bmax * la_check_urand();
    for (size_t i = 0; i < nr; i++) la[i] = -g * la_check_urand();
}

/* c(gdn, T, H, dk, dv, g, bmax, swla, W, S) for every case, in order (bmax: gdn's beta bound) */
template <class F> static void la_check_cases(F c) {
    for (int gdn = 0; gdn < 2; gdn++)
        for (int T : {1, 63, 64, 65, 1001, 4099})
            for (int strong = 0; strong < 2; strong++)
                /* weak: about 0.001 e-folds a step (long memory); strong: up to 6 (gla) / 3 (gdn)
                 * e-folds a step, far past exp's range over a chunk */
                c(gdn, T, 2, 128, 128, strong ? (gdn ? 3.0f : 6.0f) : 0.002f, 1.0f, CU_SWLA_OFF, 0, 0);
    /* other head dims (multiples of 16), a mid decay */
    const int dims[][2] = {{64, 64}, {64, 32}, {16, 16}, {32, 128}};
    for (auto &d : dims) {
        c(0, 1001, 3, d[0], d[1], 0.3f, 1.0f, CU_SWLA_OFF, 0, 0);
        c(1, 1001, 3, d[0], d[1], 0.3f, 1.0f, CU_SWLA_OFF, 0, 0);
    }
    c(1, 1001, 2, 128, 128, 0.05f, 2.0f, CU_SWLA_OFF, 0, 0); /* allow_neg_eigval: beta up to 2 */
    /* gla exact SWLA: window a multiple of the chunk (one cut chunk: its products built early
     * where the output kernel is staged at level 2; 256 also carries a window decay), not,
     * longer than most of the input */
    for (int W : {64, 100, 256, 1000})
        for (int T : {65, 1001, 4099})
            for (int strong = 0; strong < 2; strong++)
                c(0, T, 2, 128, 128, strong ? 6.0f : 0.002f, 1.0f, CU_SWLA_EXACT, W, 0);
    c(0, 1001, 2, 64, 32, 0.3f, 1.0f, CU_SWLA_EXACT, 30, 0);   /* window shorter than a chunk */
    c(0, 1001, 2, 16, 16, 0.3f, 1.0f, CU_SWLA_EXACT, 1, 0);    /* each query sees itself only */
    /* gla overlap SWLA: chunk-aligned blocks, stride below the chunk, blocks straddling chunks */
    const int WS[][2] = {{256, 64}, {100, 30}, {1000, 250}, {1000, 300}, {77, 77}};
    for (auto &ws : WS)
        for (int strong = 0; strong < 2; strong++)
            c(0, 4099, 2, 128, 128, strong ? 6.0f : 0.002f, 1.0f, CU_SWLA_OVERLAP, ws[0], ws[1]);
    /* gdn overlap SWLA (chunk-aligned W and S: per-block restarted state passes) */
    const int GWS[][2] = {{256, 64}, {1024, 256}, {128, 128}, {640, 192}};
    for (auto &ws : GWS)
        for (int strong = 0; strong < 2; strong++)
            c(1, 4099, 2, 128, 128, strong ? 3.0f : 0.002f, 1.0f, CU_SWLA_OVERLAP, ws[0], ws[1]);
    c(1, 1001, 3, 64, 32, 0.3f, 1.0f, CU_SWLA_OVERLAP, 192, 64);
    /* gdn exact SWLA (W a multiple of the chunk, >= 2 chunks: block prefix/suffix passes) */
    for (int W : {128, 192, 1024})
        for (int strong = 0; strong < 2; strong++)
            c(1, 4099, 2, 128, 128, strong ? 3.0f : 0.002f, 1.0f, CU_SWLA_EXACT, W, 0);
    c(1, 1001, 3, 64, 32, 0.3f, 1.0f, CU_SWLA_EXACT, 256, 0);
    c(1, 1001, 2, 16, 16, 0.05f, 2.0f, CU_SWLA_EXACT, 128, 0);
}

#endif
