#!/usr/bin/env bash
# On the device, right after the family's last training call on the same warm machine: the
# quality bar and the extrapolation table on the GPU engine for the weights in /tmp/family
# (tests/gpu/device_run.sh evaltable with EVAL_DIR; carry .deps for the engine's build), so the
# table comes back with the call that finishes the schedule instead of costing a fresh machine.
# Runs only when every member's last torch SK1 at L0 (its NAME.stdout "done:" line) is >= 0.9:
# a family that still needs its contingency phase is not the one to tabulate (EVAL_ANYWAY=1
# runs it regardless). EVAL_ARGS passes on to the table (device_run.sh's default otherwise).
set -u
cd "$(dirname "$0")/../.."
W=${FAMILY_DIR:-/tmp/family}
names=$(python3 -c "import sys; sys.path.insert(0, 'sample-models/recipe'); import family; print(' '.join(family.FAMILY))")
miss=""
for n in $names; do
  [ -f "$W/$n/model.safetensors" ] || { echo "device_eval.sh: $W/$n/model.safetensors: missing (no training call on this machine?)" >&2; exit 1; }
  v=$(sed -n "s/.*done:.*NIAH at L0 {.sk1.: \([0-9.]*\).*/\1/p" "$W/$n.stdout" 2>/dev/null | tail -1)
  awk -v v="${v:-0}" 'BEGIN { exit !(v >= 0.9) }' || miss="$miss $n"
done
if [ -n "$miss" ] && [ "${EVAL_ANYWAY:-0}" != 1 ]; then
  echo "device_eval.sh: not every member retrieves (torch SK1 < 0.9:$miss): no evaluation"
  exit 0
fi
EVAL_DIR=$W bash tests/gpu/device_run.sh evaltable
