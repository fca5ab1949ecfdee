/* CPU stand-in for cp.async (tests/gpu/la_emu.cpp): copies queue per thread and land at
 * issue or at the covering wait, by the emulator's mode. */
#ifndef LA_EMU_CUDA_PIPELINE_H
#define LA_EMU_CUDA_PIPELINE_H
#include <stddef.h>
namespace emu {
void memcpy_async(void *dst, const void *src, size_t size, size_t zfill);
void commit();
void wait_prior(size_t n);
}
static inline void __pipeline_memcpy_async(void *dst, const void *src, size_t size, size_t zfill = 0) {
    emu::memcpy_async(dst, src, size, zfill);
}
static inline void __pipeline_commit() { emu::commit(); }
static inline void __pipeline_wait_prior(size_t n) { emu::wait_prior(n); }
#endif
