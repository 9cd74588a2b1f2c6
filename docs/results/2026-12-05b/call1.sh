#!/usr/bin/env bash
# session 32 call 1: the 64-row A pre-pass tiles with 256-K stages (pab_64x128(_p), K_STAGE 256; promoted PIPE 1)
# against the shipped 128-K builds, verified then timed; on an H200 also session 31's h200_retime.sh (the A pre-pass
# tile against the pre-pass kernel at M = 384..1024), elsewhere the card-independent owed checks (gpu tests, sweep)
set -u
D=abtest/c1; O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $O/gpu.txt
V="--shape 40x1000x2880 --shape 64x528x1024 --shape 48x2048x4096 --shape 63x1024x8192 --shape 33x272x1280"
timeout 80 build/cli/f4gemm tune --co-dir $D $V --accum promoted --reps 1 --iters 2 --out /tmp/v.csv > $O/v_pr.log 2>&1; echo "v_pr rc $?"
timeout 60 build/cli/f4gemm tune --co-dir $D $V --accum exact --reps 1 --iters 2 --out /tmp/v2.csv > $O/v_ex.log 2>&1; echo "v_ex rc $?"
grep -c FAILED $O/v_pr.log $O/v_ex.log
G=""; for s in 64x8192x28672 64x13824x5120 64x14336x4096 64x4096x14336 64x8192x8192 64x16384x16384 48x16384x16384 40x28672x8192; do G="$G --shape $s"; done
timeout 150 build/cli/f4gemm tune --co-dir $D $G --accum promoted --no-verify --reps 3 --iters 10 --out /tmp/t.csv > $O/t_pr.log 2>&1; echo "t_pr rc $?"
timeout 100 build/cli/f4gemm tune --co-dir $D $G --accum exact --no-verify --reps 3 --iters 10 --out /tmp/t2.csv > $O/t_ex.log 2>&1; echo "t_ex rc $?"
grep -h best $O/t_pr.log $O/t_ex.log
if grep -q H200 $O/gpu.txt; then
  OUT=$O/retime timeout 200 bash docs/results/2026-12-05/h200_retime.sh; echo "retime rc $?"
else
  timeout 60 ctest --test-dir build -L gpu --output-on-failure > $O/gpu_tests.log 2>&1; echo "gpu tests rc $?"; grep -E 'tests passed|tests failed' $O/gpu_tests.log
  timeout 170 scripts/sweep_sm90.sh > $O/sweep.log 2>&1; echo "sweep rc $?"; tail -3 $O/sweep.log
fi
