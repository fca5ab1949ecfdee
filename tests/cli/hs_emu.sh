#!/usr/bin/env bash
# The head-statistics kernel bodies (kernels/cuda/head_stats_body.cuh: softmax, gla, gdn) run in
# the CPU emulator (tests/gpu/hs_emu.cpp on tests/gpu/la_emu_include/emu_runtime.h: threads as
# coroutines, warps drifting as far apart as the barriers allow) against a double-precision
# reference of model-spec section 7: normalised entropy, top-k hit (exact ties included) and
# argmax per (row, head), with GQA, windows, row scales, weak and closed gates, SWLA exact and
# overlap, spans cut by the visible range, empty and dead spans. Runs where no GPU exists.
exec bash "${HS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/gpu/emu_run.sh" hs_emu
