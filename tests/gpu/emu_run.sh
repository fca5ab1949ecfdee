#!/usr/bin/env bash
# Builds one CPU emulation of GPU kernel bodies (tests/gpu/NAME.cpp, g++ only, with the CUDA
# stand-ins of tests/gpu/la_emu_include) in a temporary folder and runs it with ARGS; exits
# with its status, 1 when it does not build, 77 (skip) without g++. The tests/cli/*_emu.sh
# wrappers call it. Usage: emu_run.sh NAME [ARGS...]; EMU_CFLAGS adds compiler flags (a
# variant's -D settings).
set -u
root=${HS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
name=$1; shift
command -v g++ >/dev/null || { echo "skip: no g++"; exit 77; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
g++ -O2 -std=c++17 -Wall -Wextra -Werror -Wno-unknown-pragmas ${EMU_CFLAGS:-} -I"$root/tests/gpu/la_emu_include" \
    -I"$root/kernels/cuda" -I"$root/kernels" -I"$root" -o "$W/$name" "$root/tests/gpu/$name.cpp" -lm ||
    { echo "FAIL: $name does not build"; exit 1; }
"$W/$name" "$@"
