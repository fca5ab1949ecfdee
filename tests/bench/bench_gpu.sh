#!/usr/bin/env bash
# make bench-gpu: the CUDA engine's prefill and kernels against the measured cuBLAS bf16 GEMM
# peak, and the PyTorch reference (SDPA + flash-linear-attention, tests/bench/torch_ref.py)
# in the same run. Usage: bench_gpu.sh BUILD_DIR. Prints key=value lines (bench notes are
# written from them by hand). Env: BENCH_PRESETS (default "376m 776m"), BENCH_TYPES
# (default "swa gla gdn"; these and the *_PRESETS lists take spaces or commas between entries,
# and every entry is checked before anything runs), BENCH_LENGTHS (default 4096,16384,65536), BENCH_TORCH=0 to skip
# the reference, BENCH_KERNELS=0 to skip the kernel rows, BENCH_REPS (timed runs, default 3),
# BENCH_EAGER_PRESETS (presets also run with eager launches, HS_CUDA_GRAPH=0, default 376m), BENCH_BV16_PRESETS
# (presets whose GDN model also runs with the 16-column state pass, HS_CUDA_GDN_BV=16, default 376m), BENCH_REF_PRESETS
# (presets also run with the fp32 attention and the recurrences, default none), BENCH_FFN_PRESETS
# (presets also run with the FFN's gate/up product in fp32, HS_CUDA_FFN_BF16=0, default 376m),
# BENCH_QKV_PRESETS (presets also run with q, k, v by three GEMMs, HS_CUDA_QKV_BATCH=0, default 376m),
# BENCH_GATE_PRESETS (presets whose GLA model also runs with the gla gate by a second low-rank GEMM
# and a gate pass, HS_CUDA_GLA_GATE_FUSE=0, default 376m), BENCH_GBF16_PRESETS (presets whose GLA
# and GDN models also run with the output gate's projection in fp32, HS_CUDA_G_BF16=0, default 376m), BENCH_ANALYSIS_PRESETS (presets whose
# analysis pass is timed at BENCH_ANALYSIS_T, default 65536: every head's statistics on 64 probe rows,
# default 376m), BENCH_MAPS_PRESETS (of those, presets whose analysis also pools every head's map,
# default none), BENCH_GEMMS=0 to skip the layer-GEMM rows, BENCH_AB=0 to skip every A/B row (the rows with an HS_CUDA_* setting; they run after the reference), BENCH_STEP_S (timeout of each step, default 300), BENCH_BUILD_ONLY=1 (build hs_gpu_bench and stop).
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
# the lists, commas read as spaces, and every entry checked up front: a mistyped type or preset
# stops here with one line, not after the build with an error from each program it reaches
PRESETS=${BENCH_PRESETS:-"376m 776m"}; PRESETS=${PRESETS//,/ }
TYPES=${BENCH_TYPES:-"swa gla gdn"}; TYPES=${TYPES//,/ }
bench_types="swa gla gdn rope nope"          # --efficient of hs_gpu_bench model and torch_ref.py model
bench_presets="tiny small 376m 776m 1b 3b"   # hs_gpu_bench's presets (engine/presets.c)
torch_presets="376m 776m"                    # torch_ref.py's PRESETS
check_list() {   # VAR "entries" "allowed"
    local e a ok es
    read -ra es <<< "${2//,/ }"                # no glob expansion of an entry
    for e in ${es[@]+"${es[@]}"}; do
        ok=0; for a in $3; do [ "$e" = "$a" ] && ok=1; done
        [ $ok = 1 ] || { echo "bench-gpu: $1: unknown entry '$e' (known: $3; entries apart by spaces or commas)" >&2; exit 2; }
    done
}
[ -n "${TYPES// /}" ] || { echo "bench-gpu: BENCH_TYPES: no types given (known: $bench_types)" >&2; exit 2; }
[ -n "${PRESETS// /}" ] || { echo "bench-gpu: BENCH_PRESETS: no presets given (known: $bench_presets)" >&2; exit 2; }
check_list BENCH_TYPES "$TYPES" "$bench_types"
check_list BENCH_PRESETS "$PRESETS" "$bench_presets"
for v in BENCH_ANALYSIS_PRESETS BENCH_MAPS_PRESETS BENCH_EAGER_PRESETS BENCH_REF_PRESETS BENCH_BV16_PRESETS BENCH_FFN_PRESETS BENCH_QKV_PRESETS \
         BENCH_GATE_PRESETS BENCH_GBF16_PRESETS; do
    check_list "$v" "${!v-}" "$bench_presets"
done
[ "${BENCH_TORCH:-1}" != 0 ] && [ "${BENCH_BUILD_ONLY:-0}" != 1 ] &&
    check_list "BENCH_PRESETS (the PyTorch reference has these; BENCH_TORCH=0 skips it)" "$PRESETS" "$torch_presets"
command -v nvcc >/dev/null || { echo "bench-gpu: no nvcc"; exit 1; }
[ -f "$BUILD/libhs_cuda.so" ] || { echo "bench-gpu: $BUILD/libhs_cuda.so missing (make with nvcc first)"; exit 1; }
LENGTHS=${BENCH_LENGTHS:-4096,16384,65536}
STEP=${BENCH_STEP_S:-300}
libs="${BENCH_LIBS:-$(pkg-config --libs libcjson openblas 2>/dev/null)}"
nvcc -O2 -std=c++17 -I. -Iengine -Ikernels -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90a,code=sm_90a -o "$BUILD/hs_gpu_bench" \
    tests/gpu/bench_gpu.cu kernels/cuda/*.cu $BUILD/engine/*.o $BUILD/kernels/cpu/*.o \
    $libs -lcublas -lm -ldl -lpthread -Xcompiler -fopenmp -lgomp || { echo "bench-gpu: bench build failed"; exit 1; }
B=$BUILD/hs_gpu_bench
[ "${BENCH_BUILD_ONLY:-0}" = 1 ] && exit 0
# flash-linear-attention for the PyTorch reference (torch_ref.py: chunk_gla, chunk_gated_delta_rule):
# its wheels travel in the ignored folder .whl/ (carry it in the device call); never committed
if ls .whl/fla_core-*.whl .whl/flash_linear_attention-*.whl >/dev/null 2>&1 &&
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/fla_site \
        .whl/fla_core-*.whl .whl/flash_linear_attention-*.whl >/dev/null 2>&1; then
    export PYTHONPATH=/tmp/fla_site${PYTHONPATH:+:$PYTHONPATH}; echo "fla: installed from .whl"
else
    echo "fla: not available (carry .whl/ with the fla wheels for the fla rows)"
fi
date -u +"date=%Y-%m-%dT%H:%MZ"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu=/'
gemm_line=$($B gemm); echo "$gemm_line"
peak=$(printf '%s\n' "$gemm_line" | sed -n 's/.*tflops=\([0-9.]*\).*/\1/p')
# the layer GEMMs of the 376m shape with fp32 / bf16 / accumulating output (a few seconds)
[ "${BENCH_GEMMS:-1}" != 0 ] && for L in 65536 4096; do $B gemms "$L"; done
$B attn-check
[ "${BENCH_KERNELS:-1}" != 0 ] && timeout "$STEP" $B kernels 65536 8 128
if [ "${BENCH_KERNELS:-1}" != 0 ]; then   # attention kernels (FA2, wgmma, WMMA, fp32) at 4K/16K/64K; SDPA below
    # (kcheck builds the same program: rebuilt only when a source is newer)
    { [ -x "$BUILD/hs_attn_fa2" ] && [ -z "$(find tests/gpu/attn_fa2.cu kernels/cuda/attention* kernels/cuda/elementwise* kernels/cuda/kernels.cuh -newer "$BUILD/hs_attn_fa2")" ]; } ||
    nvcc -O3 -std=c++17 --threads 0 -I. -Iengine -Ikernels -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90a,code=sm_90a \
        -o "$BUILD/hs_attn_fa2" tests/gpu/attn_fa2.cu kernels/cuda/attention*.cu kernels/cuda/elementwise.cu && {
        timeout "$STEP" "$BUILD/hs_attn_fa2" bench 4096,16384,65536 8 128 fa2,tc,simt
        timeout "$STEP" "$BUILD/hs_attn_fa2" bench 4096,16384,65536 8 128 wgmma   # own process: a fault there loses no other row
        timeout "$STEP" "$BUILD/hs_attn_fa2" bench 4096,16384,65536 8 128 wgtma; }
fi
# chunked gla/gdn kernels vs the recurrences, SWLA exact/overlap vs plain (fla's rows: torch_ref.py below)
[ "${BENCH_KERNELS:-1}" != 0 ] && bash tests/gpu/la_bench.sh "$BUILD"
# Our prefill rows: ours_rows "PRESETS" [VAR=value ...] runs every preset x type with those
# environment settings (none: the engine as it runs by default, wgmma attention and the chunked
# gla/gdn kernels).
ours_rows() {
    local presets=$1 p t; shift
    for p in ${presets//,/ }; do
        for t in $TYPES; do
            echo "== ours preset=$p efficient=$t LH 3:1 NoPE${*:+ $*}"
            env "$@" timeout "$STEP" $B model --preset "$p" --efficient "$t" --lengths "$LENGTHS" \
                --reps "${BENCH_REPS:-3}" --peak "$peak"
        done
    done
}
ours_rows "$PRESETS"
# The analysis pass at 64K (issue 5: under 1 s for 376m): a forward with every head's entropy,
# top-k hit and argmax on 64 probe rows; with BENCH_MAPS_PRESETS also every head's pooled map
# (256 x 256, sampled rows as `map` makes it: minutes for a whole model, so not by default)
ap=${BENCH_ANALYSIS_PRESETS-376m}; mp=${BENCH_MAPS_PRESETS-}
for p in ${ap//,/ }; do
    [[ " ${mp//,/ } " == *" $p "* ]] && mapflag=--maps || mapflag=
    for t in $TYPES; do
        echo "== analysis preset=$p efficient=$t LH 3:1 NoPE"
        timeout "$STEP" $B model --preset "$p" --efficient "$t" --lengths "${BENCH_ANALYSIS_T:-65536}" --reps 2 \
            --analysis 64 $mapflag
    done
done
# the reference before the A/B rows: a call cut by the device's limit keeps the rows the targets need
if [ "${BENCH_TORCH:-1}" != 0 ]; then
    timeout "$STEP" python3 tests/bench/torch_ref.py kernels 65536 8 128
    [ "${BENCH_KERNELS:-1}" != 0 ] && timeout "$STEP" python3 tests/bench/torch_ref.py attn 4096,16384,65536 8 128
    for p in $PRESETS; do
        for t in $TYPES; do
            timeout "$STEP" python3 tests/bench/torch_ref.py model --preset "$p" --efficient "$t" --lengths "$LENGTHS"
        done
    done
fi
[ "${BENCH_AB:-1}" = 0 ] && exit 0
ours_rows "${BENCH_EAGER_PRESETS-376m}" HS_CUDA_GRAPH=0          # eager launches (the default replays a CUDA graph)
ours_rows "${BENCH_REF_PRESETS-}" HS_CUDA_ATTENTION=simt HS_CUDA_LINATTN=recurrent   # fp32 attention, recurrences
TYPES=gdn ours_rows "${BENCH_BV16_PRESETS-376m}" HS_CUDA_GDN_BV=16  # the 16-column gdn state pass (session 9's default)
ours_rows "${BENCH_FFN_PRESETS-376m}" HS_CUDA_FFN_BF16=0          # the FFN's gate/up product in fp32 (the A/B)
ours_rows "${BENCH_QKV_PRESETS-376m}" HS_CUDA_QKV_BATCH=0         # q, k, v by three GEMMs (the A/B)
TYPES=gla ours_rows "${BENCH_GATE_PRESETS-376m}" HS_CUDA_GLA_GATE_FUSE=0   # the gla gate by a second low-rank GEMM and a gate pass (the A/B)
TYPES="gla gdn" ours_rows "${BENCH_GBF16_PRESETS-376m}" HS_CUDA_G_BF16=0   # the output gate's projection in fp32 (the A/B)
