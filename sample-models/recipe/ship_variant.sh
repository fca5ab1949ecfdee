#!/bin/bash
# Ships a variant (NAME@TAG, train_family.sh) as member NAME, after ship_family.sh has shipped
# the rest of the family: for each of the variant's calls FIRST..LAST (kept by unpack_call.sh /
# keep_train_state.sh) a copy in which NAME@TAG's folder and logs are named NAME goes through
# install.sh with ONLY=NAME: the first call starts NAME's log anew (FRESH), the earlier calls
# append their logs only, the last installs the weights, config.json (whose "training" block
# records the variant's seed and its own arguments), families.json and the parity fixtures. The
# log lines keep the variant's name, so the history says which run it was. Then the bar on the
# C engine for every model.
#   bash sample-models/recipe/ship_variant.sh NAME@TAG FIRST LAST [PYTHON_WITH_TORCH]
set -eu
[ $# -ge 3 ] || { echo "usage: ship_variant.sh NAME@TAG FIRST LAST [PYTHON_WITH_TORCH]" >&2; exit 2; }
var=$1 first=$2 last=$3 py=${4:-python3}
case $var in *@?*) ;; *) echo "ship_variant.sh: $var: expected NAME@TAG" >&2; exit 2 ;; esac
base=${var%%@*}
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/sample-models/recipe"
me=ship_variant.sh
. "$here/calls.sh"
need_call_range "$first" "$last"
for n in $(seq "$first" "$last"); do
    s=$(src_of "$n")
    [ -f "$s/$var/config.json" ] || { echo "ship_variant.sh: call $n: no $var/config.json in $s" >&2; exit 1; }
done
[ -f "$(src_of "$last")/$var/model.safetensors" ] || { echo "ship_variant.sh: call $last: no $var/model.safetensors" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in $(seq "$first" "$last"); do
    s=$(src_of "$n") d="$tmp/call$n"
    mkdir -p "$d/logs" && cp -r "$s/$var" "$d/$base"
    for f in "$s/logs/$var".*; do [ -f "$f" ] && cp "$f" "$d/logs/$base.${f##*/$var.}"; done
    env_=(ONLY="$base" CALL="$n")
    [ "$n" = "$first" ] && env_+=(FRESH=1)
    [ "$n" != "$last" ] && env_+=(LOGS_ONLY=1)
    env "${env_[@]}" bash "$here/install.sh" "$d" "$py"
done
cd "$root" && python3 sample-models/recipe/evaluate.py bar --samples 5
