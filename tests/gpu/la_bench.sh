#!/usr/bin/env bash
# Bench rows of the chunked gla/gdn kernels (tests/gpu/la_check.cu bench): recurrences vs
# chunk kernels, exact and overlap SWLA vs plain, at T = 4K/16K/64K, 8 heads, dk = dv = 128.
# make bench-gpu (tests/bench/bench_gpu.sh) runs it and, in the same run, flash-linear-
# attention's chunk_gla / chunk_gated_delta_rule through torch_ref.py at 64K. Run alone with
# LA_FLA=1 it also gets the fla rows itself, at LA_FLA_LENGTHS (default 65536; every length is
# a new Python process that compiles and autotunes Triton kernels again), when the fla wheels
# are carried in .whl/; LA_FLA_STEP_S seconds per length (default 300).
# Usage: la_bench.sh [BUILD_DIR].
set -u
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
bin=$(bash tests/gpu/la_build.sh "$BUILD") || { echo "la_bench: build failed"; exit 1; }
for T in ${LA_BENCH_LENGTHS:-4096 16384 65536}; do timeout 120 "$bin" bench "$T" 8 128; done
# the gdn rows with the state pass forced to 16 columns a block (HS_CUDA_GDN_BV=16; the
# default takes 8 where 16 leaves SMs idle: plain at 8 heads), renamed gdn_bv16_*, for the
# same-run A/B (session 9's A/Bs are decided: the staged gla SWLA form stays, the L2 prefetch
# and the transition form are gone; session 8's gdn 4-warp pass: LA_VARIANT=gdn4w la_build.sh)
if [ "${LA_AB:-1}" = 1 ]; then   # the A/B rows at LA_AB_LENGTHS (default 4096 65536)
    for T in ${LA_AB_LENGTHS:-4096 65536}; do
        HS_CUDA_GDN_BV=16 timeout 120 "$bin" bench "$T" 8 128 | grep -E "name=gdn_chunk_plain" |
            sed -E 's/name=gdn_chunk/name=gdn_bv16_chunk/'
    done
    # the rows ROWS (a grep -E pattern over the kernel names) of the A/B build
    # LA_VARIANT=VARIANT, renamed VARIANT_chunk_*, when that build passes la_check
    variant_rows() {
        local v=$1 rows=$2 b T
        b=$(LA_VARIANT=$v bash tests/gpu/la_build.sh "$BUILD") || { echo "la_bench: the $v build failed"; return; }
        timeout 120 "$b" check > /dev/null 2>&1 || { echo "la_bench: the $v build fails la_check (no rows)"; return; }
        for T in ${LA_AB_LENGTHS:-4096 65536}; do
            timeout 120 "$b" bench "$T" 8 128 | grep -E "name=($rows)" | sed -E "s/name=(gla|gdn)_chunk/name=${v}_chunk/"
        done
    }
    # the gla output kernel with 32 warps (one block a SM issues from 16 now; ncu: half the
    # issue slots idle)
    variant_rows gla32w "gla_chunk_(plain|exact)"
    # the gdn output kernel at two 8-warp blocks a SM (S_n from global memory)
    variant_rows gdnout2 "gdn_chunk_(plain|overlap)"
fi
[ "${LA_FLA:-0}" = 1 ] || exit 0
if ls .whl/fla_core-*.whl .whl/flash_linear_attention-*.whl >/dev/null 2>&1; then
    if python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/la_site \
        .whl/fla_core-*.whl .whl/flash_linear_attention-*.whl >/dev/null 2>&1; then
        for T in ${LA_FLA_LENGTHS:-65536}; do
            PYTHONPATH=/tmp/la_site:${PYTHONPATH:-} timeout "${LA_FLA_STEP_S:-300}" python3 tests/bench/torch_ref.py kernels "$T" 8 128
        done
    else
        echo "la_bench: fla wheels did not install"
    fi
else
    echo "la_bench: no fla wheels in .whl/ (carry them to get the fla rows)"
fi
