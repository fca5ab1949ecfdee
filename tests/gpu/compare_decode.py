#!/usr/bin/env python3
"""Checks for tests/gpu/decode_check.sh, on the outputs of `hybridscope generate --json
--logits-out L.npy --tokens-out S.npy` (row i of L: the logits token i was picked from).

  compare_decode.py trim GEN.json S.npy L.npy OUT.npy
      writes OUT.npy, the sequence a full forward must see to give L's rows as its last
      rows (the prompt and all but the last fed token), and prints the row count for --last.

  compare_decode.py tokens REF.json REF.npy GOT.json GOT.npy [tol_rms tol_max tie]
      the generated tokens must be the same; where they part, the reference's logits must
      rate the two picks within `tie` (relative to that row's RMS) of each other, which is
      a near-tie that bf16 arithmetic may break either way. Up to and including the row where
      they part (the rows computed from the same tokens) the logits must agree within
      tol_rms / tol_max of the reference's RMS (compare_logits.py's measures). Exit 0 or 1.
"""
import json
import sys

import numpy as np


def trim(gen_json, seq_npy, logits_npy, out_npy):
    T = json.load(open(gen_json))["prompt_tokens"]
    R = np.load(logits_npy).shape[0]
    s = np.load(seq_npy)
    np.save(out_npy, s[: T - 1 + R].astype(np.int32))
    print(R)
    return 0


def tokens(ref_json, ref_npy, got_json, got_npy, tol_rms=0.03, tol_max=0.35, tie=0.25):
    a, b = json.load(open(ref_json))["tokens"], json.load(open(got_json))["tokens"]
    ra, rb = np.load(ref_npy).astype(np.float64), np.load(got_npy).astype(np.float64)
    if not np.all(np.isfinite(rb)):
        print("non-finite logits")
        return 1
    k = 0
    while k < len(a) and k < len(b) and a[k] == b[k]:
        k += 1
    same = a == b
    rows = min(k + 1, ra.shape[0], rb.shape[0])
    x, y = ra[:rows], rb[:rows]
    scale = np.sqrt(np.mean(x * x)) + 1e-30
    d = y - x
    rel_rms, rel_max = np.sqrt(np.mean(d * d)) / scale, np.max(np.abs(d)) / scale
    line = f"{len(b)} tokens, rows 0..{rows - 1}: rel_rms={rel_rms:.2e} rel_max={rel_max:.2e} (tol {tol_rms:g}/{tol_max:g})"
    ok = rel_rms <= tol_rms and rel_max <= tol_max
    if not same:
        if k >= ra.shape[0]:
            print(f"tokens differ at {k} with no reference row there; {line}")
            return 1
        row = ra[k]
        # a side that stopped there picked eos, its row's argmax
        pa = a[k] if k < len(a) else int(np.argmax(row))
        pb = b[k] if k < len(b) else (int(np.argmax(rb[k])) if k < rb.shape[0] else -1)
        rms_row = np.sqrt(np.mean(row * row)) + 1e-30
        margin = (row[pa] - row[pb]) / rms_row if pb >= 0 else float("inf")
        near = margin <= tie
        line = (f"tokens part at {k} ({pa} vs {pb}), ref margin {margin:.3f} of the row RMS "
                f"({'near-tie' if near else 'NOT a near-tie'}, tie {tie:g}); " + line)
        ok = ok and near
    else:
        line = "same tokens; " + line
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "trim":
        sys.exit(trim(*args))
    if cmd == "tokens":
        sys.exit(tokens(*args[:4], *[float(v) for v in args[4:]]))
    print(f"unknown command {cmd}")
    sys.exit(2)
