#!/usr/bin/env bash
# `init` for every small flag combination (efficient type x LH/HH x ratio, and all-NoPE),
# then `info` (text and --json) on each: the layout, ratio and parameter count it reports
# must be the ones asked for. Also: overwrite protection, --force, bad flags.
set -u
BIN=${HS_BIN:?HS_BIN not set}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

check() {   # check DIR EXPECTED_LAYOUT EXPECTED_RATIO INIT_OUTPUT
    local dir=$1 layout=$2 ratio=$3 initout=$4
    "$BIN" info "$dir" > "$dir.txt" 2>"$dir.err" || { fail "$dir: info exit $? $(cat "$dir.err")"; return; }
    [ -s "$dir.err" ] && { fail "$dir: info warned: $(cat "$dir.err")"; return; }
    # one kind of head is no hybrid: the text says so, the JSON keeps the layout field
    local kind="hybrid $layout,"
    case $ratio in 1:0) kind="not hybrid (no NoPE heads)," ;; 0:1) kind="not hybrid (NoPE heads only)," ;; esac
    grep -qF "$kind" "$dir.txt" || { fail "$dir: not '$kind': $(head -3 "$dir.txt")"; return; }
    grep -q "(ratio $ratio)" "$dir.txt" || { fail "$dir: ratio not $ratio: $(sed -n 3p "$dir.txt")"; return; }
    "$BIN" info "$dir" --json --length 4k > "$dir.json" || { fail "$dir: info --json"; return; }
    printf '%s\t%s\t%s\t%s\n' "$dir.json" "$layout" "$ratio" "$initout" >> "$W/checks.tsv"
}

n=0
for eff in gla gdn swa rope; do
    for layout in LH HH; do
        for ratio in 3:1 1:1 1:3 1:0; do
            d="$W/${eff}_${layout}_${ratio/:/-}"
            out=$("$BIN" init "$d" --preset tiny --efficient $eff --layout $layout --ratio $ratio --window 32 2>&1) ||
                { fail "init $eff $layout $ratio: $out"; continue; }
            want_layout=$layout
            [ "$ratio" = 1:0 ] && want_layout=LH
            check "$d" "$want_layout" "$ratio" "$out"
            n=$((n + 1))
        done
    done
done
d="$W/nope"
out=$("$BIN" init "$d" --preset tiny --efficient nope 2>&1) || fail "init nope: $out"
check "$d" LH 0:1 "$out"
n=$((n + 1))

# the JSON documents, checked in one python run (its start-up is the slow part)
python3 - "$W/checks.tsv" "$n" <<'PY' || fail "json checks"
import json, re, sys
bad = 0
lines = open(sys.argv[1]).read().splitlines()
if len(lines) != int(sys.argv[2]): print("checked", len(lines), "of", sys.argv[2]); bad += 1
for line in lines:
    path, layout, ratio, initout = line.split("\t")
    try:
        j = json.load(open(path))
        assert j["layout"] == layout, (j["layout"], layout)
        assert j["ratio"] == ratio, (j["ratio"], ratio)
        assert j["length"] == 4096
        m = re.search(r"parameters \((\d+)\)", initout)
        assert m and int(m.group(1)) == j["param_count"], (initout, j["param_count"])
        assert abs(sum(l["cache_bytes"] for l in j["layers"]) - j["cache_bytes"]) < 1
        assert len(j["layers"]) == j["num_layers"] == 4
        for l in j["layers"]:
            assert 1 <= len(l["mixers"]) <= 2
            if len(l["mixers"]) == 2: assert l["mixers"][1]["type"] == "nope"
    except Exception as e:
        print("json check failed for", path, repr(e)); bad += 1
sys.exit(1 if bad else 0)
PY

# overwrite protection, --force, bad flags: exit 2 with one line
d="$W/gla_LH_3-1"
"$BIN" init "$d" --preset tiny 2>"$W/e" >/dev/null; rc=$?
[ $rc -eq 2 ] && grep -q -- "--force" "$W/e" || fail "init over a checkpoint: exit $rc $(cat "$W/e")"
"$BIN" init "$d" --preset tiny --efficient gdn --force >/dev/null 2>&1 || fail "init --force"
grep -q '"gdn"' "$d/config.json" || fail "--force did not overwrite"
ls "$d" | grep -q '\.tmp$' && fail "temporary file left behind"
for bad in "--ratio 3" "--efficient lstm" "--layout XY" "--preset 9b" "--heads 3 --layout HH" "--bogus" "--hidden"; do
    "$BIN" init "$W/bad" $bad >/dev/null 2>"$W/e"; rc=$?
    lines=$(grep -c . "$W/e")
    if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q "^hybridscope init: " "$W/e"; then fail "init $bad: exit $rc: $(cat "$W/e")"; fi
done
[ -e "$W/bad" ] && fail "a rejected init created its directory"
"$BIN" init --help | grep -q "usage: hybridscope init" || fail "init --help"
"$BIN" info --help | grep -q "usage: hybridscope info" || fail "info --help"

# the same seed gives the same bytes whatever the thread count; another seed does not
OMP_NUM_THREADS=1 "$BIN" init "$W/t1" --preset tiny --seed 7 >/dev/null 2>&1 || fail "init t1"
OMP_NUM_THREADS=2 "$BIN" init "$W/t2" --preset tiny --seed 7 >/dev/null 2>&1 || fail "init t2"
OMP_NUM_THREADS=2 "$BIN" init "$W/t3" --preset tiny --seed 8 >/dev/null 2>&1 || fail "init t3"
cmp -s "$W/t1/model.safetensors" "$W/t2/model.safetensors" || fail "init depends on the thread count"
cmp -s "$W/t1/model.safetensors" "$W/t3/model.safetensors" && fail "seeds 7 and 8 gave the same weights"

# MODEL as a sample-model name (sample-models/NAME under $HS_ROOT); --length suffixes
mkdir -p "$W/root/sample-models"
"$BIN" init "$W/root/sample-models/mysample" --preset tiny --efficient gdn >/dev/null 2>&1 || fail "init sample"
HS_ROOT="$W/root" "$BIN" info mysample --json --length 64K > "$W/s.json" 2>"$W/e" || fail "info by sample name: $(cat "$W/e")"
grep -q '"length":[[:space:]]*65536' "$W/s.json" || fail "--length 64K is not 65536"
HS_ROOT="$W/root" "$BIN" info nosuchsample >/dev/null 2>"$W/e"; rc=$?
[ $rc -eq 2 ] && grep -q "no sample model of that name" "$W/e" || fail "unknown sample: exit $rc $(cat "$W/e")"
"$BIN" info "$W/root/sample-models/mysample" --length 12x >/dev/null 2>"$W/e"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--length: '12x' is not an integer" "$W/e" || fail "bad --length: exit $rc $(cat "$W/e")"

# a training record in config.json (the recipe's "training" block): one line in the text and an
# object in the JSON; an init'd checkpoint has none
"$BIN" info "$W/t1" | grep -q "trained" && fail "info: an init'd model shows a training line"
python3 - "$W/t1/config.json" <<'PY' || fail "could not edit config.json"
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["training"] = {"steps": 500, "total_steps": 17020, "earlier_phases": [{}] * 8,
                 "data": {"p_needle": 0.6, "p_kv": 0.3, "p_copy": 0}}
json.dump(c, open(p, "w"))
PY
"$BIN" info "$W/t1" > "$W/tr.txt" 2>"$W/e" || fail "info with a training record: $(cat "$W/e")"
grep -qF "  trained 17,020 steps in 9 phases; needles 0.6, key-value 0.3, copy 0" "$W/tr.txt" ||
    fail "training line: $(grep trained "$W/tr.txt")"
"$BIN" info "$W/t1" --json | python3 -c '
import json, sys
t = json.load(sys.stdin)["training"]
assert t == {"steps": 17020, "phases": 9, "p_needle": 0.6, "p_kv": 0.3, "p_copy": 0}, t' || fail "training JSON"

[ $fails -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "$n checkpoints initialised and described"
