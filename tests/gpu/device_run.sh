#!/usr/bin/env bash
# One call on the GPU machine (through the device tool): build (with the carried .deps debs
# when the image lacks libcjson/openblas; tests/gpu/fetch_carry.sh fetches .deps and .whl on a
# machine with a network), kernel checks, GPU parity, compute-sanitizer, then
# make bench-gpu. Logs under $OUT. Usage: bash tests/gpu/device_run.sh [kcheck] [parity] [graph] [sanitize] [bench]
# (the default set) or any of those plus evaltable, verify, lagain, prefprof, map, laprof, ladetail, decode, dspeed, cutab, analysis, g8ab.
# kcheck also runs every tests/gpu/kcheck_*.sh (kernel checks against verified kernels).
set -u
OUT=${OUT:-/tmp/hs_out}; mkdir -p "$OUT"
# what $OUT held before this run (a training call's checkpoints, in session 21) is not ours to pack
pre=$(mktemp); find "$OUT" -maxdepth 1 -type f -printf '%P\n' | sort > "$pre"
steps=${*:-kcheck parity graph sanitize bench}
exec > >(tee -a "$OUT/run.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
MK=()
if ! pkg-config --exists libcjson openblas 2>/dev/null && [ -d .deps ]; then
    mkdir -p /tmp/deps; for f in .deps/*.deb; do dpkg -x "$f" /tmp/deps; done
    D=/tmp/deps/usr; L=$D/lib/x86_64-linux-gnu
    libs="-L$L -L$L/openblas-pthread -lcjson -lopenblas"
    MK=(PKG_CFLAGS="-I$D/include -I$D/include/cjson -I$D/include/x86_64-linux-gnu/openblas-pthread" PKG_LIBS="$libs")
    export BENCH_LIBS="$libs" LD_LIBRARY_PATH="$L:$L/openblas-pthread:${LD_LIBRARY_PATH:-}"
    echo "deps: using carried debs"
fi
t0=$(date +%s)
# PREBUILT=1: binaries built on the development machine (same nvcc 13.0) and carried in build/:
# `make` there gives build/hybridscope and build/libhs_cuda.so (the engine build skipped here,
# ~70 s: evaltable, parity, ...), `BENCH_BUILD_ONLY=1 bash tests/bench/bench_gpu.sh build`
# build/hs_gpu_bench (analysis, ~50 s). Each is used only where it loads here, else rebuilt.
prebuilt=0 engine_ok=0
if [ "${PREBUILT:-0}" = 1 ]; then
    if [ -x build/hybridscope ] && build/hybridscope --version > /dev/null 2>&1 && [ -f build/libhs_cuda.so ] &&
       ! ldd build/libhs_cuda.so 2>&1 | grep -q "not found"; then
        engine_ok=1; echo "prebuilt: build/hybridscope and build/libhs_cuda.so load; no engine build"
    else echo "prebuilt: the carried engine does not load here"; fi
    if [ -x build/hs_gpu_bench ] && build/hs_gpu_bench 2>&1 | grep -q "usage: bench_gpu"; then
        prebuilt=1; echo "prebuilt: build/hs_gpu_bench loads"
    fi
fi
# steps that use only the linear-attention check program (or a loading prebuilt bench) skip
# the engine's build (~70 s)
la_only=1; for s in $steps; do case $s in laprof|cutab|ladetail|diffab|g8ab) ;; analysis) [ $prebuilt = 1 ] || la_only=0 ;; *) la_only=0 ;; esac; done
[ $engine_ok = 1 ] && la_only=1
if [ $la_only = 0 ]; then
    make -j16 "${MK[@]}" > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
    tail -1 "$OUT/build.log"; echo "build_s=$(( $(date +%s) - t0 ))"
fi
export HS_BIN=$PWD/build/hybridscope
# la_check's failing cases (with their worst element), then its summary line
la_fails() { awk '/ FAIL$/ { print; if ((getline l) > 0) print l; next } { last = $0 } END { print last }'; }
for s in $steps; do case $s in
kcheck)   # the FA2 and both wgmma attention kernels against the fp32 one (tests/gpu/attn_fa2.cu)
    nvcc -O3 -std=c++17 --threads 0 -I. -Iengine -Ikernels -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90a,code=sm_90a \
        -o build/hs_attn_fa2 tests/gpu/attn_fa2.cu kernels/cuda/attention*.cu kernels/cuda/elementwise.cu \
        > "$OUT/kcheck_build.log" 2>&1 || { echo "kcheck build failed"; tail -20 "$OUT/kcheck_build.log"; }
    [ -x build/hs_attn_fa2 ] && { timeout 120 build/hs_attn_fa2 check > "$OUT/kcheck.log" 2>&1; echo "kcheck rc=$?"; cat "$OUT/kcheck.log"; }
    for f in tests/gpu/kcheck_*.sh; do bash "$f" build; r=$?; echo "kcheck $(basename "$f" .sh) rc=$r"; done ;;
parity) timeout 240 bash tests/gpu/parity.sh > "$OUT/parity.log" 2>&1; echo "parity rc=$?"; cat "$OUT/parity.log" ;;
sanitize)
    tmp=$(mktemp -d); python3 -c "import random; r=random.Random(5); print(''.join(r.choice('abcdefgh .') for _ in range(200)))" > $tmp/t
    $HS_BIN init $tmp/m --preset tiny --efficient gla --layout HH --train-context 128 >/dev/null
    $HS_BIN init $tmp/g --preset tiny --efficient gdn --train-context 128 >/dev/null
    for tool in memcheck racecheck; do
        # the FA2 and wgmma attention kernels (built by kcheck): GQA, window, log scaling, T not a tile multiple
        for kern in fa2 wgmma wgtma; do [ -x build/hs_attn_fa2 ] || break
            HS_CUDA_ATTENTION=$kern timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 build/hs_attn_fa2 one 300 4 2 64 64 1 > $tmp/s.log 2>&1
            echo "sanitizer tool=$tool rc=$? attn $kern $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $tmp/s.log | tail -1)"
        done
        for args in "$tmp/m --swla --swla-window 40" "$tmp/g --swla=overlap --swla-window 48" "$tmp/g"; do
            HS_CUDA_LINATTN=recurrent timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $HS_BIN logits $args --text-file $tmp/t --device cuda --out $tmp/o.npy > $tmp/s.log 2>&1
            echo "sanitizer tool=$tool rc=$? recurrent model=$(basename ${args%% *}) $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $tmp/s.log | tail -1)"
        done
        for args in "$tmp/m --swla --swla-window 40" "$tmp/m --swla=overlap --swla-window 100 --swla-stride 30" "$tmp/g" \
                    "$tmp/g --swla=overlap --swla-window 128 --swla-stride 64" "$tmp/g --swla --swla-window 128"; do
            HS_CUDA_LINATTN=chunk timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $HS_BIN logits $args --text-file $tmp/t --device cuda --out $tmp/o.npy > $tmp/s.log 2>&1
            echo "sanitizer tool=$tool rc=$? chunk model=$(basename ${args%% *}) ${args#* } $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $tmp/s.log | tail -1)"
        done
        # gla SWLA with both modes on one form (by default overlap subtracts states, exact's scan chunks)
        for df in 1 0; do for args in "$tmp/m --swla --swla-window 40" "$tmp/m --swla=overlap --swla-window 100 --swla-stride 30"; do
            HS_CUDA_GLA_SWLA_DIFF=$df HS_CUDA_LINATTN=chunk timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $HS_BIN logits $args --text-file $tmp/t --device cuda --out $tmp/o.npy > $tmp/s.log 2>&1
            echo "sanitizer tool=$tool rc=$? chunk diff=$df model=$(basename ${args%% *}) ${args#* } $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $tmp/s.log | tail -1)"
        done; done
        # the pooled-map kernel (kernels/cuda/pooled_map.cu): gla (HH, with its nope head), gdn, both with SWLA
        for args in "$tmp/m --head 0.0.1 --swla --swla-window 40" "$tmp/m --head 0.1.0 --agg max" "$tmp/g --head 1.0.2 --swla=overlap --swla-window 48"; do
            timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $HS_BIN map $args --text-file $tmp/t --bins 30 --device cuda --out $tmp/o.npy > $tmp/s.log 2>&1
            echo "sanitizer tool=$tool rc=$? map model=$(basename ${args%% *}) ${args#* } $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $tmp/s.log | tail -1)"
        done
    done ;;
analysis) # the analysis pass at 64K alone (make bench-gpu times it too): every head's statistics,
          # then (ANALYSIS_MAPS=1) every head's pooled map, 376m LH 3:1 NoPE, random weights
    [ $prebuilt = 1 ] || BENCH_BUILD_ONLY=1 bash tests/bench/bench_gpu.sh build > "$OUT/analysis_build.log" 2>&1 ||
        { echo "analysis: build failed"; tail -5 "$OUT/analysis_build.log"; }
    for t in ${ANALYSIS_TYPES:-swa gla gdn}; do
        echo "== analysis preset=376m efficient=$t"
        timeout "${ANALYSIS_STEP_S:-120}" build/hs_gpu_bench model --preset 376m --efficient "$t" --lengths 65536 --reps 2 \
            --analysis 64 ${ANALYSIS_MAPS:+--maps}; echo "rc=$?"
    done ;;
graph)    # the forward replayed from its CUDA graph against eager launches (engine/cuda/forward.cu)
    BENCH_BUILD_ONLY=1 bash tests/bench/bench_gpu.sh build > "$OUT/graph_build.log" 2>&1 || { echo "graph: build failed"; tail -5 "$OUT/graph_build.log"; }
    # head dims 128/64: the wgmma attention and the chunked gla/gdn kernels run inside the graph
    for args in "--preset tiny --efficient gla --hidden 256 --heads 2 --head-dim 128" \
                "--preset tiny --efficient gdn --hidden 128 --heads 4 --head-dim 64 --layout HH" \
                "--preset tiny --efficient swa --window 48 --kv-heads 2 --hidden 256 --heads 4 --head-dim 64"; do
        HS_CUDA_GRAPH=1 timeout 120 build/hs_gpu_bench graph-check $args > $OUT/graph.log 2>&1; r=$?
        grep -q "graph capture failed" $OUT/graph.log && r=9
        echo "graph $args rc=$r"; cat $OUT/graph.log
    done ;;
bench) bash tests/bench/bench_gpu.sh build > "$OUT/bench.log" 2>&1; echo "bench rc=$?"; cat "$OUT/bench.log" ;;
evaltable)  # the sample models' quality bar and extrapolation table on the GPU engine (the CPU
            # takes ~2.5 h for the table on the 2-core development machine); EVAL_ARGS overrides
    t1=$(date +%s)
    # EVAL_DIR: the checkpoints under DIR/NAME (a training call's /tmp/family: device_eval.sh).
    # Finished runs are cached on the machine (EVAL_CACHE), so a table cut by EVAL_TIMEOUT
    # seconds (0: none) resumes where it stopped when the step runs again on the same machine.
    # The cache comes back as $OUT/evalcache.tgz, so a table cut by the device's limits resumes on
    # any later machine: carry that file in and name it in EVAL_CACHE_IN.
    ec=${EVAL_CACHE:-/tmp/hs_evalcache}; mkdir -p "$ec"
    [ -n "${EVAL_CACHE_IN:-}" ] && { tar xzf "$EVAL_CACHE_IN" -C "$ec" && echo "evalcache: $(ls "$ec" | wc -l) runs carried in" ||
        echo "evalcache: $EVAL_CACHE_IN: not a cache archive"; }
    python3 sample-models/recipe/evaluate.py bar --samples 5 --device cuda --cache "$ec" ${EVAL_DIR:+--dir "$EVAL_DIR"} > "$OUT/bar.md" 2>&1; echo "bar rc=$?"; cat "$OUT/bar.md"
    timeout "${EVAL_TIMEOUT:-0}" python3 sample-models/recipe/evaluate.py table --device cuda --cache "$ec" ${EVAL_DIR:+--dir "$EVAL_DIR"} \
        ${EVAL_ARGS:---samples 1 --ppl-docs 2} > "$OUT/table.md" 2>&1
    rc=$?; [ $rc = 124 ] && echo "table: cut at EVAL_TIMEOUT=$EVAL_TIMEOUT s with $(ls "$ec" | wc -l) runs cached; evaltable again on this machine resumes it"
    echo "table rc=$rc ($(( $(date +%s) - t1 )) s with the bar)"; tail -3 "$OUT/table.md"
    tar czf "$OUT/evalcache.tgz" -C "$ec" . && echo "evalcache: $(ls "$ec" | wc -l) runs in \$OUT/evalcache.tgz" ;;
verify)  # every kernel change since the last GPU run checked, not compared, in ~7-8 min: la_check
        # of the default build (both gdn widths, unstaged) and of the gla32w / gdnout2 A/B builds,
        # kcheck (the attention kernels, RoPE-as-it-loads included),
        # parity.sh (whole models against the CPU engine, FFN bf16 rows included), then the layer
        # GEMM rows and our 376m prefills at 4K/64K (no PyTorch: the session-10 rows are the reference)
    # VERIFY_TIMINGS=0: the checks only (a GPU shared with a training run times nothing)
    vbb=; [ "${VERIFY_TIMINGS:-1}" = 1 ] && { ( BENCH_BUILD_ONLY=1 bash tests/bench/bench_gpu.sh build > "$OUT/verify_bench_build.log" 2>&1 ) & vbb=$!; }
    ( nvcc -O3 -std=c++17 --threads 0 -I. -Iengine -Ikernels -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90a,code=sm_90a \
        -o build/hs_attn_fa2 tests/gpu/attn_fa2.cu kernels/cuda/attention*.cu kernels/cuda/elementwise.cu > "$OUT/verify_kcheck_build.log" 2>&1 ) & vkb=$!
    ( LA_VARIANT=gla32w bash tests/gpu/la_build.sh build > /dev/null 2>&1 & LA_VARIANT=gdnout2 bash tests/gpu/la_build.sh build > /dev/null 2>&1 & wait ) & vlb=$!
    if la=$(bash tests/gpu/la_build.sh build); then
        echo "la_check default: $(timeout 60 "$la" check | la_fails)"
        echo "la_check HS_CUDA_GDN_BV=16: $(HS_CUDA_GDN_BV=16 timeout 60 "$la" check | la_fails)"
        echo "la_check HS_CUDA_LA_STAGE=0: $(HS_CUDA_LA_STAGE=0 timeout 60 "$la" check | la_fails)"
        echo "la_check HS_CUDA_LA_STAGE=1: $(HS_CUDA_LA_STAGE=1 timeout 60 "$la" check | la_fails)"
        echo "la_check HS_CUDA_GLA_DIAG=pairwise: $(HS_CUDA_GLA_DIAG=pairwise timeout 60 "$la" check | la_fails)"
        echo "la_check HS_CUDA_GLA_SWLA_DIFF=1: $(HS_CUDA_GLA_SWLA_DIFF=1 timeout 60 "$la" check | la_fails)"
        echo "la_check HS_CUDA_GLA_SWLA_DIFF=0: $(HS_CUDA_GLA_SWLA_DIFF=0 timeout 60 "$la" check | la_fails)"
    else echo "verify: la_check build failed"; fi
    wait $vlb
    for v in gla32w gdnout2; do
        [ -x build/la_check_$v ] && echo "la_check $v: $(timeout 60 build/la_check_$v check | la_fails)" || echo "la_check $v: no build"
    done
    wait $vkb
    if [ -x build/hs_attn_fa2 ]; then   # the attention kernels, the TMA-fed one's RoPE-as-it-loads included
        timeout 150 build/hs_attn_fa2 check > "$OUT/kcheck.log" 2>&1; echo "kcheck rc=$?"; grep -E "cases|FAIL" "$OUT/kcheck.log" | head -20
    else echo "verify: kcheck build failed"; tail -5 "$OUT/verify_kcheck_build.log"; fi
    timeout 300 bash tests/gpu/parity.sh > "$OUT/parity.log" 2>&1; echo "parity rc=$?"; tail -3 "$OUT/parity.log"
    grep -iE "fail" "$OUT/parity.log" | head -20
    [ -n "$vbb" ] && wait $vbb
    if [ -z "$vbb" ]; then echo "verify: VERIFY_TIMINGS=0, no timings"
    elif [ -x build/hs_gpu_bench ]; then
        timeout 60 build/hs_gpu_bench gemm
        for L in 65536 4096; do timeout 60 build/hs_gpu_bench gemms $L; done
        for t in swa gla gdn; do
            echo "== ours preset=376m efficient=$t LH 3:1 NoPE"
            timeout 150 build/hs_gpu_bench model --preset 376m --efficient $t --lengths 4096,65536 --reps 3
        done
        echo "== ours preset=376m efficient=gdn HS_CUDA_FFN_BF16=0"
        HS_CUDA_FFN_BF16=0 timeout 150 build/hs_gpu_bench model --preset 376m --efficient gdn --lengths 4096,65536 --reps 3
    else echo "verify: bench build failed"; tail -5 "$OUT/verify_bench_build.log"; fi ;;
lagain)  # the linear-attention side of the bench in ~6-8 min: la_check (both gdn widths), the chunk
        # kernel rows at 4K/64K, and the GLA/GDN prefill rows with the PyTorch stack's
        # (fla's chunk kernels and the models) in the same run, 376m unless BENCH_PRESETS says
    la=$(bash tests/gpu/la_build.sh build) && { timeout 60 "$la" check | la_fails; HS_CUDA_GDN_BV=16 timeout 60 "$la" check | la_fails; }
    # 4K and 64K only (16K with BENCH_LENGTHS / LA_BENCH_LENGTHS): the call must end inside 10 minutes
    LA_BENCH_LENGTHS=${LA_BENCH_LENGTHS:-"4096 65536"} bash tests/gpu/la_bench.sh build > "$OUT/la_bench.log" 2>&1
    echo "la_bench rc=$?"; cat "$OUT/la_bench.log"
    BENCH_PRESETS=${BENCH_PRESETS:-376m} BENCH_TYPES=${BENCH_TYPES:-"gla gdn"} BENCH_LENGTHS=${BENCH_LENGTHS:-4096,65536} \
        BENCH_KERNELS=0 BENCH_EAGER_PRESETS= bash tests/bench/bench_gpu.sh build > "$OUT/bench.log" 2>&1
    echo "bench rc=$?"; cat "$OUT/bench.log" ;;
cutab)  # session 21's gla changes against what they replace: the output kernel's early cut-chunk
        # products (stage 2) against stage 1 (HS_CUDA_LA_STAGE=1), its factored diagonal blocks
        # against the pairwise ones (HS_CUDA_GLA_DIAG=pairwise), and the SWLA scans' drops 8 steps
        # ahead (the dpf8 build): la_check in each form, plain / exact / overlap rows at 4K and
        # 64K in three interleaved rounds (best of each counts, summarised), ncu's per-kernel time
        # at 64K (exact) for the default and each A/B form
        # CUTAB_VARIANTS (la_build.sh variants besides the default, "dpf8" unless given) and
        # CUTAB_FORMS choose other A/Bs; CUTAB_NCU=0 leaves out the ncu part
    vars=${CUTAB_VARIANTS-dpf8}
    pids=(); for v in "" $vars; do
        LA_VARIANT=$v bash tests/gpu/la_build.sh build > "$OUT/cutab_build_${v:-default}.log" 2>&1 & pids+=($!)
    done
    wait "${pids[@]}"
    la=build/la_check ok=1
    for v in "" $vars; do [ -x build/la_check${v:+_$v} ] || ok=0; done
    [ $ok = 1 ] || { echo "cutab: build failed"; tail -5 "$OUT"/cutab_build_*.log; continue; }
    echo "cutab build_s=$(( $(date +%s) - t0 ))"
    # a form: STAGE:DIAG:BINARY (DIAG: f factored where the decays allow, p pairwise)
    forms=${CUTAB_FORMS:-"2:f:$la 1:f:$la 2:p:$la 2:f:build/la_check_dpf8"}
    for fm in $forms; do
        st=${fm%%:*}; r=${fm#*:}; dg=${r%%:*}; b=${r#*:}; e=factored; [ $dg = p ] && e=pairwise
        echo "la_check stage=$st diag=$dg $(basename "$b"): $(HS_CUDA_LA_STAGE=$st HS_CUDA_GLA_DIAG=$e timeout 90 "$b" check | la_fails)"
    done
    for r in 1 2 3; do for T in 4096 65536; do for fm in $forms; do
        st=${fm%%:*}; x=${fm#*:}; dg=${x%%:*}; b=${x#*:}; e=factored; [ $dg = p ] && e=pairwise
        for rows in ${CUTAB_BENCH:-gla_chunk}; do   # la_check bench's row filters (gdn_chunk_plain: gdn's too)
            HS_CUDA_LA_STAGE=$st HS_CUDA_GLA_DIAG=$e timeout 60 "$b" bench $T 8 128 $rows |
                grep -E "name=(gla|gdn)_chunk_(plain|exact_swla|overlap_swla)" | sed "s|^|cutab round=$r build=$(basename "$b")_$dg stage=$st |"
        done
    done; done; done | tee "$OUT/cutab_rows.txt"
    # best of the three rounds per build, stage, T and row, and each SWLA row against its plain
    python3 tests/gpu/rounds_best.py cutab "$OUT/cutab_rows.txt"
    if [ "${CUTAB_NCU:-1}" = 1 ] && command -v ncu >/dev/null; then for fm in "2:f:$la" "1:f:$la" "2:p:$la"; do
        st=${fm%%:*}; x=${fm#*:}; dg=${x%%:*}; b=${x#*:}; e=factored; [ $dg = p ] && e=pairwise
        for row in plain exact_swla; do
            HS_CUDA_LA_STAGE=$st HS_CUDA_GLA_DIAG=$e timeout 120 ncu --metrics gpu__time_duration.sum -k regex:gla_ --launch-count 6 \
                "$b" bench 65536 8 128 gla_chunk_$row > "$OUT/cutab_ncu_${st}${dg}_$row.txt" 2>&1
            echo "cutab ncu stage=$st diag=$dg $row rc=$?"
            grep -E "^  [a-z_]+kernel|gpu__time_duration" "$OUT/cutab_ncu_${st}${dg}_$row.txt" | sed 's/^ */  /'
        done
    done; fi ;;
diffab)  # gla SWLA by state differences (HS_CUDA_GLA_SWLA_DIFF=1, session 27: the plain scan, and
        # the output kernel takes Z_n - exp(Lz) Z_fz) against the drop-load scan: la_check with it,
        # then gla plain / exact / overlap rows at 4K and 64K in three interleaved rounds (best of
        # each, against plain), and ncu's per-kernel time at 64K for exact in both forms (~2-3 min)
    la=$(bash tests/gpu/la_build.sh build) || { echo "diffab: build failed"; continue; }
    echo "la_check HS_CUDA_GLA_SWLA_DIFF=1: $(HS_CUDA_GLA_SWLA_DIFF=1 timeout 90 "$la" check | la_fails)"
    for r in 1 2 3; do for T in 4096 65536; do for df in 0 1; do
        HS_CUDA_GLA_SWLA_DIFF=$df timeout 60 "$la" bench $T 8 128 gla_chunk |
            grep -E "name=gla_chunk_(plain|exact_swla|overlap_swla)" | sed "s|^|diffab round=$r diff=$df |"
    done; done; done | tee "$OUT/diffab_rows.txt"
    python3 tests/gpu/rounds_best.py diffab "$OUT/diffab_rows.txt"
    if command -v ncu >/dev/null; then for df in 0 1; do
        HS_CUDA_GLA_SWLA_DIFF=$df timeout 120 ncu --metrics gpu__time_duration.sum -k regex:gla_ --launch-count 6 \
            "$la" bench 65536 8 128 gla_chunk_exact_swla > "$OUT/diffab_ncu_$df.txt" 2>&1
        echo "diffab ncu diff=$df rc=$?"
        grep -E "^  [a-z_]+kernel|gpu__time_duration" "$OUT/diffab_ncu_$df.txt" | sed 's/^ */  /'
    done; fi ;;
decode)   # the GPU decoder against the CPU decoder and the GPU forward (not in the default steps: name it)
    timeout 400 bash tests/gpu/decode_check.sh > "$OUT/decode.log" 2>&1; echo "decode rc=$?"; cat "$OUT/decode.log" ;;
map)    # GPU pooled maps against the CPU (parity's map section), then their time at 64K (376m)
    PARITY_ONLY=map timeout 300 bash tests/gpu/parity.sh > "$OUT/map.log" 2>&1; echo "map parity rc=$?"; cat "$OUT/map.log"
    mt=$(mktemp -d)
    for e in swa gla gdn; do
        $HS_BIN init $mt/$e --preset 376m --efficient $e >/dev/null || continue
        for h in 3.0.0 1.0.0; do for rows in exact 16; do
            /usr/bin/time -f "%e s %M KB" $HS_BIN map $mt/$e --task sk1 --length 65536 --head $h --bins 256 --rows-per-bin $rows \
                --out $mt/m.npy --device cuda --json 2>$mt/t > $mt/j || { echo "map $e $h: $(tail -1 $mt/t)"; continue; }
            echo "map 376m $e head $h T=65536 rows=$rows: forward + map $(python3 -c "import json,sys; print(round(json.load(sys.stdin)['seconds'], 3))" < $mt/j) s; whole command $(tail -1 $mt/t)"
        done; done
        [ $e = gla ] && timeout 150 $HS_BIN map $mt/$e --task sk1 --length 65536 --head 3.0.0 --bins 256 --out $mt/m.npy --device cpu --json > $mt/j 2>/dev/null &&
            echo "map 376m $e head 3.0.0 T=65536 rows=16 on the CPU (16 cores): forward + map $(python3 -c "import json,sys; print(round(json.load(sys.stdin)['seconds'], 3))" < $mt/j) s"
    done; rm -rf $mt ;;
laprof) # where the chunked gla/gdn time goes: per-kernel GPU time at 64K (ncu, one metric, one
        # pass per kernel; ncu runs the clocks lower than a plain run, so compare shares, not sums)
    lab=$(bash tests/gpu/la_build.sh build) || { echo "laprof: build failed"; continue; }
    # LAPROF_ROWS="gla_chunk_plain gla_chunk_exact_swla": each row alone (la_check's row filter),
    # so a kernel that both run (gla_out_kernel) is split by row: where SWLA's extra time goes
    # (LAPROF_T="4096 65536": each length in turn)
    if command -v ncu >/dev/null; then for T in ${LAPROF_T:-65536}; do for row in ${LAPROF_ROWS:-all}; do
        ra=(); [ "$row" = all ] || ra=("$row")
        timeout 300 ncu --metrics gpu__time_duration.sum --launch-count 400 "$lab" bench $T 8 128 ${ra[@]+"${ra[@]}"} > "$OUT/laprof_${row}_$T.txt" 2>&1
        echo "laprof $row T=$T rc=$? (mean ms per launch, ncu clocks)"
        python3 - "$OUT/laprof_${row}_$T.txt" "$row T=$T" <<'PY'
import re, sys
cur, acc = None, {}
for line in open(sys.argv[1]):
    m = re.match(r"\s+(\w+_kernel)\(", line)
    if m: cur = m.group(1)
    m = re.search(r"gpu__time_duration.sum\s+(\w+)\s+([\d.]+)", line)
    if m and cur:
        v = float(m.group(2)) * {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}.get(m.group(1), 1.0)
        acc.setdefault(cur, []).append(v)
for k, v in sorted(acc.items()):
    print(f"laprof {sys.argv[2]} {k}: {len(v)} launches, mean {sum(v) / len(v):.3f} ms, max {max(v):.3f} ms")
PY
    done; done; else echo "laprof: no ncu"; fi ;;
prefprof) # where a 64K prefill's time goes, kernel by kernel (ncu, one metric, each launch once; the
        # bench binary's model mode with --reps 1 runs two forwards, eager launches): PREFPROF_TYPES
    [ -x build/hs_gpu_bench ] || BENCH_BUILD_ONLY=1 bash tests/bench/bench_gpu.sh build > "$OUT/prefprof_build.log" 2>&1
    command -v ncu >/dev/null || { echo "prefprof: no ncu"; continue; }
    for t in ${PREFPROF_TYPES:-swa gla gdn}; do for L in ${PREFPROF_LENGTHS:-65536 4096}; do
        HS_CUDA_GRAPH=0 timeout 240 ncu --clock-control none --metrics gpu__time_duration.sum \
            build/hs_gpu_bench model --preset 376m --efficient "$t" --lengths "$L" --reps 1 > "$OUT/prefprof_${t}_$L.txt" 2>&1
        echo "prefprof $t T=$L rc=$? (ms per forward, the sum of two forwards halved)"
        python3 - "$OUT/prefprof_${t}_$L.txt" "$t T=$L" <<'PY'
import re, sys
cur, acc = None, {}
for line in open(sys.argv[1]):
    m = re.match(r"  (\S.*?)\(.*Context \d+, Stream", line)
    if m: cur = re.sub(r"<.*", "", m.group(1)).split("::")[-1][:60]
    m = re.search(r"gpu__time_duration.sum\s+(\w+)\s+([\d.,]+)", line)
    if m and cur:
        v = float(m.group(2).replace(",", "")) * {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}.get(m.group(1), 1.0)
        n, tot = acc.get(cur, (0, 0.0)); acc[cur] = (n + 1, tot + v)
total = sum(v for _, v in acc.values()) / 2
print(f"prefprof {sys.argv[2]}: kernels {total:.2f} ms per forward")
for k, (n, v) in sorted(acc.items(), key=lambda kv: -kv[1][1])[:25]:
    print(f"prefprof {sys.argv[2]} {k}: {n // 2} launches, {v / 2:.2f} ms ({100 * v / 2 / total:.1f}%)")
PY
    done; done ;;
ladetail) # why the chunk kernels take their time: one 64K launch of each, ncu's speed-of-light,
        # occupancy and warp-stall sections (the full files under $OUT, the top stalls printed)
    # (built with -lineinfo: the source counters name the lines the warps stall on; the report
    # files come back too, and the per-line source page where this ncu prints it)
    lab=$(LA_VARIANT=lineinfo bash tests/gpu/la_build.sh build) || { echo "ladetail: build failed"; continue; }
    command -v ncu >/dev/null || { echo "ladetail: no ncu"; continue; }
    for k in ${LADETAIL_KERNELS:-gla_out_kernel gdn_state8_kernel gdn_state_kernel gdn_local_kernel gdn_out_kernel gla_local_kernel}; do
        timeout 150 ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
            --section SourceCounters --import-source yes -o "$OUT/ladetail_$k" -f \
            -k "$k" -c 1 "$lab" bench 65536 8 128 "${k%%_*}_chunk_plain" > /dev/null 2>&1
        echo "ladetail $k rc=$?"
        ncu --import "$OUT/ladetail_$k.ncu-rep" > "$OUT/ladetail_$k.txt" 2>&1
        timeout 60 ncu --import "$OUT/ladetail_$k.ncu-rep" --page source --csv --print-source cuda > "$OUT/ladetail_${k}_source.csv" 2>&1 ||
            echo "ladetail $k: no source page from this ncu"
        grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Est. Local|stalled" \
            "$OUT/ladetail_$k.txt" | sed 's/^ */  /' | head -20
    done
    # exact SWLA's gla kernels (local, scan, output) in one report: where its 1.3x of plain goes
    timeout 200 ncu --section SpeedOfLight --section WarpStateStats --section SourceCounters --import-source yes \
        -o "$OUT/ladetail_gla_exact_swla" -f -k regex:"gla_(local|scan|out)_kernel" -c 3 \
        "$lab" bench 65536 8 128 gla_chunk_exact_swla > /dev/null 2>&1
    echo "ladetail gla exact SWLA rc=$?"
    ncu --import "$OUT/ladetail_gla_exact_swla.ncu-rep" > "$OUT/ladetail_gla_exact_swla.txt" 2>&1
    grep -E "^  [a-z_]+kernel|Duration" "$OUT/ladetail_gla_exact_swla.txt" | sed 's/^ */  /' ;;
g8ab)   # the gdn state pass (gdn_state8_kernel) with 8 / 16 / 32 value columns a block
        # (LA_VARIANT=g8bv16 / g8bv32): each build's la_check, then the plain gdn chunk at 4K and
        # 64K, three interleaved rounds (best of each kernel's own reps per row)
    for v in "" g8bv16 g8bv32; do
        b=$(LA_VARIANT=$v bash tests/gpu/la_build.sh build) || { echo "g8ab ${v:-default}: build failed"; continue; }
        echo "g8ab ${v:-default} la_check: $(timeout 60 "$b" check | la_fails)"
    done
    for r in 1 2 3; do for v in "" g8bv16 g8bv32; do
        b=build/la_check${v:+_$v}; [ -x "$b" ] || continue
        for T in 4096 65536; do
            echo "g8ab round=$r build=${v:-default} $(timeout 60 "$b" bench "$T" 8 128 gdn_chunk_plain | grep -E "name=gdn_chunk_plain")"
        done
    done; done ;;
dspeed) timeout 300 bash tests/gpu/decode_speed.sh "$HS_BIN" > "$OUT/dspeed.log" 2>&1; echo "dspeed rc=$?"; cat "$OUT/dspeed.log" ;;
esac; done
# The device tool brings back at most 8 files of up to 16 MiB: past 7, this run's files but
# run.log go into one archive (ncu's report files left out of it if it would be too large; their
# text and source pages stay in). Files that were in $OUT before the run stay as they are.
# An earlier run's detail.tgz in the same command (device_eval.sh, then cutab) is opened and
# packed again with this run's files, so neither overwrites the other nor makes a ninth file.
[ -f "$OUT/detail.tgz" ] && (cd "$OUT" && tar xzf detail.tgz && rm -f detail.tgz)
find "$OUT" -maxdepth 1 -type f ! -name run.log ! -name detail.tgz -printf '%P\n' | sort | comm -23 - "$pre" > /tmp/hs_pack.list
n=$(find "$OUT" -maxdepth 1 -type f ! -name run.log | wc -l)
if [ "$n" -gt 7 ] && [ -s /tmp/hs_pack.list ]; then
    (cd "$OUT" && tar czf detail.tgz -T /tmp/hs_pack.list &&
        { [ "$(stat -c %s detail.tgz)" -lt 16000000 ] || tar czf detail.tgz --exclude='*.ncu-rep' -T /tmp/hs_pack.list; } &&
        xargs rm -f < /tmp/hs_pack.list && echo "packed $(wc -l < /tmp/hs_pack.list) files into detail.tgz ($(du -h detail.tgz | cut -f1))")
fi
rm -f "$pre"
