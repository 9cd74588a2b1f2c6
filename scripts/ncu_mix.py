#!/usr/bin/env python3
"""Instruction mix and stall reasons of one kernel launch from ncu's source page: which opcodes a kernel issues (share of
executed warp instructions) and where its warps wait (share of stall samples, by reason and by opcode). The summary
behind docs/PERF.md entry 33.

On the GPU machine:
  ncu --section SourceCounters --section WarpStateStats -k regex:^NAME$ --launch-skip 1 --launch-count 1 -o rep \\
      build/cli/f4gemm --kernel NAME.cubin -m M -n N -k K --iters 2 --no-verify
  ncu --import rep.ncu-rep --page source --csv --print-source sass > src.csv
Here: scripts/ncu_mix.py src.csv [--steps S --sms 132]   (S: k32 steps per CTA, for "warp instructions per step and SM")
"""
import argparse
import collections
import csv
import sys


def opcode(source):
    """The opcode of a SASS line without its modifiers and predicate: '@!P0 BRA 0x..' -> 'BRA'."""
    words = source.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    hdr_at = next((i for i, r in enumerate(rows) if "Source" in r and "Instructions Executed" in r), None)
    if hdr_at is None:
        raise ValueError(f"{path}: no 'Source' and 'Instructions Executed' columns: pass ncu's --page source --csv "
                         "--print-source sass output")
    hdr = rows[hdr_at]
    col = {h: i for i, h in enumerate(hdr)}
    reasons = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    out = []
    for r in rows[hdr_at + 1:]:
        if len(r) < len(hdr):
            continue

        def num(h):
            try:
                return int(float(r[col[h]] or 0))
            except (ValueError, KeyError):
                return 0
        out.append((opcode(r[col["Source"]]), num("Instructions Executed"),
                    num("Warp Stall Sampling (All Samples)"), {h: num(h) for h in reasons}))
    return out


def summary(rows, steps=0, sms=132, top=20):
    inst = collections.Counter()
    samp = collections.Counter()
    why = collections.Counter()
    for op, n, s, rs in rows:
        inst[op] += n
        samp[op] += s
        why.update(rs)
    total, stotal, wtotal = sum(inst.values()), sum(samp.values()), sum(why.values())
    if total == 0:
        raise ValueError("no executed instructions in the table: was the kernel profiled with SourceCounters?")
    lines = [f"{total} warp instructions" + (f" ({total / sms / steps:.0f} per SM and k32 step)" if steps else "") +
             f", {stotal} stall samples", "opcode        instructions  samples"]
    for op, n in inst.most_common(top):
        lines.append(f"{op:12s} {100 * n / total:6.1f}%     {100 * samp[op] / max(stotal, 1):6.1f}%")
    if wtotal:
        lines.append("stall reasons: " + ", ".join(f"{h[6:]} {100 * v / wtotal:.1f}%" for h, v in why.most_common(8)))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--steps", type=int, default=0, help="k32 steps per CTA (K / 32), for the per-step count")
    ap.add_argument("--sms", type=int, default=132)
    a = ap.parse_args(argv)
    try:
        print(summary(read(a.csv), a.steps, a.sms))
    except (OSError, ValueError) as e:
        print(f"ncu_mix.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
