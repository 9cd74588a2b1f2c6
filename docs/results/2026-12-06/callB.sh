#!/usr/bin/env bash
# session 35 call B (carry ["build", "abtest"]): session 34's call2.sh re-time (on an H200 only) of the eight 256-K
# cv kernels on the 49 cells of the policy tests' tables, compute-sanitizer on the eight, the regression sweep
set -u
source scripts/devcall.sh; devcall_init
if grep -q H200 $O/logs/gpu.txt; then
S=""; for x in 32x1024x4096 32x4096x4096 32x4096x14336 32x5120x5120 32x8192x8192 32x8192x28672 32x10240x8192 32x13824x5120 32x14336x4096 32x16384x16384 32x28672x8192 40x28672x8192 48x10240x8192 48x16384x16384 64x1024x4096 64x4096x4096 64x4096x14336 64x5120x5120 64x8192x8192 64x8192x28672 64x10240x8192 64x13824x5120 64x14336x4096 64x16384x16384 64x28672x8192 128x8192x28672 128x10240x8192 128x16384x16384 128x28672x8192 256x8192x28672 256x10240x8192 256x16384x16384 256x28672x8192 512x8192x28672 512x10240x8192 512x16384x16384 512x28672x8192 1024x8192x28672 1024x10240x8192 1024x16384x16384 1024x28672x8192 384x8192x28672 384x10240x8192 384x16384x16384 384x28672x8192 768x8192x28672 768x10240x8192 768x16384x16384 768x28672x8192; do S="$S --shape $x"; done
timeout 220 build/cli/f4gemm tune --co-dir abtest/s34 $S --accum promoted --no-verify --reps 3 --iters 10 \
    --out $O/logs/retime.csv > $O/logs/retime.log 2>&1; echo "retime rc $?: $(grep -c ' us' $O/logs/retime.log) timing lines"
else echo "not an H200: no re-time"; fi
devcall_pack
F4GEMM_SANITIZE_ONLY='cv_(64x80_p|64x80|64x128_p|64x128|64x64_p|128x80_p|128x80|128x64)\.cubin' timeout 150 \
    bash scripts/sanitize_sm90.sh > $O/logs/sanitize.log 2>&1; echo "sanitize rc $?"
grep -c 'rc=0' $O/logs/sanitize.log; grep -v 'rc=0' $O/logs/sanitize.log | head -5
devcall_pack
timeout 190 bash scripts/sweep_sm90.sh > $O/logs/sweep.log 2>&1; echo "sweep rc $?"; tail -2 $O/logs/sweep.log
devcall_pack
