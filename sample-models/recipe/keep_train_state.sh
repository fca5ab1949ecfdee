#!/bin/bash
# Keeps a training run in the repository at a session break, in train-state/ (committed; a
# fresh checkout loses the ignored .train-state/): the last call's weights and configs, and
# every call's configs and logs. A later session continues from the weights
# (`stage_init.sh stage train-state/callLAST NAME...`, which also moves train-state/ aside for
# the device) and, when the run ships, installs the earlier calls' logs in order
# (`LOGS_ONLY=1 CALL=N install.sh train-state/callN`, FRESH=1 for the run's first call).
# `git rm -r train-state` once the run has shipped.
#   bash sample-models/recipe/keep_train_state.sh CALL...   (from .train-state/callN, else train-state/callN; the last one's weights)
set -eu
[ $# -ge 1 ] || { echo "usage: keep_train_state.sh CALL... (the call numbers of .train-state/callN, in order)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
last=${!#}
me=keep_train_state.sh
. "$root/sample-models/recipe/calls.sh"
for n in "$@"; do
    need_call_number "$n"
    [ -n "$(src_of "$n")" ] ||
        { echo "keep_train_state.sh: call $n: neither .train-state/call$n nor train-state/call$n (unpack_call.sh first)" >&2; exit 1; }
done
for n in "$@"; do
    src=$(src_of "$n") dst=$root/train-state/call$n
    rm -rf "$dst.tmp" && mkdir -p "$dst.tmp/logs"
    for f in "$src"/logs/*.log "$src"/logs/*.eval.json; do
        [ -f "$f" ] && [ "$(basename "$f")" != dmon.log ] && cp "$f" "$dst.tmp/logs/"
    done
    for d in "$src"/*/; do
        name=$(basename "$d")
        [ -f "$d/config.json" ] || continue
        mkdir -p "$dst.tmp/$name" && cp "$d/config.json" "$dst.tmp/$name/"
        if [ "$n" = "$last" ]; then
            [ -f "$d/model.safetensors" ] || { echo "keep_train_state.sh: $d: no weights" >&2; exit 1; }
            cp "$d/model.safetensors" "$dst.tmp/$name/"
        fi
    done
    rm -rf "$dst" && mv "$dst.tmp" "$dst"
done
echo "train-state/: calls $*, weights of call $last ($(du -sh "$root/train-state" | cut -f1)); commit it"
