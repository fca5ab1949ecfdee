/* The gdn state pass with 8 value columns a block (plain and overlap SWLA; the default where
 * 16 columns a block would leave SMs idle, see gdn_bv8 in linattn_chunk_gdn.cu):
 * twice the blocks of gdn_state_kernel (128 at 8 heads x 128 columns, where the 16-column
 * pass leaves half of an H200's 132 SMs idle) and half of each step's tile products, through
 * mma.sync m16n8k8 (TF32) on fragments read from shared memory: a 16 x 8 tile is the
 * instruction's own shape, where WMMA's smallest TF32 tile is 16 x 16.
 * Per step, as gdn_state_kernel: Vn = U - W S (warp w: row tile w % 4 of the chunk, half w / 4
 * of dk, two accumulators), then S = gamma_last S + Khat^T Vn (warp w: rows 16w.. of S).
 * Shared memory: W [LC][dk+4] and Khat [LC][dk+8] (the paddings make the A-fragment reads of
 * W by rows and of Khat by columns free of bank conflicts), U [LC][G8_LDS], b_last, twice; S
 * [dk][G8_LDS]; the two halves of Vn [LC][G8_LDS] (8 columns by default, see G8_BV below:
 * the A/B builds with 16 or 32). Internal to kernels/cuda (linattn_chunk_gdn.cu);
 * the CPU emulator (tests/gpu/la_emu.cpp) runs it with its own mma primitive. */
#ifndef HS_LINATTN_CHUNK_GDN_STATE8_CUH
#define HS_LINATTN_CHUNK_GDN_STATE8_CUH

#include "linattn_chunk_gdn_body.cuh"

/* G8_BV: value columns a block, 8 by default; -DG8_BV=16 or 32 builds the A/B variants
 * (LA_VARIANT=g8bv16 / g8bv32: a warp's W and Khat fragments serve G8_BV / 8 column tiles, so
 * each step's 64 KB of tiles feeds more columns, with fewer blocks a head). G8_LDS: the row
 * stride of U, S and Vn in shared memory, 8 or G8_BV + 8 (a stride of 8 or 24 mod 32 floats keeps
 * the B-fragment reads (k + t) * G8_LDS + g free of bank conflicts). */
#ifndef G8_BV
#define G8_BV 8
#endif
static_assert(G8_BV == 8 || G8_BV == 16 || G8_BV == 32, "8, 16 or 32 value columns a block");
#define G8_NT (G8_BV / 8)
#define G8_LDS (G8_BV == 8 ? 8 : G8_BV + 8)
#define G8_THREADS 256
#define G8_WARPS (G8_THREADS / 32)

#ifdef LA_EMU_RUNTIME_H
#include "mma_m16n8k8_emu.h"
#else
__device__ __forceinline__ uint32_t la_tf32_bits(float x) { return __float_as_uint(la_tf32(x)); }
/* c += A B: A 16 x 8 (a[0] (g, t), a[1] (g+8, t), a[2] (g, t+4), a[3] (g+8, t+4)), B 8 x 8
 * (b[0] (t, g), b[1] (t+4, g)), C 16 x 8 (c[0..1] (g, 2t..2t+1), c[2..3] (g+8, 2t..)), with
 * g = lane / 4, t = lane % 4; operands rounded to TF32 as cvt.rn (la_tf32). */
__device__ __forceinline__ void la_mma_16x8x8(float (&c)[4], const float (&a)[4], const float (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(la_tf32_bits(a[0])), "r"(la_tf32_bits(a[1])), "r"(la_tf32_bits(a[2])), "r"(la_tf32_bits(a[3])),
                   "r"(la_tf32_bits(b[0])), "r"(la_tf32_bits(b[1])));
}
#endif

typedef gdn_state_layout g8_layout;

__host__ __device__ static g8_layout g8_make(int dk) { return gdn_state_layout_make(dk, 8, G8_LDS, 2); }

static size_t g8_smem(int dk) { return g8_make(dk).total * sizeof(float); }

/* the pass runs where its tiles can be read in the fragments' shapes */
static int g8_fits(int dk, int dv) { return dk % 16 == 0 && dv % G8_BV == 0; }

__device__ static void g8_prefetch(const gdn_args &a, const g8_layout &Ly, float *sm, int b, int n, int h, int col0) {
    const int dk = a.dk, t0 = n * LC;
    const size_t ldw = (size_t)a.H * dk, ldu = (size_t)a.H * a.dv;
    float *base = sm + (size_t)b * Ly.buf;
    la_load_tile_async(base + Ly.w, dk + 4, a.Wb, ldw, (size_t)h * dk, t0, a.N * LC, dk);
    la_load_tile_async(base + Ly.k, dk + 8, a.Kh, ldw, (size_t)h * dk, t0, a.T, dk);
    for (int i = threadIdx.x; i < LC * (G8_BV / 4); i += blockDim.x) {
        const int r = i / (G8_BV / 4), c = (i % (G8_BV / 4)) * 4;
        __pipeline_memcpy_async(base + Ly.u + r * G8_LDS + c, a.Ub + (size_t)(t0 + r) * ldu + (size_t)h * a.dv + col0 + c, 16);
    }
    if (threadIdx.x == 0) __pipeline_memcpy_async(base + Ly.lb, a.Lb + (size_t)n * a.H + h, 4);
}

__global__ static void __launch_bounds__(G8_THREADS, 1) gdn_state8_kernel(gdn_args a) {
    LA_SMEM(float, sm);
    const int dk = a.dk, LDW = dk + 4, LDK = dk + 8;
    const g8_layout Ly = g8_make(dk);
    float *ss = sm + Ly.ss, *vn = sm + Ly.vn;
    const int h = blockIdx.y, tid = threadIdx.x, warp = tid >> 5, g = (tid & 31) >> 2, t = tid & 3;
    const int col0 = blockIdx.x * G8_BV;
    const size_t ldu = (size_t)a.H * a.dv;
    int n_beg = 0, n_out = 0, n_end = a.N;
    if (a.sc > 0) la_overlap_pass((int)blockIdx.z, a.N, a.sc, a.wc, &n_beg, &n_out, &n_end);
    for (int i = tid; i < dk * G8_LDS; i += blockDim.x) ss[i] = 0.0f;
    g8_prefetch(a, Ly, sm, 0, n_beg, h, col0);
    __pipeline_commit();
    for (int n = n_beg; n < n_end; n++) {
        const int t0 = n * LC, b = (n - n_beg) & 1;
        const bool own = n >= n_out;
        const float *base = sm + (size_t)b * Ly.buf, *ws = base + Ly.w, *ks = base + Ly.k, *us = base + Ly.u;
        __pipeline_wait_prior(0);          /* this thread's copies of chunk n (the only group in flight) */
        __syncthreads();                   /* everyone's have landed; step n-1 is done with ss, vn and buffer b^1 */
        if (n + 1 < n_end) {
            g8_prefetch(a, Ly, sm, b ^ 1, n + 1, h, col0);
            __pipeline_commit();
        }
        if (own) {                         /* S_n for the output kernel */
            /* a row of S is G8_BV / 4 float4s (G8_LDS, Sb and dv are multiples of 4 floats) */
            float *sn = a.Sb + ((size_t)n * a.H + h) * dk * a.dv + col0;
            for (int i = tid; i < dk * (G8_BV / 4); i += blockDim.x) {
                const int r = i / (G8_BV / 4), c = 4 * (i % (G8_BV / 4));
                *(float4 *)(sn + (size_t)r * a.dv + c) = *(const float4 *)(ss + r * G8_LDS + c);
            }
        }
        /* the partial Vn of row tile rt over the dk half `part`, each of the G8_NT column
         * tiles from the same W fragments; part 0 starts from -U */
        {
            const int rt = warp & 3, part = warp >> 2, kp = dk >> 1, kb = part * kp;
            const int r0 = rt * 16 + g, r1 = r0 + 8;
            float c0[G8_NT][4], c1[G8_NT][4];
            #pragma unroll
            for (int j = 0; j < G8_NT; j++) {
                const int cj = 8 * j + 2 * t;
                c0[j][0] = part == 0 ? -us[r0 * G8_LDS + cj] : 0.0f;
                c0[j][1] = part == 0 ? -us[r0 * G8_LDS + cj + 1] : 0.0f;
                c0[j][2] = part == 0 ? -us[r1 * G8_LDS + cj] : 0.0f;
                c0[j][3] = part == 0 ? -us[r1 * G8_LDS + cj + 1] : 0.0f;
                c1[j][0] = c1[j][1] = c1[j][2] = c1[j][3] = 0.0f;
            }
            int kk = 0;
            for (; kk + 16 <= kp; kk += 16) {  /* even and odd k-slices in separate accumulators */
                #pragma unroll
                for (int u = 0; u < 2; u++) {
                    const int k = kb + kk + 8 * u;
                    const float fa[4] = {ws[r0 * LDW + k + t], ws[r1 * LDW + k + t], ws[r0 * LDW + k + t + 4],
                                         ws[r1 * LDW + k + t + 4]};
                    #pragma unroll
                    for (int j = 0; j < G8_NT; j++) {
                        const float fb[2] = {ss[(k + t) * G8_LDS + 8 * j + g], ss[(k + t + 4) * G8_LDS + 8 * j + g]};
                        la_mma_16x8x8(u ? c1[j] : c0[j], fa, fb);
                    }
                }
            }
            if (kk < kp) {                     /* dk = 16: one k-slice a half */
                const int k = kb + kk;
                const float fa[4] = {ws[r0 * LDW + k + t], ws[r1 * LDW + k + t], ws[r0 * LDW + k + t + 4],
                                     ws[r1 * LDW + k + t + 4]};
                #pragma unroll
                for (int j = 0; j < G8_NT; j++) {
                    const float fb[2] = {ss[(k + t) * G8_LDS + 8 * j + g], ss[(k + t + 4) * G8_LDS + 8 * j + g]};
                    la_mma_16x8x8(c0[j], fa, fb);
                }
            }
            float *vp = vn + (size_t)part * LC * G8_LDS;
            #pragma unroll
            for (int j = 0; j < G8_NT; j++) {
                const int cj = 8 * j + 2 * t;
                vp[r0 * G8_LDS + cj] = -(c0[j][0] + c1[j][0]);
                vp[r0 * G8_LDS + cj + 1] = -(c0[j][1] + c1[j][1]);
                vp[r1 * G8_LDS + cj] = -(c0[j][2] + c1[j][2]);
                vp[r1 * G8_LDS + cj + 1] = -(c0[j][3] + c1[j][3]);
            }
        }
        __syncthreads();                   /* Vn's halves are whole and every warp is done reading S */
        if (own && a.Vb)
            for (int i = tid; i < LC * (G8_BV / 4); i += blockDim.x) {
                const int r = i / (G8_BV / 4), c = 4 * (i % (G8_BV / 4));
                const float4 x = *(const float4 *)(vn + r * G8_LDS + c), y = *(const float4 *)(vn + LC * G8_LDS + r * G8_LDS + c);
                *(float4 *)(a.Vb + (size_t)(t0 + r) * ldu + (size_t)h * a.dv + col0 + c) =
                    make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
            }
        if (n + 1 == n_end) break;
        /* S = gamma_last S + Khat^T Vn: warp w owns rows 16 tile.. of S (A = Khat^T from Khat's columns) */
        const float gl = expf(base[Ly.lb]);
        for (int tile = warp; tile < dk / 16; tile += G8_WARPS) {
            const int m0 = tile * 16 + g, m1 = m0 + 8;
            float c0[G8_NT][4], c1[G8_NT][4];
            #pragma unroll
            for (int j = 0; j < G8_NT; j++) {
                const int cj = 8 * j + 2 * t;
                c0[j][0] = gl * ss[m0 * G8_LDS + cj];
                c0[j][1] = gl * ss[m0 * G8_LDS + cj + 1];
                c0[j][2] = gl * ss[m1 * G8_LDS + cj];
                c0[j][3] = gl * ss[m1 * G8_LDS + cj + 1];
                c1[j][0] = c1[j][1] = c1[j][2] = c1[j][3] = 0.0f;
            }
            for (int kk = 0; kk < LC; kk += 16) {
                #pragma unroll
                for (int u = 0; u < 2; u++) {
                    const int k = kk + 8 * u;
                    const float fa[4] = {ks[(k + t) * LDK + m0], ks[(k + t) * LDK + m1], ks[(k + t + 4) * LDK + m0],
                                         ks[(k + t + 4) * LDK + m1]};
                    #pragma unroll
                    for (int j = 0; j < G8_NT; j++) {
                        const int c = 8 * j + g;
                        const float fb[2] = {vn[(k + t) * G8_LDS + c] + vn[LC * G8_LDS + (k + t) * G8_LDS + c],
                                             vn[(k + t + 4) * G8_LDS + c] + vn[LC * G8_LDS + (k + t + 4) * G8_LDS + c]};
                        la_mma_16x8x8(u ? c1[j] : c0[j], fa, fb);
                    }
                }
            }
            #pragma unroll
            for (int j = 0; j < G8_NT; j++) {
                const int cj = 8 * j + 2 * t;
                ss[m0 * G8_LDS + cj] = c0[j][0] + c1[j][0];
                ss[m0 * G8_LDS + cj + 1] = c0[j][1] + c1[j][1];
                ss[m1 * G8_LDS + cj] = c0[j][2] + c1[j][2];
                ss[m1 * G8_LDS + cj + 1] = c0[j][3] + c1[j][3];
            }
        }
    }
    __pipeline_wait_prior(0);
}

#endif
