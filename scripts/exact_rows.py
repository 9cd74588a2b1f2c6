#!/usr/bin/env python3
"""The exact-mode rows of a tuned table from an `f4gemm tune --accum promoted` log (which times exact and promoted
kernels together and writes only promoted rows): per shape, the fastest timed exact kernel (a code object whose name
does not end in `_p.cubin`) and its split, from the log's timed lines (candidates the screen dropped are left out).
Output: a tuned-table CSV (include/f4gemm/tuned.hpp's header) for scripts/merge_tuned.py.
Usage: scripts/exact_rows.py LOG [--cu-num 132] -o OUT.csv
Example (session 23, docs/results/2026-12-02b/call2):
  scripts/exact_rows.py call2/tune_m33_64.log -o call2/tune_m33_64_exact.csv
"""
import argparse
import re
import sys

TIMED = re.compile(r"\[f4gemm\]\s+(\d+)x(\d+)x(\d+) (\S+\.cubin)\s+split (\d+):\s+([\d.]+) us\s+[\d.]+ TF/s")
HEADER = "cu_num,M,N,K,accum,kernelName,splitK,us,tflops"


def exact_rows(lines):
    best = {}
    for line in lines:
        m = TIMED.match(line)
        if not m or m.group(4).endswith("_p.cubin"):
            continue
        shape = tuple(int(m.group(i)) for i in (1, 2, 3))
        us = float(m.group(6))
        if shape not in best or us < best[shape][2]:
            best[shape] = (m.group(4), int(m.group(5)), us)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log")
    ap.add_argument("--cu-num", type=int, default=132)
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args(argv)
    try:
        with open(a.log) as f:
            best = exact_rows(f)
    except OSError as e:
        print(f"exact_rows.py: cannot read {a.log} ({e.strerror}): pass an `f4gemm tune` log", file=sys.stderr)
        return 2
    if not best:
        print(f"exact_rows.py: {a.log} has no timed exact kernel line: pass an `f4gemm tune` log that timed exact "
              "kernels", file=sys.stderr)
        return 2
    with open(a.out, "w") as f:
        f.write(HEADER + "\n")
        for (m, n, k), (kernel, split, us) in best.items():
            f.write(f"{a.cu_num},{m},{n},{k},exact,{kernel},{split},{us},{2 * m * n * k / us / 1e6:.1f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
