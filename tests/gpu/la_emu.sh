#!/usr/bin/env bash
# Builds and runs the CPU emulation of the chunked gla/gdn kernel bodies (tests/gpu/la_emu.cpp;
# g++ only, no GPU). Usage: la_emu.sh [quick|lacheck] [BUILD_DIR]. Exit 0 when every run is in
# tolerance (lacheck: la_check's gla cases on la_check's own inputs, ~20 min).
set -eu
cd "$(dirname "$0")/../.."
mode=${1:-}
out=${2:-build}/la_emu
mkdir -p "$(dirname "$out")"
g++ -O2 -std=c++17 -Wno-unknown-pragmas -Itests/gpu/la_emu_include -Ikernels/cuda -Ikernels -I. \
    tests/gpu/la_emu.cpp -o "$out" -lm
"$out" $mode
