#!/bin/bash
# One call on the GPU machine: how fast the family trains, SECS of wall time per setting.
# A setting is MODE:BATCH, MODE = slicing (eleven processes take turns on the GPU) or mps
# (their kernels overlap under the CUDA Multi-Process Service). Prints each member's agreed
# step count and steps done; nothing is kept but $OUT/probe.log.
#   PROBES="slicing:32 mps:32 mps:128" bash sample-models/recipe/device_probe.sh [SECS] [train.py args...]
set -u
R=$(cd "$(dirname "$0")" && pwd)
secs=${1:-90}
shift || true
OUT=${OUT:-/tmp/probe_out}; mkdir -p "$OUT"
exec > >(tee -a "$OUT/probe.log") 2>&1
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mps=off
for setting in ${PROBES:-slicing:32 mps:32}; do
  mode=${setting%%:*}; b=${setting##*:}
  if [ $mode = mps ] && [ $mps = off ]; then
    command -v nvidia-cuda-mps-control >/dev/null || { echo "mps: nvidia-cuda-mps-control not found"; continue; }
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps_pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps_log
    mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
    nvidia-cuda-mps-control -d || { echo "mps: the daemon did not start"; continue; }
    mps=on
  fi
  if [ $mode = slicing ] && [ $mps = on ]; then echo quit | nvidia-cuda-mps-control; mps=off; sleep 1; fi
  W=/tmp/probe_${mode}_$b; rm -rf $W
  t0=$(date +%s)
  bash "$R/train_family.sh" assets $W "$secs" --log-every 1000 --eval-every 0 --eval-per-task 0 --reserve 15 --batch $b "$@" > /dev/null 2>&1
  echo "== $mode batch $b: wall $(( $(date +%s) - t0 )) s"
  grep -h "family timing\|done:\|deadline reached\|capture failed\|Error" $W/*.stdout | cut -c1-150
done
[ $mps = on ] && { echo quit | nvidia-cuda-mps-control; }
true
