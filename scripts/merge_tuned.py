#!/usr/bin/env python3
"""Merge the rows of a fresh `f4gemm tune` CSV into a tuned table: a row of the new file replaces the
table's row for the same (cu_num, M, N, K); other rows are kept in their order, new shapes appended.
Usage: scripts/merge_tuned.py TABLE.csv NEW.csv [NEW2.csv ...] [-o OUT.csv]   (default: TABLE in place)"""
import csv
import sys


def main(argv):
    out = None
    if "-o" in argv:
        i = argv.index("-o")
        out = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) < 2:
        sys.exit("usage: merge_tuned.py TABLE.csv NEW.csv [NEW2.csv ...] [-o OUT.csv]")
    table, news = argv[0], argv[1:]
    with open(table, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], [r for r in rows[1:] if r]
    key = lambda r: tuple(r[:4])
    index = {key(r): i for i, r in enumerate(body)}
    for path in news:
        with open(path, newline="") as f:
            new = [r for r in csv.reader(f)]
        if new[0] != header:
            sys.exit(f"{path}: header {new[0]} differs from {table}'s {header}: not a tuned table")
        for r in new[1:]:
            if not r:
                continue
            if key(r) in index:
                body[index[key(r)]] = r
            else:
                index[key(r)] = len(body)
                body.append(r)
    with open(out or table, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(body)


if __name__ == "__main__":
    main(sys.argv[1:])
