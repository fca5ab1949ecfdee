#!/usr/bin/env bash
# The device tool copies the working tree (tracked and untracked files) plus its carry list, 64 MiB
# at most; with train-state/ (a training run kept between sessions) and the sample models' weights
# the tree is ~110 MB. Engine checks and benchmarks need neither (parity.sh's map rows skip
# missing sample models), so move them aside for such a call and back after it:
#   bash tests/gpu/slim_tree.sh aside [KEEP_MODEL...]   weights of KEEP_MODEL stay in the tree
#   bash tests/gpu/slim_tree.sh restore
#   bash tests/gpu/slim_tree.sh size                     what the tree and .deps/.whl weigh now
# The files go to ${HS_ASIDE:-/work/hs-aside} (outside the repository) and come back unchanged;
# `git status` shows them deleted while they are aside.
set -eu
cd "$(dirname "$0")/../.."
aside=${HS_ASIDE:-/work/hs-aside}
size() {
    local t
    t=$( { git ls-files -z; git ls-files -z --others --exclude-standard; } |
         xargs -0 -r stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
    echo "tree $((t / 1048576)) MiB; .deps $(du -sm .deps 2>/dev/null | cut -f1 || echo 0) MiB, .whl $(du -sm .whl 2>/dev/null | cut -f1 || echo 0) MiB (the device takes 64 MiB with the carried folders)"
}
case ${1:-} in
aside)
    shift
    [ ! -e "$aside" ] || { echo "slim_tree.sh: $aside exists (restore first, or remove it)" >&2; exit 1; }
    mkdir -p "$aside/sample-models"
    [ -d train-state ] && mv train-state "$aside/"
    for f in sample-models/*/model.safetensors; do
        [ -f "$f" ] || continue
        m=$(basename "$(dirname "$f")")
        case " $* " in *" $m "*) continue ;; esac
        mkdir -p "$aside/sample-models/$m" && mv "$f" "$aside/sample-models/$m/"
    done
    size ;;
restore)
    [ -d "$aside" ] || { echo "slim_tree.sh: nothing aside ($aside)" >&2; exit 1; }
    [ -d "$aside/train-state" ] && { [ ! -e train-state ] || { echo "slim_tree.sh: train-state/ exists here and aside" >&2; exit 1; }; mv "$aside/train-state" .; }
    for f in "$aside"/sample-models/*/model.safetensors; do
        [ -f "$f" ] || continue
        m=$(basename "$(dirname "$f")")
        [ ! -e "sample-models/$m/model.safetensors" ] || { echo "slim_tree.sh: sample-models/$m/model.safetensors exists here and aside" >&2; exit 1; }
        mv "$f" "sample-models/$m/"
    done
    rm -rf "$aside"
    size ;;
size) size ;;
*) echo "usage: slim_tree.sh aside [KEEP_MODEL...] | restore | size" >&2; exit 2 ;;
esac
