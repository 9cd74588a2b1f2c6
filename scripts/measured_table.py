#!/usr/bin/env python3
"""The measured-picks tables the policy tests hold (tests/data/*_measured.csv: M,N,K,kernel,split,us,screen) from
`f4gemm tune` logs. Every timing line of a log becomes a row: the timed rounds' median (screen 0) or, for a
candidate the screen dropped, its screening time (screen 1). A later log's row replaces an earlier one for the same
(M, N, K, kernel, split). Rows are written sorted; the header comment is the caller's (--comment, one line per '#').

Usage: scripts/measured_table.py LOG [LOG ...] [--min-m M] [--max-m M] [--exclude REGEX] [--exclude-shape MxNxK ...]
       [--rename OLD=NEW ...] [--late LOG ...] [--late-best TUNED.csv ...] [--comment TEXT] -o OUT.csv
--rename gives a kernel timed under a lab name the name it ships under (applied after --exclude, which sees the
lab names). --late logs are read after all LOGS with neither --exclude nor --rename: a newer log of shipped names
whose kernel an older log's lab filter would drop. --late-best tables (the CSV `f4gemm tune --out` writes: the best
kernel and split per cell and mode, where the run's log is lost) are read last: each row replaces or adds that
kernel's time in a cell the logs already hold (a cell they do not hold is left out: one row is not a cell's timing).
--update TABLE starts from an existing table (its comment lines kept, --comment's appended): each LOG row replaces
the time of the same (cell, kernel, split) row there and adds nothing (a re-time of rebuilt kernels, whose other
rows stand); a LOG row the table lacks is counted and left out.
Example (tests/data/decode_measured.csv, session 10):
  scripts/measured_table.py docs/results/2026-12-01c/tune_sk.log --max-m 16 --exclude '_sk\\.cubin' -o a.csv
  scripts/measured_table.py docs/results/2026-12-01c/tune_mid.log --min-m 32 --exclude 'ws_swap_32x128_fs_p' -o b.csv
"""
import argparse
import csv
import re
import sys

LINE = re.compile(r"\[f4gemm\]\s+(\d+)x(\d+)x(\d+) (\S+\.cubin)\s+split (\d+):\s+([\d.]+) us( screen)?")


def read_log(path, rows, min_m, max_m, exclude, shapes=(), rename=None):
    n = 0
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            mm, nn, kk = (int(m.group(i)) for i in (1, 2, 3))
            kernel, split, us, screen = m.group(4), int(m.group(5)), float(m.group(6)), 1 if m.group(7) else 0
            if mm < min_m or (max_m and mm > max_m) or (exclude and re.search(exclude, kernel)):
                continue
            if f"{mm}x{nn}x{kk}" in shapes:
                continue
            kernel = (rename or {}).get(kernel, kernel)
            rows[(mm, nn, kk, kernel, split)] = (us, screen)
            n += 1
    return n


def read_best(path, rows, min_m, max_m):
    """The rows of a tuned table (`f4gemm tune --out`) for cells `rows` already holds; the number read."""
    cells = {k[:3] for k in rows}
    n = 0
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            try:
                mm, nn, kk, split, us = int(r["M"]), int(r["N"]), int(r["K"]), int(r["splitK"]), float(r["us"])
                kernel = r["kernelName"]
            except (KeyError, TypeError, ValueError):
                raise ValueError(f"{path}: row {dict(r)} lacks M, N, K, kernelName, splitK or us")
            if mm < min_m or (max_m and mm > max_m) or (mm, nn, kk) not in cells:
                continue
            rows[(mm, nn, kk, kernel, split)] = (us, 0)
            n += 1
    return n


def read_table(path):
    """An existing measured table: its comment lines (without '# ') and its rows."""
    comments, rows = [], {}
    with open(path) as f:
        lines = f.read().splitlines()
    body = []
    for line in lines:
        if line.startswith("#"):
            comments.append(line[2:] if line.startswith("# ") else line[1:])
        else:
            body.append(line)
    for r in csv.DictReader(body):
        rows[(int(r["M"]), int(r["N"]), int(r["K"]), r["kernel"], int(r["split"]))] = (float(r["us"]),
                                                                                     int(r["screen"]))
    return comments, rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--min-m", type=int, default=0)
    ap.add_argument("--max-m", type=int, default=0, help="0: no limit")
    ap.add_argument("--exclude", default="", help="regex on the code object's name")
    ap.add_argument("--exclude-shape", action="append", default=[], metavar="MxNxK",
                    help="leave out a cell (repeatable): one whose pick the logs did not time")
    ap.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                    help="a code object's lab name and the name it ships under (repeatable)")
    ap.add_argument("--late", action="append", default=[], metavar="LOG",
                    help="a log read after LOGS, its kernels already under their shipped names: --exclude and "
                         "--rename (which name the lab kernels of older logs) do not apply to it (repeatable)")
    ap.add_argument("--late-best", action="append", default=[], metavar="TUNED.csv",
                    help="a tuned table (`f4gemm tune --out`) read last: its best rows replace or add their kernel's "
                         "time in cells the logs hold (repeatable)")
    ap.add_argument("--update", metavar="TABLE", help="start from this measured table: LOGS replace its rows "
                    "of the same cell, kernel and split and add none")
    ap.add_argument("--comment", default="", help="header comment (lines split on '\\n')")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args(argv)
    rename = {}
    for r in a.rename:
        old, sep, new = r.partition("=")
        if not sep or not old or not new:
            print(f"measured_table.py: --rename '{r}': pass OLD=NEW (two code object names)", file=sys.stderr)
            return 2
        rename[old] = new
    rows = {}
    comments = []
    if a.update:
        try:
            comments, table = read_table(a.update)
        except (OSError, KeyError, ValueError) as e:
            print(f"measured_table.py: cannot read the table {a.update} ({e}): pass a measured table "
                  "(M,N,K,kernel,split,us,screen)", file=sys.stderr)
            return 2
        if a.late or a.late_best:
            print("measured_table.py: --update takes LOGS only (no --late, --late-best)", file=sys.stderr)
            return 2
    # LOGS with the lab filters, then the --late logs without them
    for path, exclude, names in [(p, a.exclude, rename) for p in a.logs] + [(p, "", {}) for p in a.late]:
        try:
            n = read_log(path, rows, a.min_m, a.max_m, exclude, set(a.exclude_shape), names)
        except OSError as e:
            print(f"measured_table.py: cannot read {path} ({e.strerror}): pass an `f4gemm tune` log",
                  file=sys.stderr)
            return 2
        if n == 0:
            print(f"measured_table.py: no tune timing lines in {path} (got none after the filters): "
                  "pass an `f4gemm tune` log", file=sys.stderr)
            return 1
    for path in a.late_best:
        try:
            n = read_best(path, rows, a.min_m, a.max_m)
        except OSError as e:
            print(f"measured_table.py: cannot read {path} ({e.strerror}): pass an `f4gemm tune --out` table",
                  file=sys.stderr)
            return 2
        except ValueError as e:
            print(f"measured_table.py: {e}: pass an `f4gemm tune --out` table", file=sys.stderr)
            return 2
        if n == 0:
            print(f"measured_table.py: no row of {path} is in a cell the logs hold: pass the tune of those cells",
                  file=sys.stderr)
            return 1
    if a.update:
        new = {k: v for k, v in rows.items() if k in table}
        if not new:
            print(f"measured_table.py: no row of the logs is in {a.update} (same cell, kernel and split): "
                  "pass a re-time of kernels the table holds", file=sys.stderr)
            return 1
        print(f"{a.update}: {len(new)} rows re-timed, {len(rows) - len(new)} log rows not in the table left out")
        table.update(new)
        rows = table
    with open(a.out, "w") as f:
        for line in comments + (a.comment.split("\\n") if a.comment else []):
            f.write(f"# {line}\n")
        f.write("M,N,K,kernel,split,us,screen\n")
        for (mm, nn, kk, kernel, split), (us, screen) in sorted(rows.items()):
            f.write(f"{mm},{nn},{kk},{kernel},{split},{us},{screen}\n")
    print(f"{a.out}: {len(rows)} rows, {len({k[:3] for k in rows})} cells")
    return 0


if __name__ == "__main__":
    sys.exit(main())
