#!/usr/bin/env bash
# Fuzzes the safetensors header parser, the config.json parser, the .npy reader, the gui's
# script parser and the command-line value parsers with libFuzzer (clang
# -fsanitize=fuzzer,address,undefined), SECONDS in total, a fifth per target.
# Usage: tests/fuzz/run.sh SECONDS     (make fuzz FUZZ_SECONDS=600)
# Builds into build-fuzz/, seeds each corpus with generated valid files, keeps the corpus
# between runs (build-fuzz/corpus-*), and prints each target's execution count.
set -eu
cd "$(dirname "$0")/../.."
SECONDS_TOTAL=${1:-60}
HALF=$(( SECONDS_TOTAL / 5 ))
[ "$HALF" -ge 1 ] || HALF=1
CLANG=${CLANG:-clang}
command -v "$CLANG" >/dev/null || { echo "fuzz: clang not found (apt-get install clang libclang-rt-14-dev)"; exit 2; }
OUT=build-fuzz
mkdir -p "$OUT"
CFLAGS="-g -O1 -std=c11 -D_GNU_SOURCE -I. -Iengine $(pkg-config --cflags libcjson 2>/dev/null)"
SAN="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
LIBS="$(pkg-config --libs libcjson 2>/dev/null || echo -lcjson) -lm"
$CLANG $CFLAGS $SAN -o $OUT/fuzz_safetensors tests/fuzz/fuzz_safetensors.c engine/safetensors.c $LIBS
$CLANG $CFLAGS $SAN -o $OUT/fuzz_config tests/fuzz/fuzz_config.c engine/config.c engine/config_fla.c engine/model.c engine/safetensors.c $LIBS
$CLANG $CFLAGS $SAN -o $OUT/fuzz_npy tests/fuzz/fuzz_npy.c engine/npy.c $LIBS
$CLANG $CFLAGS $SAN -Iapp -o $OUT/fuzz_script tests/fuzz/fuzz_script.c app/script.c $LIBS
$CLANG $CFLAGS $SAN -Iapp -Ikernels -o $OUT/fuzz_args tests/fuzz/fuzz_args.c app/session_args.c engine/knobs.c \
    engine/flag_values.c engine/backend.c engine/presets.c engine/config.c engine/config_fla.c engine/model.c \
    engine/safetensors.c $LIBS -ldl

# Seeds: small valid safetensors files and valid configs of every mixer type and layout.
mkdir -p $OUT/corpus-safetensors $OUT/corpus-config $OUT/corpus-npy $OUT/corpus-script $OUT/corpus-args
python3 - "$OUT" <<'PY'
import json, struct, sys, os
out = sys.argv[1]
def st(tensors, meta=True, pad=True):
    hdr, data = {}, b""
    if meta: hdr["__metadata__"] = {"format": "pt"}
    for name, dt, shape, raw in tensors:
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(hdr).encode()
    if pad: h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data
seeds = {
  "one_f32": st([("w", "F32", [2, 2], struct.pack("<4f", 1, 2, 3, 4))]),
  "mixed": st([("a", "BF16", [3], b"\x80\x3f" * 3), ("b", "F16", [1, 2], b"\x00\x3c" * 2),
               ("c", "F32", [], struct.pack("<f", 5)), ("e", "F32", [0], b"")], meta=False),
  "model_like": st([("model.layers.0.attn.q_proj.weight", "F32", [2, 3], bytes(24)),
                    ("model.norm.weight", "BF16", [4], bytes(8))], pad=False),
}
for k, v in seeds.items(): open(os.path.join(out, "corpus-safetensors", k), "wb").write(v)
def cfg(layers, **kw):
    c = {"model_type": "hybrid", "vocab_size": 258, "hidden_size": 16, "intermediate_size": 32,
         "num_hidden_layers": len(layers), "head_dim": 4, "norm_eps": 1e-6,
         "tie_word_embeddings": True, "train_context": 64,
         "tokenizer": {"type": "bytes", "bos_id": 256, "eos_id": 257},
         "layers": [{"mixers": m} for m in layers]}
    c.update(kw); return json.dumps(c, indent=1)
M = lambda t, h, **kw: dict(type=t, num_heads=h, **kw)
cfgs = {
  "lh_gla": cfg([[M("gla", 2, use_short_conv=True)], [M("nope", 2, num_kv_heads=1)]]),
  "hh_swa": cfg([[M("swa", 3, window=8, rope_theta=500.0), M("nope", 1)]]),
  "hh_gdn": cfg([[M("gdn", 2, allow_neg_eigval=True, conv_size=3), M("nope", 2)]], training={"steps": 1}),
  "trained": cfg([[M("rope", 2)], [M("nope", 2)]], training={"steps": 500, "total_steps": 17020,
      "earlier_phases": [{"steps": 1870}, {"steps": 1174}], "data": {"p_needle": 0.6, "p_kv": 0.3, "p_copy": 0}}),
  "rope_dims": cfg([[M("rope", 2, head_k_dim=6, head_v_dim=2)]], tie_word_embeddings=False),
  "no_head_dim": json.dumps({"model_type": "hybrid", "vocab_size": 300, "hidden_size": 8,
      "intermediate_size": 8, "num_hidden_layers": 1, "train_context": 9,
      "layers": [{"mixers": [M("gla", 1, head_k_dim=2, head_v_dim=3, gate_low_rank_dim=2,
                                gate_logit_normalizer=8)]}]}),
}
cfgs["fla_gla"] = json.dumps({"model_type": "gla", "hidden_size": 64, "num_hidden_layers": 4, "num_heads": 4,
    "expand_k": 0.5, "expand_v": 1, "vocab_size": 300, "use_short_conv": True, "feature_map": None,
    "attn": {"layers": [1, 3], "num_heads": 2, "num_kv_heads": 1, "window_size": None, "rope_theta": 500.0}})
cfgs["fla_gdn"] = json.dumps({"model_type": "gated_deltanet", "hidden_size": 128, "num_hidden_layers": 3,
    "head_dim": 32, "num_heads": 2, "expand_v": 2, "allow_neg_eigval": True,
    "attn": {"layers": [0], "num_heads": 4, "window_size": 64, "rope_theta": None}})
for k, v in cfgs.items(): open(os.path.join(out, "corpus-config", k), "w").write(v)
def npy(descr, shape, raw, version=1):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    hl = 4 if version > 1 else 2
    pad = -(6 + 2 + hl + len(d) + 1) % 64
    h = (d + " " * pad + "\n").encode()
    return b"\x93NUMPY" + bytes([version, 0]) + (struct.pack("<I", len(h)) if hl == 4 else struct.pack("<H", len(h))) + h + raw
npys = {
  "f4_2x3": npy("<f4", "(2, 3)", struct.pack("<6f", *range(6))),
  "i4_tokens": npy("<i4", "(5,)", struct.pack("<5i", 256, 1, 2, 3, 4)),
  "i8_1xT": npy("<i8", "(1, 3)", struct.pack("<3q", 7, 8, 9), version=2),
  "f4_scalar": npy("<f4", "()", struct.pack("<f", 1.5), version=3),
  "f4_empty": npy("<f4", "(0, 4)", b""),
}
for k, v in npys.items(): open(os.path.join(out, "corpus-npy", k), "wb").write(v)
scripts = {
  "keys": "# a demo\nkey tab\nkeys 12\nkey enter\nwait 30\nscreenshot /tmp/x.png\nquit\n",
  "mouse": "click 10 20\nmove 5.5 6\nwheel 100 100 -2\ndrag 1 2 3 4\nsleep 50\nresize 800 600\n",
}
for k, v in scripts.items(): open(os.path.join(out, "corpus-script", k), "w").write(v)
args = {
  "counts": "1k,2k,4096,1.5k\n--lengths\n1k,2k\n--length=4k",
  "depths": "0:100:25\n--depths=0,12.5,100\n--depth\n50",
  "head": "3.0.1\n--head\n3.0.1\n--zoom\n0:4k,0:2k\n--ablate=1.0.2,3.0.1",
  "knobs": "--swla\n--swla-window\n64\n--log-scale\n--rope-window\n--swa-window=9\n--swla=overlap\n--swla-stride\n16",
  "init": "--preset\ntiny\n--efficient=gdn\n--layout\nHH\n--ratio\n1:1\n--heads\n4\n--hidden=1k\n--layers\n8\n--rope-theta\n500\n--seed\n3\n--dtype\nf32\n--short-conv",
  "misc": "--task=sk2\n--tasks\nsk1,sk3\n--bins\n64\n--head-bins=512\n--samples\n3\n--ppl-length\n4k\n--theme\ndark\n--log-color\n--device\ncpu\n--seed\n7\n--topk\n16",
}
for k, v in args.items(): open(os.path.join(out, "corpus-args", k), "w").write(v)
open(os.path.join(out, "npy.dict"), "w").write("\n".join('"%s"' % w for w in
    ["\\x93NUMPY", "descr", "fortran_order", "shape", "<f4", "<i4", "<i8", "False", "True", "(", ")", ",", "'"]) + "\n")
open(os.path.join(out, "script.dict"), "w").write("\n".join('"%s"' % w for w in
    ["key", "keys", "click", "move", "wheel", "drag", "wait", "sleep", "screenshot", "resize", "quit",
     "tab", "btab", "enter", "esc", "f1", "space", "inf", "nan", "1e300", "-"]) + "\n")
open(os.path.join(out, "args.dict"), "w").write("\n".join('"%s"' % w for w in
    ["--length", "--lengths", "--depth", "--depths", "--head", "--zoom", "--ablate", "--swla", "--swla-window",
     "--swla-stride", "--swa-window", "--rope-window", "--log-scale", "--tasks", "--task", "--bins",
     "--head-bins", "--samples", "--ppl-length", "--seed", "--topk", "--theme", "--device", "=", ":", ",",
     "--preset", "--efficient", "--layout", "--ratio", "--hidden", "--layers", "--heads", "--kv-heads",
     "--head-dim", "--ffn", "--vocab", "--window", "--train-context", "--rope-theta", "--dtype", "HH", "tiny",
     ".", "k", "M", "g", "\\x0a", "nan", "inf", "exact", "overlap", "sk1"]) + "\n")
open(os.path.join(out, "safetensors.dict"), "w").write("\n".join('"%s"' % w for w in
    ["dtype", "shape", "data_offsets", "F32", "BF16", "F16", "__metadata__", "{", "}", "[", "]", ":", ","]) + "\n")
open(os.path.join(out, "config.dict"), "w").write("\n".join('"%s"' % w for w in
    ["model_type", "hybrid", "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
     "head_dim", "norm_eps", "tie_word_embeddings", "train_context", "tokenizer", "bos_id", "eos_id",
     "layers", "mixers", "type", "num_heads", "num_kv_heads", "head_k_dim", "head_v_dim",
     "rope_theta", "window", "gate_low_rank_dim", "gate_logit_normalizer", "use_short_conv",
     "conv_size", "allow_neg_eigval", "nope", "rope", "swa", "gla", "gdn", "true", "false",
     "training", "gated_deltanet", "expand_k", "expand_v", "attn", "window_size", "num_v_heads",
     "use_gate", "feature_map", "max_position_embeddings", "hidden_ratio", "null"]) + "\n")
PY

status=0
for t in safetensors config npy script args; do
    echo "fuzz: $t for ${HALF}s"
    log=$OUT/fuzz_$t.log
    # -close_fd_mask=2 hides the parsers' warnings; libFuzzer still prints its own reports.
    if ! $OUT/fuzz_$t -max_total_time=$HALF -close_fd_mask=2 -max_len=4096 -timeout=10 \
            -dict=$OUT/$t.dict -artifact_prefix=$OUT/crash-$t- $OUT/corpus-$t > "$log" 2>&1; then
        echo "fuzz: $t FOUND A PROBLEM (see $log and $OUT/crash-$t-*)"
        tail -n 40 "$log"
        status=1
    fi
    execs=$(grep -Eo 'Done [0-9]+ runs' "$log" | grep -Eo '[0-9]+' || true)
    echo "fuzz: $t: ${execs:-?} executions in ${HALF}s, corpus $(ls $OUT/corpus-$t | wc -l) files"
done
exit $status
