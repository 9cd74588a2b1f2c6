#!/usr/bin/env bash
# session 31 call 1: M = 128, 256 variants (cv_128x128_p with two converter warpgroups; the 256-wide S tile of pab)
set -u
B=build/cli/f4gemm; D=abtest/c1; O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $O/gpu.txt
V="--shape 256x2048x4096 --shape 300x1000x2880 --shape 130x528x1024 --shape 128x1024x8192"
$B tune --co-dir $D $V --accum promoted --reps 1 --iters 2 --out /tmp/v_pr.csv > $O/v_pr.log 2>&1; echo "v_pr rc $?"
$B tune --co-dir $D $V --accum exact --reps 1 --iters 2 --out /tmp/v_ex.csv > $O/v_ex.log 2>&1; echo "v_ex rc $?"
grep -i -E 'fail|mismatch|error' $O/v_pr.log $O/v_ex.log | head -20
G="--shape 128x16384x16384 --shape 128x10240x8192 --shape 128x28672x8192 --shape 128x8192x28672 --shape 256x16384x16384 --shape 256x10240x8192 --shape 256x28672x8192 --shape 256x8192x28672"
$B tune --co-dir $D $G --accum promoted --no-verify --reps 3 --iters 10 --out /tmp/t_pr.csv > $O/t_pr.log 2>&1; echo "t_pr rc $?"
$B tune --co-dir $D $G --shape 512x16384x16384 --accum exact --no-verify --reps 3 --iters 10 --out /tmp/t_ex.csv > $O/t_ex.log 2>&1; echo "t_ex rc $?"
cp /tmp/t_pr.csv /tmp/t_ex.csv $O/ 2>/dev/null
tail -n 30 $O/t_pr.log; tail -n 30 $O/t_ex.log
