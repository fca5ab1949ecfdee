#!/usr/bin/env python3
"""Best of interleaved bench rounds (device_run.sh cutab): lines
'PREFIX round=R KEY=VAL ... name=(gla|gdn)_chunk_ROW T=N ... ms=X', grouped by the KEY=VAL
fields before name= (round= aside), T, kind and row; the least ms of each, every SWLA row also
as a ratio to its group's plain row.  Usage: rounds_best.py PREFIX ROWS_FILE"""
import re
import sys

prefix, path = sys.argv[1], sys.argv[2]
best = {}
for line in open(path):
    m = re.search(r"name=(gla|gdn)_chunk_(\w+) T=(\d+).*ms=([\d.]+)", line)
    if not m:
        continue
    keys = tuple(kv for kv in re.findall(r"(\w+=\S+)", line[:m.start()]) if not kv.startswith("round="))
    k = (keys, int(m.group(3)), m.group(1), m.group(2))
    best[k] = min(best.get(k, 1e9), float(m.group(4)))
for (keys, T, kind, row), ms in sorted(best.items()):
    p = best.get((keys, T, kind, "plain"))
    ratio = f" ({ms / p:.3f}x plain)" if p and row != "plain" else ""
    print(f"{prefix} best {' '.join(keys)} T={T} {kind} {row} {ms:.3f} ms{ratio}")
