#!/usr/bin/env bash
# Fetches, on this machine (which has the network the GPU machine lacks), what device calls
# carry. Both folders are ignored by git and never committed; name them in the device tool's
# carry list ("carry": [".deps", ".whl"]).
#   .deps/  Debian packages of cJSON and OpenBLAS (with its Fortran runtime): the GPU image has
#           neither, and tests/gpu/device_run.sh unpacks them into /tmp to build there
#   .whl/   flash-linear-attention 0.6.0 (fla-core + flash-linear-attention, pure-Python wheels)
#           for the PyTorch reference of make bench-gpu (tests/bench/torch_ref.py) and la_bench
# Usage: bash tests/gpu/fetch_carry.sh   (idempotent; ~14 MB)
set -eu
cd "$(dirname "$0")/../.."
mkdir -p .deps .whl
if ! ls .deps/libcjson-dev_*.deb .deps/libopenblas-pthread-dev_*.deb >/dev/null 2>&1; then
    # apt-get download writes into the current folder; as root it warns that _apt cannot
    # write there, which is harmless
    (cd .deps && apt-get download libcjson1 libcjson-dev libopenblas0-pthread libopenblas-pthread-dev \
        libgfortran5 libquadmath0 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
fi
if ! ls .whl/fla_core-*.whl .whl/flash_linear_attention-*.whl >/dev/null 2>&1; then
    python3 -m pip download -q --no-deps --only-binary=:all: -d .whl fla-core==0.6.0 flash-linear-attention==0.6.0
fi
ls .deps/*.deb >/dev/null && ls .whl/*.whl >/dev/null
echo "carry ready: $(du -sh .deps | cut -f1) in .deps, $(du -sh .whl | cut -f1) in .whl"
