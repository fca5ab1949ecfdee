"""A small, CPU-sized stand-in for a question the GPU runs are too dear to answer by trial: does
the data mixture decide whether a model of one head type finds key-value retrieval, and when?
It trains a tiny model (default: RoPE only, 4 layers, hidden 64, 2 heads of 32, rows of 288
bytes) on the recipe's own rows (data.Mixture: key-value rows, copy drills, prose; drawn per
step as train.py does) and logs the teacher-forced accuracy on the answer digits of held-out
key-value rows (chance 0.1), so mixtures can be compared in minutes on a laptop.

    .torchenv/bin/python sample-models/recipe/proxy.py --steps 3000 --p-kv 0.5 --p-copy 0.15 --out log.tsv
    .torchenv/bin/python sample-models/recipe/proxy.py --copy-from 1500 ...   (copy drills only from step 1500)

Its scale is not the sample models' (~60x fewer parameters, a quarter of L0): a result here is a
hint for what to run on the GPU, not a finding about the family."""
import argparse
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
from model import HybridLM, Knobs  # noqa: E402


def mixer(typ, heads, window=36):
    m = {"type": typ, "num_heads": heads}
    if typ in ("rope", "swa"):
        m["rope_theta"] = 10000.0
    if typ == "swa":                 # the family's 128 of 1,024 scaled to the proxy's rows
        m["window"] = window
    if typ == "gla":
        m.update({"gate_low_rank_dim": 16, "gate_logit_normalizer": 16, "use_short_conv": False})
    if typ == "gdn":                 # as the family's gdn layers
        m.update({"use_short_conv": True, "conv_size": 4, "allow_neg_eigval": False})
    return m


def config(typ, layers, hidden, heads, head_dim, L0, lh, window=36):
    """Every layer TYPE, or with lh the family's LH 3:1 layout (every fourth layer NoPE)."""
    return {"model_type": "hybrid", "vocab_size": 258, "hidden_size": hidden,
            "intermediate_size": 2 * hidden, "num_hidden_layers": layers, "head_dim": head_dim,
            "norm_eps": 1e-6, "tie_word_embeddings": True, "train_context": L0,
            "tokenizer": {"type": "bytes", "bos_id": 256, "eos_id": 257},
            "layers": [{"mixers": [mixer("nope" if lh and i % 4 == 3 else typ, heads, window)]}
                       for i in range(layers)]}


def answer_accuracy(model, rows):
    """Teacher-forced accuracy on the tokens weighted as answers (weight >= 3)."""
    hit = tot = 0
    with torch.no_grad():
        toks = torch.tensor([r[0] for r in rows])
        pred = model(toks[:, :-1], Knobs(), fast=True).argmax(-1)
        w = torch.tensor([r[1] for r in rows])[:, 1:]
        m = w >= 3.0
        hit = int((pred[m] == toks[:, 1:][m]).sum())
        tot = int(m.sum())
    return hit / max(tot, 1), tot


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--type", default="rope", choices=("rope", "nope", "swa", "gla", "gdn"))
    ap.add_argument("--window", type=int, default=36, help="swa window (the family's 128/1024 of a 288-byte row)")
    ap.add_argument("--lh", action="store_true", help="every fourth layer NoPE (LH 3:1)")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--head-dim", type=int, default=32)
    ap.add_argument("--L0", type=int, default=256)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--p-kv", type=float, default=0.5)
    ap.add_argument("--p-copy", type=float, default=0.15)
    ap.add_argument("--copy-from", type=int, default=0, help="copy drills only from this step on")
    ap.add_argument("--kv-from", type=int, default=0, help="key-value rows only from this step on")
    ap.add_argument("--copy-lengths", default="8,120")
    ap.add_argument("--copy-alphabet", default=data.COPY_ALPHABET,
                    help="characters of the copy drills' strings (see data.Mixture.copy_row)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    assets = data.Assets(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../assets"))
    cfg = config(a.type, a.layers, a.hidden, a.heads, a.head_dim, a.L0, a.lh, a.window)
    model = HybridLM(cfg)
    model.init_weights(a.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.95), weight_decay=0.1)
    lens = tuple(int(x) for x in a.copy_lengths.split(","))

    mixtures = {}                # one per (p_copy, p_kv): at most the before/after of --*-from

    def mixture(step):
        key = (a.p_copy if step >= a.copy_from else 0.0, a.p_kv if step >= a.kv_from else 0.0)
        if key not in mixtures:
            mixtures[key] = data.Mixture(assets, a.L0, 1234, p_needle=0.0, p_copy=key[0], p_kv=key[1],
                                         copy_lengths=lens, copy_alphabet=a.copy_alphabet)
        m = mixtures[key]
        m.at_step(step)
        return m

    held = data.Mixture(assets, a.L0, 99, p_needle=0.0, p_kv=1.0)
    held.at_step(0)
    eval_rows = [held.sample() for _ in range(64)]
    out = open(a.out, "w") if a.out else None
    t0 = time.time()
    for step in range(a.steps):
        lr = a.lr * min(1.0, (step + 1) / 100)
        for g in opt.param_groups:
            g["lr"] = lr
        m = mixture(step)
        rows = [m.sample() for _ in range(a.batch)]
        toks = torch.tensor([r[0] for r in rows])
        w = torch.tensor([r[1] for r in rows])[:, 1:]
        w = w.masked_fill(toks[:, 1:] == data.BOS, 0.0)
        logits = model(toks[:, :-1], Knobs(), fast=True)
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), toks[:, 1:].reshape(-1), reduction="none")
        loss = (ce * w.reshape(-1)).sum() / w.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if (step + 1) % a.eval_every == 0 or step == 0:
            acc, n = answer_accuracy(model, eval_rows)
            line = f"{step + 1}\t{loss.item():.4f}\t{acc:.3f}\t{n}\t{time.time() - t0:.0f}"
            print(line, flush=True)
            if out:
                out.write(line + "\n")
                out.flush()
    if not math.isfinite(loss.item()):
        sys.exit("proxy: the loss is not finite")


if __name__ == "__main__":
    main()
