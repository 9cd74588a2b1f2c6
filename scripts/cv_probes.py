#!/usr/bin/env python3
"""Probe builds of a converter-warpgroup kernel (kernels/sm90a/sm90_mxfp4_gemm_cv.cu, family cv): each probe is the
kernel's config from kernels.json compiled with -DF4GEMM_CV_PROBE=P, a bit set that removes parts of the work so the
rest can be timed alone (wrong results by design; docs/PERF.md entry 36):

  1  A's image copied only into the first round of ring slots     8  W's chunks likewise
  2  the conversion runs with an all-zero LUT                     4  no wgmma (consumers only pass their barriers)
  16 converters only pass their barriers (no loads, stores, fence)
  32 converters skip only their fence                             64 converters skip only their image stores
  e.g. 9 = no copies after the first round, 13 = converters alone, 25 = consumer alone, 20 = memory alone,
  29 = every role only passes its barriers

Writes OUTDIR/<name>_probe<P>.cubin and a manifest beside them (the kernel's row from the build's manifest, renamed,
offered for every M), ready for `f4gemm tune --co-dir OUTDIR --no-verify` on the GPU machine. Session 13's probe logs
(docs/results/2026-12-01f) were made this way.

Usage: scripts/cv_probes.py NAME OUTDIR P [P ...] [--build build] [--nvcc PATH] [--dry-run]
Example: scripts/cv_probes.py f4gemm_sm90a_cv_64x128_p probes 0 13 20 25 29
         build/cli/f4gemm tune --co-dir probes --shape 64x16384x16384 --accum promoted --no-verify --reps 3 --iters 10
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys

from variant import FLAGS, Refusal, find_built  # the build's nvcc flags and manifest search, one copy in scripts/

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SRC = os.path.join(REPO, "kernels", "sm90a")
MANIFEST = "f4gemm_bf16_per1x32Fp4.csv"
PROBE_BITS = 1 | 2 | 4 | 8 | 16 | 32 | 64


def fail(msg):
    print(f"cv_probes.py: {msg}", file=sys.stderr)
    sys.exit(2)


def config_of(name):
    """(source file, -D definitions) of kernels.json's cv config NAME."""
    with open(os.path.join(SRC, "kernels.json")) as f:
        table = json.load(f)
    fam = table["cv"]
    for cfg in fam["configs"]:
        if cfg["name"] == name:
            return fam["source"], [f"-DF4GEMM_{p}={cfg[p]}" for p in fam["params"]]
    names = ", ".join(c["name"] for c in fam["configs"])
    fail(f"'{name}' is not a cv config of kernels/sm90a/kernels.json: use one of {names}")


def manifest_row(build, name):
    """(header, row) of NAME in the build's shipped or dev manifest (variant.find_built's search)."""
    try:
        _, header, line = find_built(build, name)
    except Refusal:
        fail(f"no manifest row for {name} under {build}/kernels/sm90a: build first (scripts/build.sh)")
    return header, line.split(",")


def probe_row(header, cols, probe_name):
    """The kernel's row renamed to the probe, offered for every M (max_m, min_m empty) at priority 38."""
    h = header.split(",")
    row = list(cols)
    row[h.index("knl_name")] = probe_name
    row[h.index("co_name")] = probe_name + ".cubin"
    row[h.index("max_m")] = ""
    row[h.index("min_m")] = ""
    row[h.index("priority")] = "38"
    return ",".join(row)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("name")
    ap.add_argument("outdir")
    ap.add_argument("probes", nargs="+", type=int)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--nvcc", default=None)
    ap.add_argument("--dry-run", action="store_true", help="print the nvcc commands and the manifest, write nothing")
    a = ap.parse_args(argv)
    for p in a.probes:
        if p < 0 or p & ~PROBE_BITS:
            fail(f"probe {p} has bits outside {PROBE_BITS} (1, 2, 4, 8, 16, 32, 64): pass a sum of those")
    source, defs = config_of(a.name)
    header, cols = manifest_row(a.build, a.name)
    nvcc = a.nvcc or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not a.dry_run and not os.access(nvcc, os.X_OK):
        fail(f"no nvcc at '{nvcc}': pass --nvcc PATH")
    rows, cmds = [header], []
    for p in a.probes:
        probe = f"{a.name}_probe{p}"
        cmd = [nvcc] + FLAGS + \
              [d for d in defs if not d.startswith("-DF4GEMM_KNL_NAME")] + \
              [f"-DF4GEMM_KNL_NAME={probe}", f"-DF4GEMM_CV_PROBE={p}", "-cubin",
               "-o", os.path.join(a.outdir, probe + ".cubin"), os.path.join(SRC, source)]
        cmds.append(cmd)
        rows.append(probe_row(header, cols, probe))
    if a.dry_run:
        for cmd in cmds:
            print(shlex.join(cmd))
        print("\n".join(rows))
        return 0
    os.makedirs(a.outdir, exist_ok=True)
    for cmd in cmds:
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"nvcc failed for {cmd[-3]}: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
    with open(os.path.join(a.outdir, MANIFEST), "w") as f:
        f.write("\n".join(rows) + "\n")
    print(f"cv_probes.py: {len(cmds)} probe builds of {a.name} in {a.outdir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
