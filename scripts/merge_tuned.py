#!/usr/bin/env python3
"""Merge the rows of a fresh `f4gemm tune` CSV into a tuned table: a row of the new file replaces the
table's row for the same (cu_num, M, N, K, accum); other rows are kept in their order, new shapes appended.
Columns are read by header name; a table written before the accumulation mode (no `accum` column) holds exact
rows, and the merged table is written with the library's header (include/f4gemm/tuned.hpp kTunedHeader), so an
old table is upgraded in place.
Usage: scripts/merge_tuned.py TABLE.csv NEW.csv [NEW2.csv ...] [-o OUT.csv]   (default: TABLE in place)"""
import csv
import sys

HEADER = ["cu_num", "M", "N", "K", "accum", "kernelName", "splitK", "us", "tflops"]
REQUIRED = ["cu_num", "M", "N", "K", "kernelName", "splitK"]


def read_rows(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    if not rows:
        sys.exit(f"{path}: empty: not a tuned table")
    header = [c.strip() for c in rows[0]]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        sys.exit(f"{path}: header {header} lacks {missing}: not a tuned table")
    out = []
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != len(header):
            sys.exit(f"{path}:{i}: {len(r)} cells, the header has {len(header)}: fix the row")
        row = {h: c.strip() for h, c in zip(header, r)}
        row["accum"] = row.get("accum") or "exact"
        if row["accum"] not in ("exact", "promoted"):
            sys.exit(f"{path}:{i}: accum {row['accum']!r} is not exact or promoted: fix the row")
        out.append(row)
    return out


def key(row):
    return (row["cu_num"], row["M"], row["N"], row["K"], row["accum"])


def main(argv):
    out = None
    if "-o" in argv:
        i = argv.index("-o")
        out = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) < 2:
        sys.exit("usage: merge_tuned.py TABLE.csv NEW.csv [NEW2.csv ...] [-o OUT.csv]")
    table, news = argv[0], argv[1:]
    body = read_rows(table)
    index = {key(r): i for i, r in enumerate(body)}
    for path in news:
        for r in read_rows(path):
            if key(r) in index:
                body[index[key(r)]] = r
            else:
                index[key(r)] = len(body)
                body.append(r)
    with open(out or table, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEADER)
        w.writerows([[r.get(h, "") for h in HEADER] for r in body])


if __name__ == "__main__":
    main(sys.argv[1:])
