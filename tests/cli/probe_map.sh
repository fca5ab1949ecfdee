#!/usr/bin/env bash
# probe / map / diff from the command line: --help, a normal run of each, and every bad input
# exits 2 with one line naming the flag, without leaving an output file behind.
set -u
: "${HS_BIN:?HS_BIN not set}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$HS_BIN" init "$tmp/m" --preset tiny --seed 1 >/dev/null 2>&1 || fail "init tiny"
"$HS_BIN" init "$tmp/m2" --preset tiny --seed 2 >/dev/null 2>&1 || fail "init tiny 2"
"$HS_BIN" init "$tmp/other" --preset tiny --hidden 96 >/dev/null 2>&1 || fail "init other shape"

for c in probe map diff; do
    "$HS_BIN" $c --help > "$tmp/help" 2>&1 || fail "$c --help exit $?"
    grep -q "usage: hybridscope $c" "$tmp/help" || fail "$c --help text"
done
grep -q "exact" <("$HS_BIN" map --help) || fail "map --help says what is exact"

# normal runs
"$HS_BIN" probe "$tmp/m" --text "hello there, hello" --span 1:6 --gen 2 > "$tmp/p.txt" 2>&1 || fail "probe text: $(cat "$tmp/p.txt")"
grep -q "top-k k = 1" "$tmp/p.txt" || fail "probe reports k"
"$HS_BIN" probe "$tmp/m" --text "hello there" --csv > "$tmp/p.csv" 2>&1 || fail "probe csv"
sed -n 2p "$tmp/p.csv" | grep -q ",1$" || fail "csv rows carry k"
head -1 "$tmp/p.csv" | grep -q "^layer,mixer,head,type,entropy,hit_rate,retrieval,topk$" || fail "csv header"
"$HS_BIN" map "$tmp/m" --text "abcdefghijklmnopqrstuvwxyz" --head 0.0.0 --bins 5 --out "$tmp/a.npy" > "$tmp/m.txt" 2>&1 || fail "map: $(cat "$tmp/m.txt")"
[ -s "$tmp/a.npy" ] || fail "map wrote nothing"
head -c 6 "$tmp/a.npy" | od -c | grep -q "N   U   M   P   Y" || fail "map output is not .npy"
"$HS_BIN" diff "$tmp/m" "$tmp/m2" > "$tmp/d.txt" 2>&1 || fail "diff: $(cat "$tmp/d.txt")"
grep -q "mean by type" "$tmp/d.txt" || fail "diff summary"

# bad inputs: exit 2, one line on stderr naming the flag
bad() {
    local want="$1"; shift
    local out rc
    out=$("$HS_BIN" "$@" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] || fail "'$*' exit $rc (want 2): $out"
    [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "'$*' printed more than one line: $out"
    printf '%s' "$out" | grep -q -- "$want" || fail "'$*' message lacks '$want': $out"
}
bad "missing MODEL" probe
bad "exactly one input" probe "$tmp/m"
bad "exactly one input" probe "$tmp/m" --text a --task sk1
bad "unknown flag" probe "$tmp/m" --text a --bogus
bad "--probe-positions" probe "$tmp/m" --text abc --probe-positions 2:99
bad "--probe-positions" probe "$tmp/m" --text abc --probe-positions 3:1
bad "--span" probe "$tmp/m" --text abc --span 5
bad "--span" probe "$tmp/m" --text abc --span 1:50
bad "--task" probe "$tmp/m" --task sk9
bad "--depth" probe "$tmp/m" --task sk1 --depth 101
bad "--length" probe "$tmp/m" --task sk1 --length 10
bad "--topk" probe "$tmp/m" --text abc --topk 0
bad "--device" probe "$tmp/m" --text abc --device tpu
bad "--swla-window" probe "$tmp/m" --text abc --swla-window 0 --swla
bad "--tokens" probe "$tmp/m" --tokens "$tmp/nope.npy"
bad "--text-file" probe "$tmp/m" --text-file "$tmp/nope.txt"
bad "--expect" probe "$tmp/m" --task sk1 --length 400 --expect 1
bad "--head" map "$tmp/m" --text abc --head 9.0.0 --out "$tmp/x.npy"
bad "--head" map "$tmp/m" --text abc --head 1.2 --out "$tmp/x.npy"
bad "missing --out" map "$tmp/m" --text abc --head 0.0.0
bad "--bins" map "$tmp/m" --text abc --head 0.0.0 --bins 0 --out "$tmp/x.npy"
bad "--bins" map "$tmp/m" --text abc --head 0.0.0 --bins 2000 --out "$tmp/x.npy"
bad "--zoom" map "$tmp/m" --text abc --head 0.0.0 --zoom 0:2,0 --out "$tmp/x.npy"
bad "--zoom" map "$tmp/m" --text abc --head 0.0.0 --zoom 0:99,0:2 --out "$tmp/x.npy"
bad "--agg" map "$tmp/m" --text abc --head 0.0.0 --agg median --out "$tmp/x.npy"
bad "--rows-per-bin" map "$tmp/m" --text abc --head 0.0.0 --rows-per-bin 0 --out "$tmp/x.npy"
[ -e "$tmp/x.npy" ] && fail "a failed map left $tmp/x.npy"
bad "differ" diff "$tmp/m" "$tmp/other"
bad "need MODEL_A and MODEL_B" diff "$tmp/m"
bad "missing" diff "$tmp/m" "$tmp/missing"
exit 0
