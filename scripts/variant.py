#!/usr/bin/env python3
"""Lab variants of an sm_90a kernel: a config of kernels/sm90a/kernels.json with some of its family's params changed
(PARAM=VALUE ...), compiled under the name NAME_SUFFIX with the build's own nvcc flags, and its manifest row written
by the build's own manifest.cmake from the variant's PTX (so smem_bytes, threads, the tile, reg_ctas ... are what the
variant exports, not the base config's), appended to OUTDIR's manifest (a row of the same name is replaced).
`f4gemm tune --co-dir OUTDIR` then times the variants against each other in one process, on the GPU machine.

A variant with no PARAM=VALUE is the config itself under another name: its SASS is the built kernel's (tested),
the `_b0` every A/B of docs/PERF.md since entry 64 timed beside its variants. The -D flags are kernels.json's
params in the family's order, as kernels/sm90a/CMakeLists.txt passes them, then each --define (a lab-only macro
outside the family's params, e.g. a probe switch; a family param is refused there: pass it as PARAM=VALUE).
--also copies further built kernels (the shipped peers of an A/B) with --with-built's.

Usage: scripts/variant.py OUTDIR NAME SUFFIX [PARAM=VALUE ...] [--define MACRO=VALUE ...]
                          [--with-built BUILD [--also OTHER ...]] [--nvcc PATH] [--cmake PATH] [--dry-run]
Example: scripts/variant.py ab f4gemm_sm90a_pab_128x128 b0
         scripts/variant.py ab f4gemm_sm90a_pab_128x128 st3 STAGES=3 --with-built build   (+ the built kernel itself)
         scripts/variant.py ab f4gemm_sm90a_cv_128x64_p pr25 --define F4GEMM_CV_PROBE=25 \
             --with-built build --also f4gemm_sm90a_pab_128x128_p   (a lab macro; + two built kernels to time beside)
         build/cli/f4gemm tune --co-dir ab --shape 128x16384x16384 --no-verify --reps 3 --iters 10
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SRC = os.path.join(REPO, "kernels", "sm90a")
MANIFEST = "f4gemm_bf16_per1x32Fp4.csv"
# kernels/sm90a/CMakeLists.txt: F4GEMM_SM90A_FLAGS, and the optional config keys of a manifest entry (0 when absent)
FLAGS = ["-std=c++17", "-O3", "-gencode", "arch=compute_90a,code=sm_90a", "-I" + os.path.join(REPO, "include"),
         "-I" + SRC]
ENTRY_KEYS = ["priority", "max_m", "min_m", "cost_wave_k", "cost_prepass", "cost_wave_us", "decode_round",
              "decode_warps", "decode_speed"]


class Refusal(Exception):
    pass


def find_config(name, table=None):
    """(family, family table, config) of kernels.json's config NAME."""
    if table is None:
        with open(os.path.join(SRC, "kernels.json")) as f:
            table = json.load(f)
    for family, fam in table.items():
        if not isinstance(fam, dict) or "configs" not in fam:
            continue
        for cfg in fam["configs"]:
            if cfg["name"] == name:
                return family, fam, cfg
    raise Refusal(f"'{name}' is not a config of kernels/sm90a/kernels.json: see build/cli/f4gemm --list "
                  f"(and build/kernels/sm90a/dev) for the names")


def parse_overrides(family, fam, pairs):
    """{PARAM: int} from PARAM=VALUE arguments, each PARAM one of the family's params."""
    params = list(fam["params"])
    out = {}
    for s in pairs:
        m = re.fullmatch(r"([A-Z][A-Z0-9_]*)=(-?[0-9]+)", s)
        if not m:
            raise Refusal(f"'{s}' is not PARAM=VALUE with an integer VALUE: pass e.g. STAGES=4")
        if m.group(1) not in params:
            raise Refusal(f"'{m.group(1)}' is not a param of the {family} family: use one of {', '.join(params)}")
        if m.group(1) in out:
            raise Refusal(f"'{m.group(1)}' is given twice: pass each param once")
        out[m.group(1)] = int(m.group(2))
    return out


def parse_defines(family, fam, pairs):
    """[(MACRO, VALUE)] from --define MACRO=VALUE, none of them the kernel's name or one of the family's params."""
    taken = {"F4GEMM_KNL_NAME"} | {f"F4GEMM_{p}" for p in fam["params"]}
    out = []
    for s in pairs:
        m = re.fullmatch(r"([A-Z_][A-Z0-9_]*)=(-?[0-9]+)", s)
        if not m:
            raise Refusal(f"--define '{s}' is not MACRO=VALUE with an integer VALUE: pass e.g. F4GEMM_CV_PROBE=13")
        if m.group(1) in taken:
            raise Refusal(f"--define '{m.group(1)}' is set by variant.py itself: pass a {family} param as "
                          f"PARAM=VALUE (without F4GEMM_)")
        if m.group(1) in [d for d, _ in out]:
            raise Refusal(f"--define '{m.group(1)}' is given twice: pass each macro once")
        out.append((m.group(1), int(m.group(2))))
    return out


def defines(variant, fam, cfg, overrides, extra=()):
    """The -D flags of the variant: its name, the family's params in order (kernels.json's values, overridden),
    then the extra macros (parse_defines)."""
    return [f"-DF4GEMM_KNL_NAME={variant}"] + \
        [f"-DF4GEMM_{p}={overrides.get(p, cfg[p])}" for p in fam["params"]] + [f"-D{d}={v}" for d, v in extra]


def entry_line(variant, cfg, ptx):
    """The variant's line for manifest.cmake: its name, the base config's policy fields, its PTX."""
    return ",".join([variant] + [str(cfg.get(k, 0)) for k in ENTRY_KEYS] + [ptx])


def merge_row(path, header, row):
    """OUTDIR's manifest with ROW appended, or replacing the row of the same knl_name; its header must match."""
    lines = []
    if os.path.exists(path):
        with open(path) as f:
            lines = f.read().splitlines()
        if lines and lines[0] != header:
            raise Refusal(f"{path} has another header than this build's manifest: use a fresh OUTDIR")
    if not lines:
        lines = [header]
    name = row.split(",")[4]
    body = [l for l in lines[1:] if l.split(",")[4] != name]
    return "\n".join([header] + body + [row]) + "\n"


def add_row(outdir, header, row):
    """OUTDIR's manifest rewritten with ROW (merge_row), through a temporary file: never half written."""
    path = os.path.join(outdir, MANIFEST)
    text = merge_row(path, header, row)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def find_built(build, name):
    """(folder, manifest header, row) of NAME in BUILD's shipped or dev manifest."""
    for sub in ("", "dev"):
        d = os.path.join(build, "kernels", "sm90a", sub)
        man = os.path.join(d, MANIFEST)
        if not os.path.exists(man):
            continue
        with open(man) as f:
            lines = f.read().splitlines()
        for line in lines[1:]:
            if line.split(",")[4] == name:
                return d, lines[0], line
    raise Refusal(f"no built {name} under {build}/kernels/sm90a: build first (scripts/build.sh) or drop --with-built")


def copy_built(built, outdir, header):
    """The built kernel's cubin and row (find_built) into OUTDIR's manifest."""
    d, built_header, line = built
    if built_header != header:
        raise Refusal(f"{d}/{MANIFEST} has another header than this source's manifest.cmake: rebuild (scripts/build.sh)")
    co = line.split(",")[5]
    shutil.copyfile(os.path.join(d, co), os.path.join(outdir, co))
    add_row(outdir, header, line)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("name")
    ap.add_argument("suffix")
    ap.add_argument("overrides", nargs="*", metavar="PARAM=VALUE")
    ap.add_argument("--nvcc", default=None)
    ap.add_argument("--cmake", default=None)
    ap.add_argument("--dry-run", action="store_true", help="print the nvcc commands and the manifest entry, write nothing")
    ap.add_argument("--with-built", metavar="BUILD", default=None,
                    help="also copy NAME's built cubin and manifest row from BUILD (e.g. build) into OUTDIR, so the "
                         "shipped kernel is timed beside its variants")
    ap.add_argument("--also", metavar="OTHER", action="append", default=[],
                    help="with --with-built: copy this built kernel too (repeatable), e.g. the shipped peers of an A/B")
    ap.add_argument("--define", metavar="MACRO=VALUE", action="append", default=[],
                    help="an extra -D for the variant's nvcc commands (repeatable): a lab macro outside the family's "
                         "params, e.g. F4GEMM_CV_PROBE=13")
    a = ap.parse_args(argv)
    try:
        if not re.fullmatch(r"[A-Za-z0-9]+", a.suffix):
            raise Refusal(f"suffix '{a.suffix}' must be letters and digits (it ends the kernel's name): pass e.g. st3")
        family, fam, cfg = find_config(a.name)
        overrides = parse_overrides(family, fam, a.overrides)
        extra = parse_defines(family, fam, a.define)
        if a.also and not a.with_built:
            raise Refusal("--also copies built kernels: pass --with-built BUILD (e.g. build) too")
        built = find_built(a.with_built, a.name) if a.with_built else None
        others = [find_built(a.with_built, o) for o in a.also]  # every name checked before anything is compiled
        variant = f"{a.name}_{a.suffix}"
        nvcc = a.nvcc or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        cmake = a.cmake or shutil.which("cmake") or "cmake"
        source = os.path.join(SRC, fam["source"])
        cubin = os.path.join(os.path.abspath(a.outdir), variant + ".cubin")
        tmp = tempfile.mkdtemp(prefix="f4gemm_variant.")
        ptx = os.path.join(tmp, variant + ".ptx")
        defs = defines(variant, fam, cfg, overrides, extra)
        cmds = [[nvcc] + FLAGS + defs + ["-ptx", "-o", ptx, source],
                [nvcc] + FLAGS + defs + ["-cubin", "-o", cubin, source]]
        if a.dry_run:
            shutil.rmtree(tmp)
            for cmd in cmds:
                print(shlex.join(cmd))
            print(entry_line(variant, cfg, ptx))
            return 0
        if not os.access(nvcc, os.X_OK):
            raise Refusal(f"no nvcc at '{nvcc}': pass --nvcc PATH")
        try:
            os.makedirs(a.outdir, exist_ok=True)
            for cmd in cmds:
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    err = [l for l in r.stderr.splitlines() if "error" in l] or r.stderr.strip().splitlines() or [""]
                    raise Refusal(f"nvcc failed for {variant} ({' '.join(a.overrides + a.define) or 'no overrides'}): "
                                  f"{err[0].strip()}")
            entries, csv = os.path.join(tmp, "entries"), os.path.join(tmp, MANIFEST)
            with open(entries, "w") as f:
                f.write(entry_line(variant, cfg, ptx) + "\n")
            r = subprocess.run([cmake, f"-DENTRIES={entries}", f"-DOUT={csv}", "-P",
                                os.path.join(SRC, "manifest.cmake")], capture_output=True, text=True)
            if r.returncode != 0:
                raise Refusal(f"manifest.cmake failed for {variant}: {r.stderr.strip().splitlines()[-1:]}")
            with open(csv) as f:
                header, row = f.read().splitlines()[:2]
            add_row(a.outdir, header, row)
        except Refusal:
            if os.path.exists(cubin):
                os.remove(cubin)  # no cubin without its manifest row
            raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for b in ([built] if built else []) + others:
            copy_built(b, a.outdir, header)
        cols = dict(zip(header.split(","), row.split(",")))
        print(f"variant.py: {variant} in {a.outdir} (smem_bytes {cols['smem_bytes']}, threads {cols['threads']}, "
              f"tile {cols['tile_M']}x{cols['tile_N']}{', ' + ' '.join(a.overrides + a.define) if a.overrides or a.define else ''})"
              + (f"; copied from {a.with_built}: {', '.join([a.name] + a.also)}" if built else ""))
        return 0
    except Refusal as e:
        print(f"variant.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
