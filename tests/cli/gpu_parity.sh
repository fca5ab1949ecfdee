#!/usr/bin/env bash
# CUDA engine vs CPU engine on whole models and every knob (tests/gpu/parity.sh); skipped
# (exit 77, "no CUDA device") where the CUDA plugin or a device is missing.
set -u
exec bash "$HS_ROOT/tests/gpu/parity.sh"
