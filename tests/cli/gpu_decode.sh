#!/usr/bin/env bash
# The GPU decoder against the CPU decoder and the GPU full forward (tests/gpu/decode_check.sh);
# skipped (exit 77, "no CUDA device") where the CUDA plugin or a device is missing.
set -u
exec bash "$HS_ROOT/tests/gpu/decode_check.sh"
