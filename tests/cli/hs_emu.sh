#!/usr/bin/env bash
# The head-statistics kernel bodies (kernels/cuda/head_stats_body.cuh: softmax, gla, gdn) run in
# the CPU emulator (tests/gpu/hs_emu.cpp on tests/gpu/la_emu_include/emu_runtime.h: threads as
# coroutines, warps drifting as far apart as the barriers allow) against a double-precision
# reference of model-spec section 7: normalised entropy, top-k hit (exact ties included) and
# argmax per (row, head), with GQA, windows, row scales, weak and closed gates, SWLA exact and
# overlap, spans cut by the visible range, empty and dead spans. Runs where no GPU exists.
set -u
root=${HS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v g++ >/dev/null || { echo "skip: no g++"; exit 77; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
g++ -O2 -std=c++17 -Wall -Wextra -Werror -Wno-unknown-pragmas -I"$root/tests/gpu/la_emu_include" \
    -I"$root/kernels/cuda" -I"$root/kernels" -I"$root" -o "$W/hs_emu" "$root/tests/gpu/hs_emu.cpp" -lm ||
    { echo "FAIL: hs_emu does not build"; exit 1; }
"$W/hs_emu"
