#!/usr/bin/env bash
# session 31 call 9: the 128-row converter tile with two chains in flight (SPAN 2) and one converter warpgroup
set -u
D=abtest/c9; O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $O/gpu.txt
V="--shape 256x2048x4096 --shape 300x1000x2880 --shape 130x528x1024"
build/cli/f4gemm tune --co-dir $D $V --accum promoted --reps 1 --iters 2 --out /tmp/v.csv > $O/v_pr.log 2>&1; echo "v rc $?"
grep -c FAILED $O/v_pr.log
G=""; for m in 128 256; do for nk in 16384x16384 10240x8192 28672x8192 8192x28672; do G="$G --shape ${m}x$nk"; done; done
build/cli/f4gemm tune --co-dir $D $G --accum promoted --no-verify --reps 3 --iters 10 --out /tmp/t.csv > $O/t_pr.log 2>&1; echo "t rc $?"
grep -h best $O/t_pr.log
