#!/usr/bin/env bash
# The element-wise kernel bodies (kernels/cuda/elementwise_body.cuh: embedding, RoPE, SwiGLU,
# short conv + SiLU, the gla gate) run in the CPU emulator (tests/gpu/ew_emu.cpp) against
# element-by-element references: every element exact, grids with fewer blocks than rows,
# widths that are not multiples of the block. Runs where no GPU exists; the GPU runs them in
# every forward that tests/gpu/parity.sh checks against the CPU engine.
exec bash "${HS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/gpu/emu_run.sh" ew_emu
