#!/usr/bin/env python3
"""Instruction mix and stall reasons of one kernel launch from ncu's source page: which opcodes a kernel issues (share of
executed warp instructions) and where its warps wait (share of stall samples, by reason and by opcode). The summary
behind docs/PERF.md entry 33.

On the GPU machine:
  ncu --section SourceCounters --section WarpStateStats -k regex:^NAME$ --launch-skip 1 --launch-count 1 -o rep \\
      build/cli/f4gemm --kernel NAME.cubin -m M -n N -k K --iters 2 --no-verify
  ncu --import rep.ncu-rep --page source --csv --print-source sass > src.csv
Here: scripts/ncu_mix.py src.csv [--steps S --sms 132] [--range START:END] [--top N]
  S: k32 steps per CTA, for "warp instructions per step and SM"; --range: only the instructions at byte offsets START
  .. END (hex, both included, counted from the kernel's first instruction), e.g. a main loop read off
  `cuobjdump -sass` (docs/PERF.md entry 58: pab_128x128_p's loop, --range 7490:9a60).
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
        try:
            addr = int(r[col["Address"]], 16) if "Address" in col else len(out)
        except ValueError:
            addr = len(out)
        out.append((opcode(r[col["Source"]]), num("Instructions Executed"),
                    num("Warp Stall Sampling (All Samples)"), {h: num(h) for h in reasons}, addr))
    if out and "Address" in col:  # offsets from the kernel's first instruction, as cuobjdump prints them
        base = out[0][4]
        out = [r[:4] + (r[4] - base,) for r in out]
    return out


def parse_range(text):
    """'7490:9a60' -> (0x7490, 0x9a60): byte offsets, both included."""
    try:
        lo, hi = (int(x, 16) for x in text.split(":"))
    except ValueError:
        raise ValueError(f"--range {text!r}: pass START:END as hex byte offsets, e.g. 7490:9a60") from None
    if lo > hi:
        raise ValueError(f"--range {text!r}: START is past END; pass START:END with START <= END")
    return lo, hi


def in_range(rows, lo, hi):
    out = [r for r in rows if lo <= r[4] <= hi]
    if not out:
        raise ValueError(f"--range {lo:x}:{hi:x}: no instruction there; read the offsets off cuobjdump -sass")
    return out


def summary(rows, steps=0, sms=132, top=20):
    inst = collections.Counter()
    samp = collections.Counter()
    why = collections.Counter()
    for op, n, s, rs, *_ in rows:
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
    ap.add_argument("--range", dest="range_", metavar="START:END", help="hex byte offsets, both included")
    ap.add_argument("--top", type=int, default=20, help="opcodes listed")
    a = ap.parse_args(argv)
    try:
        rows = read(a.csv)
        if a.range_:
            rows = in_range(rows, *parse_range(a.range_))
        print(summary(rows, a.steps, a.sms, a.top))
    except (OSError, ValueError) as e:
        print(f"ncu_mix.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
