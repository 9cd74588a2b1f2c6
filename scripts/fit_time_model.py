#!/usr/bin/env python3
"""The policy's time model constants (kernels/sm90a/kernels.json cost_wave_k, cost_wave_us) fitted to the measured
tables (tests/data/*_measured.csv: M,N,K,kernel,split,us,screen), the way PERF.md entry 76 fitted them.

For each kernel of MANIFEST (a built sm_90a manifest: tile, threads, shared memory, reg_ctas, abi, min_m, max_m,
cost_prepass, and the constants to compare) that carries a model (cost_wave_k > 0), every timed row (screen 0)
inside its min_m..max_m is one equation of src/driver/session.cpp's predicted_us:

    us = waves * (cost_wave_us + cost_wave_k * K_launch / 2^L) + cost_prepass * rows * K_launch + S * (L > 0)

(waves = ceil(tiles * 2^L / (CUs x CTAs per CU)), K_launch = K padded to 256, rows = the rows its pre-pass converts),
solved by least squares on the relative error (each row weighted by 1 / us) for cost_wave_us, cost_wave_k and, for a
kernel with split rows, its own S. cost_prepass is kept. A row of one (M, N, K, kernel, split) is taken from the
first table that has it. Prints, per kernel, the fit and the median and largest relative error of the manifest's
constants and of the fit (with the policy's split term, --split-us). --check: exit 1 unless the manifest's constants
are the fit's, rounded as kernels.json writes them (cost_wave_k to 5 decimals, cost_wave_us to 2). --write JSON:
write the fit, so rounded, into that kernels.json (each fitted config's cost_wave_k and cost_wave_us, in place, the
rest of the file untouched; rebuild, and the manifest then passes --check).

Usage: scripts/fit_time_model.py MANIFEST TABLE [TABLE ...] [--num-cu 132] [--split-us 7] [--check | --write JSON]
Example: scripts/fit_time_model.py build/kernels/sm90a/f4gemm_bf16_per1x32Fp4.csv tests/data/grid_measured.csv \\
             tests/data/decode_measured.csv tests/data/offgrid_measured.csv --check
Exit: 0 done (and, with --check, every constant matches), 1 a constant differs, 2 bad input.
"""
import argparse
import csv
import json
import re
import statistics
import sys

try:
    import numpy as np
except ImportError:  # pragma: no cover - the venvs that run this have numpy
    np = None


class Refusal(Exception):
    pass


def ctas_per_sm(row):
    """src/core/abi.cpp sm90_ctas_per_sm."""
    c = 32
    smem, threads, reg = (int(row.get(k) or 0) for k in ("smem_bytes", "threads", "reg_ctas"))
    if smem > 0:
        c = min(c, (228 * 1024) // (smem + 1024))
    if threads > 0:
        c = min(c, 2048 // threads)
    if reg > 0:
        c = min(c, reg)
    return max(1, c)


def terms(row, m, n, k, log2_split, num_cu):
    """(waves, K_launch, pre-pass rows) of predicted_us."""
    tm, tn = int(row["tile_M"]), int(row["tile_N"])
    kp = (k + 255) // 256 * 256
    tiles = ((m + tm - 1) // tm) * ((n + tn - 1) // tn)
    slots = num_cu * ctas_per_sm(row)
    waves = ((tiles << log2_split) + slots - 1) // slots
    rows = 0
    if row["abi"] in ("sm90pp1", "sm90pp2"):
        rows = ((m + tm - 1) // tm) * tm + ((n + tn - 1) // tn) * tn
    elif row["abi"] == "sm90pa1":
        rows = ((m + tm - 1) // tm) * tm
    return waves, kp, rows


def load_manifest(path):
    try:
        with open(path) as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise Refusal(f"cannot read manifest '{path}' ({e.strerror}): pass a built one "
                      "(build/kernels/sm90a/f4gemm_bf16_per1x32Fp4.csv)")
    need = {"co_name", "tile_M", "tile_N", "abi", "cost_wave_k"}
    if not rows or not need <= set(rows[0]):
        raise Refusal(f"'{path}' is not an sm_90a manifest with a cost_wave_k column: pass a built one")
    return {r["co_name"]: r for r in rows}


def load_tables(paths, manifest):
    """{co_name: [(M, N, K, L, us)]}: timed rows of modelled kernels inside their min_m..max_m."""
    seen, out = set(), {}
    for path in paths:
        try:
            f = open(path)
        except OSError as e:
            raise Refusal(f"cannot read table '{path}' ({e.strerror}): pass tests/data/*_measured.csv")
        with f:
            lines = [line for line in f if line.strip() and not line.startswith("#")]
        if not lines or lines[0].strip() != "M,N,K,kernel,split,us,screen":
            raise Refusal(f"'{path}' is not a measured table (header M,N,K,kernel,split,us,screen)")
        for line in lines[1:]:
            m, n, k, kernel, split, us, screen = line.strip().split(",")
            key = (int(m), int(n), int(k), kernel, int(split))
            if int(screen) or key in seen:
                continue
            seen.add(key)
            row = manifest.get(kernel)
            if row is None or float(row["cost_wave_k"] or 0) <= 0:
                continue
            lo, hi = int(row.get("min_m") or 0), int(row.get("max_m") or 0)
            if key[0] < lo or (hi and key[0] > hi):
                continue
            out.setdefault(kernel, []).append((key[0], key[1], key[2], key[4], float(us)))
    return out


def fit(row, data, num_cu):
    """(cost_wave_us, cost_wave_k, S or None) by weighted least squares."""
    p = float(row.get("cost_prepass") or 0)
    has_split = any(d[3] for d in data)
    a, b, w = [], [], []
    for m, n, k, l, us in data:
        waves, kp, rows = terms(row, m, n, k, l, num_cu)
        a.append([waves, waves * kp / (1 << l)] + ([1.0 if l else 0.0] if has_split else []))
        b.append(us - p * rows * kp)
        w.append(1.0 / us)
    a, b, w = np.array(a), np.array(b), np.array(w)
    sol = np.linalg.lstsq(a * w[:, None], b * w, rcond=None)[0]
    return float(sol[0]), float(sol[1]), (float(sol[2]) if has_split else None)


def predict(row, m, n, k, log2_split, num_cu, wave_us, wave_k, split_us):
    """src/driver/session.cpp predicted_us with these constants (a test holds it to the CLI's --explain lines)."""
    waves, kp, rows = terms(row, m, n, k, log2_split, num_cu)
    return (waves * (wave_us + wave_k * kp / (1 << log2_split)) + float(row.get("cost_prepass") or 0) * rows * kp
            + (split_us if log2_split else 0.0))


def errors(row, data, num_cu, wave_us, wave_k, split_us):
    e = [abs(predict(row, m, n, k, l, num_cu, wave_us, wave_k, split_us) / us - 1) for m, n, k, l, us in data]
    return statistics.median(e), max(e)


def write_fit(path, fits):
    """Rewrites each named config's cost_wave_k and cost_wave_us in the kernels.json text at path ({knl_name: (us,
    k)}; cost_wave_us is added after cost_wave_k where the config has none). Refuses a config it cannot find."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise Refusal(f"cannot read '{path}' ({e.strerror}): pass kernels/sm90a/kernels.json")
    for name, (wave_us, wave_k) in sorted(fits.items()):
        at = text.find(f'"name": "{name}"')
        if at < 0:
            raise Refusal(f"'{path}' has no config named {name}: pass the kernels.json the manifest was built from")
        end = text.find("}", at)  # a config is one flat object
        body = text[at:end]
        new = f'"cost_wave_k": {round(wave_k, 5):g}, "cost_wave_us": {round(wave_us, 2):g}'
        body, n = re.subn(r'"cost_wave_k": [0-9.eE+-]+(, "cost_wave_us": [0-9.eE+-]+)?', new, body, count=1)
        if n != 1:
            raise Refusal(f"{name} in '{path}' has no cost_wave_k to refit: give it one first")
        text = text[:at] + body + text[end:]
    json.loads(text)  # still JSON
    with open(path, "w") as f:
        f.write(text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("manifest")
    ap.add_argument("tables", nargs="+")
    ap.add_argument("--num-cu", type=int, default=132)
    ap.add_argument("--split-us", type=float, default=7.0, help="the policy's split term (session.cpp kSplitUs)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", metavar="JSON", default=None, help="write the fit into this kernels.json")
    a = ap.parse_args(argv)
    try:
        if np is None:
            raise Refusal("numpy is not installed: pip install numpy")
        if a.num_cu <= 0:
            raise Refusal(f"--num-cu must be positive (got {a.num_cu}): pass the SM count, 132 on the H200")
        manifest = load_manifest(a.manifest)
        rows = load_tables(a.tables, manifest)
        if not rows:
            raise Refusal("no timed row of a modelled kernel in the tables: pass tests/data/*_measured.csv")
    except Refusal as e:
        print(f"fit_time_model.py: {e}", file=sys.stderr)
        return 2
    bad, fits = 0, {}
    print(f"{'kernel':38s} {'rows':>4s}  manifest: wave_us wave_k  med/max err | "
          "fit: wave_us wave_k  split  med/max err")
    for kernel in sorted(rows):
        row, data = manifest[kernel], rows[kernel]
        old_us, old_k = float(row.get("cost_wave_us") or 0), float(row["cost_wave_k"])
        new_us, new_k, split = fit(row, data, a.num_cu)
        fits[row.get("knl_name") or kernel.replace(".cubin", "")] = (new_us, new_k)
        om, ox = errors(row, data, a.num_cu, old_us, old_k, a.split_us)
        nm, nx = errors(row, data, a.num_cu, new_us, new_k, a.split_us)
        same = round(new_k, 5) == round(old_k, 5) and round(new_us, 2) == round(old_us, 2)
        bad += not same
        print(f"{kernel.replace('.cubin', ''):38s} {len(data):4d}  {old_us:7.2f} {old_k:.5f} {om:5.1%} {ox:5.1%}"
              f" | {new_us:7.2f} {new_k:.5f} {'' if split is None else f'{split:5.2f}':>5s} {nm:5.1%} {nx:5.1%}"
              f"{'' if same else '  (differs)'}")
    if a.write:
        try:
            write_fit(a.write, fits)
        except Refusal as e:
            print(f"fit_time_model.py: {e}", file=sys.stderr)
            return 2
        print(f"wrote {len(fits)} kernels' cost_wave_k and cost_wave_us into {a.write}")
    if a.check and bad:
        print(f"fit_time_model.py: {bad} kernel(s) carry constants other than the fit's: write the fit into "
              "kernels/sm90a/kernels.json (cost_wave_k to 5 decimals, cost_wave_us to 2)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
