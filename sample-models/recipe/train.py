"""Trains one model of the family and exports it.

    python3 train.py --name gla-nope-lh --layout lh:gla:3:1 --seed 1 --steps 1500 \
        --assets ../../assets --out OUTDIR

Writes OUTDIR/NAME/{config.json, model.safetensors} (the checkpoint, spec sections 1-3),
OUTDIR/NAME.log (loss every --log-every steps), OUTDIR/NAME.eval.json (in-PyTorch NIAH at L0,
a quick check; the shipped numbers come from `hybridscope niah`) and OUTDIR/NAME.ckpt.pt
(fp32 state, written every --ckpt-every steps and at the end).
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import family  # noqa: E402
from export import export_model, read_safetensors  # noqa: E402
import model as model_mod  # noqa: E402
from model import HybridLM  # noqa: E402


def lr_at(step, steps, peak, warmup, floor, rewarm=0, rewarm_step=0):
    """Linear warmup, then cosine from peak to floor x peak over `steps`; with rewarm, the first
    `rewarm` steps of a run that starts at phase step rewarm_step (a phase continued with a fresh
    optimizer) ramp up to that curve as well."""
    lr = _lr_curve(step, steps, peak, warmup, floor)
    if rewarm and step - rewarm_step < rewarm:
        lr *= (step - rewarm_step + 1) / rewarm
    return lr


def _lr_curve(step, steps, peak, warmup, floor):
    if step < warmup:
        return peak * (step + 1) / warmup
    p = (step - warmup) / max(1, steps - warmup)
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * min(1.0, p))))


@torch.no_grad()
def niah_eval(model, assets, L0, dev, per_task=30, tasks=(data.SK1, data.SK2, data.SK3)):
    """Greedy decoding on L0-token prompts at 10 depths x per_task/10 seeds per task (fast path;
    the layers' plain forward where --compile layers compiled them)."""
    with model_mod.layers_eager(model):
        return _niah_eval(model, assets, L0, dev, per_task, tasks)


def _niah_eval(model, assets, L0, dev, per_task, tasks):
    model.eval()
    out = {}
    for task in tasks:
        samples = [data.needle_sample(assets, task, L0, d, 1000 + r)
                   for d in [i * 100.0 / 9 for i in range(10)] for r in range(per_task // 10)]
        vlen = max(len(s["value"]) for s in samples)
        toks = torch.tensor([[data.BOS] + list(s["text"]) for s in samples], device=dev)
        gen = []
        for _ in range(vlen + 8):
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=dev.type == "cuda"):
                logits = model(toks, fast=True)[:, -1].float()
            nxt = logits.argmax(-1)
            gen.append(nxt)
            toks = torch.cat([toks, nxt[:, None]], 1)
        gen = torch.stack(gen, 1).tolist()
        ok = 0
        for s, g in zip(samples, gen):
            if data.EOS in g:
                g = g[:g.index(data.EOS)]
            text = bytes(t for t in g if t < 256).decode("latin-1")
            ok += s["value"] in text
        out[data.TASK_NAMES[task]] = ok / len(samples)
    model.train()
    return out


def phases_through(tb):
    """The phases of a "training" block: its earlier ones and itself, for the next phase (with
    the settings that differ between calls: mixture, pace, how it started, the device call)."""
    ph = {k: tb[k] for k in ("steps", "steps_planned", "lr", "warmup", "schedule", "wall_seconds", "pace",
                             "phase_steps", "phase_start", "rewarm",
                             "init", "device_call", "qk_norm_cap", "qk_bilinear_cap") if k in tb}
    ph.update({k: tb["data"][k] for k in ("p_needle", "p_copy", "p_kv") if k in tb.get("data", {})})
    return tb.get("earlier_phases", []) + [ph]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--layout", required=True, help="layout spec, see family.py")
    ap.add_argument("--seed", type=int, default=1, help="weight init seed")
    ap.add_argument("--data-seed", type=int, default=1234, help="shared by the whole family")
    ap.add_argument("--data-by-step", type=int, default=1,
                    help="1: the rows of global step k come from a generator seeded by (data seed, "
                         "k), the same however the run is cut into phases; 0: one stream a phase, "
                         "seeded by the data seed and the steps before it (models up to session 18)")
    ap.add_argument("--steps", type=int, required=True,
                    help="steps of this phase; with --deadline the most it takes (the deadline may allow fewer)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--phase-steps", type=int, default=0,
                    help="this run is part of a phase of N steps (the lr follows that phase's curve; "
                         "0: the phase is this run)")
    ap.add_argument("--phase-start", type=int, default=0,
                    help="with --phase-steps: the phase step this run starts at")
    ap.add_argument("--expect-step", type=int, default=-1,
                    help="stop with an error unless the run starts at this global step (what the "
                         "weights it continues have done): a schedule's parts must line up")
    ap.add_argument("--rewarm", type=int, default=0,
                    help="ramp the lr up over the first N steps of this run (a phase continued "
                         "with a fresh AdamW)")
    ap.add_argument("--lr-floor", type=float, default=0.1)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--qk-norm-cap", type=float, default=0.0,
                    help="after every step, scale each q/k projection weight whose Frobenius norm "
                         "exceeds this back to it (0: off). A cap above the norms a member reaches "
                         "leaves its run unchanged; nope-full's attention logits grew without bound "
                         "(sample-models/HISTORY.md, session 16)")
    ap.add_argument("--qk-bilinear-cap", type=float, default=0.0,
                    help="after every step, scale the query weights of each softmax head whose "
                         "logit form (Wq_h G)^T (Wk_h G), G the layer's attn_norm gain, has a "
                         "Frobenius norm above this back to it (0: off); it bounds the head's "
                         "logits by 25 x the cap at hidden 160 / head dim 40. Under --qk-norm-cap "
                         "alone nope-full grew its gains to 5 and its logit forms to rank one "
                         "with norm 2300, logits to 5e4 (session 18); every other member's is "
                         "at most 17")
    ap.add_argument("--p-needle", type=float, default=0.6)
    ap.add_argument("--answer-weight", type=float, default=5.0)
    ap.add_argument("--p-copy", type=float, default=0.0,
                    help="share of rows that are copy drills (see data.Mixture.copy_row)")
    ap.add_argument("--p-kv", type=float, default=0.0,
                    help="share of rows that are dense key-value recall groups in the needle's "
                         "sentences (see data.Mixture.kv_row), drawn before copy rows")
    ap.add_argument("--copy-lengths", default="8,480",
                    help="LO,HI: copy-drill string lengths, log-uniform (see data.Mixture.copy_row)")
    ap.add_argument("--copy-alphabet", default=data.COPY_ALPHABET,
                    help="the characters of copy-drill strings, at least two of [0-9a-z] (default all 36); "
                         "a small one (01) makes a one-character look-back fail on the drills")
    ap.add_argument("--assets", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--time-limit", type=float, default=0, help="seconds; stop early (recorded)")
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--ckpt-every", type=int, default=500)
    ap.add_argument("--eval-per-task", type=int, default=30,
                    help="final torch NIAH prompts per task (10 depths x N/10 seeds; >= 10)")
    ap.add_argument("--stop-when-retrieves", type=int, default=0,
                    help="N > 0: stop once N quick SK1 checks in a row (--eval-every) score >= 0.9; "
                         "for a member trained alone to find the step count the rest must match")
    ap.add_argument("--eval-every", type=int, default=0,
                    help="steps between quick SK1 checks (10 prompts at L0) in the log; 0: none")
    ap.add_argument("--cuda-graph", type=int, default=1,
                    help="capture the whole training step (forward, backward, clip, AdamW) as "
                         "one CUDA graph: these models are launch-bound; 0: eager")
    ap.add_argument("--resume-dir", default="",
                    help="continue from DIR/NAME.ckpt.pt (model, optimizer, step) for --steps "
                         "more steps with a fresh warmup + cosine schedule (a warm restart)")
    ap.add_argument("--init-from", default="",
                    help="continue from the exported checkpoint DIR/NAME (bf16 weights, no "
                         "optimizer state) with a fresh warmup + cosine schedule; a member "
                         "with no DIR/NAME starts from scratch")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--fla", choices=("auto", "off"), default="off",
                    help="auto: flash-linear-attention's chunk kernels for gla/gdn when importable "
                         "and within --fla-tol of the PyTorch chunks (model.fla_check). Off by "
                         "default: fla 0.6.0 refuses the device's Triton on Hopper (wrong gated "
                         "backward), after minutes of compiling")
    ap.add_argument("--fla-tol", type=float, default=2e-2)
    ap.add_argument("--compile", choices=("off", "core", "model", "layers"), default="off",
                    help="core: torch.compile the gla/gdn chunk cores; model: the whole model; "
                         "layers: each decoder layer, layers of one structure sharing one graph "
                         "(the same kernels as model but for fusion across layer boundaries, a "
                         "fraction of the compile time; bench_step.py measures what each saves)")
    ap.add_argument("--compile-cache", default="",
                    help="with --compile: DIR/NAME.bin holds this member's compiled kernels "
                         "(torch.compiler's cache artifacts): loaded before compiling when "
                         "present, written once the compiled step has run, so a later call "
                         "(another session's machine of the same kind) skips most compiling")
    ap.add_argument("--deadline", type=float, default=0,
                    help="epoch seconds: the whole family must finish training by then; the "
                         "step count is then set once, identically for all, after --probe-steps")
    ap.add_argument("--pace", choices=("family", "own"), default="family",
                    help="with --deadline: family: every member runs the step count of the slowest "
                         "(comparable runs); own: each member runs as many steps as its own step time "
                         "allows by the deadline (the fast softmax members otherwise idle for half "
                         "the call)")
    ap.add_argument("--sync-dir", default="", help="with --deadline: where members report timing")
    ap.add_argument("--family-size", type=int, default=1)
    ap.add_argument("--ready-wait", type=float, default=300,
                    help="with --deadline: seconds to wait for every member to be stepping before the timing probe")
    ap.add_argument("--probe-steps", type=int, default=30)
    ap.add_argument("--reserve", type=float, default=40, help="seconds kept for eval and export")
    a = ap.parse_args()
    for flag, v in (("--p-needle", a.p_needle), ("--p-copy", a.p_copy), ("--p-kv", a.p_kv)):
        if not 0.0 <= v <= 1.0:
            raise SystemExit(f"{flag}: a share of rows in [0, 1], got {v}")
    if a.qk_bilinear_cap < 0:
        raise SystemExit(f"--qk-bilinear-cap: 0 (off) or a positive norm, got {a.qk_bilinear_cap}")
    if a.qk_norm_cap < 0:
        raise SystemExit(f"--qk-norm-cap: 0 (off) or a positive norm, got {a.qk_norm_cap}")
    if a.stop_when_retrieves < 0 or (a.stop_when_retrieves and a.eval_every <= 0):
        raise SystemExit("--stop-when-retrieves N: N >= 0, and N > 0 needs --eval-every")
    if a.phase_steps < 0 or a.phase_start < 0 or a.rewarm < 0 or (a.phase_start and not a.phase_steps) \
            or (a.phase_steps and a.phase_start >= a.phase_steps):
        raise SystemExit("--phase-steps N --phase-start K: 0 <= K < N (K only with N); --rewarm >= 0")
    if a.eval_per_task < 10:
        raise SystemExit(f"--eval-per-task: at least 10 (10 depths x N/10 seeds), got {a.eval_per_task}")
    try:
        lo, hi = (int(x) for x in a.copy_lengths.split(","))
        if not 1 <= lo <= hi:
            raise ValueError
    except ValueError:
        raise SystemExit(f"--copy-lengths: expected LO,HI with 1 <= LO <= HI, got {a.copy_lengths!r}")
    if len(set(a.copy_alphabet)) < 2 or any(c not in data.COPY_ALPHABET for c in a.copy_alphabet):
        raise SystemExit(f"--copy-alphabet: expected two or more of [0-9a-z], got {a.copy_alphabet!r}")

    t_start = time.time()
    torch.manual_seed(a.seed)
    dev = torch.device(a.device)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    cfg = family.make_config(a.layout)
    model = HybridLM(cfg)
    model.init_weights(a.seed)
    model.to(dev)
    n_params = sum(p.numel() for p in model.parameters())
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "conv1d" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "conv1d" not in n)]
    use_graph = bool(a.cuda_graph) and dev.type == "cuda"
    # a captured optimizer step reads lr from device memory: a tensor lr, capturable state
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=torch.tensor(a.lr, device=dev) if use_graph else a.lr,
                            betas=(0.9, 0.95), eps=1e-8,
                            fused=dev.type == "cuda", capturable=use_graph)
    phases = []          # earlier training phases when resuming
    step0 = 0
    init_how = "from scratch"
    src = os.path.join(a.init_from, a.name) if a.init_from else ""
    if src and os.path.exists(os.path.join(src, "model.safetensors")):
        with open(os.path.join(src, "config.json")) as f:
            prev = json.load(f)["training"]
        sd = read_safetensors(os.path.join(src, "model.safetensors"))
        missing, unexpected = model.load_state_dict(sd, strict=False)
        if unexpected or [k for k in missing if k != "lm_head.weight"]:
            raise SystemExit(f"{src}: tensors missing {missing} / unexpected {unexpected}")
        step0 = prev.get("total_steps", prev["steps"])
        phases = phases_through(prev)
        init_how = "--init-from the previous phase's weights (fresh AdamW)"
    if a.resume_dir:
        ck = torch.load(os.path.join(a.resume_dir, a.name + ".ckpt.pt"), map_location=dev,
                        weights_only=False)
        model.load_state_dict(ck["model"])
        if "optimizer" in ck:
            opt.load_state_dict(ck["optimizer"])
        step0 = ck["step"]
        phases = phases_through(ck["training"])
        init_how = "--resume-dir: the previous phase's weights and AdamW state"
    if a.expect_step >= 0 and step0 != a.expect_step:
        raise SystemExit(f"--expect-step {a.expect_step}: the weights continued here have done {step0} steps")
    assets = data.Assets(a.assets)
    # with --data-by-step 0 a resumed phase draws one fresh stream (seed offset by the steps done)
    data_seed = a.data_seed if a.data_by_step else a.data_seed + 7919 * step0
    mixture = data.Mixture(assets, cfg["train_context"], data_seed,
                           p_needle=a.p_needle, p_copy=a.p_copy, p_kv=a.p_kv,
                           copy_lengths=tuple(int(x) for x in a.copy_lengths.split(",")),
                           copy_alphabet=a.copy_alphabet, answer_weight=a.answer_weight)
    os.makedirs(a.out, exist_ok=True)
    log = open(os.path.join(a.out, a.name + ".log"), "a")

    def say(msg):
        line = f"[{a.name} {time.time() - t_start:7.1f}s] {msg}"
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    la_kernels = "torch chunks (model.gla_chunked / gdn_chunked)"
    if dev.type == "cuda" and a.fla == "auto" and any(
            m.type in ("gla", "gdn") for layer in model.model.layers for m in layer.mixers()):
        try:
            ver = model_mod.enable_fla()
            err = model_mod.fla_check(dev)
            if max(err.values()) <= a.fla_tol:
                la_kernels = f"fla {ver} chunk_gla / chunk_gated_delta_rule (check vs torch chunks: {err})"
            else:
                model_mod.disable_fla()
                la_kernels += f"; fla {ver} rejected, check {err} > {a.fla_tol}"
        except Exception as e:       # no wheels, no triton, a kernel that fails: train as before
            model_mod.disable_fla()
            la_kernels += f"; fla unavailable ({type(e).__name__}: {str(e)[:120]})"
    fwd = model
    cache_file = os.path.join(a.compile_cache, a.name + ".bin") if a.compile_cache and a.compile != "off" else ""
    if cache_file and os.path.exists(cache_file):
        say(f"compile cache: {load_compile_cache(cache_file)}")
    if dev.type == "cuda" and a.compile == "core" and model_mod.FLA is None:
        model_mod.enable_compile()
        la_kernels += ", torch.compile'd"
    elif dev.type == "cuda" and a.compile == "model":
        fwd = torch.compile(model, dynamic=False)
        la_kernels += ", the whole model torch.compile'd"
    elif dev.type == "cuda" and a.compile == "layers":
        model_mod.compile_layers(model)
        la_kernels += ", each layer torch.compile'd"
    say(f"gla/gdn kernels: {la_kernels}")
    say(f"layout {a.layout} params {n_params} steps {a.steps} batch {a.batch} "
        f"row {mixture.row} lr {a.lr}")

    def lr_now(k):
        """The lr of local step k: the phase's curve at its step phase_start + k (without
        --phase-steps the phase is this run and phase_start is 0)."""
        return lr_at(a.phase_start + k, a.phase_steps or a.steps, a.lr, a.warmup, a.lr_floor,
                     a.rewarm, a.phase_start)

    def batch(k):
        """The rows of local step k (global step step0 + k)."""
        if a.data_by_step:
            mixture.at_step(step0 + k)
        rows = [mixture.sample() for _ in range(a.batch)]
        t = torch.tensor([r[0] for r in rows], dtype=torch.long)
        w = torch.tensor([r[1] for r in rows], dtype=torch.float32)
        w[:, 1:][t[:, 1:] == data.BOS] = 0.0       # never predict a document's BOS
        if dev.type == "cuda":
            t, w = t.pin_memory(), w.pin_memory()
        return t.to(dev, non_blocking=True), w.to(dev, non_blocking=True)

    def training_block(steps_done, wall):
        return {
            "recipe": "sample-models/recipe/train.py",
            "layout": a.layout, "seed": a.seed, "data_seed": data_seed, "data_by_step": a.data_by_step,
            "steps": steps_done, "steps_planned": a.steps, "batch_rows": a.batch,
            "total_steps": step0 + steps_done, "earlier_phases": phases,
            "cuda_graph": use_graph, "gla_gdn_kernels": la_kernels,
            "tokens_per_step": a.batch * mixture.row, "optimizer": "AdamW(0.9, 0.95, eps 1e-8)",
            "lr": a.lr, "warmup": a.warmup, "schedule": f"cosine to {a.lr_floor} x lr", "pace": a.pace,
            **({"phase_steps": a.phase_steps, "phase_start": a.phase_start} if a.phase_steps else {}),
            **({"rewarm": a.rewarm} if a.rewarm else {}),
            "weight_decay": a.weight_decay, "grad_clip": 1.0,
            **({"qk_norm_cap": a.qk_norm_cap} if a.qk_norm_cap > 0 else {}),
            **({"qk_bilinear_cap": a.qk_bilinear_cap} if a.qk_bilinear_cap > 0 else {}),
            "precision": "bf16 autocast for projections and SDPA; fp32 norms, gla/gdn recurrences, loss",
            "data": mixture.settings(), "train_context": cfg["train_context"],
            "params": n_params, "wall_seconds": round(wall, 1), "init": init_how,
            **({"device_call": int(os.environ["HS_DEVICE_CALL"])} if os.environ.get("HS_DEVICE_CALL") else {}),
            "device": torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu",
            "torch": torch.__version__,
        }

    def save_ckpt(steps_done):
        tmp = os.path.join(a.out, a.name + ".ckpt.pt.tmp")
        tb = training_block(steps_done, time.time() - t_start)
        torch.save({"config": cfg, "model": model.state_dict(), "optimizer": opt.state_dict(),
                    "step": step0 + steps_done, "training": tb}, tmp)
        os.replace(tmp, os.path.join(a.out, a.name + ".ckpt.pt"))

    def wait_for_family(suffix, limit):
        """Barrier on files NAME.suffix in the sync dir (crashed members leave NAME.failed)."""
        t0 = time.time()
        while True:
            files = os.listdir(a.sync_dir)
            n = sum(f.endswith(suffix) for f in files) + sum(f.endswith(".failed") for f in files)
            if n >= a.family_size or time.time() - t0 > limit:
                return [f for f in files if f.endswith(suffix)]
            time.sleep(0.2)

    def measure_overhead():
        """Seconds a step of the quick evals and checkpoints adds, from one of each timed now
        (members still compiling may slow them: an overestimate only shortens the part). The
        evaluation runs twice and the second is timed: the first may compile its shapes."""
        t_eval = 0.0
        for _ in range(2 if a.eval_every else 0):
            if dev.type == "cuda":
                torch.cuda.synchronize()
            t = time.time()
            niah_eval(model, assets, cfg["train_context"], dev, 10, (data.SK1,))
            t_eval = time.time() - t
        t = time.time()
        save_ckpt(step)
        t_ckpt = time.time() - t
        return (t_eval / a.eval_every if a.eval_every else 0.0) + t_ckpt / a.ckpt_every

    def family_ready():
        """Barrier before the timing probe: members start seconds apart (imports, model build,
        graph capture), and a probe taken while some are not yet stepping measured a third of
        the step time of the full family (0.30 s against ~1 s for the gla members in a
        session-3 call, which then stopped at the deadline after 789-1032 of 1335 steps)."""
        os.makedirs(a.sync_dir, exist_ok=True)
        open(os.path.join(a.sync_dir, a.name + ".ready"), "w").close()
        # members compile first (fla's autotuning, --compile's Inductor): the probe must not
        # start before the slowest is stepping, or it times a lighter GPU and the agreed steps
        # overrun the deadline (members then stop at different counts)
        wait_for_family(".ready", a.ready_wait)

    def agree_on_steps():
        """Barrier: every member reports its step time; all compute the same step count from
        the slowest member, the last arrival time and the shared deadline."""
        os.makedirs(a.sync_dir, exist_ok=True)
        with open(os.path.join(a.sync_dir, a.name + ".tmp"), "w") as f:
            f.write(f"{step_time} {time.time()} {overhead}\n")
        os.replace(os.path.join(a.sync_dir, a.name + ".tmp"), os.path.join(a.sync_dir, a.name + ".txt"))
        names = wait_for_family(".txt", 60)
        rows = []
        for n in sorted(names):
            with open(os.path.join(a.sync_dir, n)) as f:
                rows.append([float(x) for x in f.read().split()])
        # a member's pace is its step plus its share of the quick evals and checkpoints (call 43:
        # gdn-nope-lh stepped at 0.045 s but made 0.060 s a step with them and stopped 139 steps
        # short of the agreed count, out of step with the family for the next call)
        slowest = max(r[0] + (r[2] if len(r) > 2 else 0.0) for r in rows)
        last = max(r[1] for r in rows)
        # --steps caps what the deadline allows: a phase of a fixed length (members trained in
        # separate calls take the same steps; train_family.sh's own --steps is 1000000)
        own = a.pace == "own"
        n = a.probe_steps + int((a.deadline - a.reserve - last) /
                                ((step_time + overhead if own else slowest) * 1.15))
        cap = f" (capped by --steps {a.steps}; the deadline allowed {n})" if n > a.steps else ""
        n = max(min(n, a.steps), a.probe_steps)
        if own:
            say(f"family timing: {len(rows)} members, own step {step_time + overhead:.3f}s (slowest {slowest:.3f}s) "
                f"-> {n} steps (own pace){cap}")
        else:
            say(f"family timing: {len(rows)} members, slowest step {slowest:.3f}s with evaluations and checkpoints (this member's "
                f"share {overhead:.3f}s) -> {n} steps{cap}")
        return n

    model.train()

    def set_lr(value):
        for g in opt.param_groups:
            if torch.is_tensor(g["lr"]):
                g["lr"].fill_(value)
            else:
                g["lr"] = value

    qk_weights = [p for n, p in model.named_parameters()
                  if n.endswith(("q_proj.weight", "k_proj.weight"))] if a.qk_norm_cap > 0 else []
    bilinear = model_mod.softmax_logit_forms(model) if a.qk_bilinear_cap > 0 else []

    @torch.no_grad()
    def cap_qk_norms():
        # on the device, no host sync: the step stays capturable as a CUDA graph
        for p in qk_weights:
            p.mul_(torch.clamp(a.qk_norm_cap / p.norm(), max=1.0))
        if bilinear:
            model_mod.cap_logit_forms(bilinear, a.qk_bilinear_cap)

    def train_step(toks, w):
        # autocast's weight cache must be off under graph capture
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda",
                            cache_enabled=False):
            logits = fwd(toks[:, :-1], fast=True)
        ce = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                             toks[:, 1:].reshape(-1), reduction="none")
        wt = w[:, 1:].reshape(-1)
        loss = (ce * wt).sum() / wt.sum()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if qk_weights or bilinear:
            cap_qk_norms()
        return loss.detach()

    graph = None
    static_toks = static_w = static_loss = None
    step = 0
    acc_loss, acc_n = torch.zeros((), device=dev), 0

    quick_hits = 0

    def after_step():
        nonlocal acc_loss, acc_n, quick_hits
        if (step + 1) % a.log_every == 0 or step == 0:
            l = (acc_loss / acc_n).item()
            if not math.isfinite(l):
                say(f"step {step + 1}: loss is {l}; stopping")
                raise SystemExit(1)
            say(f"step {step + 1} loss {l:.4f} lr {float(opt.param_groups[0]['lr']):.2e}")
            acc_loss, acc_n = torch.zeros((), device=dev), 0
        if a.eval_every and (step + 1) % a.eval_every == 0:
            ev = niah_eval(model, assets, cfg["train_context"], dev, 10, (data.SK1,))
            say(f"step {step + 1} quick SK1 at L0 (10 prompts): {ev['sk1']:.2f}")
            quick_hits = quick_hits + 1 if ev["sk1"] >= 0.9 else 0
        if (step + 1) % a.ckpt_every == 0:
            save_ckpt(step + 1)

    if use_graph:
        # warm-up steps on a side stream (real steps: they count), then capture one step
        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    set_lr(lr_now(step))
                    opt.zero_grad(set_to_none=True)
                    acc_loss += train_step(*batch(step))
                    acc_n += 1
                    after_step()
                    step += 1
            torch.cuda.current_stream().wait_stream(side)
            static_toks, static_w = batch(step)     # captured, not run: any rows do
            graph = torch.cuda.CUDAGraph()
            opt.zero_grad(set_to_none=True)
            with torch.cuda.graph(graph):
                static_loss = train_step(static_toks, static_w)
            say("training step captured as a CUDA graph")
        except Exception as e:      # eager is slower but equal: keep going
            torch.cuda.synchronize()
            graph = None
            use_graph = False
            say(f"CUDA graph capture failed ({type(e).__name__}: {str(e)[:300]}); training eagerly")
            if a.compile != "off":  # the compiled step may be what failed: the plain one is equal
                fwd = model
                model_mod.disable_compile()
                model_mod.uncompile_layers(model)
                la_kernels += f"; --compile {a.compile} failed, eager PyTorch"
                say(f"--compile {a.compile} dropped")
    nxt = batch(step)
    t_probe = None
    overhead = 0.0
    while step < a.steps:
        if cache_file and step == 10 + (3 if graph is not None else 0):
            say(f"compile cache: {save_compile_cache(cache_file)}")
        if a.deadline and step == 10 + (3 if graph is not None else 0):
            overhead = measure_overhead()
            family_ready()
            torch.cuda.synchronize() if dev.type == "cuda" else None
            t_probe = time.time()
        if a.deadline and step == a.probe_steps:
            torch.cuda.synchronize() if dev.type == "cuda" else None
            step_time = (time.time() - t_probe) / (a.probe_steps - 10 - (3 if graph is not None else 0))
            a.steps = agree_on_steps()
            if step >= a.steps:
                break
        set_lr(lr_now(step))
        if graph is not None:
            static_toks.copy_(nxt[0], non_blocking=True)
            static_w.copy_(nxt[1], non_blocking=True)
            graph.replay()
            loss = static_loss
        else:
            opt.zero_grad(set_to_none=True)
            loss = train_step(*nxt)
        nxt = batch(step + 1)               # built on the CPU while the GPU works
        acc_loss += loss
        acc_n += 1
        after_step()
        step += 1
        if a.stop_when_retrieves and quick_hits >= a.stop_when_retrieves:
            say(f"retrieves: {quick_hits} quick SK1 checks in a row >= 0.9; stopping after {step} steps")
            break
        if a.time_limit and time.time() - t_start > a.time_limit:
            say(f"time limit reached after {step} steps")
            break
        if a.deadline and time.time() > a.deadline - a.reserve / 2:
            say(f"deadline reached after {step} steps")
            break
    steps_done = step
    wall = time.time() - t_start
    save_ckpt(steps_done)
    tb = training_block(steps_done, wall)
    ev = niah_eval(model, assets, cfg["train_context"], dev, a.eval_per_task) if a.eval_per_task else {}
    tb["torch_niah_at_L0"] = ev
    export_model(model, cfg, tb, os.path.join(a.out, a.name))
    with open(os.path.join(a.out, a.name + ".eval.json"), "w") as f:
        json.dump({"name": a.name, "steps": steps_done, "wall": wall, "niah_L0": ev}, f)
    say(f"done: {steps_done} steps in {wall:.0f}s; torch NIAH at L0 {ev}")


def load_compile_cache(path):
    """torch.compiler's cache artifacts (Inductor, AOTAutograd, Triton, autotuning) from a
    file; a cache from another torch/GPU is ignored by its keys, a broken one reported."""
    try:
        with open(path, "rb") as f:
            blob = f.read()
        info = torch.compiler.load_cache_artifacts(blob)
        return f"loaded {len(blob)} bytes from {path}" + ("" if info else " (nothing usable)")
    except Exception as e:
        return f"not loaded ({type(e).__name__}: {str(e)[:160]})"


def save_compile_cache(path):
    try:
        art = torch.compiler.save_cache_artifacts()
        if not art:
            return "nothing to save"
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path + ".tmp", "wb") as f:
            f.write(art[0])
        os.replace(path + ".tmp", path)
        return f"saved {len(art[0])} bytes to {path}"
    except Exception as e:
        return f"not saved ({type(e).__name__}: {str(e)[:160]})"


def cli():
    try:
        main()
    except BaseException:
        # tell the family's barrier not to wait for this member
        if "--sync-dir" in sys.argv and "--name" in sys.argv:
            sd = sys.argv[sys.argv.index("--sync-dir") + 1]
            nm = sys.argv[sys.argv.index("--name") + 1]
            os.makedirs(sd, exist_ok=True)
            open(os.path.join(sd, nm + ".failed"), "w").close()
        raise


if __name__ == "__main__":
    cli()
