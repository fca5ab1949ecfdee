#!/usr/bin/env bash
# The FA2 attention kernel body (kernels/cuda/attention_fa2_body.cuh) run in the CPU emulator
# tests/gpu/fa2_emu.cpp (emulated ldmatrix / mma.sync / cp.async / barriers, from their PTX
# definitions) against a double-precision reference of the attention contract: causal,
# windows, GQA, log scaling, head dims 64/128, T not a multiple of the tiles. Runs where no
# GPU exists; the GPU check of the compiled kernel is tests/gpu/attn_fa2.cu (device_run.sh kcheck).
set -u
root=${HS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v g++ >/dev/null || { echo "skip: no g++"; exit 77; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
g++ -O2 -std=c++17 -fno-strict-aliasing -Wall -Wextra -Werror -Wno-unknown-pragmas -I"$root" \
    -o "$W/fa2_emu" "$root/tests/gpu/fa2_emu.cpp" || { echo "FAIL: fa2_emu does not build"; exit 1; }
"$W/fa2_emu" quick
