#!/usr/bin/env bash
# The chunked gla/gdn kernel bodies (kernels/cuda/linattn_chunk_{gla,gdn}_body.cuh) run in the
# CPU emulator tests/gpu/la_emu.cpp (threads as coroutines, warps drifting as far apart as the
# barriers allow, WMMA/shuffle/cp.async stand-ins) against a double-precision reference of the
# contract's value-path form: gla plain / exact / overlap SWLA, gdn plain / chunk-aligned
# overlap, T around the chunk, head dims 16-48, weak and strong gates. Runs where no GPU
# exists; the GPU check of the compiled kernels is tests/gpu/la_check.cu (device_run.sh kcheck).
exec bash "${HS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/gpu/emu_run.sh" la_emu quick
