"""Parity fixtures for the C engine (tests/test_fixtures.c), from exported checkpoints.

    python3 fixtures.py --models ../ --assets ../../assets --out ../../tests/fixtures

Computed in float64 PyTorch on the CPU from the bf16 weights (upcast), plain path (step
recurrences for gla/gdn, explicit softmax), and stored as float32 .npy:

  prompt.npy            int32 [512]   the fixed prompt: an SK2 needle prompt, L=512, D=50,
                                      seed 7 (assets/NEEDLE.md), BOS first
  probes.npy            int32 [8]     probe positions 63, 127, ..., 511
  NAME/logits_off.npy   f32 [64, V]   logits of the last 64 positions, every knob off
  NAME/logits_knobs.npy f32 [64, V]   the same with KNOBS below
  NAME/dist.npy         f32 [heads, sum(p+1)]  a~_{t,s} for s = 0..t of each probe t,
                                      concatenated in probe order; heads layer-major, then
                                      mixer, then head; every knob off
  NAME/fp32_error.npy   f32 [3]       the same three computed in float32 PyTorch against these:
                                      max rel. error of each logits array, max abs. error of
                                      a~ (the model's own fp32 conditioning; see the test)

KNOBS (every knob at once, so each one is checked): EME = swla exact, W = 128, with
log_scale at L0 = 64 (so c_t > 1 inside 512 tokens), plus rope_window 128, swa_window 64
and head (0, 0, 0) ablated.

a~ is the spec section 7 distribution taken by autograd, not from the closed form: v (the
mixer's values after conv/silu) is made a leaf, the mixer's raw output o (before its norm
and gate) is recomputed from it with q, k and the gates held fixed, and the full Jacobian
d o_t / d v_s (dv x dv per s) comes from batched backward passes; a~_{t,s} is its Frobenius
norm normalised over s. (For every mixer type the Jacobian is c_{t,s} I, so this equals
|c_{t,s}| / sum |c|, and p_{t,s} for softmax heads.)

With --tiny DIR the script also writes a small random model that exercises what the family
does not (GQA, gla short conv, gdn allow_neg_eigval, untied lm_head, swa+nope HH, rope LH)
into DIR and its fixtures beside it.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
from export import export_model, load_model  # noqa: E402
from model import HybridLM, Knobs, gla_chunked_factored, gdn_chunked  # noqa: E402

T = 512
ROWS = 64
PROBES = [64 * k - 1 for k in range(1, 9)]
FIXTURE_KNOBS = Knobs(log_scale=True, log_scale_L0=64, swla="exact", swla_window=128,
                      rope_window=128, swa_window=64, ablate={(0, 0, 0)})


def prompt_tokens(assets):
    s = data.needle_sample(assets, data.SK2, T, 50.0, 7)
    return [data.BOS] + list(s["text"])


def jacobian_dists(model, toks):
    """[heads, sum(t+1)] a~ by autograd at the probe positions, knobs off."""
    cap = {}
    with torch.no_grad():
        model(toks, Knobs(), fast=False, capture=cap)
    rows = []
    for i, layer in enumerate(model.model.layers):
        for j, mix in enumerate(layer.mixers()):
            p, _ = cap[(i, j)]
            v_full = p["v"].detach()
            q, k = p["q"].detach(), p["k"].detach()

            def raw_output(t, v):
                """o[:, :t+1] from values v[:, :t+1] (causal, so row t is the full-input row t)."""
                sl = slice(0, t + 1)
                if mix.type == "gla":
                    return gla_chunked_factored(q[:, sl], k[:, sl], v, p["gk"].detach()[:, sl])
                if mix.type == "gdn":
                    return gdn_chunked(q[:, sl], k[:, sl], v, p["log_alpha"].detach()[:, sl],
                                       p["beta"].detach()[:, sl])
                return mix.core({"q": q[:, sl], "k": k[:, sl], "v": v}, Knobs(), fast=False)

            H, dv = mix.H, mix.dv
            per_head = [[] for _ in range(H)]
            rep = H // mix.Hkv
            for t in PROBES:
                v = v_full[:, :t + 1].clone().requires_grad_(True)
                o = raw_output(t, v)
                # batched backward passes, rows (h, c) = d o_t[h, c] / d v: all heads at once
                # for gla/gdn, one head at a time for softmax (its backward holds T x T per row)
                groups = [list(range(H))] if mix.type in ("gla", "gdn") else [[h] for h in range(H)]
                for heads in groups:
                    g = torch.zeros(len(heads) * dv, *o.shape, dtype=o.dtype)
                    for gi, h in enumerate(heads):
                        for c in range(dv):
                            g[gi * dv + c, 0, t, h, c] = 1.0
                    (jac,) = torch.autograd.grad(o, v, grad_outputs=g, is_grads_batched=True,
                                                 retain_graph=True)
                    for gi, h in enumerate(heads):
                        Jh = jac[gi * dv:(gi + 1) * dv, 0, :, h // rep, :]   # [dv, t+1, dv]
                        nrm = Jh.pow(2).sum(dim=(0, 2)).sqrt()
                        tot = nrm.sum()
                        per_head[h].append(nrm / tot if tot > 0 else nrm)
            for h in range(H):
                rows.append(torch.cat(per_head[h]))
    return torch.stack(rows).float().numpy()


def fixture_outputs(mdir, toks, dtype):
    model, cfg = load_model(mdir, dtype)
    model.eval()
    with torch.no_grad():
        off = model(toks, Knobs(), fast=False)[0, -ROWS:].double().numpy()
        kn = model(toks, FIXTURE_KNOBS, fast=False)[0, -ROWS:].double().numpy()
    return off, kn, jacobian_dists(model, toks).astype(np.float64)


def write_fixtures(mdir, outdir, toks):
    off, kn, dist = fixture_outputs(mdir, toks, torch.float64)
    os.makedirs(outdir, exist_ok=True)
    np.save(os.path.join(outdir, "logits_off.npy"), off.astype(np.float32))
    np.save(os.path.join(outdir, "logits_knobs.npy"), kn.astype(np.float32))
    np.save(os.path.join(outdir, "dist.npy"), dist.astype(np.float32))
    # The same in float32: how far fp32 arithmetic itself lands from the float64 values on this
    # model and prompt. A model with near-tied attention scores of ~1e5 (a NoPE model that
    # learned hard attention) is so ill-conditioned that fp32 PyTorch is off by more than the
    # test's 1e-4; test_fixtures.c then allows a small multiple of this, and 1e-4 otherwise.
    off32, kn32, dist32 = fixture_outputs(mdir, toks, torch.float32)
    rel = lambda a, b: float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-6))
    err = [rel(off32, off), rel(kn32, kn), float(np.abs(dist32 - dist).max())]
    np.save(os.path.join(outdir, "fp32_error.npy"), np.array(err, dtype=np.float32))


def tiny_model(dir_):
    cfg = {
        "model_type": "hybrid", "vocab_size": 258, "hidden_size": 32, "intermediate_size": 48,
        "num_hidden_layers": 5, "head_dim": 8, "norm_eps": 1e-6, "tie_word_embeddings": False,
        "train_context": 256, "tokenizer": {"type": "bytes", "bos_id": 256, "eos_id": 257},
        "layers": [
            {"mixers": [{"type": "gla", "num_heads": 2, "use_short_conv": True,
                         "gate_low_rank_dim": 8, "gate_logit_normalizer": 8}]},
            {"mixers": [{"type": "swa", "num_heads": 2, "num_kv_heads": 1, "window": 32,
                         "rope_theta": 500.0}, {"type": "nope", "num_heads": 2, "num_kv_heads": 1}]},
            {"mixers": [{"type": "gdn", "num_heads": 2, "allow_neg_eigval": True},
                        {"type": "nope", "num_heads": 1}]},
            {"mixers": [{"type": "rope", "num_heads": 4, "num_kv_heads": 2}]},
            {"mixers": [{"type": "gla", "num_heads": 2}, {"type": "nope", "num_heads": 2}]},
        ],
    }
    m = HybridLM(cfg)
    m.init_weights(11)
    g = torch.Generator().manual_seed(12)
    with torch.no_grad():
        # larger weights than a fresh init, so attention is not uniform and gates matter
        for name, p in m.named_parameters():
            if p.dim() == 2 and "embeddings" not in name:
                p.copy_(torch.randn(p.shape, generator=g) * (1.5 / p.shape[1] ** 0.5))
            elif "norm" in name:
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g))
            elif name.endswith("gk_proj.1.bias"):
                p.copy_(torch.randn(p.shape, generator=g))
    export_model(m, cfg, {"recipe": "sample-models/recipe/fixtures.py --tiny",
                          "note": "random weights, not trained"}, dir_)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", required=True, help="sample-models/ (reads families.json)")
    ap.add_argument("--assets", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--tiny", default="", help="also write the random tiny model to this dir")
    a = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    assets = data.Assets(a.assets)
    toks = prompt_tokens(assets)
    os.makedirs(a.out, exist_ok=True)
    np.save(os.path.join(a.out, "prompt.npy"), np.array(toks, dtype=np.int32))
    np.save(os.path.join(a.out, "probes.npy"), np.array(PROBES, dtype=np.int32))
    tt = torch.tensor([toks])
    names = []
    if a.only:
        names = a.only.split(",")
    elif os.path.exists(os.path.join(a.models, "families.json")):
        with open(os.path.join(a.models, "families.json")) as f:
            fam = json.load(f)
        names = [m["model"] for g in fam["families"] for m in g["members"]]
    if a.tiny:
        tiny_model(a.tiny)
        write_fixtures(a.tiny, os.path.join(a.out, os.path.basename(a.tiny.rstrip("/"))), tt)
        print("fixtures: tiny model", a.tiny, flush=True)
    for n in names:
        mdir = os.path.join(a.models, n)
        if not os.path.exists(os.path.join(mdir, "model.safetensors")):
            print(f"fixtures: {n}: no checkpoint, skipped", flush=True)
            continue
        write_fixtures(mdir, os.path.join(a.out, n), tt)
        print(f"fixtures: {n}", flush=True)


if __name__ == "__main__":
    main()
