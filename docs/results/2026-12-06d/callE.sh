#!/usr/bin/env bash
# session 38 call E (carry ["build", "abtest"]; prepE.sh first), any card: issue 17's start-up residue over K. The
# shipped decode picks (abtest/dk) timed by f4gemm tune (graph replays) at M = 1, 16 (and 32 at N = 10240) over K =
# 1024 .. 32768, and the read floor's patterns over the same bytes (build/bench/readfloor --shapes): a line through
# each gives the fixed part and the steady rate, ours against the floor's
set -u
source scripts/devcall.sh; devcall_init
S=""; F=""
for k in 1024 2048 4096 8192 16384 32768; do
  for n in 16384 10240; do S="$S --shape 1x${n}x$k --shape 16x${n}x$k"; F="$F,${n}x$k"; done
  S="$S --shape 32x10240x$k"
done
timeout 200 build/cli/f4gemm tune --co-dir abtest/dk $S --no-verify --reps 3 --iters 10 --out $O/logs/tk.csv \
    > $O/logs/tk.log 2>&1; echo "tune rc $? $SECONDS s"; devcall_pack
timeout 200 build/bench/readfloor --reps 5 --shapes ${F#,} > $O/logs/readfloor.log 2>&1
echo "readfloor rc $? $SECONDS s"; sed -n '/fixed us/,$p' $O/logs/readfloor.log
devcall_pack
