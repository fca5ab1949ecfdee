#!/usr/bin/env bash
# Every bad checkpoint input of model-spec sections 1-2 makes `hybridscope info` exit with 2
# and one line on stderr that names the file and the problem. The bad files are generated
# here from a good tiny checkpoint (python3 standard library only).
set -u
BIN=${HS_BIN:?HS_BIN not set}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
"$BIN" init "$W/good" --preset tiny --efficient swa --layout HH --ratio 1:1 --window 16 >/dev/null || { echo "init failed"; exit 1; }

fails=0
# expect_bad NAME FRAGMENT...: `info W/NAME` exits 2 with one stderr line holding each fragment
expect_bad() {
    local name=$1; shift
    local out err rc
    out=$("$BIN" info "$W/$name" 2>"$W/$name.err"); rc=$?
    err=$(cat "$W/$name.err")
    local lines
    lines=$(printf '%s\n' "$err" | grep -c .)
    if [ $rc -ne 2 ]; then echo "FAIL $name: exit $rc, want 2 (stderr: $err)"; fails=$((fails + 1)); return; fi
    if [ "$lines" -ne 1 ]; then echo "FAIL $name: $lines stderr lines, want 1: $err"; fails=$((fails + 1)); return; fi
    if [ -n "$out" ]; then echo "FAIL $name: printed on stdout: $out"; fails=$((fails + 1)); return; fi
    case "$err" in "hybridscope info: "*) ;; *) echo "FAIL $name: message lacks the command prefix: $err"; fails=$((fails + 1)); return;; esac
    for frag in "$@"; do
        case "$err" in *"$frag"*) ;; *) echo "FAIL $name: message lacks '$frag': $err"; fails=$((fails + 1)); return;; esac
    done
    echo "ok   $name: $err"
}

python3 - "$W" <<'PY'
import json, os, shutil, struct, sys
W = sys.argv[1]
good = os.path.join(W, "good")
raw = open(os.path.join(good, "model.safetensors"), "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
hdr = json.loads(raw[8:8 + n])
data = raw[8 + n:]
cfg = json.load(open(os.path.join(good, "config.json")))

def ckpt(name, header_text=None, data_bytes=None, prefix=None, config=None, config_text=None):
    d = os.path.join(W, name)
    os.makedirs(d)
    ct = config_text if config_text is not None else json.dumps(config if config is not None else cfg)
    open(os.path.join(d, "config.json"), "w").write(ct)
    if header_text is None:
        header_text = json.dumps(hdr)
    h = header_text.encode()
    body = (prefix if prefix is not None else struct.pack("<Q", len(h))) + h + (data if data_bytes is None else data_bytes)
    open(os.path.join(d, "model.safetensors"), "wb").write(body)

def with_hdr(fn):
    h = json.loads(json.dumps(hdr)); fn(h); return json.dumps(h)

Q = "model.layers.1.attn.q_proj.weight"
# safetensors (section 1)
ckpt("header_larger_than_file", prefix=struct.pack("<Q", len(raw) * 2))
ckpt("header_over_1e8", prefix=struct.pack("<Q", 100000001), header_text="{}", data_bytes=b"")
ckpt("header_not_json", header_text='{"model.norm.weight": {"dtype": "F32", ')
def outside(h): h[Q]["data_offsets"][1] = len(data) + 4; h[Q]["data_offsets"][0] = len(data) + 4 - 4 * 64 * 32
ckpt("offsets_outside_buffer", header_text=with_hdr(outside))
def overlap(h): h["model.layers.1.attn_norm.weight"]["data_offsets"] = list(h["model.layers.0.attn_norm.weight"]["data_offsets"])
ckpt("overlapping_tensors", header_text=with_hdr(overlap))
def badsize(h): h["model.norm.weight"]["shape"] = [63]
ckpt("size_mismatch", header_text=with_hdr(badsize))
def reshape(h): h[Q]["shape"] = [32 * 64]
ckpt("shape_vs_config", header_text=with_hdr(reshape))
def drop(h): del h["model.layers.2.mlp.up_proj.weight"]
ckpt("missing_tensor", header_text=with_hdr(drop))
t = json.dumps(hdr); e = json.dumps(hdr["model.norm.weight"])
ckpt("duplicate_name", header_text=t[:-1] + ', "model.norm.weight": ' + e + "}")
def dtype(h): h["model.norm.weight"]["dtype"] = "I32"
ckpt("unknown_dtype", header_text=with_hdr(dtype))
os.makedirs(os.path.join(W, "no_weights")); shutil.copy(os.path.join(good, "config.json"), os.path.join(W, "no_weights"))
# sharded: the same tensor in two shards
d = os.path.join(W, "duplicate_across_shards"); os.makedirs(d)
shutil.copy(os.path.join(good, "config.json"), d)
shutil.copy(os.path.join(good, "model.safetensors"), os.path.join(d, "a.safetensors"))
one = {"model.norm.weight": hdr["model.norm.weight"]}
h2 = json.dumps(one).encode()
s, e2 = hdr["model.norm.weight"]["data_offsets"]
open(os.path.join(d, "b.safetensors"), "wb").write(struct.pack("<Q", len(h2)) + h2 + data[:e2])
wm = {k: "a.safetensors" for k in hdr if k != "__metadata__"}; wm["model.embeddings.weight"] = "b.safetensors"
json.dump({"weight_map": wm}, open(os.path.join(d, "model.safetensors.index.json"), "w"))

# config.json (section 2)
def cfgv(fn):
    c = json.loads(json.dumps(cfg)); fn(c); return c
ckpt("config_not_json", config_text='{"model_type": "hybrid",')
ckpt("config_missing_vocab", config=cfgv(lambda c: c.pop("vocab_size")))
ckpt("config_missing_train_context", config=cfgv(lambda c: c.pop("train_context")))
ckpt("config_layers_count", config=cfgv(lambda c: c.update(num_hidden_layers=3)))
ckpt("config_swa_no_window", config=cfgv(lambda c: c["layers"][2]["mixers"][0].pop("window")))
ckpt("config_hh_bad_pair", config=cfgv(lambda c: c["layers"][1]["mixers"].reverse()))
ckpt("config_three_mixers", config=cfgv(lambda c: c["layers"][0]["mixers"].append({"type": "nope", "num_heads": 1})))
ckpt("config_zero_hidden", config=cfgv(lambda c: c.update(hidden_size=0)))
ckpt("config_kv_heads", config=cfgv(lambda c: c["layers"][0]["mixers"][1].update(num_kv_heads=3)))
ckpt("config_no_head_dim", config=cfgv(lambda c: (c.pop("head_dim"), c["layers"][0]["mixers"][0].pop("head_k_dim"))))
ckpt("config_unknown_type", config=cfgv(lambda c: c["layers"][3]["mixers"][0].update(type="mamba2")))
# warnings only: unknown config key and an unused tensor
d = os.path.join(W, "unused_tensor"); os.makedirs(d)
c = json.loads(json.dumps(cfg)); c["my_note"] = "hi"; c["training"] = {"steps": 1}
json.dump(c, open(os.path.join(d, "config.json"), "w"))
h = json.loads(json.dumps(hdr)); h["extra.rotary.inv_freq"] = {"dtype": "F32", "shape": [1], "data_offsets": [len(data), len(data) + 4]}
hb = json.dumps(h).encode()
open(os.path.join(d, "model.safetensors"), "wb").write(struct.pack("<Q", len(hb)) + hb + data + b"\0\0\0\0")
PY

F=model.safetensors
expect_bad header_larger_than_file "header_larger_than_file/$F" "larger than the file"
expect_bad header_over_1e8 "header_over_1e8/$F" "10^8"
expect_bad header_not_json "header_not_json/$F" "not valid JSON"
expect_bad offsets_outside_buffer "offsets_outside_buffer/$F" "model.layers.1.attn.q_proj.weight" "outside the data buffer"
expect_bad overlapping_tensors "overlapping_tensors/$F" "attn_norm.weight" "overlaps"
expect_bad size_mismatch "size_mismatch/$F" "model.norm.weight" "needs"
expect_bad shape_vs_config "shape_vs_config/$F" "model.layers.1.attn.q_proj.weight" "[2048]" "config.json requires [32, 64]"
expect_bad missing_tensor "missing_tensor/$F" "missing tensor 'model.layers.2.mlp.up_proj.weight'"
expect_bad duplicate_name "duplicate_name/$F" "model.norm.weight" "duplicate"
expect_bad duplicate_across_shards "b.safetensors" "model.norm.weight" "duplicate name (also in" "a.safetensors"
expect_bad unknown_dtype "unknown_dtype/$F" "model.norm.weight" "unsupported dtype 'I32'"
expect_bad no_weights "no_weights" "no model.safetensors"
expect_bad does_not_exist "does_not_exist" "no such checkpoint directory"
C=config.json
expect_bad config_not_json "config_not_json/$C" "not valid JSON"
expect_bad config_missing_vocab "config_missing_vocab/$C" "missing required key 'vocab_size'"
expect_bad config_missing_train_context "config_missing_train_context/$C" "missing required key 'train_context'"
expect_bad config_layers_count "config_layers_count/$C" "num_hidden_layers is 3" "'layers' has 4"
expect_bad config_swa_no_window "config_swa_no_window/$C" "layers[2].mixers[0]: missing required key 'window'"
expect_bad config_hh_bad_pair "config_hh_bad_pair/$C" "layers[1]" "first mixer must be"
expect_bad config_three_mixers "config_three_mixers/$C" "layers[0]" "3 mixers"
expect_bad config_zero_hidden "config_zero_hidden/$C" "hidden_size"
expect_bad config_kv_heads "config_kv_heads/$C" "layers[0].mixers[1]" "not divisible by num_kv_heads (3)"
expect_bad config_no_head_dim "config_no_head_dim/$C" "layers[0].mixers[0]" "head_k_dim"
expect_bad config_unknown_type "config_unknown_type/$C" "layers[3].mixers[0]" "unknown mixer type 'mamba2'"

# Warnings are not errors: exit 0, the model is described, each warning names file and item.
out=$("$BIN" info "$W/unused_tensor" 2>"$W/unused.err"); rc=$?
if [ $rc -ne 0 ]; then echo "FAIL unused_tensor: exit $rc: $(cat "$W/unused.err")"; fails=$((fails + 1))
elif ! grep -q "unused_tensor/model.safetensors: warning: tensor 'extra.rotary.inv_freq' is not used" "$W/unused.err" ||
     ! grep -q "unused_tensor/config.json: warning: unknown key 'my_note'" "$W/unused.err" ||
     grep -q training "$W/unused.err"; then
    echo "FAIL unused_tensor: warnings: $(cat "$W/unused.err")"; fails=$((fails + 1))
else echo "ok   unused_tensor (warnings only)"; fi

# The good checkpoint passes.
"$BIN" info "$W/good" >/dev/null 2>&1 || { echo "FAIL good checkpoint rejected"; fails=$((fails + 1)); }
[ $fails -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "all bad checkpoints rejected with exit 2 and one line"
