#!/usr/bin/env bash
# Builds the chunked gla/gdn kernel check/bench program (tests/gpu/la_check.cu) into
# ${1:-build}/la_check: the linear-attention kernels only, no engine. Needs nvcc.
set -eu
cd "$(dirname "$0")/../.."
out=${1:-build}/la_check
mkdir -p "$(dirname "$out")"
nvcc -O3 -std=c++17 -I. -Iengine -Ikernels -gencode arch=compute_90,code=sm_90 -o "$out" \
    tests/gpu/la_check.cu kernels/cuda/linattn.cu kernels/cuda/linattn_chunk.cu kernels/cuda/linattn_chunk_gdn.cu
echo "$out"
