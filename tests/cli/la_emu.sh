#!/usr/bin/env bash
# The chunked gla/gdn kernel bodies (kernels/cuda/linattn_chunk_{gla,gdn}_body.cuh) run in the
# CPU emulator tests/gpu/la_emu.cpp (threads as coroutines, warps drifting as far apart as the
# barriers allow, WMMA/shuffle/cp.async stand-ins) against a double-precision reference of the
# contract's value-path form: gla plain / exact / overlap SWLA, gdn plain / chunk-aligned
# overlap, T around the chunk, head dims 16-48, weak and strong gates. Runs where no GPU
# exists; the GPU check of the compiled kernels is tests/gpu/la_check.cu (device_run.sh kcheck).
# Then the same with the gdn output kernel of the la_bench A/B build (LA_VARIANT=gdnout2: 8
# warps, S_n from global memory, two blocks a SM).
root=${HS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
bash "$root/tests/gpu/emu_run.sh" la_emu quick || exit $?
echo "la_emu, gdnout2 build:"
EMU_CFLAGS="-DGDN_OUT_THREADS=256 -DGDN_OUT_BLOCKS=2 -DGDN_OUT_STAGED=0" exec bash "$root/tests/gpu/emu_run.sh" la_emu quick
