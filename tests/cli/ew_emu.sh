#!/usr/bin/env bash
# The element-wise kernel bodies (kernels/cuda/elementwise_body.cuh: embedding, RoPE, SwiGLU,
# short conv + SiLU, the gla gate) run in the CPU emulator (tests/gpu/ew_emu.cpp) against
# element-by-element references: every element exact, grids with fewer blocks than rows,
# widths that are not multiples of the block. Runs where no GPU exists; the GPU runs them in
# every forward that tests/gpu/parity.sh checks against the CPU engine.
set -u
root=${HS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v g++ >/dev/null || { echo "skip: no g++"; exit 77; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
g++ -O2 -std=c++17 -Wall -Wextra -Werror -Wno-unknown-pragmas -I"$root/tests/gpu/la_emu_include" \
    -I"$root/kernels/cuda" -I"$root/kernels" -I"$root" -o "$W/ew_emu" "$root/tests/gpu/ew_emu.cpp" -lm ||
    { echo "FAIL: ew_emu does not build"; exit 1; }
"$W/ew_emu"
