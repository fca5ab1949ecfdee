#!/usr/bin/env bash
# The chunked gla/gdn kernel bodies (kernels/cuda/linattn_chunk_{gla,gdn}_body.cuh) run in the
# CPU emulator tests/gpu/la_emu.cpp (threads as coroutines, warps drifting as far apart as the
# barriers allow, WMMA/shuffle/cp.async stand-ins) against a double-precision reference of the
# contract's value-path form: gla plain / exact / overlap SWLA, gdn plain / chunk-aligned
# overlap, T around the chunk, head dims 16-48, weak and strong gates. Runs where no GPU
# exists; the GPU check of the compiled kernels is tests/gpu/la_check.cu (device_run.sh kcheck).
# Then two gdn cases with each A/B build of the state pass (G8_BV=16, 32) and the whole set with
# the gdn output kernel of the la_bench A/B build (LA_VARIANT=gdnout2: 8 warps, S_n from global
# memory, two blocks a SM).
root=${HS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
bash "$root/tests/gpu/emu_run.sh" la_emu quick || exit $?
# the gdn state pass's A/B builds with 16 and 32 value columns a block (LA_VARIANT=g8bv16 /
# g8bv32): a plain and an overlap case each (the state8 rows of a case run that pass)
for bv in 16 32; do
    echo "la_emu, G8_BV=$bv build:"
    for c in "200 2 32 32 0.05 0 0 0" "300 1 32 32 0.02 2 128 64"; do
        out=$(EMU_CFLAGS="-DG8_BV=$bv" bash "$root/tests/gpu/emu_run.sh" la_emu case gdn $c) || { echo "$out"; exit 1; }
        echo "$out" | grep state8 || { echo "la_emu: no state8 run in case $c"; exit 1; }
    done
done
echo "la_emu, gdnout2 build:"
EMU_CFLAGS="-DGDN_OUT_THREADS=256 -DGDN_OUT_BLOCKS=2 -DGDN_OUT_STAGED=0" exec bash "$root/tests/gpu/emu_run.sh" la_emu quick
