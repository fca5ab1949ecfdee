#!/usr/bin/env bash
# `generate` on the CPU: the JSON report, --tokens-out (prompt + generated ids), --logits-out
# rows equal to the full forward's rows of the same sequence (`logits --tokens --last`) with
# knobs, every generated token the argmax of its row, and bad flags exiting 2. .npy files are
# read with python3's stdlib. (The CUDA decoder: tests/gpu/decode_check.sh.)
set -u
B=${HS_BIN:?}
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$B" init "$tmp/m" --preset tiny --efficient gdn --layout HH --train-context 64 --seed 2 >/dev/null || fail "init"
for knobs in "" "--swla=overlap --swla-window 24 --swla-stride 8 --log-scale=16"; do
    # shellcheck disable=SC2086
    "$B" generate "$tmp/m" --text "the quick brown fox jumps over the lazy dog" --max-new 12 $knobs --device cpu \
        --json --logits-out "$tmp/l.npy" --tokens-out "$tmp/s.npy" > "$tmp/g.json" || fail "generate $knobs"
    rows=$(python3 - "$tmp/g.json" "$tmp/s.npy" "$tmp/l.npy" "$tmp/t.npy" <<'EOF'
import array, ast, json, struct, sys
def load(p):
    b = open(p, 'rb').read()
    hl = struct.unpack('<H', b[8:10])[0]
    h = ast.literal_eval(b[10:10 + hl].decode('latin1'))
    a = array.array('f' if h['descr'] == '<f4' else 'i'); a.frombytes(b[10 + hl:])
    return h['shape'], a
g = json.load(open(sys.argv[1]))
(n_seq,), seq = load(sys.argv[2])
(R, V), lg = load(sys.argv[3])
T, toks = g['prompt_tokens'], g['tokens']
assert g['device'] == 'cpu' and T == 44, g
assert n_seq == T + len(toks) and list(seq[T:]) == toks, 'tokens-out is not prompt + generated'
assert R == len(toks) + (1 if g['stopped_at_eos'] else 0) and (g['stopped_at_eos'] or len(toks) == 12), (R, g)
for i, t in enumerate(toks):
    row = lg[i * V:(i + 1) * V]
    assert t == max(range(V), key=lambda j: (row[j], -j)), f'token {i} is not the argmax of its row'
# the sequence a full forward needs for these rows: the prompt and all but the last fed token
ids = list(seq[:T - 1 + R])
d = "{'descr': '<i4', 'fortran_order': False, 'shape': (%d,), }" % len(ids)
hdr = d + ' ' * ((64 - (10 + len(d) + 1) % 64) % 64) + '\n'
open(sys.argv[4], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + struct.pack('<%di' % len(ids), *ids))
print(R)
EOF
) || fail "generate output ($knobs)"
    # shellcheck disable=SC2086
    "$B" logits "$tmp/m" --tokens "$tmp/t.npy" --last "$rows" $knobs --device cpu --out "$tmp/f.npy" >/dev/null ||
        fail "logits $knobs"
    python3 - "$tmp/f.npy" "$tmp/l.npy" <<'EOF' || fail "decoder rows differ from the full forward ($knobs)"
import array, struct, sys
def load(p):
    b = open(p, 'rb').read(); hl = struct.unpack('<H', b[8:10])[0]
    a = array.array('f'); a.frombytes(b[10 + hl:]); return a
f, l = load(sys.argv[1]), load(sys.argv[2])
assert len(f) == len(l)
m = max(max(abs(v) for v in f), 1e-6)
assert max(abs(a - b) for a, b in zip(f, l)) / m < 1e-4
EOF
done

"$B" generate "$tmp/m" --text x --max-new 3 --device cpu | grep -q "^ids:" || fail "text output"
for bad in "--max-new 0" "--device gpu2" "--bogus" ""; do
    # shellcheck disable=SC2086
    "$B" generate "$tmp/m" --text x --device cpu $bad >/dev/null 2>&1
    rc=$?
    [ -z "$bad" ] && { [ $rc -eq 0 ] || fail "plain generate exit $rc"; continue; }
    [ $rc -eq 2 ] || fail "generate $bad: exit $rc, expected 2"
done
"$B" generate "$tmp/m" --max-new 3 >/dev/null 2>&1; [ $? -eq 2 ] || fail "no input: expected exit 2"
echo "ok"
