#!/usr/bin/env bash
# session 35 call H (carry ["build", "abtest"]), for an H200 only: the serving grid, both modes, with the untuned
# column and the clock log (bench.py --grid serving --untuned --clocks, one process); then session 34's re-time of
# the eight 256-K cv kernels (abtest/s34) on the 49 cells of the policy tests' tables that hold them; then the 24
# decode cells of other model shapes (--grid decode-other --untuned) and a layer's chain (--chain), plain and PDL
set -u
source scripts/devcall.sh; devcall_init
grep -q H200 $O/logs/gpu.txt || { echo "not an H200: nothing run"; exit 0; }
if [ "${CALLH_NO_GRID:-0}" != 1 ]; then  # CALLH_NO_GRID=1: the grid ran in an earlier call on this build
timeout 200 python3 bench/bench.py --grid serving --untuned --clocks --out $O/logs/bench > $O/logs/bench_serving.log 2>&1
echo "bench rc $?"; sed -n '/^f4gemm accum/p' $O/logs/bench_serving.log
devcall_pack
fi
S=""; for x in 32x1024x4096 32x4096x4096 32x4096x14336 32x5120x5120 32x8192x8192 32x8192x28672 32x10240x8192 32x13824x5120 32x14336x4096 32x16384x16384 32x28672x8192 40x28672x8192 48x10240x8192 48x16384x16384 64x1024x4096 64x4096x4096 64x4096x14336 64x5120x5120 64x8192x8192 64x8192x28672 64x10240x8192 64x13824x5120 64x14336x4096 64x16384x16384 64x28672x8192 128x8192x28672 128x10240x8192 128x16384x16384 128x28672x8192 256x8192x28672 256x10240x8192 256x16384x16384 256x28672x8192 512x8192x28672 512x10240x8192 512x16384x16384 512x28672x8192 1024x8192x28672 1024x10240x8192 1024x16384x16384 1024x28672x8192 384x8192x28672 384x10240x8192 384x16384x16384 384x28672x8192 768x8192x28672 768x10240x8192 768x16384x16384 768x28672x8192; do S="$S --shape $x"; done
timeout 200 build/cli/f4gemm tune --co-dir abtest/s34 $S --accum promoted --no-verify --reps 3 --iters 10 \
    --out $O/logs/retime.csv > $O/logs/retime.log 2>&1; echo "retime rc $?: $(grep -c ' us' $O/logs/retime.log) timing lines"
devcall_pack
timeout 90 python3 bench/bench.py --grid decode-other --untuned --out $O/logs/bench_other > $O/logs/bench_other.log 2>&1
echo "decode-other rc $?"; sed -n '/^f4gemm accum/p' $O/logs/bench_other.log
devcall_pack
timeout 75 python3 bench/bench.py --chain --out $O/logs/bench_chain > $O/logs/bench_chain.log 2>&1; echo "chain rc $?"
devcall_pack
