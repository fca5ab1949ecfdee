/* CPU stand-ins for the CUDA names the decode kernel bodies use (tests/gpu/decode_emu.cpp):
 * threads are coroutines run by demu::launch; __syncthreads and warp shuffles synchronise
 * through it. Blocks run one at a time, so __shared__ becomes a function-local static. */
#ifndef DECODE_EMU_CUDA_RUNTIME_H
#define DECODE_EMU_CUDA_RUNTIME_H

#include <algorithm>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define __host__
#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static

typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1 };
typedef void *cudaStream_t;
struct float2 { float x, y; };      /* kernels.cuh names it (cu_rope_table) */
struct emu_dim3 { unsigned x, y, z; };

namespace demu {
extern emu_dim3 block_idx, block_dim, grid_dim;
const emu_dim3 &thread_idx();
void syncthreads();
float shfl_xor(float v, int mask);
}

#define threadIdx (demu::thread_idx())
#define blockIdx (demu::block_idx)
#define blockDim (demu::block_dim)
#define gridDim (demu::grid_dim)
#define __syncthreads() demu::syncthreads()
#define __shfl_xor_sync(m, v, o) demu::shfl_xor((v), (o))
using std::max;
using std::min;

#endif
