#!/usr/bin/env python3
"""The phases of one decode launch per CTA, from a DEC_PROBE_TS build's D (docs/PERF.md entry 85).

A dec kernel built with -DF4GEMM_DEC_PROBE_TS=1 (scripts/variant.py --define) writes, in place of the first 40 outputs
of its tile's first row, 40 bytes as bf16 integers (10 little-endian words): %globaltimer at entry and at exit (ns,
two words each), the SM id, and clock64 at five points, cycles from entry (0 where the build does not pass the
point): the start-up's first barrier (DEC_EARLY 0), the start-up done, the main loop done, the warps' partials in
shared memory, the epilogue done. `f4gemm --out D.npy` keeps them exactly (bf16 widened to fp32). This prints, over
the CTAs: when they started and ended against the first start, and each phase's median and maximum in us (cycles
converted with each CTA's own cycles per ns).

Usage: dec_timeline.py D.npy TILE_N [--row R]
"""
import argparse
import statistics
import sys

import numpy as np

PHASES = ("start-up barrier", "start-up rest", "main loop", "partials", "sum + stores")


def records(d, tile_n, row):
    out = []
    for n0 in range(0, d.shape[1] - 39, tile_n):
        b = d[row, n0:n0 + 40]
        if not np.all((b >= 0) & (b <= 255) & (b == np.floor(b))):
            sys.exit(f"dec_timeline: columns {n0}..{n0 + 39} are not 40 byte values: not a DEC_PROBE_TS run?")
        w = [sum(int(b[4 * i + j]) << (8 * j) for j in range(4)) for i in range(10)]
        out.append({"g0": w[0] | (w[1] << 32), "g1": w[2] | (w[3] << 32), "sm": w[4], "c": w[5:10]})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("d")
    ap.add_argument("tile_n", type=int)
    ap.add_argument("--row", type=int, default=0)
    a = ap.parse_args()
    rs = records(np.load(a.d), a.tile_n, a.row)
    if not rs:
        sys.exit("dec_timeline: no tile of 40 columns in D")
    t0 = min(r["g0"] for r in rs)
    start = [(r["g0"] - t0) / 1e3 for r in rs]
    end = [(r["g1"] - t0) / 1e3 for r in rs]
    phases = {k: [] for k in PHASES}
    for r in rs:
        per_ns = r["c"][4] / max(r["g1"] - r["g0"], 1)  # cycles per ns over the CTA's life
        prev = 0
        for k, c in zip(PHASES, r["c"]):
            if c == 0:  # a point this build does not pass: its phase joins the next
                continue
            phases[k].append((c - prev) / per_ns / 1e3)
            prev = c
    print(f"{len(rs)} CTAs on {len(set(r['sm'] for r in rs))} SMs; us from the first CTA's start")
    print(f"  start  median {statistics.median(start):6.2f}  max {max(start):6.2f}")
    print(f"  end    min {min(end):6.2f}  median {statistics.median(end):6.2f}  max {max(end):6.2f}")
    for k, v in phases.items():
        if v:
            print(f"  {k:16s} median {statistics.median(v):6.2f}  max {max(v):6.2f}")


if __name__ == "__main__":
    main()
