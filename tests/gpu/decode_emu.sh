#!/usr/bin/env bash
# Builds and runs the CPU emulation of the incremental-decoding kernel bodies
# (tests/gpu/decode_emu.cpp; g++ only, no GPU). Usage: decode_emu.sh [quick] [BUILD_DIR].
# Exit 0 when every check is in tolerance.
set -eu
cd "$(dirname "$0")/../.."
mode=${1:-}
out=${2:-build}/decode_emu
mkdir -p "$(dirname "$out")"
g++ -O2 -std=c++17 -Wall -Wextra -Werror -Wno-unknown-pragmas -Itests/gpu/decode_emu_include -Ikernels/cuda \
    -Ikernels -I. tests/gpu/decode_emu.cpp -o "$out" -lm
"$out" $mode
