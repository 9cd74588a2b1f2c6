#!/usr/bin/env bash
# session 31 call 13: the A pre-pass tiles with 256-K stages (half the stage hand-offs; K_STAGE 256, PIPE 1 / 0)
set -u
D=abtest/c13; O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $O/gpu.txt
V="--shape 256x2048x4096 --shape 300x1000x2880 --shape 130x528x1024 --shape 128x1024x8192 --shape 72x512x1280"
build/cli/f4gemm tune --co-dir $D $V --accum promoted --reps 1 --iters 2 --out /tmp/v.csv > $O/v_pr.log 2>&1; echo "v_pr rc $?"
build/cli/f4gemm tune --co-dir $D $V --accum exact --reps 1 --iters 2 --out /tmp/v2.csv > $O/v_ex.log 2>&1; echo "v_ex rc $?"
grep -c FAILED $O/v_pr.log $O/v_ex.log
G=""; for m in 128 256; do for nk in 16384x16384 10240x8192 28672x8192 8192x28672; do G="$G --shape ${m}x$nk"; done; done
build/cli/f4gemm tune --co-dir $D $G --accum promoted --no-verify --reps 3 --iters 10 --out /tmp/t.csv > $O/t_pr.log 2>&1; echo "t_pr rc $?"
build/cli/f4gemm tune --co-dir $D $G --accum exact --no-verify --reps 3 --iters 10 --out /tmp/t2.csv > $O/t_ex.log 2>&1; echo "t_ex rc $?"
grep -h best $O/t_pr.log $O/t_ex.log
