#!/usr/bin/env bash
# Incremental decoding on the GPU (engine/cuda/decode.cu, through `hybridscope generate`) on
# `init` models of every mixer type (gla, gla with short conv, gdn, swa with GQA, rope; LH and
# HH; head dims 16/64/128) and the knobs (swa window, rope window, log scaling, ablation, SWLA
# exact and overlap with windows the generation crosses). Per case, greedy generation after a
# fixed prompt:
#   1. GPU decoder against the CPU decoder: the same tokens (or, where they part, a near-tie in
#      the CPU's logits: within 0.25 of the row RMS), and the logits of the rows computed from
#      the same tokens within parity.sh's tolerance (RMS 3%, max 35% of the reference RMS);
#   2. GPU decoder against the GPU full forward of the sequence it generated (`logits --last`):
#      every row within the same tolerance;
#   3. the decoder ran (no "the GPU decoder cannot run" fallback note).
# Then a niah smoke run on CUDA (the decoder's speed: tests/gpu/decode_speed.sh).
# DECODE_ONLY=regex runs a subset of the cases.
# Exit 0 pass, 1 fail, 77 no CUDA device (or no python3 with numpy). Env: HS_BIN (binary).
# Run on the GPU machine: `HS_BIN=$PWD/build/hybridscope bash tests/gpu/decode_check.sh`, or
# `bash tests/gpu/device_run.sh decode` (builds first).
set -u
here=$(cd "$(dirname "$0")" && pwd)
BIN=${HS_BIN:?HS_BIN not set}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmp="python3 $here/compare_decode.py"
fails=0; runs=0

"$BIN" init "$tmp/probe" --preset tiny >/dev/null 2>&1 || { echo "FAIL: init"; exit 1; }
if ! out=$("$BIN" logits "$tmp/probe" --text "x" --device cuda --out "$tmp/p.npy" 2>&1); then
    if printf '%s' "$out" | grep -q "no CUDA device"; then echo "skip: no CUDA device"; exit 77; fi
    echo "FAIL: logits --device cuda: $out"; exit 1
fi
python3 -c "import numpy" 2>/dev/null || { echo "skip: python3 with numpy is missing"; exit 77; }

# deterministic text of a given byte length (T = bytes + 1 with the BOS)
mktext() { python3 -c "import random,sys; r=random.Random($2); sys.stdout.write(''.join(r.choice('abcdefghij klmnop.') for _ in range($1)))"; }
p300=$(mktext 300 1); p1500=$(mktext 1500 2)

check() {   # name model prompt max_new [knob flags...]
    local name=$1 model=$2 prompt=$3 n=$4; shift 4
    if [ -n "${DECODE_ONLY:-}" ] && ! [[ "$name" =~ $DECODE_ONLY ]]; then return; fi
    runs=$((runs + 1))
    local g="$BIN generate $model --max-new $n --json"
    if ! $g --text "$prompt" "$@" --device cpu --logits-out "$tmp/lc.npy" >"$tmp/c.json" 2>"$tmp/err"; then
        echo "FAIL $name: cpu: $(tail -1 "$tmp/err")"; fails=$((fails + 1)); return; fi
    if ! $g --text "$prompt" "$@" --device cuda --logits-out "$tmp/lg.npy" --tokens-out "$tmp/sg.npy" >"$tmp/g.json" 2>"$tmp/err"; then
        echo "FAIL $name: cuda: $(tail -1 "$tmp/err")"; fails=$((fails + 1)); return; fi
    if grep -q "GPU decoder cannot run" "$tmp/err"; then
        echo "FAIL $name: the GPU decoder refused: $(grep 'GPU decoder' "$tmp/err")"; fails=$((fails + 1)); return; fi
    local r1 r2 rows ok=1
    r1=$($cmp tokens "$tmp/c.json" "$tmp/lc.npy" "$tmp/g.json" "$tmp/lg.npy") || ok=0
    rows=$($cmp trim "$tmp/g.json" "$tmp/sg.npy" "$tmp/lg.npy" "$tmp/st.npy") &&
        "$BIN" logits "$model" --tokens "$tmp/st.npy" --last "$rows" "$@" --device cuda --out "$tmp/lf.npy" >/dev/null 2>"$tmp/err" ||
        { echo "FAIL $name: full forward: $(tail -1 "$tmp/err")"; fails=$((fails + 1)); return; }
    r2=$(python3 "$here/compare_logits.py" "$tmp/lf.npy" "$tmp/lg.npy") || ok=0
    if [ $ok = 1 ]; then echo "ok   $name: vs cpu decoder: $r1; vs gpu forward: $r2"
    else echo "FAIL $name: vs cpu decoder: $r1; vs gpu forward: $r2"; fails=$((fails + 1)); fi
}

mk() { "$BIN" init "$tmp/$1" "${@:2}" --seed 3 >/dev/null 2>"$tmp/err" || { echo "FAIL init $1: $(cat "$tmp/err")"; exit 1; }; }
mk gla    --preset tiny --efficient gla --train-context 256
mk glac   --preset tiny --efficient gla --short-conv --layout HH --train-context 256
mk gdn    --preset tiny --efficient gdn --train-context 256
mk gdn64  --preset tiny --efficient gdn --hidden 128 --heads 4 --head-dim 64 --layout HH --train-context 256
mk gla128 --preset tiny --efficient gla --hidden 256 --heads 2 --head-dim 128 --train-context 256
mk swa    --preset tiny --efficient swa --window 48 --kv-heads 2 --train-context 256
mk rope   --preset tiny --efficient rope --layout HH --train-context 256
mk swa64  --preset tiny --efficient swa --window 48 --kv-heads 2 --hidden 256 --heads 4 --head-dim 64 --train-context 256

for m in gla glac gdn gdn64 gla128 swa rope swa64; do check "$m T=301" "$tmp/$m" "$p300" 40; done
check "gla T=1501" "$tmp/gla" "$p1500" 40
check "gdn64 T=1501" "$tmp/gdn64" "$p1500" 40
# knobs: windows the 40 generated tokens cross (ring buffers wrap), log scaling past L0, ablation
check "swa swa-window 20" "$tmp/swa" "$p300" 40 --swa-window 20
check "swa64 swa-window 200 + log-scale T=1501" "$tmp/swa64" "$p1500" 40 --swa-window 200 --log-scale=64
check "rope rope-window 40" "$tmp/rope" "$p300" 40 --rope-window=40
check "nope log-scale L0=16" "$tmp/gla" "$p300" 40 --log-scale=16
check "gdn64 log-scale + ablate" "$tmp/gdn64" "$p300" 40 --log-scale=32 --ablate 1.0.0,3.1.0
check "swa ablate" "$tmp/swa" "$p300" 40 --ablate 0.0.1,3.0.2
check "gla swla exact W=64" "$tmp/gla" "$p300" 40 --swla=exact --swla-window 64
check "glac swla exact W=100" "$tmp/glac" "$p300" 40 --swla=exact --swla-window 100
check "gla swla overlap W=64 S=16" "$tmp/gla" "$p300" 40 --swla=overlap --swla-window 64 --swla-stride 16
check "gdn swla exact W=64" "$tmp/gdn" "$p300" 40 --swla=exact --swla-window 64
check "gdn64 swla overlap W=96 S=24" "$tmp/gdn64" "$p300" 40 --swla=overlap --swla-window 96 --swla-stride 24
check "gla128 swla exact W=50" "$tmp/gla128" "$p300" 40 --swla --swla-window 50
# a window the prompt does not fill but the generation does (prefill by the plain forward)
check "gdn swla exact W=320" "$tmp/gdn" "$p300" 40 --swla=exact --swla-window 320

# niah on CUDA goes through the decoder (engine/decode_device.c): it must run without falling back
if [ -z "${DECODE_ONLY:-}" ] || [[ "niah" =~ $DECODE_ONLY ]]; then
    runs=$((runs + 1))
    if ! "$BIN" niah "$tmp/gdn64" --task sk1 --lengths 600 --depths 50 --samples 2 --json --device cuda >"$tmp/n.json" 2>"$tmp/err"; then
        echo "FAIL niah cuda: $(tail -1 "$tmp/err")"; fails=$((fails + 1))
    elif grep -q "GPU decoder cannot run" "$tmp/err"; then
        echo "FAIL niah cuda: the GPU decoder refused: $(grep 'GPU decoder' "$tmp/err")"; fails=$((fails + 1))
    else
        "$BIN" niah "$tmp/gdn64" --task sk1 --lengths 600 --depths 50 --samples 2 --json --device cpu >"$tmp/nc.json" 2>/dev/null
        same=$(python3 -c "import json,sys; a,b=(json.load(open(f))['cells'][0]['example']['answer'] for f in sys.argv[1:]); print('same answer' if a==b else f'answers differ (cpu {a!r}, cuda {b!r}; near-ties can do that)')" "$tmp/nc.json" "$tmp/n.json" 2>&1)
        echo "ok   niah sk1 L=600 on cuda through the decoder ($same)"
    fi
fi

# speed: tests/gpu/decode_speed.sh (start-up and upload cancel there; `device_run.sh dspeed`)
echo "$runs runs, $fails failed"
[ $fails -eq 0 ]
