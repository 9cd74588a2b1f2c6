#!/usr/bin/env bash
# session 37 call W (carry ["build", "abtest"]), any card: does entry 80's one-wave gain reach the kernels without a
# B pre-pass? The 128-row A pre-pass and converter tiles (abtest/wv) on grid cells of about two waves and on the
# column slabs that hold one wave each (a slab's time x the slab count against the whole launch), both modes, two rounds
set -u
source scripts/devcall.sh; devcall_init
S=""; for x in 256x16384x16384 256x8192x16384 256x28672x8192 256x8192x8192 256x4096x8192 256x10240x8192 256x5120x8192 \
    512x8192x28672 512x4096x28672 512x10240x8192 512x2048x8192 512x16384x16384 512x4096x16384; do S="$S --shape $x"; done
for r in 1 2; do for a in promoted exact; do
  timeout 120 build/cli/f4gemm tune --co-dir abtest/wv $S --accum $a --no-verify --reps 3 --iters 10 \
      --out $O/logs/w_${a}_r$r.csv > $O/logs/w_${a}_r$r.log 2>&1; echo "r$r $a rc $? $SECONDS s"; devcall_pack
done; done
