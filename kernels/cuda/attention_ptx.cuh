/* The warp primitives of the attention kernel bodies (attention_fa2_body.cuh,
 * attention_wg_body.cuh) as PTX, for the GPU build; tests/gpu/fa2_emu.cpp supplies the same
 * names as a CPU emulation. The wgmma part exists only where the compiler targets sm_90a
 * (__CUDA_ARCH_FEAT_SM90_ALL). */
#ifndef HS_ATTENTION_PTX_CUH
#define HS_ATTENTION_PTX_CUH

#include <cuda_bf16.h>
#include <stdint.h>
#include <string.h>

#define FA2_FN __device__ __forceinline__

FA2_FN int fa2_tid(void) { return (int)threadIdx.x; }
FA2_FN int fa2_bid_x(void) { return (int)blockIdx.x; }
FA2_FN int fa2_bid_y(void) { return (int)blockIdx.y; }
FA2_FN void fa2_sync(void) { __syncthreads(); }
FA2_FN void fa2_syncwarp(void) { __syncwarp(); }
FA2_FN float fa2_shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
FA2_FN float fa2_exp2(float x) { return exp2f(x); }

FA2_FN uint32_t fa2_pack_bf16x2(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi); /* .x (lo) in the low 16 bits */
    uint32_t r;
    memcpy(&r, &v, sizeof r);
    return r;
}

FA2_FN void fa2_ldsm_x4(uint32_t (&r)[4], const uint16_t *p) {
    const uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}

FA2_FN void fa2_ldsm_x4_t(uint32_t (&r)[4], const uint16_t *p) {
    const uint32_t a = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}

FA2_FN void fa2_mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

FA2_FN void fa2_cp_async16(void *dst, const void *src, int n) {
    const uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(n) : "memory");
}
FA2_FN void fa2_cp_commit(void) { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
FA2_FN void fa2_cp_wait1(void) { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }
FA2_FN void fa2_cp_wait0(void) { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

/* Pins a register for the compiler: reads and writes of x stay on their side of this point.
 * wgmma reads its A registers and accumulates into its accumulator between issue and wait,
 * which the compiler does not see; values are pinned after each wait before use. */
FA2_FN void wg_pin(float &x) { asm volatile("" : "+f"(x)::"memory"); }
FA2_FN void wg_pin(uint32_t &x) { asm volatile("" : "+r"(x)::"memory"); }

/* wgmma primitives: real only where the target is sm_90a. Other images (sm_90, the PTX) get
 * trapping stand-ins so the body template still compiles there; they never run, because the
 * host launches the wgmma kernel only after a probe saw the sm_90a image (attention_wg.cu). */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
FA2_FN uint32_t wg_smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
FA2_FN void wg_fence(void) { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
FA2_FN void wg_commit(void) { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
FA2_FN void wg_wait0(void) { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
/* generic-proxy shared writes (st.shared, cp.async) made visible to the async proxy (wgmma) */
FA2_FN void wg_proxy_fence(void) { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
FA2_FN void wg_bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory"); }
FA2_FN void wg_bar_arrive(int id, int n) { asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory"); }
FA2_FN void wg_wait1(void) { asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory"); }

/* mbarriers (shared::cta, 8 bytes) and the bulk copy engine (TMA, 1-D form): a copy counts its
 * bytes against the barrier's expected transaction bytes, and a phase completes when every
 * arrival and every byte is in. */
FA2_FN void wg_mbar_init(uint64_t *bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(wg_smem_addr(bar)), "r"(count) : "memory");
}
/* the initialisation, visible to the async proxy (the copy engine) */
FA2_FN void wg_mbar_init_fence(void) { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
FA2_FN void wg_mbar_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(wg_smem_addr(bar)) : "memory");
}
/* one arrival that also announces bytes the copies of this phase will bring */
FA2_FN void wg_mbar_arrive_tx(uint64_t *bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(wg_smem_addr(bar)), "r"(bytes)
                 : "memory");
}
/* until the phase of parity `parity` has completed */
FA2_FN void wg_mbar_wait(uint64_t *bar, int parity) {
    asm volatile("{\n.reg .pred done;\nLAB_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@done bra LAB_DONE;\nbra LAB_WAIT;\nLAB_DONE:\n}\n" ::"r"(wg_smem_addr(bar)), "r"(parity)
                 : "memory");
}
/* bytes (a multiple of 16, both addresses 16-byte aligned) from global to shared memory */
FA2_FN void wg_bulk_load(void *dst, const void *src, uint32_t bytes, uint64_t *bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                 ::"r"(wg_smem_addr(dst)), "l"(src), "r"(bytes), "r"(wg_smem_addr(bar)) : "memory");
}

/* d[64] (+)= A B, m64n128k16, A and B from shared memory (descriptors), both K-major */
FA2_FN void wg_mma_ss(float (&d)[64], uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db), "r"(scale_d));
}

/* d[N/2] += A B, m64nNk16, A from registers (the mma.sync A layout per warp), B K-major from shared memory */
template <int N> FA2_FN void wg_mma_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t db);
template <> FA2_FN void wg_mma_rs<64>(float (&d)[32], const uint32_t (&a)[4], uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}
template <> FA2_FN void wg_mma_rs<128>(float (&d)[64], const uint32_t (&a)[4], uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}
#else
FA2_FN uint32_t wg_smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
FA2_FN void wg_fence(void) { __trap(); }
FA2_FN void wg_commit(void) { __trap(); }
FA2_FN void wg_wait0(void) { __trap(); }
FA2_FN void wg_proxy_fence(void) { __trap(); }
FA2_FN void wg_bar_sync(int, int) { __trap(); }
FA2_FN void wg_bar_arrive(int, int) { __trap(); }
FA2_FN void wg_wait1(void) { __trap(); }
FA2_FN void wg_mbar_init(uint64_t *, int) { __trap(); }
FA2_FN void wg_mbar_init_fence(void) { __trap(); }
FA2_FN void wg_mbar_arrive(uint64_t *) { __trap(); }
FA2_FN void wg_mbar_arrive_tx(uint64_t *, uint32_t) { __trap(); }
FA2_FN void wg_mbar_wait(uint64_t *, int) { __trap(); }
FA2_FN void wg_bulk_load(void *, const void *, uint32_t, uint64_t *) { __trap(); }
FA2_FN void wg_mma_ss(float (&)[64], uint64_t, uint64_t, int) { __trap(); }
template <int N> FA2_FN void wg_mma_rs(float (&)[N / 2], const uint32_t (&)[4], uint64_t) { __trap(); }
#endif

#endif
