#!/bin/bash
# Stages a training call on the device (whose tree must stay under 64 MiB): moves the weights
# of the models that meet the bar out of the tree and puts the weights to continue from into
# sample-models/NAME/ (for `device_train.sh ... --init-from sample-models`), with their
# config.json when FROM_DIR has one (its "training" block lists the phases so far, which the
# next call extends); `restore` undoes both. A top-level train-state/ (weights committed at a
# session break) is moved aside by every mode and brought back by restore. Never commit
# between the two (git status shows the moved files as D / M).
#   bash sample-models/recipe/stage_init.sh stage FROM_DIR NAME...   (FROM_DIR/NAME/model.safetensors [config.json])
#   bash sample-models/recipe/stage_init.sh keep NAME...   (every other model's weights aside)
#   bash sample-models/recipe/stage_init.sh aside          (every model's weights aside)
#   bash sample-models/recipe/stage_init.sh restore
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
stash=${HS_STASH:-/tmp/hs_stash}
mode=${1:-}; [ $# -gt 0 ] && shift
case $mode in
stage|aside|keep)
    from=
    case $mode in
    stage) [ $# -ge 2 ] || { echo "stage_init: stage FROM_DIR NAME... (at least one name)" >&2; exit 2; }
           from=$1; shift ;;
    keep)  [ $# -ge 1 ] || { echo "stage_init: keep NAME... (at least one name)" >&2; exit 2; } ;;
    aside) [ $# -eq 0 ] || { echo "stage_init: aside takes no names" >&2; exit 2; } ;;
    esac
    [ -e "$stash" ] && { echo "stage_init: $stash exists (restore first)" >&2; exit 1; }
    for n in "$@"; do
        [ -z "$from" ] && { [ -f "$root/sample-models/$n/model.safetensors" ] || { echo "stage_init: no model $n" >&2; exit 1; }; continue; }
        [ -f "$from/$n/model.safetensors" ] || { echo "stage_init: $from/$n/model.safetensors missing" >&2; exit 1; }
    done
    mkdir -p "$stash/keep"
    for d in "$root"/sample-models/*/; do
        n=$(basename "$d")
        [ -f "$d/model.safetensors" ] || continue
        case " $* " in *" $n "*) continue ;; esac
        mkdir -p "$stash/keep/$n" && mv "$d/model.safetensors" "$stash/keep/$n/"
    done
    [ -n "$from" ] && for n in "$@"; do
        # a variant (NAME@TAG) has no folder of its own in sample-models/: made here, removed by restore
        [ -d "$root/sample-models/$n" ] || { mkdir -p "$root/sample-models/$n"; echo "$n" >> "$stash/made"; }
        cp "$from/$n/model.safetensors" "$root/sample-models/$n/model.safetensors"
        [ -f "$from/$n/config.json" ] && cp "$from/$n/config.json" "$root/sample-models/$n/config.json"
    done
    # train-state/ (a family's weights committed at a session break, ~51 MB) goes aside too,
    # after the copy above (FROM_DIR may be inside it): the device takes at most 64 MiB
    [ -d "$root/train-state" ] && mv "$root/train-state" "$stash/train-state" && echo "train-state/ kept aside"
    echo "in the tree: ${*:-nothing}; kept aside: $(ls "$stash/keep" | tr '\n' ' ')"
    du -sh --exclude=.git --exclude=build --exclude=.torchenv --exclude=.train-state "$root" ;;
restore)
    [ -d "$stash/keep" ] || { echo "stage_init: nothing staged ($stash)" >&2; exit 1; }
    # (an empty keep/ after a machine restart: the committed weights come back from git below)
    for d in "$stash"/keep/*/; do
        [ -f "$d/model.safetensors" ] && mv "$d/model.safetensors" "$root/sample-models/$(basename "$d")/"
    done
    [ -d "$stash/train-state" ] && mv "$stash/train-state" "$root/train-state"
    if [ -f "$stash/made" ]; then while read -r n; do rm -rf "${root:?}/sample-models/$n"; done < "$stash/made"; fi
    # the staged weights and configs go back to the committed ones
    (cd "$root" && git checkout -- sample-models/*/model.safetensors sample-models/*/config.json)
    rm -rf "$stash"
    (cd "$root" && git status --short sample-models) ;;
*) echo "usage: stage_init.sh stage FROM_DIR NAME... | keep NAME... | aside | restore" >&2; exit 2 ;;
esac
