#!/usr/bin/env bash
# init -> logits round trip for small presets and flag combinations (bf16 and f32): the .npy
# header and size are checked with python3's stdlib (struct + ast), --tokens takes int32 and
# int64 ids, and bad flags exit 2 naming the flag without leaving an output file behind.
set -u
B=${HS_BIN:?}
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# npy_info FULL LAST -> "DESCR ROWS COLS / DESCR ROWS COLS": checks both headers, that the data
# size matches them, that the values are finite, and that LAST equals the last rows of FULL.
npy_info() {
    python3 - "$1" "$2" <<'EOF'
import array, ast, math, struct, sys
def load(p):
    b = open(p, 'rb').read()
    assert b[:6] == b'\x93NUMPY', 'bad magic'
    hl, off = (struct.unpack('<H', b[8:10])[0], 10) if b[6] == 1 else (struct.unpack('<I', b[8:12])[0], 12)
    assert (off + hl) % 64 == 0, 'header not 64-byte aligned'
    h = ast.literal_eval(b[off:off + hl].decode('latin1'))
    assert h['fortran_order'] is False and h['descr'] == '<f4'
    n = 1
    for s in h['shape']: n *= s
    assert len(b) - off - hl == 4 * n, 'data size %d != %d' % (len(b) - off - hl, 4 * n)
    a = array.array('f'); a.frombytes(b[off + hl:])
    assert all(math.isfinite(v) for v in a), 'non-finite logits'
    return h, a
(hf, full), (hl_, last) = load(sys.argv[1]), load(sys.argv[2])
tail = full[len(full) - len(last):]
m = max(max(abs(v) for v in tail), 1e-6)
assert max(abs(a - b) for a, b in zip(tail, last)) / m < 1e-5, '--last rows differ'
print(hf['descr'], *hf['shape'], '/', hl_['descr'], *hl_['shape'])
EOF
}

# at_most X LIMIT / above X LIMIT: float comparisons
at_most() { awk -v x="$1" -v l="$2" 'BEGIN { exit !(x <= l) }'; }
above() { awk -v x="$1" -v l="$2" 'BEGIN { exit !(x > l) }'; }

# write_tokens FILE DTYPE(i4|i8) ids... : a 1-D .npy of token ids
write_tokens() {
    python3 - "$@" <<'EOF'
import struct, sys
path, dt, ids = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
d = "{'descr': '<%s', 'fortran_order': False, 'shape': (%d,), }" % (dt, len(ids))
pad = 64 - (10 + len(d) + 1) % 64
hdr = d + ' ' * (pad % 64) + '\n'
body = struct.pack('<%d%s' % (len(ids), 'i' if dt == 'i4' else 'q'), *ids)
open(path, 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + body)
EOF
}

# max relative difference of two float32 .npy files of the same shape
max_rel_diff() {
    python3 - "$1" "$2" <<'EOF'
import ast, struct, sys, array
def load(p):
    b = open(p, 'rb').read(); hl = struct.unpack('<H', b[8:10])[0]
    a = array.array('f'); a.frombytes(b[10 + hl:]); return a
x, y = load(sys.argv[1]), load(sys.argv[2])
assert len(x) == len(y)
m = max(max(abs(v) for v in y), 1e-6)
print('%.3g' % (max(abs(a - b) for a, b in zip(x, y)) / m))
EOF
}

text="The grass is green. The sky is blue."
T=$(( ${#text} + 1 ))

# ---- round trips over presets and flags ----
combos=(
    "--preset tiny"
    "--preset tiny --dtype bf16"
    "--preset tiny --efficient gdn --layout HH --ratio 1:1"
    "--preset tiny --efficient swa --window 8 --tied"
    "--preset tiny --efficient rope --kv-heads 2 --dtype bf16"
    "--preset tiny --efficient gla --short-conv --layout HH"
    "--preset tiny --efficient gdn --no-short-conv --ratio 1:0"
    "--preset tiny --efficient nope"
    "--hidden 32 --layers 2 --heads 2 --head-dim 16 --ffn 64 --efficient gdn"
)
i=0
for c in "${combos[@]}"; do
    d="$tmp/m$i"
    # shellcheck disable=SC2086
    "$B" init "$d" $c --seed $i >/dev/null || fail "init $c"
    V=$(sed -n 's/.*"vocab_size":[[:space:]]*\([0-9]*\).*/\1/p' "$d/config.json")
    "$B" logits "$d" --text "$text" --out "$tmp/l$i.npy" >/dev/null || fail "logits on init $c"
    "$B" logits "$d" --text "$text" --last 3 --out "$tmp/last$i.npy" >/dev/null || fail "--last on $c"
    info=$(npy_info "$tmp/l$i.npy" "$tmp/last$i.npy") || fail "bad npy for $c"
    [ "$info" = "<f4 $T $V / <f4 3 $V" ] || fail "init $c: headers '$info', want '<f4 $T $V / <f4 3 $V'"
    i=$((i + 1))
done

m="$tmp/m0"

# ---- --tokens: int32 and int64 ids give the --text logits (BOS + bytes) ----
ids=$(python3 -c "import sys; print(' '.join(['256'] + [str(b) for b in sys.argv[1].encode()]))" "$text")
# shellcheck disable=SC2086
write_tokens "$tmp/t32.npy" i4 $ids
# shellcheck disable=SC2086
write_tokens "$tmp/t64.npy" i8 $ids
for t in t32 t64; do
    "$B" logits "$m" --tokens "$tmp/$t.npy" --out "$tmp/$t-out.npy" >/dev/null || fail "--tokens $t"
    r=$(max_rel_diff "$tmp/$t-out.npy" "$tmp/l0.npy")
    at_most "$r" 1e-6 || fail "--tokens $t differs from --text (rel $r)"
done
printf '%s' "$text" > "$tmp/text.txt"
"$B" logits "$m" --text-file "$tmp/text.txt" --out "$tmp/tf.npy" >/dev/null || fail "--text-file"
r=$(max_rel_diff "$tmp/tf.npy" "$tmp/l0.npy")
at_most "$r" 1e-6 || fail "--text-file differs from --text ($r)"

# ---- chunked vs recurrent, and knobs accepted ----
gdn="$tmp/m2"
"$B" logits "$gdn" --text "$text" --chunk 7 --out "$tmp/c.npy" >/dev/null || fail "--chunk 7"
"$B" logits "$gdn" --text "$text" --recurrent --out "$tmp/r.npy" >/dev/null || fail "--recurrent"
r=$(max_rel_diff "$tmp/c.npy" "$tmp/r.npy")
at_most "$r" 1e-4 || fail "chunked vs recurrent rel $r"
for k in "--log-scale" "--log-scale=16" "--swla" "--swla=overlap --swla-window 8 --swla-stride 2" \
         "--swa-window 4" "--rope-window" "--rope-window 5" "--ablate 0.0.1,0.1.0" "--device cpu"; do
    # shellcheck disable=SC2086
    "$B" logits "$gdn" --text "$text" $k --out "$tmp/k.npy" >/dev/null || fail "knob $k rejected"
done
"$B" logits "$gdn" --text "$text" --swla --swla-window 4 --out "$tmp/k.npy" >/dev/null || fail "swla"
r=$(max_rel_diff "$tmp/k.npy" "$tmp/l2.npy")
above "$r" 1e-4 || fail "--swla --swla-window 4 changed nothing"

# ---- bad input: exit 2, the flag named, no output file left ----
python3 -c "
import struct
d = \"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\"
h = d + ' ' * (64 - (11 + len(d)) % 64) + '\n'
open('$tmp/float.npy', 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + struct.pack('<2f', 1, 2))"
printf 'not an npy file' > "$tmp/junk.npy"
write_tokens "$tmp/big.npy" i8 256 1 99999
bad=(
    "--swla-window x|--swla-window"
    "--swla-stride 3|--swla-stride"
    "--swla=diagonal|--swla"
    "--swa-window 0|--swa-window"
    "--ablate 9.0.0|--ablate"
    "--ablate 0.0|--ablate"
    "--log-scale=1|--log-scale"
    "--last 0|--last"
    "--last 9999|--last"
    "--chunk zero|--chunk"
    "--device tpu|--device"
    "--bogus|--bogus"
)
for b in "${bad[@]}"; do
    flags=${b%%|*}; name=${b##*|}
    rm -f "$tmp/bad.npy" "$tmp/bad.npy.tmp"
    # shellcheck disable=SC2086
    err=$("$B" logits "$m" --text "$text" $flags --out "$tmp/bad.npy" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] || fail "'$flags': exit $rc, want 2 ($err)"
    [[ "$err" == *"$name"* ]] || fail "'$flags': message does not name $name: $err"
    [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "'$flags': more than one line: $err"
    [ ! -e "$tmp/bad.npy" ] && [ ! -e "$tmp/bad.npy.tmp" ] || fail "'$flags' left an output file"
done
for f in junk float big; do
    err=$("$B" logits "$m" --tokens "$tmp/$f.npy" --out "$tmp/bad.npy" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] || fail "--tokens $f.npy: exit $rc ($err)"
    [[ "$err" == *"$f.npy"* ]] || fail "--tokens $f.npy: message does not name the file: $err"
done
err=$("$B" logits "$m" --text a --text-file "$tmp/text.txt" --out "$tmp/bad.npy" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "two inputs accepted ($rc)"
err=$("$B" logits "$m" --text a 2>&1); rc=$?
[ $rc -eq 2 ] && [[ "$err" == *"--out"* ]] || fail "missing --out: $rc $err"
err=$("$B" logits "$tmp/nonexistent" --text a --out "$tmp/bad.npy" 2>&1); rc=$?
[ $rc -eq 2 ] && [[ "$err" == *nonexistent* ]] || fail "missing model: $rc $err"
"$B" logits --help | grep -q -- "--swla-stride" || fail "--help lacks the knob flags"
# without the CUDA plugin next to the binary, --device cuda is a clean runtime failure
if [ ! -e "$(dirname "$B")/libhs_cuda.so" ] && [ -z "${HS_CUDA_LIB:-}" ]; then
    err=$("$B" logits "$m" --text a --device cuda --out "$tmp/bad.npy" 2>&1); rc=$?
    [ $rc -eq 1 ] && [[ "$err" == *"no CUDA device"* ]] || fail "--device cuda without a backend: $rc $err"
    [ ! -e "$tmp/bad.npy" ] || fail "--device cuda failure left an output file"
fi
exit 0
