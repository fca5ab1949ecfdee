"""Which RoPE frequency pairs carry a head's retrieval: at each position that predicts a value
digit of SK1 prompts at L0, the head's winning logit q_t . k_s (s its argmax key, after the
rotation) split over the head's dk/2 frequency pairs (i, i + dk/2) of the NeoX layout, as a
share of the whole, averaged; pair 0 turns fastest, the last slowest.

    .torchenv/bin/python sample-models/recipe/rope_channels.py DIR --layer L --head H [--prompts 8]

DIR: a checkpoint directory; the head must be a rope or swa head (mixer 0 of its layer)."""
import argparse
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
from export import load_model  # noqa: E402
from model import Knobs  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--layer", type=int, required=True)
    ap.add_argument("--head", type=int, required=True)
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--assets", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets"))
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.dir, "config.json")):
        sys.exit(f"rope_channels: {a.dir}: no config.json (not a checkpoint directory)")
    model, cfg = load_model(a.dir, torch.float64)
    model.eval()
    if not 0 <= a.layer < len(model.model.layers):
        sys.exit(f"rope_channels: --layer {a.layer}: the model has {len(model.model.layers)} layers")
    mx = model.model.layers[a.layer].mixers()[0]
    if mx.type not in ("rope", "swa") or not 0 <= a.head < mx.H:
        sys.exit(f"rope_channels: layer {a.layer} mixer 0 is {mx.type} with {mx.H} heads: "
                 f"--head {a.head} is not a rope/swa head")
    assets = data.Assets(a.assets)
    L0, half, kvh = cfg["train_context"], mx.dk // 2, a.head // (mx.H // mx.Hkv)
    share, n, gaps = torch.zeros(half, dtype=torch.float64), 0, []
    for seed in range(1, a.prompts + 1):
        s = data.needle_sample(assets, data.SK1, L0, 50.0, seed)
        ans = list((" " + s["value"]).encode())
        toks = torch.tensor([[data.BOS] + list(s["text"]) + ans])
        cap = {}
        with torch.no_grad():
            model(toks, Knobs(), fast=False, capture=cap)
        q, k = cap[(a.layer, 0)][0]["q"][0, :, a.head], cap[(a.layer, 0)][0]["k"][0, :, kvh]
        T = toks.shape[1]
        for t in range(T - len(ans) - 1, T - 1):
            z = (k[:t + 1] @ q[t]) / math.sqrt(mx.dk)
            c = q[t] * k[int(z.argmax())]
            per = c[:half] + c[half:]
            share += per / per.sum()
            n += 1
            top = torch.topk(z, 2).values
            gaps.append(float(top[0] - top[1]))
    share /= n
    print(f"{a.dir} layer {a.layer} head {a.head}: share of the winning logit by frequency pair "
          f"(0 fastest .. {half - 1} slowest), {n} positions of {a.prompts} SK1 prompts at {L0}:")
    print(" ".join(f"{i}:{v:.2f}" for i, v in enumerate(share.tolist())))
    print(f"slowest quarter ({half - half // 4}..{half - 1}): {share[half - half // 4:].sum():.2f}; "
          f"mean top-1 minus top-2 logit {sum(gaps) / len(gaps):.2f}")


if __name__ == "__main__":
    main()
