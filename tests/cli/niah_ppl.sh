#!/usr/bin/env bash
# niah and ppl on the command line: the C generator against the Python reference of
# assets/NEEDLE.md, bad input (exit 2, one line), and the JSON/CSV outputs of both commands on
# a tiny random model, parsed with python3's json module.
set -u
BIN=${HS_BIN:?}; ROOT=${HS_ROOT:?}
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
# A 64-wide model: OpenMP start-up on a shared machine would cost more than the work.
export OMP_NUM_THREADS=1
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. niah --show == assets/tools/needle_ref.py, field by field and byte by byte.
for spec in "sk1 379 0 0" "sk1 1024 50 7" "sk2 398 100 3" "sk2 2048 33.3 18446744073709551615" \
            "sk3 398 50 1" "sk3 4000 12.5 42" "sk2 777 99.9 5" "sk3 1500 0 9"; do
    set -- $spec
    "$BIN" niah --show --task "$1" --length "$2" --depth "$3" --seed "$4" --json > "$T/c.json" ||
        fail "niah --show $spec exited $?"
    python3 - "$ROOT/assets" "$T/c.json" "$@" <<'PY' || fail "C and Python disagree on $spec"
import json, sys
sys.path.insert(0, sys.argv[1] + "/tools")
import needle_ref
d, cfile, task, L, D, seed = sys.argv[1:7]
c = json.load(open(cfile))
p = needle_ref.generate(needle_ref.Assets(d), task, int(L), float(D), int(seed))
for k in ("key", "value", "text", "tokens", "needle_start", "needle_end", "span_start",
          "span_end", "probe_start", "probe_end"):
    if c[k] != p[k]:
        sys.exit("%s: C %r != Python %r" % (k, str(c[k])[:80], str(p[k])[:80]))
assert len(c["tokens"]) == int(L) and c["length"] == int(L)
PY
done

# 2. Bad input: exit 2 and one line naming the flag.
expect2() {
    local want=$1; shift
    "$BIN" "$@" > "$T/out" 2> "$T/err"; local rc=$?
    [ $rc -eq 2 ] || fail "'$*' exited $rc, expected 2"
    grep -q -- "$want" "$T/err" || fail "'$*' said: $(cat "$T/err")"
    [ "$(wc -l < "$T/err")" -eq 1 ] || fail "'$*' printed more than one line"
}
expect2 "too small" niah --show --task sk3 --length 397
expect2 "sk9" niah --show --task sk9 --length 1000
expect2 "--depth" niah --show --task sk1 --length 1000 --depth 101
expect2 "MODEL" niah
expect2 "--lengths" niah nosuchmodel --lengths 1q

"$BIN" init "$T/m" --preset tiny --train-context 512 --seed 3 > /dev/null 2>&1 ||
    fail "init failed"
expect2 "too small" niah "$T/m" --lengths 300
expect2 "--depths" niah "$T/m" --depths 0:100:0
expect2 "--depths" niah "$T/m" --depths 10:5:1
expect2 "--depths" niah "$T/m" --depths 0:nan:5
expect2 "--depths" niah "$T/m" --depths 0,inf
expect2 "empty entry" niah "$T/m" --lengths 400,,520
expect2 "--lengths" niah "$T/m" --lengths 1e3
expect2 "--depth" niah --show --task sk1 --length 1000 --depth nan
expect2 "--head" map "$T/m" --task sk1 --length 300 --head 99999999999.0.0 --out "$T/m.npy"
expect2 "--buckets" ppl "$T/m" --buckets cubic
printf 'short' > "$T/short.txt"
expect2 "fewer than" ppl "$T/m" --file "$T/short.txt" --length 64
expect2 "--file" ppl "$T/m" --file "$T/missing.txt"
expect2 "cuda" niah "$T/m" --device cuda --lengths 400

# 3. niah JSON and CSV on the tiny model.
"$BIN" niah "$T/m" --task sk1,sk3 --lengths 400,520 --depths 0:100:50 --samples 2 --seed 5 \
    --json > "$T/n.json" || fail "niah --json exited $?"
python3 - "$T/n.json" <<'PY' || fail "niah JSON"
import json, math, sys
o = json.load(open(sys.argv[1]))
assert o["tasks"] == ["sk1", "sk3"] and o["lengths"] == [400, 520] and o["depths"] == [0, 50, 100]
assert o["samples"] == 2 and o["seed"] == 5 and o["knobs"] and o["device"] == "cpu"
assert len(o["cells"]) == 12
tot_c = tot_d = 0
for c in o["cells"]:
    assert c["done"] == 2 and 0 <= c["correct"] <= 2, c
    assert abs(c["accuracy"] - c["correct"] / 2) < 1e-12
    ex = c["example"]
    for k in ("key", "value", "answer", "correct", "span_start", "span_end", "probe_start",
              "needle_start", "needle_end", "probe_end", "seed", "depth", "length", "task"):
        assert k in ex, k
    assert ex["task"] == c["task"] and ex["length"] == c["length"] and ex["seed"] == 5
    assert ex["probe_end"] == c["length"] and ex["span_end"] - ex["span_start"] == len(ex["value"])
    tot_c += c["correct"]; tot_d += c["done"]
assert abs(o["accuracy"] - tot_c / tot_d) < 1e-12
assert [p["length"] for p in o["per_length"]] == [400, 520]
for p in o["per_length"]:
    assert p["samples_per_second"] > 0 and p["seconds"] > 0
assert [t["task"] for t in o["per_task"]] == ["sk1", "sk3"]
PY
# a length or depth given twice runs once, as a task given twice does
"$BIN" niah "$T/m" --task sk1,sk1 --lengths 400,400 --depths 0,0,100 --samples 1 --json > "$T/d.json" ||
    fail "niah with repeated lengths exited $?"
python3 -c "
import json, sys
o = json.load(open(sys.argv[1]))
assert o['tasks'] == ['sk1'] and o['lengths'] == [400] and o['depths'] == [0, 100] and len(o['cells']) == 2, o['lengths']
" "$T/d.json" || fail "repeated lengths or depths were run twice"
# knobs side by side must all apply (each flag parsed once, none skipped)
"$BIN" niah "$T/m" --log-scale --swla --lengths 400 --depths 0 --swa-window 9 --samples 1 --json > "$T/k.json" ||
    fail "niah with knobs exited $?"
"$BIN" ppl "$T/m" --swla=overlap --log-scale --length 100 --docs 1 --json > "$T/k2.json" ||
    fail "ppl with knobs exited $?"
python3 - "$T/k.json" "$T/k2.json" <<'PY' || fail "knobs were dropped"
import json, sys
k = json.load(open(sys.argv[1]))["knobs"]
assert "log" in k and "swla=exact" in k and "swa_window=9" in k, k
k2 = json.load(open(sys.argv[2]))["knobs"]
assert "log" in k2 and "swla=overlap" in k2, k2
PY
"$BIN" niah "$T/m" --task sk2 --lengths 400 --depths 0,100 --samples 1 --csv > "$T/n.csv" ||
    fail "niah --csv exited $?"
python3 - "$T/n.csv" <<'PY' || fail "niah CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["depth"] for r in rows] == ["0", "100"] and all(r["done"] == "1" for r in rows), rows
PY

# 4. ppl JSON/CSV: buckets tile [1, L) and the overall PPL is their length-weighted
#    geometric mean.
"$BIN" ppl "$T/m" --length 300 --docs 3 --n-buckets 6 --json > "$T/p.json" || fail "ppl --json exited $?"
"$BIN" ppl "$T/m" --length 300 --docs 3 --n-buckets 6 --buckets linear --csv > "$T/p.csv" ||
    fail "ppl --csv exited $?"
head -c 5000 "$ROOT/assets/prose/kjv-selections.txt" > "$T/corpus.txt"
"$BIN" ppl "$T/m" --length 100 --file "$T/corpus.txt" --docs 1000 --json > "$T/f.json" 2> "$T/f.err" ||
    fail "ppl --file exited $?"
python3 - "$T/p.json" "$T/p.csv" "$T/f.json" <<'PY' || fail "ppl outputs"
import csv, json, math, sys
o = json.load(open(sys.argv[1]))
assert o["length"] == 300 and o["docs"] == 3 and o["buckets"] == "log"
b = o["by_position"]
assert b[0]["start"] == 1 and b[-1]["end"] == 300 and 1 <= len(b) <= 6
assert all(x["end"] == y["start"] for x, y in zip(b, b[1:]))
assert all(x["ppl"] > 1 and math.isfinite(x["ppl"]) for x in b)
w = sum((x["end"] - x["start"]) * math.log(x["ppl"]) for x in b) / 299
assert abs(math.exp(w) - o["overall"]) < 1e-6 * o["overall"], (math.exp(w), o["overall"])
rows = list(csv.DictReader(open(sys.argv[2])))
assert rows[0]["start"] == "1" and rows[-1]["end"] == "300" and len(rows) == 6
f = json.load(open(sys.argv[3]))
assert f["docs"] == 5000 // 99 and f["corpus"].endswith("corpus.txt")
PY
grep -q "only 50 documents" "$T/f.err" || fail "ppl did not say the corpus is short"

# 5. The held-out split (the default): the documents are those of the recipe's own held-out
#    prose (sample-models/recipe/data.py, the last 10% of the stream, written by Python),
#    so the two runs agree to the last digit; --split all is the whole stream, another result.
python3 -c "import sys; sys.path.insert(0, sys.argv[1] + '/sample-models/recipe'); import data
open(sys.argv[2], 'wb').write(data.Assets(sys.argv[1] + '/assets').heldout())" "$ROOT" "$T/held.txt" ||
    fail "data.py could not write the held-out prose"
"$BIN" ppl "$T/m" --length 200 --docs 4 --json > "$T/h1.json" || fail "ppl (held-out) exited $?"
"$BIN" ppl "$T/m" --length 200 --docs 4 --file "$T/held.txt" --json > "$T/h2.json" || fail "ppl --file held.txt exited $?"
"$BIN" ppl "$T/m" --length 200 --docs 4 --split all --json > "$T/h3.json" || fail "ppl --split all exited $?"
python3 - "$T/h1.json" "$T/h2.json" "$T/h3.json" <<'PY' || fail "ppl held-out split"
import json, sys
h, f, a = (json.load(open(p)) for p in sys.argv[1:4])
assert h["split"] == "heldout" and a["split"] == "all" and "split" not in f, (h.get("split"), a.get("split"))
assert h["by_position"] == f["by_position"] and h["overall"] == f["overall"], (h["overall"], f["overall"])
assert a["overall"] != h["overall"], a["overall"]
PY
expect2 "--split" ppl "$T/m" --split train
expect2 "--split applies" ppl "$T/m" --split all --file "$T/held.txt"
echo ok
