#!/usr/bin/env bash
# The pooled-map kernel (kernels/cuda/pooled_map_body.cuh: softmax, gla after the gla prep
# kernel, gdn) runs in the CPU emulator (tests/gpu/map_emu.cpp on
# tests/gpu/la_emu_include/emu_runtime.h: threads as coroutines, warps drifting as far apart as
# the barriers allow) against a double-precision reference of model-spec section 7 pooled with
# the rules of engine/analysis_map.c (bins, sampled rows, rows before s0 skipped, causal counts
# with the zeros outside a window, mean and max, NaN cells): full causal, window, GQA, row
# scales, SWLA exact and overlap, zooms, bins that do not divide the range, bins_t above
# PM_MAX_BLOCKS, one position per bin. NaN pattern exact; values within 1e-5 (softmax, gdn) or
# 1e-4 (gla: K~ stored as float) of the map's largest value. Runs where no GPU exists.
exec bash "${HS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/gpu/emu_run.sh" map_emu
