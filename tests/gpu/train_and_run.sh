#!/usr/bin/env bash
# One device call that trains and checks at once (device time is the scarce thing): the training
# call (sample-models/recipe/device_train.sh, its environment and arguments as given; its log in
# $OUT/call.log) in the background and, after RUN_DELAY seconds (the members' compile wants the
# CPUs first), tests/gpu/device_run.sh's RUN_STEPS, whose logs come back packed in $OUT/run.tgz
# (the device brings back at most 8 files). The GPU is shared, so this is for checks (verify,
# kcheck, parity, sanitize), never for timings: verify runs with VERIFY_TIMINGS=0.
#   RUN_STEPS=verify RUN_DELAY=150 [device_train.sh's env] bash tests/gpu/train_and_run.sh SECONDS [train.py args...]
#   TRAIN_SCRIPT=sample-models/recipe/train_apart.sh ... bash tests/gpu/train_and_run.sh NAME:FROM:SECONDS... -- [train.py args...]
set -u
OUT=${OUT:?train_and_run.sh: OUT is not set (run it through the device tool)}
t0=$(date +%s)
# TRAIN_SCRIPT: the training's script (default device_train.sh; train_apart.sh for members out of step)
bash "${TRAIN_SCRIPT:-sample-models/recipe/device_train.sh}" "$@" > "$OUT/call.log" 2>&1 & train=$!
# its own process group (so a cut stops its builds and checks too); not an MPS client: under MPS
# one client's fatal fault ends every client, the training's included
setsid bash -c "sleep ${RUN_DELAY:-150}; OUT=/tmp/hs_run VERIFY_TIMINGS=0 bash tests/gpu/device_run.sh ${RUN_STEPS:-verify}" \
    > /dev/null 2>&1 & run=$!
wait $train; echo "training: rc=$? after $(( $(date +%s) - t0 )) s"
# the checks get what is left of the device's 600 s, less the packing
while kill -0 $run 2>/dev/null && [ $(( $(date +%s) - t0 )) -lt ${RUN_UNTIL:-585} ]; do sleep 2; done
kill -0 $run 2>/dev/null && { echo "checks: cut at $(( $(date +%s) - t0 )) s"; kill -- -$run; }
tar czf "$OUT/run.tgz" -C /tmp/hs_run . 2>/dev/null
grep -v "loss" "$OUT/call.log" | tail -30
echo "== checks"; cat /tmp/hs_run/run.log 2>/dev/null | tail -40
