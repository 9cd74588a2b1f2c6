#!/usr/bin/env bash
# session 33 call 1 (abtest/c1 from prep1.sh): the converter tiles (cv_*) with 256-K stages (K_STAGE 256) against the shipped 128-K builds and
# the A pre-pass tiles, verified (float64 judge, both modes, K with an odd number of 256-K stages) then timed in one
# process; clocks and power logged beside (nvidia-smi -lms 50)
set -u
D=abtest/c1; O=${OUT:-/tmp/out}; mkdir -p $O/logs
pack() { (cd $O && tar czf logs.tgz logs); }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv | tee $O/logs/gpu.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 50 > $O/logs/smi.csv 2>&1 &
SMI=$!
V="--shape 64x528x1280 --shape 48x1000x2816 --shape 40x2080x768 --shape 130x528x1024 --shape 200x2080x768 --shape 256x1040x3840"
timeout 90 build/cli/f4gemm tune --co-dir $D $V --accum promoted --reps 1 --iters 2 --out /tmp/v.csv > $O/logs/v_pr.log 2>&1; echo "v_pr rc $?"
timeout 90 build/cli/f4gemm tune --co-dir $D $V --accum exact --reps 1 --iters 2 --out /tmp/v2.csv > $O/logs/v_ex.log 2>&1; echo "v_ex rc $?"
grep -c FAILED $O/logs/v_pr.log $O/logs/v_ex.log; grep -h -B1 -A3 FAILED $O/logs/v_*.log | head -20
pack
G=""; for s in 64x10240x8192 48x10240x8192 40x10240x8192 64x16384x16384 64x28672x8192 64x8192x8192 128x10240x8192 192x10240x8192 256x10240x8192 128x8192x8192 128x16384x16384; do G="$G --shape $s"; done
date +%T.%N > $O/logs/t_pr.start
timeout 200 build/cli/f4gemm tune --co-dir $D $G --accum promoted --no-verify --reps 3 --iters 10 --out /tmp/t.csv > $O/logs/t_pr.log 2>&1; echo "t_pr rc $?"
pack
date +%T.%N > $O/logs/t_ex.start
timeout 200 build/cli/f4gemm tune --co-dir $D $G --accum exact --no-verify --reps 3 --iters 10 --out /tmp/t2.csv > $O/logs/t_ex.log 2>&1; echo "t_ex rc $?"
kill $SMI
grep -h best $O/logs/t_pr.log $O/logs/t_ex.log
pack
