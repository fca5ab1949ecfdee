#!/bin/bash
# Ships a training run kept call by call (keep_train_state.sh, unpack_call.sh): every earlier
# call's logs appended in order (install.sh LOGS_ONLY, the first call FRESH), then the last
# call installed whole (weights, configs, families.json, the parity fixtures), then the quality
# bar on the C engine (evaluate.py bar --samples 5, CPU). Each call is taken from
# .train-state/callN where unpacked there, else from train-state/callN. What is left by hand:
# `git rm -r train-state`, the extrapolation table (device_run.sh evaltable, or device_eval.sh
# on the machine that trained), README.md's tables.
#   bash sample-models/recipe/ship_family.sh FIRST LAST [PYTHON_WITH_TORCH]
set -eu
[ $# -ge 2 ] || { echo "usage: ship_family.sh FIRST LAST [PYTHON_WITH_TORCH] (call numbers)" >&2; exit 2; }
first=$1 last=$2 py=${3:-python3}
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/sample-models/recipe"
me=ship_family.sh
. "$here/calls.sh"
need_call_range "$first" "$last"
[ -x "$root/build/hybridscope" ] || { echo "ship_family.sh: build/hybridscope: missing (make first)" >&2; exit 1; }
for n in $(seq "$first" $((last - 1))); do
    if [ "$n" = "$first" ]; then FRESH=1 LOGS_ONLY=1 CALL=$n bash "$here/install.sh" "$(src_of "$n")" "$py"
    else LOGS_ONLY=1 CALL=$n bash "$here/install.sh" "$(src_of "$n")" "$py"; fi
done
if [ "$first" = "$last" ]; then FRESH=1 CALL=$last bash "$here/install.sh" "$(src_of "$last")" "$py"
else CALL=$last bash "$here/install.sh" "$(src_of "$last")" "$py"; fi
cd "$root" && python3 sample-models/recipe/evaluate.py bar --samples 5
