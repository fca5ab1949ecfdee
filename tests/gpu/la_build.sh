#!/usr/bin/env bash
# Builds the chunked gla/gdn kernel check/bench program (tests/gpu/la_check.cu) into
# ${1:-build}/la_check (the linear-attention kernels only, no engine), unless it is newer than
# every source it is made of. Prints the binary's path. Needs nvcc. LA_VARIANT=gdn4w builds
# ${1:-build}/la_check_gdn4w instead, with the 4-warp gdn state pass (-DGDN_ST_THREADS=128; one
# partial sum of Vn per step instead of two), for la_bench.sh's same-run comparison;
# LA_VARIANT=gla8w the 8-warp gla output kernel with the 4-deep scan prefetch (-DGLA_THREADS=256
# -DGLA_PF=4, 18-21% slower than the default on the H200, session 8); LA_VARIANT=gla32w the
# 32-warp one (-DGLA_THREADS=1024: capped at 64 registers, a few spills; la_emu passes it);
# LA_VARIANT=gdnout2 the gdn output kernel with 8 warps, S_n read from global memory and two
# blocks a SM (~102 KB each) instead of one 16-warp block with S_n staged (~170 KB);
# LA_VARIANT=dpf8 both gla SWLA scans with the
# drops loaded 8 steps ahead (-DGLA_DPF=8 -DGLA_DPF_EXACT=8; exact's is 8 by default, dpf4 the old 4), LA_VARIANT=burst1 with an overlap burst's drops
# loaded one at a time (-DGLA_BURST=1).
set -eu
cd "$(dirname "$0")/../.."
out=${1:-build}/la_check
flags=
case ${LA_VARIANT:-} in
"") ;;
gla8w) out=${out}_gla8w; flags="-DGLA_THREADS=256 -DGLA_PF=4" ;;
gla32w) out=${out}_gla32w; flags="-DGLA_THREADS=1024" ;;   # 32-warp gla output kernel (64 registers, small spills)
gdn4w) out=${out}_gdn4w; flags="-DGDN_ST_THREADS=128" ;;
gdnout2) out=${out}_gdnout2; flags="-DGDN_OUT_THREADS=256 -DGDN_OUT_BLOCKS=2 -DGDN_OUT_STAGED=0" ;;   # 2 blocks a SM
dpf8) out=${out}_dpf8; flags="-DGLA_DPF=8 -DGLA_DPF_EXACT=8" ;;   # both gla SWLA scans' drops 8 steps ahead (exact's is by default)
dpf4) out=${out}_dpf4; flags="-DGLA_DPF_EXACT=4" ;;   # exact's drops 4 ahead (the default before session 22)
ld1) out=${out}_ld1; flags="-DGLA_LOAD_GROUPS=1 -DGDN_V_LATE=0" ;;   # the gla and gdn local and output kernels' first loads as one group (before session 22)
burst1) out=${out}_burst1; flags="-DGLA_BURST=1" ;;   # an overlap burst's drops loaded one at a time (before session 20)
lineinfo) out=${out}_lineinfo; flags="-lineinfo" ;;   # for ncu's source-level stall sampling (ladetail)
g8bv16) out=${out}_g8bv16; flags="-DG8_BV=16" ;;   # the 8-warp gdn state pass with 16 value columns a block (64 KB of tiles a step for 16)
g8bv32) out=${out}_g8bv32; flags="-DG8_BV=32" ;;   # ... with 32 (a quarter of the 8-column pass's tile traffic, a quarter of its blocks)
*) echo "la_build: unknown LA_VARIANT '$LA_VARIANT' (gla8w, gla32w, gdn4w, gdnout2, dpf8, burst1, lineinfo, dpf4, ld1, g8bv16, g8bv32)" >&2; exit 2 ;;
esac
src="tests/gpu/la_check.cu kernels/cuda/linattn.cu kernels/cuda/linattn_chunk.cu kernels/cuda/linattn_chunk_gdn.cu"
deps="$src tests/gpu/la_check_cases.h kernels/cuda/linattn_chunk_gla_body.cuh kernels/cuda/linattn_chunk_gdn_body.cuh kernels/cuda/linattn_chunk_gdn_state8.cuh kernels/cuda/kernels.cuh kernels/cuda/linattn_chunk.cuh kernels/cuda/linattn_chunk_common.cuh kernels/cuda/linattn_window.h"
stale=1
if [ -x "$out" ]; then
    stale=0
    # PREBUILT=1: a binary built on the development machine and carried in is taken as it is
    # (a copied tree's dates need not be older than it)
    [ "${PREBUILT:-0}" = 1 ] || for f in $deps; do [ "$f" -nt "$out" ] && stale=1; done
fi
if [ $stale = 1 ]; then
    mkdir -p "$(dirname "$out")"
    nvcc -O3 -std=c++17 $flags -I. -Iengine -Ikernels -gencode arch=compute_90,code=sm_90 -o "$out" $src >&2
fi
echo "$out"
