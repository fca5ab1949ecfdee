/* CPU stand-in (tests/gpu/la_emu.cpp): only the type name is used by the headers. */
#ifndef LA_EMU_CUDA_BF16_H
#define LA_EMU_CUDA_BF16_H
typedef unsigned short __nv_bfloat16;
#endif
