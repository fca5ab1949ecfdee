#!/bin/bash
# Keeps one training call's results: the device's files (models*.tar.gz, logs.tar.gz, from
# device_train.sh) unpacked into the ignored .train-state/callN as NAME/ and logs/, the layout
# install.sh, stage_init.sh and `evaluate.py bar --dir` read. The device's file folders are
# reused from session to session, so a call's files are unpacked as soon as they come back.
#   bash sample-models/recipe/unpack_call.sh N DEVICE_FILES_DIR
set -eu
[ $# -eq 2 ] || { echo "usage: unpack_call.sh N DEVICE_FILES_DIR" >&2; exit 2; }
n=$1; src=$2
case $n in ''|*[!0-9]*) echo "unpack_call.sh: call number: expected digits, got '$n'" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/../.." && pwd)
dst="$root/.train-state/call$n"
ls "$src"/models*.tar.gz >/dev/null 2>&1 && [ -f "$src/logs.tar.gz" ] ||
  { echo "unpack_call.sh: $src: no models*.tar.gz and logs.tar.gz (device_train.sh's files)" >&2; exit 1; }
[ -e "$dst" ] && { echo "unpack_call.sh: $dst exists (a call is kept once; remove it to redo)" >&2; exit 1; }
tmp="$dst.tmp.$$"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/logs"
for t in "$src"/models*.tar.gz; do tar xzf "$t" -C "$tmp"; done
tar xzf "$src/logs.tar.gz" -C "$tmp/logs"
mv "$tmp" "$dst"
trap - EXIT
names=$(cd "$dst" && for d in */; do if [ -f "$d/model.safetensors" ]; then printf '%s ' "${d%/}"; fi; done)
echo "call $n: $(echo $names | wc -w) checkpoints in .train-state/call$n: $names"
