"""Compares two pooled maps (`hybridscope map --out`, float32 [Bt, Bs]): CPU reference, CUDA.

    python3 compare_map.py cpu.npy gpu.npy

The GPU forward runs bf16 weights and GEMM inputs (the logits tolerance of parity.sh), so a~
and the cells differ slightly; the pooling rules must not. Checks: same shape; the NaN cells
(no causal entry) identical; over the other cells, RMS of the difference <= 5% of the
reference cells' RMS and the largest difference <= 25% of the reference's largest cell (a cell
whose head puts its mass on one of two near-equal keys can move). Exit 0 pass, 1 fail; one
summary line either way.
"""
import sys

import numpy as np


def main():
    a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
    if a.shape != b.shape:
        print(f"shape {a.shape} vs {b.shape}")
        return 1
    na, nb = np.isnan(a), np.isnan(b)
    if (na != nb).any():
        print(f"NaN cells differ: {int((na != nb).sum())} of {a.size}")
        return 1
    x, y = a[~na].astype(np.float64), b[~nb].astype(np.float64)
    if x.size == 0:
        print("every cell NaN in both")
        return 0
    d = np.abs(x - y)
    rms_ref = np.sqrt(np.mean(x * x))
    rel_rms = np.sqrt(np.mean(d * d)) / rms_ref if rms_ref > 0 else float(d.max() > 0)
    rel_max = d.max() / np.abs(x).max() if np.abs(x).max() > 0 else float(d.max() > 0)
    msg = f"{a.shape[0]}x{a.shape[1]}, {int(na.sum())} NaN cells, rel_rms={rel_rms:.2e} rel_max={rel_max:.2e} (tol 0.05/0.25)"
    print(msg)
    return 0 if rel_rms <= 0.05 and rel_max <= 0.25 else 1


if __name__ == "__main__":
    sys.exit(main())
