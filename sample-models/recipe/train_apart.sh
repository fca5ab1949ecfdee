#!/bin/bash
# Members that stand at different global steps of one schedule (a part that left one short of
# the others, or variants staged from different calls) cannot share a device_train.sh run: every
# part starts all its members at one step. This trains them one after another in one device
# call, each from its own step, for at most its own seconds, and keeps each one's files apart:
# $OUT/DIR/ holds what device_train.sh wrote for it (models*.tar.gz, logs.tar.gz, call.log), so
# `unpack_call.sh N FILES_AT/DIR` takes them one by one. DIR is NAME with '@' as '_': the device
# tool does not bring back a name with '@' in it (call 45 lost its weights that way).
#   SCHEDULE=... UNTIL_STEP=... INIT_DIR=sample-models \
#     bash sample-models/recipe/train_apart.sh NAME:FROM_STEP:SECONDS... -- [train.py args...]
set -u
R=$(cd "$(dirname "$0")" && pwd)
me=train_apart.sh
: "${OUT:?$me: OUT is not set (run through the device tool)}"
runs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do runs+=("$1"); shift; done
[ $# -gt 0 ] && shift
[ ${#runs[@]} -gt 0 ] || { echo "usage: $me NAME:FROM_STEP:SECONDS... -- [train.py args...]" >&2; exit 2; }
[ -n "${SCHEDULE:-}" ] || { echo "$me: SCHEDULE is not set (members apart only make sense on a schedule)" >&2; exit 2; }
for r in "${runs[@]}"; do
    IFS=: read -r name from secs <<< "$r"
    [ -n "$name" ] && [ "$from" -ge 0 ] 2>/dev/null && [ "$secs" -gt 0 ] 2>/dev/null ||
        { echo "$me: '$r': expected NAME:FROM_STEP:SECONDS (digits for the step and the seconds)" >&2; exit 2; }
done
rc=0
for r in "${runs[@]}"; do
    IFS=: read -r name from secs <<< "$r"
    dir=${name//@/_}
    echo "== $name from global step $from, up to $secs s (files in \$OUT/$dir)"
    mkdir -p "$OUT/$dir"
    NAMES=$name FROM_STEP=$from CALL_SECONDS=$secs bash "$R/device_train.sh" 0 "$@" > "$OUT/$dir/call.log" 2>&1 || rc=1
    mv "$OUT"/*.tar.gz "$OUT/$dir/" 2>/dev/null
    grep -E "^part |^schedule:|train_family.sh failed|done:" "$OUT/$dir/call.log" | tail -n 12
done
exit $rc
