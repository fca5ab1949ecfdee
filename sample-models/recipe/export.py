"""Writes a checkpoint directory per spec sections 1-3: config.json + model.safetensors (bf16).

    python3 export.py CKPT.pt OUTDIR        (CKPT.pt as written by train.py)
"""
import json
import os
import struct
import sys

import torch


def write_safetensors(path, tensors):
    """tensors: {name: tensor}; stored BF16, names sorted, contiguous, no overlap."""
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().to("cpu", torch.bfloat16).contiguous()
        b = t.view(torch.int16).numpy().tobytes()
        header[name] = {"dtype": "BF16", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def read_safetensors(path):
    """{name: float32 tensor} from a safetensors file (F32/BF16/F16)."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        a, b = h["data_offsets"]
        buf = bytearray(raw[base + a:base + b])
        dt = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}[h["dtype"]]
        out[name] = torch.frombuffer(buf, dtype=dt).reshape(h["shape"]).float()
    return out


def export_model(model, cfg, training, outdir):
    """cfg: the config dict as written (spec keys); training: the recipe's exact settings."""
    os.makedirs(outdir, exist_ok=True)
    sd = {k: v for k, v in model.state_dict().items()}
    if cfg.get("tie_word_embeddings"):
        sd.pop("lm_head.weight", None)
    write_safetensors(os.path.join(outdir, "model.safetensors"), sd)
    c = dict(cfg)
    c["training"] = training
    tmp = os.path.join(outdir, "config.json.tmp")
    with open(tmp, "w") as f:
        json.dump(c, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(outdir, "config.json"))


def load_model(mdir, dtype=torch.float32):
    """A HybridLM from a checkpoint directory (bf16 weights upcast to dtype)."""
    from model import HybridLM
    with open(os.path.join(mdir, "config.json")) as f:
        cfg = json.load(f)
    cfg = {k: v for k, v in cfg.items() if k != "training"}
    m = HybridLM(cfg)
    sd = read_safetensors(os.path.join(mdir, "model.safetensors"))
    missing, unexpected = m.load_state_dict(sd, strict=False)
    if unexpected or [k for k in missing if k != "lm_head.weight"]:
        raise SystemExit(f"{mdir}: tensors missing {missing} / unexpected {unexpected}")
    return m.to(dtype), cfg


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: export.py CKPT.pt OUTDIR")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from model import HybridLM
    ck = torch.load(sys.argv[1], map_location="cpu")
    m = HybridLM(ck["config"])
    m.load_state_dict(ck["model"])
    export_model(m, ck["config"], ck["training"], sys.argv[2])
