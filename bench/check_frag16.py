#!/usr/bin/env python3
"""bench.py's torch frag16_pack (and bitplane_pack) against the C++ library, byte for byte.

Writes a random uint8 [64, 512] B (K = 1024, plain packed e2m1) as .npy, runs
`f4gemm pack --layout frag16` (and `--layout bitplane`) on it and compares with the torch functions
on CPU tensors; also checks that `--inverse` gives the input back. Needs torch and numpy (the
GPU machine has both; no GPU is used). Prints one line, PASSED or FAILED: ..., and exits 0 or 1.

Usage: python3 bench/check_frag16.py [--f4gemm build/cli/f4gemm]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import bitplane_pack, frag16_pack, frag16s_pack  # noqa: E402


def cli_pack(exe, layout, x, tmp, inverse=False, extra=()):
    src, dst = os.path.join(tmp, "in.npy"), os.path.join(tmp, "out.npy")
    np.save(src, x)
    cmd = [exe, "pack", "--layout", layout, "--in", src, "--out", dst] + (["--inverse"] if inverse else [])
    cmd += list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    return np.load(dst)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--f4gemm", default="build/cli/f4gemm", help="the f4gemm command (default build/cli/f4gemm)")
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--cols", type=int, default=512, help="K/2 bytes per row")
    args = ap.parse_args()
    try:
        g = torch.Generator().manual_seed(1234)
        b = torch.randint(0, 256, (args.rows, args.cols), dtype=torch.uint8, generator=g)
        x = b.numpy()
        problems = []
        with tempfile.TemporaryDirectory() as tmp:
            for layout, fn in (("bitplane", bitplane_pack), ("frag16", frag16_pack)):
                want = cli_pack(args.f4gemm, layout, x, tmp)
                got = fn(b).numpy()
                if got.shape != want.shape:
                    problems.append(f"{layout}: torch shape {got.shape}, f4gemm {want.shape}")
                elif not np.array_equal(got, want):
                    bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
                    problems.append(f"{layout}: {bad.size} bytes differ, first at byte {bad[0]} "
                                    f"(torch {got.reshape(-1)[bad[0]]:#04x}, f4gemm {want.reshape(-1)[bad[0]]:#04x})")
                if not np.array_equal(cli_pack(args.f4gemm, layout, want, tmp, inverse=True), x):
                    problems.append(f"{layout}: f4gemm pack --inverse does not give the input back")
            # frag16s: B and its scales into one image, and back (--scales is the input, then the output)
            sb = torch.randint(0, 256, (args.rows, args.cols // 16), dtype=torch.uint8, generator=g)
            sp, su = os.path.join(tmp, "sb.npy"), os.path.join(tmp, "su.npy")
            np.save(sp, sb.numpy())
            want = cli_pack(args.f4gemm, "frag16s", x, tmp, extra=["--scales", sp])
            got = frag16s_pack(b, sb).numpy()
            if got.shape != want.shape or not np.array_equal(got, want):
                problems.append(f"frag16s: torch {got.shape} and f4gemm {want.shape} differ")
            back = cli_pack(args.f4gemm, "frag16s", want, tmp, inverse=True, extra=["--scales", su])
            if not np.array_equal(back, x) or not np.array_equal(np.load(su), sb.numpy()):
                problems.append("frag16s: f4gemm pack --inverse does not give B and its scales back")
            if np.array_equal(frag16_pack(b).numpy(), bitplane_pack(b).numpy()):
                problems.append("frag16: same bytes as bitplane (the shuffle did nothing)")
    except Exception as e:  # noqa: BLE001
        problems = [f"{type(e).__name__}: {e}"]
    if problems:
        print(f"FAILED: {'; '.join(problems)}")
        return 1
    print(f"PASSED: frag16_pack, frag16s_pack and bitplane_pack match f4gemm pack byte for byte on "
          f"[{args.rows}, {args.cols}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
