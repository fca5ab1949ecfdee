"""Checks that the training path equals the plain path, and the plain path the definitions.

    python3 selftest.py [--device cuda]

- chunked gla/gdn == step recurrence (float64, random inputs, strong and weak decays);
- fast model forward == plain model forward for every mixer type, LH and HH, GQA, conv;
- swla exact == the value-path sum over (t-W, t] (spec section 4's c_{t,s}, built here
  independently), and swla overlap == restart from max(0, (j+1)S - W);
- log_scale / rope_window / swa_window / ablate change what the spec says and nothing else;
- train.py --qk-bilinear-cap: the logit forms are what a head's logits are (checked against
  the logits of a forward), the cap bounds them and moves nothing else;
- with --compile (slow: Inductor compiles each model, ~1-3 min on a CPU): the torch.compile'd
  training paths (train.py --compile core|model) give the eager forward and gradients.
"""
import argparse
import json
import math
import os
import sys

import torch

from model import HybridLM, Knobs, gla_chunked, gla_chunked_factored, gdn_chunked, Mixer, mixer_defaults
from model import cap_logit_forms, logit_form_norms, softmax_logit_forms

torch.set_default_dtype(torch.float64)


def close(a, b, tol, what):
    err = (a - b).abs().max().item() / max(b.abs().max().item(), 1e-12)
    status = "ok" if err <= tol else "FAIL"
    print(f"{status:4s} {what}: rel err {err:.2e}")
    if err > tol:
        raise SystemExit(1)


def recurrent_core(typ, q, k, v, gk=None, la=None, beta=None):
    B, T, H, dk = q.shape
    S = q.new_zeros(B, H, dk, v.shape[-1])
    out = []
    for t in range(T):
        kt, vt = k[:, t], v[:, t]
        if typ == "gla":
            S = torch.exp(gk[:, t])[..., None] * S + kt[..., None] * vt[..., None, :]
        else:
            a, b = torch.exp(la[:, t])[..., None, None], beta[:, t][..., None, None]
            I = torch.eye(dk)
            S = a * ((I - b * kt[..., None] * kt[..., None, :]) @ S) + b * kt[..., None] * vt[..., None, :]
        out.append(torch.einsum("bhk,bhkv->bhv", q[:, t] / math.sqrt(dk), S))
    return torch.stack(out, 1)


def value_path_c(typ, q, k, gk=None, la=None, beta=None):
    """c_{t,s} [B,H,T,T] from spec section 4's closed form (for the swla check)."""
    B, T, H, dk = q.shape
    qs = q / math.sqrt(dk)
    c = q.new_zeros(B, H, T, T)
    if typ == "gla":
        G = gk.cumsum(1)
        for t in range(T):
            for s in range(t + 1):
                c[:, :, t, s] = (qs[:, t] * torch.exp(G[:, t] - G[:, s]) * k[:, s]).sum(-1)
        return c
    I = torch.eye(dk)
    for s in range(T):
        P = I.expand(B, H, dk, dk).clone()       # A_t ... A_{s+1}
        for t in range(s, T):
            if t > s:
                A = torch.exp(la[:, t])[..., None, None] * (I - beta[:, t][..., None, None]
                                                              * k[:, t][..., None] * k[:, t][..., None, :])
                P = A @ P
            c[:, :, t, s] = beta[:, s] * torch.einsum("bhi,bhij,bhj->bh", qs[:, t], P, k[:, s])
    return c


def test_cores(dev):
    g = torch.Generator().manual_seed(0)
    B, T, H, dk, dv = 2, 45, 3, 8, 6
    for strength in (0.05, 3.0):
        q, k, v = (torch.randn(B, T, H, n, generator=g) for n in (dk, dk, dv))
        gk = -torch.rand(B, T, H, dk, generator=g) * strength
        ref = recurrent_core("gla", q, k, v, gk=gk)
        close(gla_chunked(q, k, v, gk), ref, 1e-10, f"gla chunked vs recurrence (decay {strength})")
        close(gla_chunked(q, k, v, gk, chunk=8), ref, 1e-10, f"gla chunk 8 vs recurrence (decay {strength})")
        close(gla_chunked(q, k, v, gk, chunk=4), ref, 1e-10,
              f"gla chunk 4 vs recurrence (decay {strength})")
        close(gla_chunked(q, k, v, gk, scan="loop"), ref, 1e-10,
              f"gla chunked, loop scan vs recurrence (decay {strength})")
        close(gla_chunked_factored(q, k, v, gk), ref, 1e-10, f"gla factored chunk vs recurrence (decay {strength})")
        # the training precision: fp32, steps decaying by up to e^-3 each (no overflow)
        o32 = gla_chunked(q.float(), k.float(), v.float(), gk.float()).double()
        close(o32, ref, 1e-5, f"gla chunked fp32 (decay {strength})")
        kn = k / k.norm(dim=-1, keepdim=True)
        la = -torch.rand(B, T, H, generator=g) * strength
        beta = torch.rand(B, T, H, generator=g) * 2
        ref = recurrent_core("gdn", q, kn, v, la=la, beta=beta)
        close(gdn_chunked(q, kn, v, la, beta), ref, 1e-9, f"gdn chunked vs recurrence (decay {strength})")
        close(gdn_chunked(q, kn, v, la, beta, chunk=8), ref, 1e-9, f"gdn chunk 8 vs recurrence (decay {strength})")
    # gates that forget within a step (log decay -60 per step): the pairwise chunk stays
    # finite in fp32 where the factored one overflowed and trained to NaN
    gk = -60.0 - torch.rand(B, T, H, dk, generator=g)
    ref = recurrent_core("gla", q, k, v, gk=gk)
    o32 = gla_chunked(q.float(), k.float(), v.float(), gk.float()).double()
    close(o32, ref, 1e-5, "gla chunked fp32, log decay -60 per step")


def small_cfg(layers, d=24, hd=8):
    return {"model_type": "hybrid", "vocab_size": 258, "hidden_size": d, "intermediate_size": 40,
            "num_hidden_layers": len(layers), "head_dim": hd, "tie_word_embeddings": False,
            "train_context": 16, "layers": [{"mixers": m} for m in layers]}


def test_models(dev):
    layouts = [
        [[{"type": "gla", "num_heads": 2}], [{"type": "nope", "num_heads": 3, "num_kv_heads": 1}]],
        [[{"type": "gdn", "num_heads": 2, "allow_neg_eigval": True}, {"type": "nope", "num_heads": 1}]],
        [[{"type": "gla", "num_heads": 2, "use_short_conv": True}, {"type": "nope", "num_heads": 2}]],
        [[{"type": "swa", "num_heads": 2, "window": 5}, {"type": "nope", "num_heads": 2, "num_kv_heads": 1}]],
        [[{"type": "rope", "num_heads": 4, "num_kv_heads": 2}], [{"type": "gdn", "num_heads": 2}]],
    ]
    toks = torch.randint(0, 258, (2, 37), generator=torch.Generator().manual_seed(1))
    for n, lay in enumerate(layouts):
        m = HybridLM(small_cfg(lay))
        m.init_weights(n)
        with torch.no_grad():
            for p in m.parameters():          # larger weights so every path matters
                p.mul_(8.0 if p.dim() == 2 else 1.0)
            a = m(toks, fast=False)
            b = m(toks, fast=True)
        close(b, a, 1e-9, f"model {n}: fast vs plain forward")
        knobs = Knobs(log_scale=True, log_scale_L0=4, swa_window=3, rope_window=6,
                      ablate={(0, 0, 1)})
        with torch.no_grad():
            a = m(toks, knobs, fast=False)
            b = m(toks, knobs, fast=True)
        close(b, a, 1e-9, f"model {n}: fast vs plain forward with knobs")


def test_logit_cap(dev):
    layers = [[{"type": "nope", "num_heads": 3, "num_kv_heads": 1}],
              [{"type": "rope", "num_heads": 2}, {"type": "nope", "num_heads": 2}],
              [{"type": "gla", "num_heads": 2}, {"type": "nope", "num_heads": 2}],
              [{"type": "swa", "num_heads": 4, "num_kv_heads": 2, "window": 5}]]
    m = HybridLM(small_cfg(layers))
    m.init_weights(3)
    g = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for layer in m.model.layers:
            layer.attn_norm.weight.copy_(0.5 + 2 * torch.rand(layer.attn_norm.weight.shape, generator=g))
        m.model.layers[0].attn.q_proj.weight.mul_(6.0)
        m.model.layers[3].attn.k_proj.weight.mul_(4.0)
    forms = softmax_logit_forms(m)
    if len(forms) != 5:
        raise SystemExit(f"FAIL logit forms: {len(forms)} softmax mixers, expected 5")
    d = m.model.layers[0].attn_norm.weight.shape[0]
    # the forms, built head by head (a query head h reads key head h // (H / Hkv))
    before = []
    for mx, gain in forms:
        ref = []
        for h in range(mx.H):
            kh = h // (mx.H // mx.Hkv)
            Wq = mx.q_proj.weight[h * mx.dk:(h + 1) * mx.dk] * gain
            Wk = mx.k_proj.weight[kh * mx.dk:(kh + 1) * mx.dk] * gain
            ref.append((Wq.T @ Wk).norm().detach())
        close(logit_form_norms(mx, gain).detach(), torch.stack(ref).detach(), 1e-12, "logit form norms")
        before.append(ref)
    # |logit| <= hidden / sqrt(dk) x |M_h| on a forward's own q and k
    toks = torch.randint(0, 258, (1, 23), generator=g)
    cap_ = {}
    with torch.no_grad():
        m(toks, fast=False, capture=cap_)
    for i, (mx, gain) in enumerate(forms):
        key = next(k for k, (p, _) in cap_.items() if m.model.layers[k[0]].mixers()[k[1]] is mx)
        q, k = cap_[key][0]["q"][0], cap_[key][0]["k"][0]
        k = k.repeat_interleave(mx.H // mx.Hkv, dim=1)
        z = torch.einsum("thd,shd->hts", q, k).abs().amax((1, 2)) / math.sqrt(mx.dk)
        bound = torch.stack(before[i]) * d / math.sqrt(mx.dk)
        if (z > bound * (1 + 1e-9)).any():
            raise SystemExit(f"FAIL logit bound: mixer {i}: {z.tolist()} > {bound.tolist()}")
    norms = sorted(float(x) for r in before for x in r)
    cap = (norms[-4] + norms[-3]) / 2      # three heads above it, the others below
    saved = {n: p.detach().clone() for n, p in m.named_parameters()}
    cap_logit_forms(forms, cap)
    for i, (mx, gain) in enumerate(forms):
        after = logit_form_norms(mx, gain)
        for h in range(mx.H):
            b = float(before[i][h])
            want = min(b, cap)
            if abs(float(after[h]) - want) > 1e-12 * max(want, 1.0):
                raise SystemExit(f"FAIL logit cap: mixer {i} head {h}: {float(after[h])} (was {b}, cap {cap})")
            wq_h = mx.q_proj.weight[h * mx.dk:(h + 1) * mx.dk]
            name = next(n for n, p in m.named_parameters() if p is mx.q_proj.weight)
            if b <= cap and not torch.equal(wq_h, saved[name][h * mx.dk:(h + 1) * mx.dk]):
                raise SystemExit(f"FAIL logit cap: mixer {i} head {h} below the cap was changed")
    moved = [n for n, p in m.named_parameters() if not torch.equal(p, saved[n])]
    if not moved or any(not n.endswith("q_proj.weight") for n in moved) or any(".2.attn." in n for n in moved):
        raise SystemExit(f"FAIL logit cap moved {moved}")
    print(f"ok   logit forms: norms, the logit bound, the cap at {cap:.3g} (moved {len(moved)} query weights)")


def test_compile(dev):
    """train.py --compile core, model and layers against the eager fast path: forward and
    every parameter's gradient, float64, a gla+nope HH layer and a gdn, gdn, nope LH model
    (--compile layers: one graph for the two gdn layers)."""
    import model as model_mod
    toks = torch.randint(0, 258, (2, 40), generator=torch.Generator().manual_seed(2))
    layouts = [[[{"type": "gla", "num_heads": 2}, {"type": "nope", "num_heads": 1}]],
               [[{"type": "gdn", "num_heads": 2}], [{"type": "gdn", "num_heads": 2}],
                [{"type": "nope", "num_heads": 2}]]]
    for n, lay in enumerate(layouts):
        m = HybridLM(small_cfg(lay)).to(dev)
        m.init_weights(n)

        def run(fwd):
            m.zero_grad(set_to_none=True)
            out = fwd(toks.to(dev), fast=True)
            (out.square().mean()).backward()
            return out.detach(), torch.cat([p.grad.flatten() for p in m.parameters()])
        ref_out, ref_grad = run(m)
        for mode in ("core", "model", "layers"):
            if mode == "core":
                model_mod.enable_compile()
                out, grad = run(m)
                model_mod.disable_compile()
            elif mode == "layers":
                from torch._dynamo.utils import counters
                before = counters["stats"]["unique_graphs"]
                model_mod.compile_layers(m)
                out, grad = run(m)
                # evaluation inside layers_eager: other lengths run the plain forward (no
                # compiling: greedy decoding grows the length a token at a time), and the
                # compiled layers are back afterwards
                with torch.no_grad(), model_mod.layers_eager(m):
                    for T in (7, 8, 9):
                        close(m(toks[:, :T].to(dev), fast=True), m(toks[:, :T].to(dev), fast=False), 1e-9,
                              f"compile layers, model {n}: layers_eager at T={T}")
                if any(l._compiled_call_impl is None for l in m.model.layers):
                    raise AssertionError(f"compile layers, model {n}: layers_eager did not restore them")
                model_mod.uncompile_layers(m)
                # one graph per layer structure, not per layer (a guard on the layer index
                # once compiled every layer anew)
                graphs = counters["stats"]["unique_graphs"] - before
                structures = len({json.dumps(lc, sort_keys=True) for lc in m.cfg["layers"]})
                if graphs > structures:
                    raise AssertionError(f"compile layers, model {n}: {graphs} graphs for "
                                         f"{structures} layer structures")
            else:
                out, grad = run(torch.compile(m, dynamic=False))
            close(out, ref_out, 1e-9, f"compile {mode}, model {n}: forward")
            close(grad, ref_grad, 1e-9, f"compile {mode}, model {n}: gradients")


def cache_child(path, dev):
    """A fresh process: load the compile cache, compile the first test_compile model, report
    Inductor's FX-graph cache hits (what train.py --compile-cache saves a later call)."""
    from train import load_compile_cache
    print(load_compile_cache(path))
    lay = [[{"type": "gla", "num_heads": 2}, {"type": "nope", "num_heads": 1}]]
    m = HybridLM(small_cfg(lay)).to(dev)
    m.init_weights(0)
    toks = torch.randint(0, 258, (2, 40), generator=torch.Generator().manual_seed(2))
    torch.compile(m, dynamic=False)(toks.to(dev), fast=True).square().mean().backward()
    from torch._dynamo.utils import counters
    print("fxgraph_cache_hit", counters["inductor"]["fxgraph_cache_hit"])


def test_compile_cache(dev):
    """train.py --compile-cache: the artifacts written after a compile make a fresh process's
    compile of the same model hit Inductor's cache (an empty cache directory, so nothing else
    can supply the hit)."""
    import subprocess
    import tempfile
    from train import save_compile_cache
    lay = [[{"type": "gla", "num_heads": 2}, {"type": "nope", "num_heads": 1}]]
    m = HybridLM(small_cfg(lay)).to(dev)
    m.init_weights(0)
    toks = torch.randint(0, 258, (2, 40), generator=torch.Generator().manual_seed(2))
    torch.compile(m, dynamic=False)(toks.to(dev), fast=True).square().mean().backward()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.bin")
        msg = save_compile_cache(path)
        assert msg.startswith("saved"), f"compile cache: {msg}"
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "inductor"),
                   TRITON_CACHE_DIR=os.path.join(tmp, "triton"))
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--device", dev, "--cache-child", path],
                           env=env, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, f"compile cache child failed: {r.stderr[-2000:]}"
        hits = [int(l.split()[1]) for l in r.stdout.splitlines() if l.startswith("fxgraph_cache_hit")]
        assert hits and hits[0] > 0, f"compile cache: no Inductor cache hit in a fresh process ({r.stdout.strip()})"
        print(f"compile cache: {msg.split(' to ')[0]}; a fresh process hit Inductor's cache {hits[0]} times")


def test_swla(dev):
    g = torch.Generator().manual_seed(3)
    B, T, d = 1, 29, 16
    h = torch.randn(B, T, d, generator=g)
    for typ in ("gla", "gdn"):
        mc = mixer_defaults({"type": typ, "num_heads": 2}, 4)
        mix = Mixer(mc, d, 12)
        with torch.no_grad():
            for p in mix.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)
            p = mix.prepare(h)
            c = value_path_c(typ, p["q"], p["k"], p.get("gk"), p.get("log_alpha"), p.get("beta"))
            full = torch.einsum("bhts,bshv->bthv", c, p["v"])
            close(mix.core(p, Knobs(), False), full, 1e-10, f"{typ}: recurrence vs value-path form")
            for mode, W, S in (("exact", 7, 0), ("overlap", 8, 3), ("exact", 12, 0)):
                kn = Knobs(swla=mode, swla_window=W, swla_stride=S)
                t = torch.arange(T)
                if mode == "exact":
                    lo = t - W + 1
                else:
                    lo = ((t // S + 1) * S - W).clamp(min=0)
                vis = (t[None, :] <= t[:, None]) & (t[None, :] >= lo[:, None])
                ref = torch.einsum("bhts,bshv->bthv", c * vis, p["v"])
                close(mix.core(p, kn, False), ref, 1e-10, f"{typ}: swla {mode} W={W} S={S}")


def test_data_by_step():
    """The rows of a step do not depend on what was drawn before (phases and calls cut a run
    anywhere, members draw the same rows), and different steps draw different rows."""
    import data
    assets = data.Assets(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../assets"))
    m1 = data.Mixture(assets, 1024, 1234, p_copy=0.15, p_kv=0.3)
    m2 = data.Mixture(assets, 1024, 1234, p_copy=0.15, p_kv=0.3)
    for _ in range(7):
        m2.sample()                 # a different history
    rows = {}
    for k in (0, 1, 5000):
        m1.at_step(k)
        m2.at_step(k)
        a = [m1.sample() for _ in range(4)]
        b = [m2.sample() for _ in range(4)]
        if a != b:
            raise SystemExit(f"data: step {k}'s rows depend on the generator's history")
        rows[k] = a
    if rows[0] == rows[1] or rows[1] == rows[5000]:
        raise SystemExit("data: two steps drew the same rows")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--compile", action="store_true", help="also check the torch.compile'd paths (slow)")
    ap.add_argument("--cache-child", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.cache_child:
        cache_child(a.cache_child, a.device)
        sys.exit(0)
    if a.compile:
        test_compile(a.device)
        test_compile_cache(a.device)
    test_cores(a.device)
    test_swla(a.device)
    test_models(a.device)
    test_logit_cap(a.device)
    test_data_by_step()
    print("selftest: all ok")
