"""Teacher-forced accuracy and loss on the answer tokens of key-value rows and needle prompts
(the data of data.py), for checkpoints on any CPU: whether a model that does not retrieve yet
is partly there (accuracy above chance, loss below ln 10 on digits) or not at all.

    .torchenv/bin/python sample-models/recipe/answer_probe.py DIR [DIR...] [--kv 6] [--needles 12]

DIR: a checkpoint directory (config.json + model.safetensors). Chance on the 7 digits of a
value is 0.1 and ln 10 = 2.30 nats; an SK3 uuid's hex digits have chance 1/16."""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
from export import load_model  # noqa: E402
from model import Knobs  # noqa: E402


def answer_stats(model, rows):
    """(accuracy, mean loss in nats, count) over the tokens weighted as answers."""
    hit, tot, nll = 0, 0, 0.0
    for toks, w in rows:
        with torch.no_grad():
            logits = model(torch.tensor([toks]), Knobs(), fast=False)[0, :-1].double()
        pred, logp = logits.argmax(-1), torch.log_softmax(logits, -1)
        for j in range(1, len(toks)):
            if w[j] >= 3.0:   # answer_weight (5) marks answers; copy drills weigh 2
                hit += int(pred[j - 1] == toks[j])
                nll -= logp[j - 1, toks[j]].item()
                tot += 1
    return hit / max(tot, 1), nll / max(tot, 1), tot


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--kv", type=int, default=6, help="key-value rows")
    ap.add_argument("--needles", type=int, default=12, help="needle prompts (SK1/SK2/SK3)")
    ap.add_argument("--seed", type=int, default=99, help="data seed (not the training stream's 1234)")
    ap.add_argument("--assets", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets"))
    a = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    assets = data.Assets(a.assets)
    mix = data.Mixture(assets, 1024, seed=a.seed, p_needle=1.0)
    kv = [mix.kv_row() for _ in range(a.kv)]
    nd = [mix.sample() for _ in range(a.needles)]
    for d in a.dirs:
        if not os.path.isfile(os.path.join(d, "config.json")):
            sys.exit(f"answer_probe: {d}: no config.json (not a checkpoint directory)")
        model, _ = load_model(d, torch.float32)
        model.eval()
        parts = []
        for name, rows in (("kv", kv), ("needle", nd)):
            acc, loss, n = answer_stats(model, rows)
            parts.append(f"{name} acc={acc:.3f} loss={loss:.3f} n={n}")
        print(d, " ".join(parts), flush=True)


if __name__ == "__main__":
    main()
