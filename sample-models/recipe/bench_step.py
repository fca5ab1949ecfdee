"""How long one training step of each family member takes alone on the GPU, and what the
gla/gdn chunk cores cost, so the family's device time is planned from numbers.

    python3 bench_step.py [--assets ../../assets] [--batch 32] [--reps 20]

Each member: the step train.py runs (bf16 autocast forward, weighted loss, backward, clip,
fused AdamW), captured as a CUDA graph, replayed --reps times. Each core: forward + backward
at the training shape [batch, ROW, heads, 40], fp32.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import family  # noqa: E402
import model as M  # noqa: E402


def timed(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t = time.time()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    return (time.time() - t) / reps * 1e3


def member_ms(name, layout, assets, batch, reps, dev, compile_mode="off"):
    cfg = family.make_config(layout)
    model = M.HybridLM(cfg).to(dev)
    model.init_weights(1)
    fwd = torch.compile(model, dynamic=False) if compile_mode == "model" else model
    if compile_mode == "layers":
        M.compile_layers(model)
    opt = torch.optim.AdamW(model.parameters(), lr=torch.tensor(1e-3, device=dev), fused=True,
                            capturable=True)
    mix = data.Mixture(assets, cfg["train_context"], 1, p_copy=0.15)
    rows = [mix.sample() for _ in range(batch)]
    toks = torch.tensor([r[0] for r in rows], device=dev)
    w = torch.tensor([r[1] for r in rows], device=dev)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
            logits = fwd(toks[:, :-1], fast=True)
        ce = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), toks[:, 1:].reshape(-1),
                             reduction="none")
        loss = (ce * w[:, 1:].reshape(-1)).sum() / w[:, 1:].sum()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            step()
    torch.cuda.current_stream().wait_stream(side)
    eager = timed(lambda: (opt.zero_grad(set_to_none=True), step()), max(3, reps // 4))
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        step()
    graph = timed(g.replay, reps)
    mem = torch.cuda.max_memory_allocated() / 2**30
    torch.cuda.reset_peak_memory_stats()
    return eager, graph, mem


def core_ms(fn, shapes, reps, dev):
    gen = torch.Generator(device="cpu").manual_seed(0)
    ins = []
    for kind, sh in shapes:
        x = torch.randn(*sh, generator=gen)
        if kind == "gate":
            x = F.logsigmoid(x * 4) / 16
        elif kind == "alpha":
            x = -F.softplus(x)
        elif kind == "beta":
            x = torch.sigmoid(x)
        elif kind == "unit":
            x = x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True))
        ins.append(x.to(dev).requires_grad_(True))
    dout = None

    def run():
        nonlocal dout
        o = fn(*ins)
        if dout is None:
            dout = torch.randn_like(o)
        torch.autograd.grad(o, ins, dout)
    return timed(run, reps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--assets", default=os.path.join(os.path.dirname(__file__), "..", "..", "assets"))
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--members", default="", help="comma-separated names (default: all)")
    ap.add_argument("--cores-only", action="store_true")
    ap.add_argument("--compile", default="off",
                    help="comma-separated step variants: off, core (torch.compile'd gla/gdn cores), "
                         "model (the whole model compiled), layers (each decoder layer compiled)")
    a = ap.parse_args()
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    print(f"device {torch.cuda.get_device_name(0)}, torch {torch.__version__}, batch {a.batch}")
    B, T, H, d = a.batch, family.L0 + 31, family.HEADS, family.HEAD_DIM
    qkv = [("x", (B, T, H, d))] * 3
    cores = [
        ("gla chunk 16, loop scan", lambda q, k, v, g: M.gla_chunked(q, k, v, g, 16, "loop"),
         qkv + [("gate", (B, T, H, d))]),
        ("gla chunk 16, doubling scan (training default)", lambda q, k, v, g: M.gla_chunked(q, k, v, g, 16, "doubling"),
         qkv + [("gate", (B, T, H, d))]),
        ("gla chunk 8, doubling scan", lambda q, k, v, g: M.gla_chunked(q, k, v, g, 8, "doubling"),
         qkv + [("gate", (B, T, H, d))]),
        ("gla chunk 8, loop scan", lambda q, k, v, g: M.gla_chunked(q, k, v, g, 8, "loop"), qkv + [("gate", (B, T, H, d))]),
        ("gla chunk 32 factored (overflows; cost floor)", lambda q, k, v, g: M.gla_chunked_factored(q, k, v, g, 32),
         qkv + [("gate", (B, T, H, d))]),
        ("gdn chunk 64", M.gdn_chunked, [("x", (B, T, H, d)), ("unit", (B, T, H, d)), ("x", (B, T, H, d)),
                                          ("alpha", (B, T, H)), ("beta", (B, T, H))]),
        ("gla chunk 16, doubling, torch.compile", torch.compile(
            lambda q, k, v, g: M.gla_chunked(q, k, v, g, 16, "doubling"), fullgraph=True, dynamic=False),
         qkv + [("gate", (B, T, H, d))]),
        ("gdn chunk 64, torch.compile", torch.compile(M.gdn_chunked, fullgraph=True, dynamic=False),
         [("x", (B, T, H, d)), ("unit", (B, T, H, d)), ("x", (B, T, H, d)), ("alpha", (B, T, H)), ("beta", (B, T, H))]),
        ("sdpa causal (reference)", lambda q, k, v: F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True), qkv),
    ]
    for name, fn, shapes in cores:
        try:
            print(f"core  {name:48s} {core_ms(fn, shapes, a.reps, dev):8.2f} ms fwd+bwd", flush=True)
        except Exception as e:
            print(f"core  {name:48s} failed: {type(e).__name__}: {str(e)[:100]}", flush=True)
    if a.cores_only:
        return
    assets = data.Assets(a.assets)
    names = a.members.split(",") if a.members else list(family.FAMILY)
    for mode in a.compile.split(","):
        if mode == "core":
            M.enable_compile()
        total_e = total_g = 0.0
        for n in names:
            t0 = time.time()
            try:
                e, g, mem = member_ms(n, family.FAMILY[n], assets, a.batch, a.reps, dev, mode)
            except Exception as ex:
                print(f"step  {mode:5s} {n:18s} failed: {type(ex).__name__}: {str(ex)[:100]}", flush=True)
                continue
            total_e += e
            total_g += g
            print(f"step  {mode:5s} {n:18s} eager {e:7.2f} ms  graph {g:7.2f} ms  peak {mem:5.2f} GiB"
                  f"  ({time.time() - t0:.0f} s with compile)", flush=True)
        print(f"step  {mode:5s} family sum        eager {total_e:7.2f} ms  graph {total_g:7.2f} ms", flush=True)
        M.disable_compile()


if __name__ == "__main__":
    main()
