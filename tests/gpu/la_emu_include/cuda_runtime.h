/* CPU stand-ins for the CUDA names the kernel bodies under emulation use (tests/gpu/la_emu.cpp,
 * hs_emu.cpp). Threads are coroutines run by emu::launch (emu_runtime.h); barriers, shuffles and
 * warp-collective matrix operations synchronise through it. Blocks run one at a time, so a
 * static __shared__ variable becomes a function-local static. */
#ifndef LA_EMU_CUDA_RUNTIME_H
#define LA_EMU_CUDA_RUNTIME_H

#include <algorithm>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define __host__
#define __device__
#define __global__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __align__(n)
#define __shared__ static

typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1 };
typedef void *cudaStream_t;
struct int2 { int x, y; };
static inline int2 make_int2(int a, int b) { return int2{a, b}; }
struct float2 { float x, y; };
static inline float2 make_float2(float a, float b) { return float2{a, b}; }
struct float4 { float x, y, z, w; };
struct uint2 { unsigned x, y; };
static inline uint2 make_uint2(unsigned a, unsigned b) { return uint2{a, b}; }
struct uint4 { unsigned x, y, z, w; };
static inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return uint4{a, b, c, d}; }
static inline float4 make_float4(float a, float b, float c, float d) { return float4{a, b, c, d}; }
struct emu_dim3 { unsigned x, y, z; };

namespace emu {
struct Thread;
extern Thread *cur;
extern emu_dim3 block_idx, block_dim, grid_dim;
const emu_dim3 &thread_idx();
void syncthreads();
void syncwarp();
float shfl_xor(float v, int mask);
double shfl_xor(double v, int mask);
int shfl_xor(int v, int mask);
double shfl_up(double v, int delta);
void warp_collective();           /* every lane of the warp reaches this point before any goes on */
void *smem();
void check_tile(const void *p, unsigned ldm, const char *what);
}

#define threadIdx (emu::thread_idx())
#define blockIdx (emu::block_idx)
#define blockDim (emu::block_dim)
#define gridDim (emu::grid_dim)
#define __syncthreads() emu::syncthreads()
#define __syncwarp() emu::syncwarp()
#define __shfl_xor_sync(m, v, o) emu::shfl_xor((v), (o))
#define __shfl_up_sync(m, v, d) emu::shfl_up((v), (d))
#define __expf expf
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
#define LA_SMEM(type, name) type *name = (type *)emu::smem()
static inline float4 __ldg(const float4 *p) { return *p; }
/* cache hints: plain loads and stores on the CPU */
static inline float2 __ldcs(const float2 *p) { return *p; }
static inline void __stcs(float2 *p, float2 v) { *p = v; }
using std::max;
using std::min;

#endif
