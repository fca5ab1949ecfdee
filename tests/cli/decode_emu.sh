#!/usr/bin/env bash
# The incremental-decoding kernel bodies (kernels/cuda/decode_kernels_body.cuh) run in the CPU
# emulator tests/gpu/decode_emu.cpp against double-precision references of the contract: ring
# caches, key ranges and their merge, GQA, head dims that are not multiples of 32, the gla/gdn
# state after a prefill and single steps, SWLA windows. Runs where no GPU exists; the decoder
# on a GPU is checked by tests/gpu/decode_check.sh.
set -u
root=${HS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v g++ >/dev/null || { echo "skip: no g++"; exit 77; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
bash "$root/tests/gpu/decode_emu.sh" quick "$W" > "$W/log" 2>&1 || { tail -20 "$W/log"; echo "FAIL: decode_emu"; exit 1; }
tail -1 "$W/log"
