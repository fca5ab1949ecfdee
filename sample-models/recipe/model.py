"""The hybrid model of shared/docs/model-spec.md (sections 2-4 and 6) in PyTorch.

Two paths compute the same function:
  - plain (`fast=False`): fp32/fp64 step-by-step recurrences for gla/gdn and explicit T x T
    softmax; every knob of section 6. The parity fixtures are computed with it.
  - fast (`fast=True`): training path. SDPA for softmax mixers, chunked forms for gla
    (exact per-dimension decays inside a chunk, a scan over chunks) and gdn (WY form with a
    triangular solve per chunk). Under swla, gla/gdn mixers fall back to the recurrence.
    On the GPU, `enable_fla()` swaps the chunked gla/gdn cores for flash-linear-attention's
    Triton kernels (same function; `fla_check` compares them with the PyTorch chunks first).
Parameter names are those of spec section 3, so state_dict() is the checkpoint.
"""
import contextlib
import math
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F

SOFTMAX_TYPES = ("nope", "rope", "swa")
MIXER_TYPES = SOFTMAX_TYPES + ("gla", "gdn")

# flash-linear-attention's chunk kernels, (chunk_gla, chunk_gated_delta_rule), once enabled.
# The PyTorch chunks materialise a [B, H, T, 16, dk] pairwise-decay tensor (the price of never
# overflowing) and scan chunks in a Python loop; they made the gla/gdn members most of the
# family's GPU time (0.33 s per family step on an H200, MPS or not).
FLA = None


def enable_fla():
    """Imports fla's kernels for the fast path; returns its version, or raises ImportError."""
    global FLA
    import fla
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule
    from fla.ops.gla import chunk_gla
    FLA = (chunk_gla, chunk_gated_delta_rule)
    return getattr(fla, "__version__", "?")


def disable_fla():
    global FLA
    FLA = None


# The chunked cores the fast path calls; enable_compile() swaps in torch.compile'd copies
# (Inductor fuses the pairwise-decay product and its reduction into one kernel each way, so
# the [B, H, T, 16, dk] tensor is never written, and fuses the doubling scan's small ops).
CORES = {}


def enable_compile():
    """torch.compile's the gla/gdn training cores (same functions, fused kernels)."""
    CORES["gla"] = torch.compile(gla_chunked, fullgraph=True, dynamic=False)
    CORES["gdn"] = torch.compile(gdn_chunked, fullgraph=True, dynamic=False)


def disable_compile():
    CORES.clear()


def compile_layers(model):
    """torch.compile's each decoder layer on its own: layers of one structure share one
    compiled graph (Dynamo takes the parameters as inputs), so an LH model compiles two graphs
    (efficient layer, NoPE layer) where compiling the whole model traces all eight layers into
    one (the gdn member's chunk loop eight times over: ~200 s of a fresh machine's call)."""
    for layer in model.model.layers:
        layer.compile(dynamic=False)


def uncompile_layers(model):
    for layer in model.model.layers:
        layer._compiled_call_impl = None


@contextlib.contextmanager
def layers_eager(model):
    """The layers' plain forward for a while (evaluation): compiled with dynamic=False, every
    new prompt length or batch would compile each layer structure anew (greedy decoding grows
    the length by one a token), minutes of compiling for the gdn layers."""
    saved = [layer._compiled_call_impl for layer in model.model.layers]
    uncompile_layers(model)
    try:
        yield model
    finally:
        for layer, c in zip(model.model.layers, saved):
            layer._compiled_call_impl = c


def mixer_defaults(m, head_dim):
    """A mixer config with every default of spec section 2 filled in (a new dict)."""
    t = m["type"]
    if t not in MIXER_TYPES:
        raise ValueError(f"unknown mixer type {t!r}")
    out = dict(m)
    out.setdefault("head_k_dim", head_dim)
    out.setdefault("head_v_dim", head_dim)
    if t in SOFTMAX_TYPES:
        out.setdefault("num_kv_heads", out["num_heads"])
    else:
        out["num_kv_heads"] = out["num_heads"]
    if t in ("rope", "swa"):
        out.setdefault("rope_theta", 10000.0)
    if t == "swa" and "window" not in out:
        raise ValueError("swa mixer needs a window")
    if t == "gla":
        out.setdefault("gate_low_rank_dim", 16)
        out.setdefault("gate_logit_normalizer", 16)
        out.setdefault("use_short_conv", False)
        out.setdefault("conv_size", 4)
        out.setdefault("norm_eps", 1e-5)
    if t == "gdn":
        out.setdefault("use_short_conv", True)
        out.setdefault("conv_size", 4)
        out.setdefault("allow_neg_eigval", False)
        out.setdefault("norm_eps", 1e-5)
    return out


@dataclass
class Knobs:
    """Spec section 6; every field's zero value means off."""
    log_scale: bool = False
    log_scale_L0: int = 0          # 0 => train_context
    swla: str = "off"              # off | exact | overlap
    swla_window: int = 0           # 0 => train_context
    swla_stride: int = 0           # overlap; 0 => max(1, W // 4)
    swa_window: int = 0            # 0 => each swa mixer's own window
    rope_window: int = 0           # 0 => full
    ablate: set = field(default_factory=set)   # {(layer, mixer, head)}

    def is_off(self):
        return (not self.log_scale and self.swla == "off" and self.swa_window == 0
                and self.rope_window == 0 and not self.ablate)


class Norm(nn.Module):
    """Holds `weight` so names match the spec; rms(x, w) over the last dimension."""

    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        xf = x.float() if x.dtype in (torch.bfloat16, torch.float16) else x
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight.to(y.dtype)).to(x.dtype)


def rope_rotate(x, theta):
    """NeoX half-split rotation of x [B, T, H, dk] at positions 0..T-1."""
    T, dk = x.shape[1], x.shape[-1]
    half = dk // 2
    i = torch.arange(half, dtype=torch.float64, device=x.device)
    f = theta ** (-2.0 * i / dk)
    a = torch.arange(T, dtype=torch.float64, device=x.device)[:, None] * f[None, :]
    cos = torch.cos(a).to(x.dtype)[None, :, None, :]
    sin = torch.sin(a).to(x.dtype)[None, :, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def causal_conv(x, w):
    """u_t = sum_{j<K} w[c, j] x_{t-K+1+j}, zeros before t = 0. x [B, T, C], w [C, 1, K]."""
    K, T = w.shape[-1], x.shape[1]
    y = F.conv1d(x.transpose(1, 2), w, padding=K - 1, groups=x.shape[-1])
    return y[..., :T].transpose(1, 2)


def query_starts(T, mode, W, S, device):
    """First position each query's recurrence runs from (spec section 6, swla)."""
    t = torch.arange(T, device=device)
    if mode == "off":
        return torch.zeros(T, dtype=torch.long, device=device)
    if mode == "exact":
        return (t - W + 1).clamp(min=0)
    j = t // S
    return ((j + 1) * S - W).clamp(min=0)


def run_restarted(T, starts, init_state, step, readout):
    """Runs a recurrence once per distinct start (batched): query t reads the state that was
    started from zero at starts[t] and advanced through step t. starts is non-decreasing.
    init_state() -> zero state [1, ...]; step(S, s) -> S after step s (S [n, ...]);
    readout(S, t) -> o_t from S [...]. Returns [T, ...]-stacked readouts."""
    starts = starts.tolist()
    last_use = {}
    for t, r in enumerate(starts):
        last_use[r] = t
    active = []           # start ids, ascending
    S = None
    outs = []
    for s in range(T):
        if s in last_use:
            z = init_state()
            S = z if S is None else torch.cat([S, z], 0)
            active.append(s)
        S = step(S, s)
        outs.append(readout(S[active.index(starts[s])], s))
        drop = 0
        while drop < len(active) and last_use[active[drop]] <= s:
            drop += 1
        if drop:
            active = active[drop:]
            S = S[drop:] if active else None
    return torch.stack(outs, 0)


def run_exact_window(T, W, init_state, step, readout):
    """run_restarted for swla exact (query t starts at max(0, t-W+1)) with a ring of W states:
    slot r % W holds the state started at r; it is zeroed when r begins (the state it held,
    started at r - W, was last read by query r - 1). Slots whose start lies in the future
    hold garbage until then and are never read."""
    z = init_state()
    S = z.expand(W, *z.shape[1:]).clone()
    outs = []
    for s in range(T):
        S = S.index_fill(0, torch.tensor([s % W], device=S.device), 0.0)
        S = step(S, s)
        outs.append(readout(S[max(0, s - W + 1) % W], s))
    return torch.stack(outs, 0)


# ---- fast (training) cores: [B, T, H, *] float32 in, [B, T, H, dv] out ----

def _gla_split(q, k, v, gk, chunk):
    """Pads T to whole chunks; [B, H, N, C, *] views with q scaled and G the inclusive
    in-chunk cumulative log decay."""
    B, T, H, dk = q.shape
    dv = v.shape[-1]
    pad = (-T) % chunk
    if pad:
        q, k, v, gk = (F.pad(x, (0, 0, 0, 0, 0, pad)) for x in (q, k, v, gk))
    N = (T + pad) // chunk
    q = (q * dk ** -0.5).view(B, N, chunk, H, dk).permute(0, 3, 1, 2, 4)
    k = k.view(B, N, chunk, H, dk).permute(0, 3, 1, 2, 4)
    v = v.view(B, N, chunk, H, dv).permute(0, 3, 1, 2, 4)
    G = gk.view(B, N, chunk, H, dk).permute(0, 3, 1, 2, 4).cumsum(3)
    return q, k, v, G


def chunk_states_doubling(dec, U):
    """The state before each chunk, S_n = dec_n * S_(n-1) + U_n from S_(-1) = 0, by recursive
    doubling: log2(N) rounds of whole-tensor operations instead of N small steps (the loop is
    hundreds of tiny kernels per training step). Every factor is a decay <= 1."""
    x, a, N, o = U, dec, U.shape[2], 1
    while o < N:
        x = torch.cat([x[:, :, :o], x[:, :, o:] + a[:, :, o:] * x[:, :, :-o]], 2)
        a = torch.cat([a[:, :, :o], a[:, :, o:] * a[:, :, :-o]], 2)
        o *= 2
    return torch.cat([torch.zeros_like(x[:, :, :1]), x[:, :, :-1]], 2)


def _gla_finish(o, q, k, v, G, T, scan="loop"):
    """Adds the inter-chunk part (a scan over chunk states; every exponent <= 0) to the
    intra-chunk output o and returns [B, T, H, dv]."""
    B, H, N, C, dv = v.shape
    Glast = G[..., -1:, :]                                              # [B,H,N,1,dk]
    U = (k * torch.exp(Glast - G)).transpose(-1, -2) @ v                # [B,H,N,dk,dv]
    dec = torch.exp(Glast[..., 0, :])[..., None]                        # [B,H,N,dk,1]
    if scan == "doubling":
        prev = chunk_states_doubling(dec, U)
    else:
        S = q.new_zeros(B, H, q.shape[-1], dv)
        prev = []
        for n in range(N):
            prev.append(S)
            S = dec[:, :, n] * S + U[:, :, n]
        prev = torch.stack(prev, 2)
    o = o + (q * torch.exp(G)) @ prev
    return o.permute(0, 2, 3, 1, 4).reshape(B, N * C, H, dv)[:, :T]


def gla_chunked(q, k, v, gk, chunk=16, scan="doubling"):
    """GLA in chunks. Inside a chunk the decay between query i and key j <= i is taken
    pairwise, exp(G_i - G_j) <= 1 per key dimension, so nothing can overflow whatever the
    gates (a factorisation through a reference position overflowed in fp32 once the model
    learned gates that forget within a few steps, and training went NaN). The pairwise tensor
    is [B, H, N, C, C, dk], hence the small chunk."""
    T = q.shape[1]
    q, k, v, G = _gla_split(q, k, v, gk, chunk)
    mask = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).tril()
    D = (G[..., :, None, :] - G[..., None, :, :]).masked_fill(~mask[..., None], float("-inf"))
    A = (q[..., :, None, :] * k[..., None, :, :] * torch.exp(D)).sum(-1)
    return _gla_finish(A @ v, q, k, v, G, T, scan)


def gla_chunked_factored(q, k, v, gk, chunk=32):
    """gla_chunked with the intra-chunk decay factored through the chunk's middle position:
    exp(G_i - G_j) = exp(G_i - G_r) exp(G_r - G_j), one matmul, no [C, C, dk] tensor. Exact
    in float64 for any gate the checkpoints hold (each factor spans <= chunk/2 steps); in fp32
    it overflows once gates forget within a few steps, so training uses gla_chunked. The
    fixtures' batched autograd Jacobians use this one (the pairwise tensor times 160 batched
    gradients is gigabytes)."""
    T = q.shape[1]
    q, k, v, G = _gla_split(q, k, v, gk, chunk)
    Gr = G[..., chunk // 2: chunk // 2 + 1, :]
    A = (q * torch.exp(G - Gr)) @ (k * torch.exp(Gr - G)).transpose(-1, -2)
    mask = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).tril()
    A = torch.where(mask, A, torch.zeros((), dtype=A.dtype, device=A.device))
    return _gla_finish(A @ v, q, k, v, G, T)


def gdn_chunked(q, k, v, log_alpha, beta, chunk=64):
    B, T, H, dk = q.shape
    dv = v.shape[-1]
    pad = (-T) % chunk
    if pad:
        q, k, v = (F.pad(x, (0, 0, 0, 0, 0, pad)) for x in (q, k, v))
        log_alpha, beta = (F.pad(x, (0, 0, 0, pad)) for x in (log_alpha, beta))
    N = (T + pad) // chunk
    q = (q * dk ** -0.5).view(B, N, chunk, H, dk).permute(0, 3, 1, 2, 4)
    k = k.view(B, N, chunk, H, dk).permute(0, 3, 1, 2, 4)
    v = v.view(B, N, chunk, H, dv).permute(0, 3, 1, 2, 4)
    g = log_alpha.view(B, N, chunk, H).permute(0, 3, 1, 2).cumsum(-1)   # [B,H,N,C]
    b = beta.view(B, N, chunk, H).permute(0, 3, 1, 2)[..., None]
    lower = torch.ones(chunk, chunk, dtype=torch.bool, device=q.device).tril()
    Lm = torch.exp((g[..., :, None] - g[..., None, :]).masked_fill(~lower, float("-inf")))
    kb = k * b
    A = (kb @ k.transpose(-1, -2)) * Lm
    A = A.tril(-1)                                                      # strictly lower
    M = A + torch.eye(chunk, device=q.device, dtype=q.dtype)
    u = torch.linalg.solve_triangular(M, v * b, upper=False, unitriangular=True)
    w = torch.linalg.solve_triangular(M, kb * torch.exp(g)[..., None], upper=False,
                                      unitriangular=True)
    qk = (q @ k.transpose(-1, -2)) * Lm                                 # lower incl. diag
    S = q.new_zeros(B, H, dk, dv)
    outs = []
    for n in range(N):
        delta = u[:, :, n] - w[:, :, n] @ S
        gn = g[:, :, n]
        outs.append((q[:, :, n] * torch.exp(gn)[..., None]) @ S + qk[:, :, n] @ delta)
        kd = k[:, :, n] * torch.exp(gn[..., -1:] - gn)[..., None]
        S = torch.exp(gn[..., -1])[..., None, None] * S + kd.transpose(-1, -2) @ delta
    o = torch.stack(outs, 2).permute(0, 2, 3, 1, 4).reshape(B, N * chunk, H, dv)
    return o[:, :T]


def fla_check(device, seed=0, T=200, H=3, d=40):
    """Largest relative error of fla's kernels against gla_chunked / gdn_chunked (output and
    the gradients of every input) on random inputs: T not a multiple of any chunk, and gates
    that forget within a few steps next to ones that barely forget."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    r = lambda *sh: torch.randn(*sh, generator=g).to(device)
    worst = {}
    for typ in ("gla", "gdn"):
        q, k, v = r(2, T, H, d), r(2, T, H, d), r(2, T, H, d)
        if typ == "gla":
            gates = [F.logsigmoid(r(2, T, H, d) * 4 - 2) / 16]
            gates[0][:, T // 3] = -30.0
        else:
            q = q * torch.rsqrt(q.pow(2).sum(-1, keepdim=True) + 1e-6)
            k = k * torch.rsqrt(k.pow(2).sum(-1, keepdim=True) + 1e-6)
            gates = [-F.softplus(r(2, T, H)), torch.sigmoid(r(2, T, H))]
            gates[0][:, T // 3] = -30.0
        ins = [x.detach().requires_grad_(True) for x in [q, k, v] + gates]
        dout = r(2, T, H, d)
        res = []
        for f in ((gla_chunked if typ == "gla" else gdn_chunked),
                  FLA[0] if typ == "gla" else FLA[1]):
            o = f(*ins)
            o = o[0] if isinstance(o, tuple) else o
            grads = torch.autograd.grad(o, ins, dout)
            res.append([o] + list(grads))
        err = 0.0
        for a, b in zip(*res):
            err = max(err, ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item())
        worst[typ] = err
    return worst


class Mixer(nn.Module):
    def __init__(self, mc, d, L0):
        super().__init__()
        self.mc = mc
        self.type = mc["type"]
        self.L0 = L0
        H, Hkv = mc["num_heads"], mc["num_kv_heads"]
        dk, dv = mc["head_k_dim"], mc["head_v_dim"]
        if H % Hkv:
            raise ValueError("num_heads must be a multiple of num_kv_heads")
        self.H, self.Hkv, self.dk, self.dv = H, Hkv, dk, dv
        self.q_proj = nn.Linear(d, H * dk, bias=False)
        self.k_proj = nn.Linear(d, Hkv * dk, bias=False)
        self.v_proj = nn.Linear(d, Hkv * dv, bias=False)
        self.o_proj = nn.Linear(H * dv, d, bias=False)
        self.use_conv = self.type in ("gla", "gdn") and bool(mc["use_short_conv"])
        if self.type == "gla":
            r = mc["gate_low_rank_dim"]
            self.gk_proj = nn.Sequential(nn.Linear(d, r, bias=False), nn.Linear(r, H * dk, bias=True))
            self.g_proj = nn.Linear(d, H * dv, bias=False)
            self.g_norm_swish_gate = Norm(dv, mc["norm_eps"])
        if self.type == "gdn":
            self.a_proj = nn.Linear(d, H, bias=False)
            self.b_proj = nn.Linear(d, H, bias=False)
            self.A_log = nn.Parameter(torch.zeros(H))
            self.dt_bias = nn.Parameter(torch.zeros(H))
            self.g_proj = nn.Linear(d, H * dv, bias=False)
            self.o_norm = Norm(dv, mc["norm_eps"])
        if self.use_conv:
            K = mc["conv_size"]
            self.q_conv1d = nn.Conv1d(H * dk, H * dk, K, groups=H * dk, bias=False)
            self.k_conv1d = nn.Conv1d(H * dk, H * dk, K, groups=H * dk, bias=False)
            self.v_conv1d = nn.Conv1d(H * dv, H * dv, K, groups=H * dv, bias=False)

    # -- inputs of the core: q, k, v and gates, [B, T, heads, dim] --
    def prepare(self, h):
        B, T, _ = h.shape
        q, k, v = self.q_proj(h), self.k_proj(h), self.v_proj(h)
        p = {}
        if self.type in ("gla", "gdn"):
            if self.use_conv:
                q = causal_conv(q, self.q_conv1d.weight)
                k = causal_conv(k, self.k_conv1d.weight)
                v = causal_conv(v, self.v_conv1d.weight)
            if self.type == "gdn" or self.use_conv:
                q, k, v = F.silu(q), F.silu(k), F.silu(v)
        q = q.view(B, T, self.H, self.dk)
        k = k.view(B, T, self.Hkv, self.dk)
        v = v.view(B, T, self.Hkv, self.dv)
        if self.type in ("rope", "swa"):
            q, k = rope_rotate(q, self.mc["rope_theta"]), rope_rotate(k, self.mc["rope_theta"])
        if self.type == "gla":
            gk = F.logsigmoid(self.gk_proj(h)) / self.mc["gate_logit_normalizer"]
            p["gk"] = gk.view(B, T, self.H, self.dk)
        if self.type == "gdn":
            q = q * torch.rsqrt(q.pow(2).sum(-1, keepdim=True) + 1e-6)
            k = k * torch.rsqrt(k.pow(2).sum(-1, keepdim=True) + 1e-6)
            beta = torch.sigmoid(self.b_proj(h))
            if self.mc["allow_neg_eigval"]:
                beta = beta * 2
            p["beta"] = beta
            p["log_alpha"] = -torch.exp(self.A_log) * F.softplus(self.a_proj(h) + self.dt_bias)
        p["q"], p["k"], p["v"] = q, k, v
        return p

    def window(self, knobs):
        """Effective softmax window (0 = full causal)."""
        if self.type == "swa":
            return knobs.swa_window or self.mc["window"]
        if self.type == "rope":
            return knobs.rope_window
        return 0

    def row_scale(self, T, knobs, device, dtype):
        if self.type != "nope" or not knobs.log_scale:
            return None
        L0 = knobs.log_scale_L0 or self.L0
        t = torch.arange(T, dtype=torch.float64, device=device)
        return torch.clamp(torch.log(t + 1) / math.log(L0), min=1.0).to(dtype)

    def swla(self, T, knobs, device):
        W = knobs.swla_window or self.L0
        S = knobs.swla_stride or max(1, W // 4)
        return query_starts(T, knobs.swla, W, S, device)

    # -- the core: raw per-head output o [B, T, H, dv] before norm and gate --
    def core(self, p, knobs, fast):
        q, k, v = p["q"], p["k"], p["v"]
        B, T = q.shape[:2]
        if self.type in SOFTMAX_TYPES:
            rep = self.H // self.Hkv
            if rep > 1:
                k = k.repeat_interleave(rep, dim=2)
                v = v.repeat_interleave(rep, dim=2)
            W = self.window(knobs)
            c = self.row_scale(T, knobs, q.device, q.dtype)
            if c is not None:
                q = q * c[None, :, None, None]
            if fast:
                qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
                if W:
                    t = torch.arange(T, device=q.device)
                    vis = (t[None, :] <= t[:, None]) & (t[None, :] > t[:, None] - W)
                    o = F.scaled_dot_product_attention(qt, kt, vt, attn_mask=vis)
                else:
                    o = F.scaled_dot_product_attention(qt, kt, vt, is_causal=True)
                return o.transpose(1, 2)
            z = torch.einsum("bthd,bshd->bhts", q, k) / math.sqrt(self.dk)
            t = torch.arange(T, device=q.device)
            vis = t[None, :] <= t[:, None]
            if W:
                vis = vis & (t[None, :] > t[:, None] - W)
            p_ = torch.softmax(z.masked_fill(~vis, float("-inf")), dim=-1)
            return torch.einsum("bhts,bshd->bthd", p_, v)
        if fast and knobs.swla == "off":
            # recurrences in fp32 even under autocast (decay products lose bf16 precision)
            up = lambda x: x.float() if x.dtype in (torch.bfloat16, torch.float16) else x
            with torch.autocast(q.device.type, enabled=False):
                if FLA is not None and q.is_cuda:
                    if self.type == "gla":
                        return FLA[0](up(q), up(k), up(v), up(p["gk"]))[0]
                    return FLA[1](up(q), up(k), up(v), up(p["log_alpha"]), up(p["beta"]))[0]
                if self.type == "gla":
                    return CORES.get("gla", gla_chunked)(up(q), up(k), up(v), up(p["gk"]))
                return CORES.get("gdn", gdn_chunked)(up(q), up(k), up(v), up(p["log_alpha"]),
                                                     up(p["beta"]))
        return self.core_recurrent(p, knobs)

    def core_recurrent(self, p, knobs):
        """Step-by-step recurrence (spec section 4), restarted per spec section 6 under swla."""
        q, k, v = p["q"], p["k"], p["v"]
        B, T, H, dk = q.shape
        dv = v.shape[-1]
        qs = q / math.sqrt(dk)
        starts = self.swla(T, knobs, q.device)
        zero = lambda: q.new_zeros(1, B, H, dk, dv)
        if self.type == "gla":
            a = torch.exp(p["gk"])

            def step(S, s):
                return a[None, :, s, :, :, None] * S + (k[:, s, :, :, None] * v[:, s, :, None, :])[None]
        else:
            alpha = torch.exp(p["log_alpha"])
            beta = p["beta"]

            def step(S, s):
                ks = k[:, s]                                   # [B,H,dk]
                kS = torch.einsum("bhk,nbhkv->nbhv", ks, S)
                bs = beta[:, s][None, :, :, None, None]
                S = S - bs * ks[None, :, :, :, None] * kS[:, :, :, None, :]
                S = alpha[:, s][None, :, :, None, None] * S
                return S + bs * (ks[:, :, :, None] * v[:, s, :, None, :])[None]

        def readout(S, t):
            return torch.einsum("bhk,bhkv->bhv", qs[:, t], S)

        if knobs.swla == "exact":
            W = min(knobs.swla_window or self.L0, T)
            return run_exact_window(T, W, zero, step, readout).transpose(0, 1)
        return run_restarted(T, starts, zero, step, readout).transpose(0, 1)

    def finish(self, o, h, knobs, layer, mixer):
        """Norm and gate (gla/gdn), ablation, output projection."""
        B, T = o.shape[:2]
        if self.type == "gla":
            g = F.silu(self.g_proj(h)).view(B, T, self.H, self.dv)
            o = self.g_norm_swish_gate(o) * g
        elif self.type == "gdn":
            g = F.silu(self.g_proj(h)).view(B, T, self.H, self.dv)
            o = self.o_norm(o) * g
        # (the test first: under torch.compile a comprehension over the empty set still guarded
        # on the layer index, which compiled every layer of `train.py --compile layers` anew)
        heads = [hd for (l, m, hd) in knobs.ablate if l == layer and m == mixer] if knobs.ablate else []
        if heads:
            keep = torch.ones(self.H, dtype=o.dtype, device=o.device)
            keep[heads] = 0
            o = o * keep[None, None, :, None]
        return self.o_proj(o.reshape(B, T, self.H * self.dv))

    def forward(self, h, knobs, layer, mixer, fast, capture=None):
        p = self.prepare(h)
        o = self.core(p, knobs, fast)
        if capture is not None:
            capture[(layer, mixer)] = (p, o)
        return self.finish(o, h, knobs, layer, mixer)


class MLP(nn.Module):
    def __init__(self, d, f):
        super().__init__()
        self.gate_proj = nn.Linear(d, f, bias=False)
        self.up_proj = nn.Linear(d, f, bias=False)
        self.down_proj = nn.Linear(f, d, bias=False)

    def forward(self, h):
        return self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Layer(nn.Module):
    def __init__(self, lc, cfg):
        super().__init__()
        d, eps, L0 = cfg["hidden_size"], cfg.get("norm_eps", 1e-6), cfg["train_context"]
        mixers = lc["mixers"]
        if len(mixers) not in (1, 2):
            raise ValueError("a layer has one or two mixers")
        if len(mixers) == 2 and (mixers[0]["type"] not in ("rope", "swa", "gla", "gdn")
                                 or mixers[1]["type"] != "nope"):
            raise ValueError("an HH layer is (rope|swa|gla|gdn, nope)")
        self.attn_norm = Norm(d, eps)
        self.attn = Mixer(mixers[0], d, L0)
        self.nope_attn = Mixer(mixers[1], d, L0) if len(mixers) == 2 else None
        self.mlp_norm = Norm(d, eps)
        self.mlp = MLP(d, cfg["intermediate_size"])

    def mixers(self):
        return [self.attn] if self.nope_attn is None else [self.attn, self.nope_attn]

    def forward(self, x, knobs, i, fast, capture=None):
        h = self.attn_norm(x)
        y = 0
        for j, m in enumerate(self.mixers()):
            y = y + m(h, knobs, i, j, fast, capture)
        x = x + y
        return x + self.mlp(self.mlp_norm(x))


def softmax_logit_forms(model):
    """(mixer, the gain of the norm its projections read) for every softmax mixer: what
    cap_logit_forms bounds."""
    return [(mx, layer.attn_norm.weight) for layer in model.model.layers for mx in layer.mixers()
            if mx.type in SOFTMAX_TYPES]


def logit_form_norms(mixer, gain):
    """Frobenius norm of each query head's logit form M_h = (Wq_h G)^T (Wk_h G), G = diag(gain):
    its logit for normalised inputs x, y (|x|^2 = |y|^2 = hidden) is x^T M_h y / sqrt(dk) (RoPE
    rotates q and k orthogonally and does not change the bound), so |logit| <= hidden / sqrt(dk)
    x |M_h|."""
    A = mixer.q_proj.weight.view(mixer.H, mixer.dk, -1) * gain
    B = (mixer.k_proj.weight.view(mixer.Hkv, mixer.dk, -1) * gain).repeat_interleave(
        mixer.H // mixer.Hkv, dim=0)
    return torch.linalg.matrix_norm(torch.einsum("hkd,hke->hde", A, B))


@torch.no_grad()
def cap_logit_forms(forms, cap):
    """Scales the query weights of every head whose logit form exceeds cap back to it (keys are
    shared by grouped query heads, so only queries move). No host sync: capturable."""
    for mx, g in forms:
        n = logit_form_norms(mx, g)
        mx.q_proj.weight.view(mx.H, mx.dk, -1).mul_(torch.clamp(cap / n, max=1.0)[:, None, None])


class Backbone(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embeddings = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"])
        self.layers = nn.ModuleList([Layer(lc, cfg) for lc in cfg["layers"]])
        self.norm = Norm(cfg["hidden_size"], cfg.get("norm_eps", 1e-6))


def complete_config(cfg):
    """Fills the defaults of spec section 2 into a copy of cfg (mixers included)."""
    cfg = dict(cfg)
    cfg.setdefault("norm_eps", 1e-6)
    cfg.setdefault("tie_word_embeddings", False)
    hd = cfg.get("head_dim")
    layers = []
    for lc in cfg["layers"]:
        layers.append({"mixers": [mixer_defaults(m, hd) for m in lc["mixers"]]})
    cfg["layers"] = layers
    if cfg["num_hidden_layers"] != len(layers):
        raise ValueError("num_hidden_layers != len(layers)")
    return cfg


class HybridLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = complete_config(cfg)
        self.model = Backbone(self.cfg)
        self.tied = bool(self.cfg["tie_word_embeddings"])
        if not self.tied:
            self.lm_head = nn.Linear(self.cfg["hidden_size"], self.cfg["vocab_size"], bias=False)

    def forward(self, tokens, knobs=None, fast=False, capture=None, return_hidden=False):
        knobs = knobs or Knobs()
        x = self.model.embeddings(tokens)
        for i, layer in enumerate(self.model.layers):
            x = layer(x, knobs, i, fast, capture)
        x = self.model.norm(x)
        if return_hidden:
            return x
        w = self.model.embeddings.weight if self.tied else self.lm_head.weight
        return x @ w.t()

    @torch.no_grad()
    def init_weights(self, seed, n_layers=None):
        """Deterministic init: N(0, 0.02) linears/embeddings, output projections scaled by
        1/sqrt(2 n_layers); gdn A_log = ln U(1,16), dt_bias = softplus^-1(logU(1e-3,1e-1))."""
        gen = torch.Generator().manual_seed(seed)
        n_layers = n_layers or len(self.model.layers)
        for name, p in self.named_parameters():
            if name.endswith("norm.weight") or "norm_swish_gate" in name or "o_norm" in name:
                p.fill_(1.0)
            elif name.endswith("A_log"):
                p.copy_(torch.log(torch.empty(p.shape).uniform_(1, 16, generator=gen)))
            elif name.endswith("dt_bias"):
                dt = torch.exp(torch.empty(p.shape).uniform_(math.log(1e-3), math.log(1e-1),
                                                             generator=gen))
                p.copy_(dt + torch.log(-torch.expm1(-dt)))
            elif name.endswith("gk_proj.1.bias"):
                p.zero_()
            elif "conv1d" in name:
                K = p.shape[-1]
                p.copy_(torch.empty(p.shape).uniform_(-1, 1, generator=gen) / math.sqrt(K))
            else:
                std = 0.02
                if name.endswith("o_proj.weight") or name.endswith("down_proj.weight"):
                    std = 0.02 / math.sqrt(2 * n_layers)
                p.copy_(torch.randn(p.shape, generator=gen) * std)

    def heads(self):
        """[(layer, mixer, head, type)] in layer-major order."""
        out = []
        for i, layer in enumerate(self.model.layers):
            for j, m in enumerate(layer.mixers()):
                for h in range(m.H):
                    out.append((i, j, h, m.type))
        return out
