#!/usr/bin/env bash
# Decoder speed on the GPU, for the bench notes: per-token time = (t(1+N) - t(1)) / N for
# `generate`, so device start-up and the model upload cancel; the decoder against one forward
# per token (HS_CUDA_DECODER=0) at the same prompt. Usage: bash tests/gpu/decode_speed.sh [BIN]
set -u
BIN=${1:-${HS_BIN:-build/hybridscope}}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$BIN" init "$tmp/gdn" --preset small --efficient gdn >/dev/null || exit 1
"$BIN" init "$tmp/swa" --preset small --efficient swa >/dev/null || exit 1
"$BIN" info "$tmp/gdn" | head -3
p=$(python3 -c "import random; r=random.Random(1); print(''.join(r.choice('abcdefgh ') for _ in range(20000)))")
echo "$p" > "$tmp/p.txt"
secs() { "$@" --json 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin)['seconds'])"; }
for m in gdn swa; do for T in 2000 16000; do
    txt=${p:0:$T}
    a=$(secs "$BIN" generate "$tmp/$m" --text "$txt" --max-new 1 --device cuda)
    b=$(secs "$BIN" generate "$tmp/$m" --text "$txt" --max-new 257 --device cuda)
    c=$(HS_CUDA_DECODER=0 secs "$BIN" generate "$tmp/$m" --text "$txt" --max-new 17 --device cuda)
    g=$(HS_CUDA_GEMV=0 secs "$BIN" generate "$tmp/$m" --text "$txt" --max-new 257 --device cuda)
    python3 -c "a,b,c,g=$a,$b,$c,$g; d=(b-a)/256*1e3; f=(c-a)/16*1e3; e=(g-a)/256*1e3; print(f'decode $m T=$T: prefill+start {a:.3f}s, decoder {d:.3f} ms/token (cuBLAS projections {e:.3f}), one forward per token {f:.2f} ms/token, ratio {f/d:.1f}x')"
done; done
