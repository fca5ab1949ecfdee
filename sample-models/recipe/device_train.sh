#!/bin/bash
# One call on the GPU machine (run from the repo root): self-test, train the family for
# TRAIN_SECONDS of wall time, pack checkpoints and logs into $OUT (tar files < 16 MB each).
# NAMES="a b" trains (and brings back) only those members; `--steps N` after the other train.py
# arguments caps the steps the deadline allows (a phase of a fixed length).
#   bash sample-models/recipe/device_train.sh [TRAIN_SECONDS] [train.py args...]
# A second call on the same (still warm) machine can continue every model from its checkpoint
# in /tmp/family: pass `--resume-dir /tmp/family` (a warm restart; see train.py --resume-dir).
# MPS=1 runs the members under the CUDA Multi-Process Service where the machine has it (measured
# 2026-12-03: no faster than time-slicing, 0.36 against 0.33 s per family step; the GPU is busy).
# With .whl/ (fla wheels) carried and `--fla auto`, train.py tries flash-linear-attention's
# kernels for gla/gdn; fla 0.6.0 refuses the device's Triton on Hopper (2026-12-03), so this is
# for a device with a newer Triton. The tree must stay under the device's 64 MiB: move
# sample-models/*/model.safetensors aside for such a call (training needs none).
set -u
R=$(cd "$(dirname "$0")" && pwd)
secs=${1:-480}
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
# --compile: eleven members compile at once; each with the default worker pool (one per CPU)
# would oversubscribe the 16 CPUs several times over
export TORCHINDUCTOR_COMPILE_THREADS=${TORCHINDUCTOR_COMPILE_THREADS:-2}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=/tmp/family
mkdir -p $W
# flash-linear-attention's wheels, carried in .whl/ (never committed): train.py uses its chunk
# kernels for gla/gdn when they import and pass model.fla_check, the PyTorch chunks otherwise
if ls .whl/fla_core-*.whl .whl/flash_linear_attention-*.whl >/dev/null 2>&1; then
  [ -d /tmp/fla_site/fla ] || python3 -m pip install -q --no-index --no-deps --no-compile \
      --no-cache-dir --target /tmp/fla_site .whl/fla_core-*.whl .whl/flash_linear_attention-*.whl
  export PYTHONPATH=/tmp/fla_site:${PYTHONPATH:-}
  echo "fla: $(ls .whl | tr '\n' ' ')"
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
nproc; echo "CC in the environment: ${CC-unset}"
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))"
nvidia-smi dmon -s um -d 15 > $W/dmon.log 2>&1 &
dmon=$!
mps=off
if [ "${MPS:-0}" = 1 ] && command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps_pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps_log
  mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
  nvidia-cuda-mps-control -d && mps=on
fi
echo "mps: $mps"
# compiled kernels from an earlier call (install.sh keeps them in the ignored .compile-cache/;
# carry it): each member loads its own and writes it again once its compiled step has run
# (not named CC: the device exports CC, the C compiler Inductor and Triton run, and assigning
# to an exported name changes what they run; call 13 lost its compile to that)
HS_COMPILE_DIR=$W/compile_cache
mkdir -p $HS_COMPILE_DIR
[ -f .compile-cache/compile_cache.tar.gz ] && tar xzf .compile-cache/compile_cache.tar.gz -C $HS_COMPILE_DIR &&
  echo "compile cache: $(ls $HS_COMPILE_DIR | wc -l) members' artifacts carried in"
t0=$(date +%s)
shift || true
ARGS_SAVED=("$@")
# PHASES=K runs up to K phases back to back, each of TRAIN_SECONDS, the second on continuing
# from the first's weights and AdamW state (--init-from dropped, then `--resume-dir /tmp/family
# --warmup $PHASE_WARMUP --ready-wait 60`), each a phase of its own in config.json; with
# UNTIL_RETRIEVES=1 they stop after the first phase that leaves every member at torch SK1 >= 0.9.
# No phase starts unless it can end within CALL_SECONDS of the start (the device's command limit).
# Each phase's stdout is kept (NAME.stdout holds them all, in order).
# SCHEDULE=FILE trains along a schedule (recipe/schedules/*.txt: one line a phase, "STEPS LR
# WARMUP LR_FLOOR P_NEEDLE P_COPY P_KV HOW", HOW = scratch | init | resume: how the phase starts, from
# nothing, from the last weights with a fresh AdamW, or from the weights and AdamW state), from
# global step FROM_STEP (default 0) for as long as the call lasts (CALL_SECONDS, default 560),
# cutting a phase wherever the time runs out: each run of train.py is a part of a phase
# (--phase-steps N --phase-start K keep its lr on the phase's curve, and with data drawn per
# global step the rows are the schedule's whatever the cuts). A part that continues a phase
# resumes the AdamW state where this machine holds it (this call's last part, or RESUME=1 for a
# warm machine whose /tmp/family ends at FROM_STEP), else it starts from INIT_DIR's weights
# (default /tmp/family; sample-models/ when a fresh machine continues staged weights) with a
# fresh AdamW and `--rewarm 50`. The call's own arguments come first (argparse keeps the last).
# Each part's "done:" line says the steps it made; the last says where the next call starts
# (FROM_STEP=warm on the same warm machine takes it from there and implies RESUME=1).
# UNTIL_STEP=N stops at global step N, inside a phase if need be (variants brought to where the
# rest of a family stands).
sched=()
if [ -n "${SCHEDULE:-}" ]; then
  [ -f "$SCHEDULE" ] || { echo "device_train.sh: SCHEDULE=$SCHEDULE: no such file" >&2; exit 2; }
  mapfile -t sched < <(grep -v '^ *#' "$SCHEDULE" | grep -v '^ *$')
  [ ${#sched[@]} -gt 0 ] || { echo "device_train.sh: $SCHEDULE: no phase lines" >&2; exit 2; }
  for l in "${sched[@]}"; do
    set -- $l
    [ $# = 8 ] && [ "$1" -gt 0 ] 2>/dev/null && case $8 in scratch|init|resume) true ;; *) false ;; esac ||
      { echo "device_train.sh: $SCHEDULE: bad phase line '$l' (STEPS LR WARMUP LR_FLOOR P_NEEDLE P_COPY P_KV scratch|init|resume)" >&2; exit 2; }
  done
  set -- "${ARGS_SAVED[@]}"
fi
names=${NAMES:-$(python3 -c "import sys; sys.path.insert(0, '$R'); import family; print(' '.join(family.FAMILY))")}
if [ ${#sched[@]} -gt 0 ]; then
  g=${FROM_STEP:-0}
  # FROM_STEP=warm: where this machine's last call stopped (so the next call can be issued at
  # once, within the warm machine's idle window, without reading the last call's log first)
  if [ "$g" = warm ]; then
    [ -f $W/next_step ] || { echo "device_train.sh: FROM_STEP=warm: no $W/next_step (a fresh machine: stage the last call's weights, INIT_DIR=sample-models, FROM_STEP=its step)" >&2; exit 2; }
    # the weights to go on from are this machine's, whatever INIT_DIR says (call 52 began phase 5
    # from the staged step-4,445 weights, which --expect-step refused)
    g=$(cat $W/next_step); RESUME=1; INIT_DIR=$W
  fi
  [ "$g" -ge 0 ] 2>/dev/null || { echo "device_train.sh: FROM_STEP=$g: a step number or warm" >&2; exit 2; }
  [ -z "${UNTIL_STEP:-}" ] || [ "$UNTIL_STEP" -gt 0 ] 2>/dev/null || { echo "device_train.sh: UNTIL_STEP=$UNTIL_STEP: a step number" >&2; exit 2; }
  warm=-1; [ "${RESUME:-0}" = 1 ] && warm=$g
  p=0; rc=0; oos=
  while :; do
    # the phase that holds global step g, and g's step within it
    i=0; base=0
    while [ $i -lt ${#sched[@]} ]; do
      set -- ${sched[$i]}
      [ $g -lt $((base + $1)) ] && break
      base=$((base + $1)); i=$((i + 1))
    done
    [ $i -lt ${#sched[@]} ] || { echo "schedule: done at step $g"; break; }
    [ -z "${UNTIL_STEP:-}" ] || [ $g -lt $UNTIL_STEP ] || { echo "schedule: stopped at step $g (UNTIL_STEP)"; break; }
    left=$(( ${CALL_SECONDS:-560} - ($(date +%s) - t0) - 30 ))
    [ $left -ge ${MIN_PART_SECONDS:-100} ] || { echo "schedule: next call from step $g (FROM_STEP=$g; phase $((i + 1)) step $((g - base)))"; break; }
    set -- ${sched[$i]}
    k=$((g - base)); p=$((p + 1))
    n_steps=$(($1 - k)); [ -n "${UNTIL_STEP:-}" ] && [ $((g + n_steps)) -gt $UNTIL_STEP ] && n_steps=$((UNTIL_STEP - g))
    ph=(--expect-step $g --steps $n_steps --phase-steps "$1" --phase-start $k --lr "$2" --warmup "$3" --lr-floor "$4" --p-needle "$5" --p-copy "$6" --p-kv "$7")
    how=$8
    [ $k -gt 0 ] && { [ $warm = $g ] && how=resume || how=init-rewarm; }
    [ $k = 0 ] && [ $how = resume ] && [ $warm != $g ] && how=init
    case $how in
      init) ph+=(--init-from "${INIT_DIR:-$W}") ;;
      init-rewarm) ph+=(--init-from "${INIT_DIR:-$W}" --rewarm 50) ;;
      resume) ph+=(--resume-dir $W --ready-wait 60) ;;
    esac
    echo "part $p: phase $((i + 1)) (${sched[$i]}) from its step $k, global step $g, $how, up to $left s"
    bash "$R/train_family.sh" assets $W "$left" --compile-cache $HS_COMPILE_DIR "${ARGS_SAVED[@]}" "${ph[@]}" || rc=$?
    for n in $names; do [ -f $W/$n.stdout ] && mv $W/$n.stdout $W/$n.stdout.p$p; done
    [ $rc = 0 ] || { echo "part $p: train_family.sh failed (exit $rc); stopping at step $g"; break; }
    # every member's count: one that stopped short (call 43: gdn-nope-lh 139 steps behind the
    # agreed count at its deadline) cannot be continued with the others from one step
    made=; each=
    for n in $names; do
      m=$(sed -n 's/.*done: \([0-9]*\) steps.*/\1/p' $W/$n.stdout.p$p 2>/dev/null | tail -1)
      each="$each $n=${m:-none}"
      if [ -z "$m" ] || [ "$made" = none ]; then made=none
      elif [ -z "$made" ] || [ "$m" = "$made" ]; then made=$m
      else made=mixed; fi
    done
    [ "$made" = none ] && made=
    [ "$made" = mixed ] && { echo "part $p: members out of step (made:$each); stopping: stage each from its own global step ($g + made) in a call of its own"; oos=1; break; }
    [ -n "$made" ] && [ "$made" -gt 0 ] || { echo "part $p: no steps made; stopping at step $g"; break; }
    g=$((g + made)); warm=$g; INIT_DIR=$W
    echo "part $p: $made steps, $(( $(date +%s) - t0 )) s; $(grep -h 'done:' $W/*.stdout.p$p 2>/dev/null | sed 's/.*\[\([^ ]*\) .*NIAH at L0 {.sk1.: \([0-9.]*\).*/\1 sk1 \2/' | tr '\n' ' ')"
  done
  # no FROM_STEP=warm after members fell out of step: the next call stages them one by one
  if [ -n "${oos:-}" ]; then rm -f $W/next_step; else echo $g > $W/next_step; fi
  phases=$p
else
phases=${PHASES:-1}
again=()
skip=0
for x in "$@"; do
  if [ $skip = 1 ]; then skip=0; continue; fi
  case $x in --init-from) skip=1 ;; --init-from=*) ;; *) again+=("$x") ;; esac
done
again+=(--resume-dir $W --warmup "${PHASE_WARMUP:-50}" --ready-wait 60)
for p in $(seq 1 $phases); do
  if [ $p -gt 1 ] && [ $(( $(date +%s) - t0 + secs + 30 )) -gt "${CALL_SECONDS:-560}" ]; then
    echo "phase $p not started: it would end past ${CALL_SECONDS:-560} s"; break
  fi
  rc=0
  if [ $p = 1 ]; then
    bash "$R/train_family.sh" assets $W "$secs" --compile-cache $HS_COMPILE_DIR "$@" || rc=$?
  else
    bash "$R/train_family.sh" assets $W "$secs" --compile-cache $HS_COMPILE_DIR "${again[@]}" || rc=$?
  fi
  for n in $names; do [ -f $W/$n.stdout ] && mv $W/$n.stdout $W/$n.stdout.p$p; done
  echo "phase $p: $(( $(date +%s) - t0 )) s; $(grep -h 'done:' $W/*.stdout.p$p 2>/dev/null | sed 's/.*\[\([^ ]*\) .*NIAH at L0 {.sk1.: \([0-9.]*\).*/\1 sk1 \2/' | tr '\n' ' ')"
  [ $rc = 0 ] || { echo "phase $p: train_family.sh failed (exit $rc); no more phases"; break; }
  if [ "${UNTIL_RETRIEVES:-0}" = 1 ] && [ $phases -gt 1 ]; then
    miss=0
    for n in $names; do
      v=$(sed -n "s/.*done:.*NIAH at L0 {.sk1.: \([0-9.]*\).*/\1/p" $W/$n.stdout.p$p 2>/dev/null | tail -1)
      awk -v v="${v:-0}" 'BEGIN { exit !(v >= 0.9) }' || miss=1
    done
    [ $miss = 0 ] && { echo "phase $p: every member retrieves; no more phases"; break; }
  fi
done
fi
for n in $names; do
  for p in $(seq 1 $phases); do [ -f $W/$n.stdout.p$p ] && cat $W/$n.stdout.p$p; done > $W/$n.stdout
  rm -f $W/$n.stdout.p*
done
echo "family wall: $(( $(date +%s) - t0 )) s"
kill $dmon 2>/dev/null
[ $mps = on ] && { echo quit | nvidia-cuda-mps-control; }
grep -h "gla/gdn kernels" $W/*.stdout | cut -c1-220
grep -h "captured\|capture failed\|family timing\|done:\|Error\|error\|stopping" $W/*.stdout | head -60
grep -h "quick SK1" $W/*.stdout | tail -40
cd $W
# NAMES (train_family.sh) trains some members; only theirs come back, since /tmp/family on a
# warm machine also holds the members of earlier calls, which unpack_call.sh and install.sh
# would otherwise take for this call's
trained=${NAMES:-$(ls -d */ 2>/dev/null | tr -d /)}
logs=""
for n in $trained; do logs="$logs $(ls $n.log $n.stdout $n.eval.json 2>/dev/null | tr '\n' ' ')"; done
tar czf $OUT/logs.tar.gz $logs families.json dmon.log 2>/dev/null
i=0; grp=""
for d in $trained; do
  [ -f "$d/model.safetensors" ] || continue
  grp="$grp $d"; i=$((i+1))
  if [ $((i % 3)) -eq 0 ]; then tar czf $OUT/models$((i/3)).tar.gz $grp; grp=""; fi
done
[ -n "$grp" ] && tar czf $OUT/models$((i/3+1)).tar.gz $grp
# the compile cache back (one file of at most 16 MiB comes back from $OUT)
if ls $HS_COMPILE_DIR/*.bin >/dev/null 2>&1; then
  tar czf $OUT/compile_cache.tar.gz -C $HS_COMPILE_DIR $(cd $HS_COMPILE_DIR && ls *.bin)
  sz=$(stat -c %s $OUT/compile_cache.tar.gz)
  [ "$sz" -gt 16000000 ] && { echo "compile cache: $sz bytes, too large to come back"; rm -f $OUT/compile_cache.tar.gz; }
fi
ls -la $OUT
