#!/usr/bin/env python3
"""The phases of one decode launch per CTA, from a DEC_PROBE_TS build's D (docs/PERF.md entry 85).

A dec kernel built with -DF4GEMM_DEC_PROBE_TS=1 (scripts/variant.py --define) writes, in place of the first 32 outputs
of its tile's first row, 32 bytes as bf16 integers: %globaltimer at entry and at exit (ns), clock64 after the start-up,
after the main loop and after the epilogue (cycles from entry), and the SM id. `f4gemm --out D.npy` keeps them
exactly (bf16 widened to fp32). This prints, over the CTAs: when they started and ended against the first start,
and each phase's median and maximum in us (cycles converted with each CTA's own cycles per ns).

Usage: dec_timeline.py D.npy TILE_N [--row R]
"""
import argparse
import statistics
import sys

import numpy as np


def records(d, tile_n, row):
    out = []
    n = d.shape[1]
    for n0 in range(0, n - 31, tile_n):
        b = d[row, n0:n0 + 32]
        if not np.all((b >= 0) & (b <= 255) & (b == np.floor(b))):
            sys.exit(f"dec_timeline: columns {n0}..{n0 + 31} are not 32 byte values: not a DEC_PROBE_TS run?")
        w = [sum(int(b[4 * i + j]) << (8 * j) for j in range(4)) for i in range(8)]
        g0, g1 = w[0] | (w[1] << 32), w[2] | (w[3] << 32)
        out.append({"g0": g0, "g1": g1, "c": w[4:7], "sm": w[7]})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("d")
    ap.add_argument("tile_n", type=int)
    ap.add_argument("--row", type=int, default=0)
    a = ap.parse_args()
    d = np.load(a.d)
    rs = records(d, a.tile_n, a.row)
    t0 = min(r["g0"] for r in rs)
    start = [(r["g0"] - t0) / 1e3 for r in rs]
    end = [(r["g1"] - t0) / 1e3 for r in rs]
    phases = {"start-up": [], "main loop": [], "epilogue": []}
    for r in rs:
        ns = max(r["g1"] - r["g0"], 1)
        per_ns = r["c"][2] / ns  # cycles per ns over the CTA's life
        c = [0] + r["c"]
        for i, k in enumerate(phases):
            phases[k].append((c[i + 1] - c[i]) / per_ns / 1e3)
    print(f"{len(rs)} CTAs on {len(set(r['sm'] for r in rs))} SMs; us from the first CTA's start")
    print(f"  start  median {statistics.median(start):6.2f}  max {max(start):6.2f}")
    print(f"  end    min {min(end):6.2f}  median {statistics.median(end):6.2f}  max {max(end):6.2f}")
    for k, v in phases.items():
        print(f"  {k:9s} median {statistics.median(v):6.2f}  max {max(v):6.2f}")


if __name__ == "__main__":
    main()
