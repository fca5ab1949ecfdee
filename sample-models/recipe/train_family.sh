#!/bin/bash
# Trains the whole family concurrently on one GPU, all with the same data, size and step count.
#   bash train_family.sh ASSETS_DIR OUT_DIR TRAIN_SECONDS [extra train.py args...]
# TRAIN_SECONDS is the wall budget for the whole family; the step count is agreed by the members
# after a short timing probe (train.py --deadline) so every model runs the same number of steps.
# NAMES="a b" trains only those members; NAME@TAG is a variant of member NAME in a directory of its
# own, on the same data and steps as the rest: NAME@sK with weight-init seed K (default 1), any
# other tag (letters, digits, - or _) with seed 1 and, typically, MEMBER_ARGS of its own.
# MEMBER_ARGS="NAME=ARGS;NAME=ARGS" gives a member train.py arguments of its own after the shared
# ones (for variants of one member trained side by side).
set -u
here=$(cd "$(dirname "$0")" && pwd)
assets=$1; out=$2; secs=$3; shift 3
mkdir -p "$out"
names=${NAMES:-$(python3 -c "import sys; sys.path.insert(0, '$here'); import family; print(' '.join(family.FAMILY))")}
n=$(echo $names | wc -w)
# every layout must build before anything starts
python3 -c "import sys; sys.path.insert(0, '$here'); import family
for s in family.FAMILY.values(): family.make_config(s)" || exit 2
for name in $names; do
  case $name in *@*) case ${name#*@} in ''|*[!A-Za-z0-9_-]*) echo "train_family.sh: $name: NAME@TAG wants a tag of letters, digits, - or _" >&2; exit 2 ;; esac ;; esac
  python3 -c "import sys; sys.path.insert(0, '$here'); import family; sys.exit('$name'.split('@')[0] not in family.FAMILY)" ||
    { echo "train_family.sh: $name: not a member of family.py's FAMILY" >&2; exit 2; }
done
deadline=$(python3 -c "import time; print(time.time() + $secs)")
rm -rf "$out/sync"
pids=()
for name in $names; do
  base=${name%%@*}; seed=1
  case $name in *@s[0-9]*) case ${name#*@s} in *[!0-9]*) ;; *) seed=${name#*@s} ;; esac ;; esac
  layout=$(python3 -c "import sys; sys.path.insert(0, '$here'); import family; print(family.FAMILY['$base'])")
  # --compile on a fresh machine: gdn-nope-lh took ~200 s to compile with two Inductor workers
  # while the others were stepping-ready in 35-80 s and then waited at the barrier (2026-12-05,
  # H100), so the gdn member gets more workers (the others' compiles are over by then)
  # and compiles layer by layer (`--compile layers`: its two layer structures once each, not
  # the chunk loop of all eight layers in one graph; 96 against 218 s on the development CPU at
  # the training length) unless HS_GDN_COMPILE says otherwise; the others wait for it at the barrier
  thr=${TORCHINDUCTOR_COMPILE_THREADS:-2}
  gdn_args=()
  case $layout in *gdn*)
    thr=${HS_GDN_COMPILE_THREADS:-6}
    case " $* " in *" --compile model "*) gdn_args=(--compile "${HS_GDN_COMPILE:-layers}") ;; esac ;;
  esac
  own=()
  if [ -n "${MEMBER_ARGS:-}" ]; then
    IFS=';' read -ra specs <<< "$MEMBER_ARGS"
    for sp in "${specs[@]}"; do
      [ "${sp%%=*}" = "$name" ] && read -ra own <<< "${sp#*=}"
    done
  fi
  TORCHINDUCTOR_COMPILE_THREADS=$thr \
  python3 "$here/train.py" --name "$name" --layout "$layout" --seed "$seed" --steps 1000000 \
    --assets "$assets" --out "$out" --deadline "$deadline" --sync-dir "$out/sync" \
    --family-size "$n" "$@" ${gdn_args[@]+"${gdn_args[@]}"} ${own[@]+"${own[@]}"} > "$out/$name.stdout" 2>&1 &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
python3 -c "import sys, json; sys.path.insert(0, '$here'); import family; json.dump(family.families_json(), open('$out/families.json', 'w'), indent=1)"
exit $rc
