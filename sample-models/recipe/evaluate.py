"""Quality bar and extrapolation table with the C engine (`hybridscope niah` / `ppl`).

    python3 sample-models/recipe/evaluate.py bar   [--samples 5] [--jobs N]
    python3 sample-models/recipe/evaluate.py table [--samples 2] [--jobs N] [--lengths 1k,...]
    python3 sample-models/recipe/evaluate.py table --device cuda   (on the GPU machine)
    python3 sample-models/recipe/evaluate.py bar --dir .train-state/call20   (a call's weights)

Run from the repository root after `make`. `bar`: SK1 at L0 over 10 depths (0:100:11.1 ..)
x --samples seeds for every model in sample-models/families.json. `table`: SK1/SK2/SK3 at
L0..16L0 under direct, log scaling, the model's window knob (SWLA exact W=L0 for gla/gdn,
RoPE window W=L0 for rope, none for swa/nope) and window+log (EME), 5 depths x --samples;
plus perplexity by position at 16L0 (direct and EME) on held-out prose. One `hybridscope`
process per (model, setting), --jobs at a time, each single-threaded. Prints Markdown.
--device cuda runs the same commands on the GPU engine (checked against the CPU engine by
tests/gpu/parity.sh); the numbers agree up to bf16 rounding of near-tied argmaxes.
"""
import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.getcwd()
BIN = os.path.join(ROOT, "build", "hybridscope")
SM = os.path.join(ROOT, "sample-models")


ONLY = None       # --models a,b: a subset


def models():
    # the member list is always the repo's; --dir only says where their checkpoints are
    with open(os.path.join(ROOT, "sample-models", "families.json")) as f:
        fam = json.load(f)
    out = []
    for g in fam["families"]:
        for m in g["members"]:
            if ONLY is not None and m["model"] not in ONLY:
                continue
            if os.path.exists(os.path.join(SM, m["model"], "model.safetensors")):
                out.append(m["model"])
    return out


def kinds(name):
    with open(os.path.join(SM, name, "config.json")) as f:
        cfg = json.load(f)
    return {m["type"] for l in cfg["layers"] for m in l["mixers"]}, cfg["train_context"]


def settings(name):
    ks, L0 = kinds(name)
    out = [("direct", []), ("log", ["--log-scale"])]
    if ks & {"gla", "gdn"}:
        win = ["--swla=exact", "--swla-window", str(L0)]
        out += [("swla", win), ("swla+log", win + ["--log-scale"])]
    elif "rope" in ks:
        win = ["--rope-window=%d" % L0]
        out += [("ropewin", win), ("ropewin+log", win + ["--log-scale"])]
    return out


CACHE = None      # --cache DIR: finished runs are kept there, keyed by weights + arguments
CACHED_ONLY = False
DEVICE = "cpu"


_weights_sha = {}


def weights_sha(st):
    if st not in _weights_sha:
        h = hashlib.sha256()
        with open(st, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _weights_sha[st] = h.hexdigest()[:32]
    return _weights_sha[st]


def cache_key(args):
    # a model directory counts by its weights' content, not its path or date: a run on a call's
    # checkpoint (--dir .train-state/callN) is the same run once that checkpoint is installed in
    # sample-models/, and a retrained model is a new key
    parts = []
    for x in args:
        st = os.path.join(x, "model.safetensors")
        parts.append("weights:" + weights_sha(st) if os.path.isfile(st) else x)
    if DEVICE != "cpu":
        parts += ["--device", DEVICE]
    return hashlib.sha256(" ".join(parts).encode()).hexdigest()[:24]


def run(args):
    path = os.path.join(CACHE, cache_key(args) + ".json") if CACHE else None
    if path and os.path.exists(path):
        with open(path) as f:
            c = json.load(f)
        return c["doc"], c["seconds"]
    if CACHED_ONLY:
        return {"error": ["not run yet"]}, 0.0
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    t0 = time.time()
    p = subprocess.run([BIN] + args + ["--device", DEVICE, "--json"], capture_output=True,
                       text=True, env=env)
    if p.returncode:
        return {"error": p.stderr.strip().splitlines()[-1:] or ["?"]}, time.time() - t0
    doc, secs = json.loads(p.stdout), time.time() - t0
    if path:
        with open(path + ".tmp", "w") as f:
            json.dump({"args": args, "doc": doc, "seconds": secs}, f)
        os.replace(path + ".tmp", path)
    return doc, secs


def acc(doc, task, length):
    cells = [c for c in doc["cells"] if c["task"] == task and c["length"] == length]
    done = sum(c["done"] for c in cells)
    return 100.0 * sum(c["correct"] for c in cells) / done if done else float("nan"), done


def layout_text(cfg):
    """The status table's layout column, from config.json: "LH 3:1, swa window 128",
    "HH, 3 gla + 1 nope heads", "8 x rope"."""
    layers = [l["mixers"] for l in cfg["layers"]]
    extra = []
    for ms in layers:
        for m in ms:
            e = None
            if m["type"] == "swa":
                e = "swa window %d" % m.get("window", 0)
            elif m["type"] == "gdn" and m.get("use_short_conv", True):
                e = "conv %d" % m.get("conv_size", 4)
            if e and e not in extra:
                extra.append(e)
    if all(len(ms) == 2 for ms in layers):
        b, n = layers[0][0], layers[0][1]
        return "HH, %d %s + %d nope heads" % (b["num_heads"], b["type"], n["num_heads"])
    types = [ms[0]["type"] for ms in layers]
    if len(set(types)) == 1:
        return "%d x %s" % (len(types), types[0])
    nope = types.count("nope")
    g = math.gcd(len(types) - nope, nope)
    return ", ".join(["LH %d:%d" % ((len(types) - nope) // g, nope // g)] + extra)


def steps_text(cfg):
    """Total steps and the phases': "11799 (1870 + 1174 + ...)"; "?" without a record. A part
    that continues a phase cut by a device call's end (phase_start > 0) counts with its phase."""
    t = cfg.get("training") or {}
    total = t.get("total_steps", t.get("steps"))
    if not isinstance(total, int):
        return "?"
    recs = [p for p in t.get("earlier_phases", []) if isinstance(p, dict)] + [t]
    parts = []
    for r in recs:
        n, start = r.get("steps"), r.get("phase_start", 0)
        if not isinstance(n, int):
            return str(total)
        if parts and isinstance(start, int) and start > 0:
            parts[-1] += n
        else:
            parts.append(n)
    if len(parts) > 1:
        return "%d (%s)" % (total, " + ".join(str(x) for x in parts))
    return str(total)


def cmd_bar(a):
    names = models()
    depths = ",".join("%.4g" % (i * 100.0 / 9) for i in range(10))
    jobs = [(n, ["niah", os.path.join(SM, n), "--task", "sk1", "--depths", depths,
                 "--samples", str(a.samples), "--seed", "0"]) for n in names]
    t0 = time.time()
    with ThreadPoolExecutor(a.jobs) as ex:
        res = list(ex.map(lambda j: (j[0],) + run(j[1]), jobs))
    # the sample-models/README.md status table: SK1 >= 90% over >= 50 prompts meets the bar
    print("| model | layout (config) | params | steps (phases) | SK1 @ L0 (C engine) | samples | bar |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n, doc, _ in res:
        with open(os.path.join(SM, n, "config.json")) as f:
            cfg = json.load(f)
        p = subprocess.run([BIN, "info", os.path.join(SM, n), "--json"], capture_output=True, text=True)
        params = f"{json.loads(p.stdout)['param_count']:,}" if p.returncode == 0 else "?"
        head = f"| {n} | {layout_text(cfg)} | {params} | {steps_text(cfg)} |"
        if "error" in doc:
            print(f"{head} error: {doc['error'][0]} | | |")
            continue
        L = doc["lengths"][0]
        x, done = acc(doc, "sk1", L)
        print(f"{head} {x:.0f}% | {done} | {'met' if x >= 90 and done >= 50 else 'missed'} |")
    print(f"\n({len(jobs)} runs, {a.jobs} at a time, {time.time() - t0:.0f} s wall, {os.cpu_count()} CPUs, "
          f"device {DEVICE})")


def cmd_table(a):
    names = models()
    jobs = []
    for n in names:
        for label, kn in ([] if a.no_niah else settings(n)):
            if a.settings and label not in a.settings.split(","):
                continue
            jobs.append(((n, label, "niah"), ["niah", os.path.join(SM, n), "--task", "sk1,sk2,sk3",
                                               "--lengths", a.lengths, "--depths", "0:100:25",
                                               "--samples", str(a.samples), "--seed", "100"] + kn))
        held = os.path.join(a.heldout)
        for label, kn in (settings(n)[0], settings(n)[-1]):
            jobs.append(((n, label, "ppl"), ["ppl", os.path.join(SM, n), "--length", a.ppl_length,
                                              "--docs", str(a.ppl_docs), "--file", held,
                                              "--n-buckets", "8"] + kn))
    # the long ppl runs first, then direct and EME (the table's two ends), then the rest
    order = {"direct": 0, "swla+log": 1, "ropewin+log": 1, "log": 2}
    jobs.sort(key=lambda j: (j[0][2] != "ppl", order.get(j[0][1], 3)))
    t0 = time.time()
    with ThreadPoolExecutor(a.jobs) as ex:
        res = list(ex.map(lambda j: (j[0],) + run(j[1]), jobs))
    lengths = None
    print("| model | setting | " + " | ".join(f"SK{t} {L}" for t in (1, 2, 3)
                                                for L in a.lengths.split(",")) + " |")
    print("|---|---|" + "---|" * (3 * len(a.lengths.split(","))))
    for (n, label, kind), doc, _ in res:
        if kind != "niah":
            continue
        if "error" in doc:
            print(f"| {n} | {label} | error: {doc['error'][0]} |")
            continue
        lengths = doc["lengths"]
        row = [f"{acc(doc, f'sk{t}', L)[0]:.0f}" for t in (1, 2, 3) for L in lengths]
        print(f"| {n} | {label} | " + " | ".join(row) + " |")
    print("\nPerplexity by position at %s tokens (held-out prose):\n" % a.ppl_length)
    for (n, label, kind), doc, _ in res:
        if kind != "ppl":
            continue
        if "error" in doc:
            print(f"- {n} {label}: error: {doc['error'][0]}")
            continue
        b = ", ".join(f"[{x['start']},{x['end']}) {x['ppl']:.2f}" for x in doc["by_position"])
        print(f"- {n} {label}: overall {doc['overall']:.2f}; {b}")
    n_done = sum(1 for r in res if "error" not in r[1])
    print(f"\n({n_done}/{len(jobs)} runs, {a.jobs} at a time, {time.time() - t0:.0f} s wall, "
          f"{os.cpu_count()} CPUs, device {DEVICE}; samples per cell: 5 depths x {a.samples})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["bar", "table"])
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=0,
                    help="processes at a time (default: one per CPU; 4 with --device cuda)")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                    help="the engine every run uses (cuda: on a machine with a GPU and a CUDA build)")
    ap.add_argument("--lengths", default="1k,2k,4k,8k,16k")
    ap.add_argument("--ppl-length", default="16k")
    ap.add_argument("--ppl-docs", type=int, default=4)
    ap.add_argument("--no-niah", action="store_true", help="table: perplexity only")
    ap.add_argument("--cache", default="", help="keep each finished run in DIR and reuse it "
                    "(an interrupted table resumes where it stopped)")
    ap.add_argument("--models", default="", help="only these models (comma-separated)")
    ap.add_argument("--dir", default="",
                    help="the checkpoints under DIR/NAME instead of sample-models/ (a training "
                         "call's .train-state/callN, before installing it)")
    ap.add_argument("--settings", default="", help="table: only these NIAH settings "
                    "(direct,log,swla,swla+log,ropewin,ropewin+log)")
    ap.add_argument("--cached-only", action="store_true",
                    help="with --cache: print what is there, run nothing")
    ap.add_argument("--heldout", default="/tmp/heldout.txt",
                    help="held-out prose (written by data.py: python3 data.py heldout FILE)")
    a = ap.parse_args()
    global CACHE, CACHED_ONLY, ONLY, DEVICE, SM
    DEVICE = a.device
    if a.dir:
        SM = os.path.abspath(a.dir)
        if not models():
            sys.exit(f"--dir {a.dir}: none of the family's checkpoints (NAME/model.safetensors) is there")
    if a.jobs <= 0:
        a.jobs = 4 if DEVICE == "cuda" else (os.cpu_count() or 1)
    ONLY = set(a.models.split(",")) if a.models else None
    CACHED_ONLY = a.cached_only and bool(a.cache)
    if a.cache:
        os.makedirs(a.cache, exist_ok=True)
        CACHE = a.cache
    if not os.path.exists(BIN):
        sys.exit(f"{BIN}: not built; run make first")
    if a.what == "bar":
        cmd_bar(a)
    else:
        if not os.path.exists(a.heldout):
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            import data
            with open(a.heldout, "wb") as f:
                f.write(data.Assets(os.path.join(ROOT, "assets")).heldout())
        cmd_table(a)


if __name__ == "__main__":
    main()
