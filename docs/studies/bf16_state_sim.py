"""Design study (not a test): what bf16 operands would cost the chunked GLA/GDN kernels in accuracy.

fla's chunk kernels feed the tensor cores bf16 (the inter-chunk states, W and Khat for GDN);
ours keep every stored operand in fp32 and round to TF32 only inside the products. This
simulates one head (dk = dv = 128, chunks of 64) in float64 with chosen operands rounded
(round-to-nearest-even to bf16, or cvt.rn-like to TF32) and prints the error against the
exact recurrence, relative to the output RMS (the measure of tests/gpu/la_check.cu, whose
bounds are 3e-3 RMS and 3e-2 largest). Numbers in docs/bench-notes.md (session 17).

    python3 docs/studies/bf16_state_sim.py gdn T DECAY
    python3 docs/studies/bf16_state_sim.py gla T DECAY
"""
import sys

import numpy as np


def _round(x, drop):
    x = np.asarray(x, dtype=np.float32)
    b = x.view(np.uint32).astype(np.uint64)
    half = (1 << (drop - 1)) - 1
    b = ((b + half + ((b >> drop) & 1)) >> drop) << drop
    return b.astype(np.uint32).view(np.float32).astype(np.float64)


def bf16(x):
    return _round(x, 16)


def tf32(x):
    return _round(x, 13)


def same(x):
    return x


def gdn(T, g, rng, LC=64, dk=128, dv=128):
    q = rng.standard_normal((T, dk))
    k = rng.standard_normal((T, dk))
    v = rng.standard_normal((T, dv))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    beta = rng.uniform(0.05, 0.95, T)
    lg = -g * rng.uniform(0.0, 2.0, T)           # log decay a step

    S = np.zeros((dk, dv))
    ref = np.zeros((T, dv))
    for t in range(T):                            # the recurrence itself
        S = np.exp(lg[t]) * S
        S = S - beta[t] * np.outer(k[t], k[t] @ S) + beta[t] * np.outer(k[t], v[t])
        ref[t] = q[t] @ S

    def chunked(rW, rK, rS, rV):                  # the WY chunk form, operands of the state products rounded
        S = np.zeros((dk, dv))
        o = np.zeros((T, dv))
        for c0 in range(0, T, LC):
            sl = slice(c0, min(T, c0 + LC))
            L = sl.stop - sl.start
            K, V, Q, B = k[sl], v[sl], q[sl], beta[sl]
            b = np.cumsum(lg[sl])
            D = np.exp(b[:, None] - b[None, :])
            A = np.tril(B[:, None] * (K @ K.T) * D, -1)
            Tm = np.linalg.inv(np.eye(L) + A)
            W = Tm @ (B[:, None] * K * np.exp(b)[:, None])
            U = Tm @ (B[:, None] * V)
            Vn = U - rW(W) @ rS(S)
            o[sl] = (Q * np.exp(b)[:, None]) @ S + np.tril((Q @ K.T) * D) @ Vn
            Kh = K * np.exp(b[-1] - b)[:, None]
            S = np.exp(b[-1]) * S + rK(Kh).T @ rV(Vn)
        return o

    return ref, {
        "exact chunk form": chunked(same, same, same, same),
        "TF32 W, Khat, S, Vn (ours)": chunked(tf32, tf32, tf32, tf32),
        "bf16 W, Khat; TF32 S, Vn": chunked(bf16, bf16, tf32, tf32),
        "bf16 W, Khat, S, Vn (fla)": chunked(bf16, bf16, bf16, bf16),
    }


def gla(T, g, rng, LC=64, dk=128, dv=128):
    q = rng.standard_normal((T, dk))
    k = rng.standard_normal((T, dk)) / np.sqrt(dk)
    v = rng.standard_normal((T, dv))
    lg = -g * rng.uniform(0.0, 2.0, (T, dk))     # log decay a step and channel

    def chunked(rZ, rQ, rU):
        Z = np.zeros((dk, dv))
        o = np.zeros((T, dv))
        for c0 in range(0, T, LC):
            sl = slice(c0, min(T, c0 + LC))
            Q, K, V = q[sl] / np.sqrt(dk), k[sl], v[sl]
            b = np.cumsum(lg[sl], axis=0)
            A = np.tril(np.einsum("tc,sc,tsc->ts", Q, K, np.exp(b[:, None, :] - b[None, :, :])))
            o[sl] = rQ(Q * np.exp(b)) @ rZ(Z) + A @ V
            Z = np.exp(b[-1])[:, None] * Z + rU((K * np.exp(b[-1] - b)).T @ V)
        return o

    ref = chunked(same, same, same)               # the chunk form in float64 is exact to ~1e-15 (checked for gdn)
    return ref, {
        "TF32 Qt, Z (ours)": chunked(tf32, tf32, same),
        "bf16 Z; TF32 Qt": chunked(bf16, tf32, same),
        "bf16 Z, Qt": chunked(bf16, bf16, same),
        "contributions U stored bf16": chunked(tf32, tf32, bf16),
    }


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("gdn", "gla"):
        raise SystemExit("usage: bf16_state_sim.py gdn|gla T DECAY")
    T, g = int(sys.argv[2]), float(sys.argv[3])
    ref, runs = (gdn if sys.argv[1] == "gdn" else gla)(T, g, np.random.default_rng(0))
    rms = np.sqrt((ref ** 2).mean())
    for name, o in runs.items():
        d = o - ref
        print(f"{sys.argv[1]} T={T} decay={g}: {name:30s} rel_rms {np.sqrt((d ** 2).mean()) / rms:.2e}"
              f"  rel_max {np.abs(d).max() / rms:.2e}")


if __name__ == "__main__":
    main()
