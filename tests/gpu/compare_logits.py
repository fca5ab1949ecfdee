#!/usr/bin/env python3
"""Compares two logits .npy files (reference first). Prints one line with the relative RMS and
max differences (both divided by the reference's RMS) and exits 1 when either is over its
tolerance. With --differ (two runs of the same deterministic engine, with and without a
knob), exits 1 unless the relative RMS difference exceeds 0.5%: the knob must act."""
import sys
import numpy as np

args = [a for a in sys.argv[1:] if not a.startswith("--")]
differ = "--differ" in sys.argv
ref, got = np.load(args[0]).astype(np.float64), np.load(args[1]).astype(np.float64)
tol_rms = float(args[2]) if len(args) > 2 else 0.03
tol_max = float(args[3]) if len(args) > 3 else 0.35
if ref.shape != got.shape:
    print(f"shape {ref.shape} != {got.shape}")
    sys.exit(1)
if not np.all(np.isfinite(got)):
    print("non-finite values")
    sys.exit(1)
scale = np.sqrt(np.mean(ref * ref)) + 1e-30
d = got - ref
rel_rms = np.sqrt(np.mean(d * d)) / scale
rel_max = np.max(np.abs(d)) / scale
print(f"rel_rms={rel_rms:.2e} rel_max={rel_max:.2e} " + ("(must exceed 0.005)" if differ else f"(tol {tol_rms:g}/{tol_max:g})"))
if differ:
    sys.exit(int(rel_rms <= 0.005))
sys.exit(int(rel_rms > tol_rms or rel_max > tol_max))
