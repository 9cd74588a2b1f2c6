#!/usr/bin/env python3
"""Where a bench run stands against the targets of issues 16 and 17, and what moved against an earlier run.

The issues were closed as blocked (docs/PERF.md entry 93 sets each target beside its measured ceilings).

Reads the bench.json that bench/bench.py writes (docs/BENCH.md) and prints, per target of issues 16 and 17
(TARGETS below, the one copy of them in the tree), how many grid cells meet it and the worst cell; per M and mode
the range of f4gemm against each peer and its read floor; and with --base, per cell and mode, the new time over
the old one beside the two runs' spreads, so that a move inside the spread is not taken for a change. The targets
are the issues' H200 figures: a bench from another card is reported all the same, under a line that says so.

Usage: python3 bench/grid_report.py BENCH.json [--base OLD_BENCH.json]
"""
import argparse
import json
import os
import sys
from dataclasses import dataclass
from typing import Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import ACCUMS, PEERS, f4_system  # noqa: E402  (bench.py's names; it imports torch only in main())

TARGET_CARD = "H200"


@dataclass(frozen=True)
class Target:
    issue: int
    mode: str                      # the accumulation mode judged
    ms: Tuple[int, ...]            # the grid's M it covers
    measure: str                   # "peer": peer us / f4gemm us >= bound; "floor": f4gemm us / floor us <= bound;
    #                                "untuned_floor": the untuned pick's us / floor us <= bound
    bound: float
    peer: Optional[str] = None     # for "peer"

    def name(self):
        ms = ", ".join(str(m) for m in self.ms)
        if self.measure == "peer":
            return f"{self.mode} vs {self.peer} >= {self.bound:g}x at M = {ms}"
        what = "untuned pick" if self.measure == "untuned_floor" else "f4gemm"
        return f"{self.mode} {what} / read floor <= {self.bound:g} at M = {ms}"


# Issue 16 (the promoted mode, M >= 128) and issue 17 (decode, M <= 64), as the issues state them.
TARGETS = (
    Target(16, "promoted", (128,), "peer", 1.15, "cublaslt_fp8"),
    Target(16, "promoted", (256, 512, 1024, 4096), "peer", 0.9, "cublaslt_fp8"),
    Target(16, "exact", (128, 256, 512, 1024, 4096), "peer", 1.0, "cublas_bf16"),
    Target(17, "exact", (1, 16), "floor", 1.25),
    Target(17, "promoted", (1, 16), "floor", 1.25),
    Target(17, "promoted", (32, 64), "floor", 1.5),
    Target(17, "exact", (1, 16), "untuned_floor", 1.4),
    Target(17, "promoted", (1, 16), "untuned_floor", 1.4),
    Target(17, "promoted", (32, 64), "untuned_floor", 1.7),
)


def cell(row):
    return f"{row['M']} x {row['N']} x {row['K']}"


def value(row, target):
    """The target's figure for one bench row, or None where the row lacks what it needs."""
    s = row.get("systems", {})
    f4 = s.get(f4_system(target.mode), {}).get("us")
    if target.measure == "peer":
        peer = s.get(target.peer, {}).get("us")
        return peer / f4 if f4 and peer else None
    floor = s.get("read_floor", {}).get("us")
    if target.measure == "untuned_floor":
        f4 = row.get("f4gemm_untuned", {}).get(target.mode, {}).get("us")
    return f4 / floor if f4 and floor else None


def meets(target, v):
    return v >= target.bound if target.measure == "peer" else v <= target.bound


def judge(rows, target):
    """(cells meeting it, cells measured, (worst cell, its figure) or None)."""
    vals = [(cell(r), value(r, target)) for r in rows if r["M"] in target.ms]
    vals = [(c, v) for c, v in vals if v is not None]
    if not vals:
        return 0, 0, None
    worst = min(vals, key=lambda cv: cv[1]) if target.measure == "peer" else max(vals, key=lambda cv: cv[1])
    return sum(meets(target, v) for _, v in vals), len(vals), worst


def ranges(rows):
    """{(M, mode): {figure: (min, max)}} over the rows' N x K: each peer's us / f4gemm us and f4gemm us / floor us."""
    out = {}
    for r in rows:
        for mode in ACCUMS:
            f4 = r["systems"].get(f4_system(mode), {}).get("us")
            if not f4:
                continue
            figs = {p: r["systems"][p]["us"] / f4 for p in PEERS if r["systems"].get(p, {}).get("us")}
            if r["systems"].get("read_floor", {}).get("us"):
                figs["/floor"] = f4 / r["systems"]["read_floor"]["us"]
            d = out.setdefault((r["M"], mode), {})
            for k, v in figs.items():
                lo, hi = d.get(k, (v, v))
                d[k] = (min(lo, v), max(hi, v))
    return out


def moves(rows, base_rows):
    """Per cell and mode in both runs: (cell, mode, old us, new us, new / old, the larger spread, kernel changed)."""
    old = {(r["M"], r["N"], r["K"]): r for r in base_rows}
    out = []
    for r in rows:
        b = old.get((r["M"], r["N"], r["K"]))
        if not b:
            continue
        for mode in ACCUMS:
            sys_ = f4_system(mode)
            n, o = r["systems"].get(sys_), b["systems"].get(sys_)
            if not n or not o:
                continue
            kn = r.get("f4gemm", {}).get(mode, {}).get("kernel")
            ko = b.get("f4gemm", {}).get(mode, {}).get("kernel")
            out.append((cell(r), mode, o["us"], n["us"], n["us"] / o["us"], max(n.get("spread", 0), o.get("spread", 0)),
                        kn != ko))
    return out


def load(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"grid_report: cannot read {path} ({e}): pass the bench.json that bench/bench.py wrote")
    if not isinstance(d, dict) or not isinstance(d.get("rows"), list):
        raise SystemExit(f"grid_report: {path} has no 'rows' list: pass the bench.json that bench/bench.py wrote")
    return d


def report(d, base=None):
    rows = d["rows"]
    lines = [f"bench of {d.get('when', '?')} on {d.get('device', '?')} ({len(rows)} cells)"]
    if TARGET_CARD not in str(d.get("device", "")):
        lines.append(f"note: the targets are the issues' {TARGET_CARD} figures; this bench ran on {d.get('device')}")
    lines.append("targets:")
    for t in TARGETS:
        ok, n, worst = judge(rows, t)
        if not n:
            lines.append(f"  issue {t.issue}: {t.name()}: no cell measured")
            continue
        tail = "" if ok == n else f"; worst {worst[0]} at {worst[1]:.2f}"
        lines.append(f"  issue {t.issue}: {t.name()}: {ok} of {n} cells{tail}")
    lines.append("ranges over N x K (peer us / f4gemm us; f4gemm us / read floor us):")
    for (m, mode), figs in sorted(ranges(rows).items()):
        lines.append(f"  M = {m:4d} {mode:8s} " + "  ".join(f"{k} {lo:.2f}-{hi:.2f}" for k, (lo, hi) in figs.items()))
    if base is not None:
        lines.append(f"against the bench of {base.get('when', '?')} on {base.get('device', '?')} (new us / old us; "
                     "'*' where the move exceeds the larger of the two cells' spreads, 'k' where the kernel changed):")
        for c, mode, o, n, ratio, spread, kchg in moves(rows, base["rows"]):
            mark = ("*" if abs(ratio - 1) > spread else " ") + ("k" if kchg else " ")
            lines.append(f"  {c:22s} {mode:8s} {o:9.1f} -> {n:9.1f} us  {ratio:.3f} {mark} (spread {spread:.1%})")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", help="bench.json of the run to report")
    ap.add_argument("--base", help="bench.json of an earlier run to compare with")
    a = ap.parse_args(argv)
    d = load(a.bench)
    base = load(a.base) if a.base else None
    print("\n".join(report(d, base)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
