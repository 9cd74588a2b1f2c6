#!/usr/bin/env bash
# session 36 call S (carry ["build", "abtest"]), any card: the sm90pp1 kernels in N slabs (PERF.md entry 79). The
# gpu tests of the pre-pass kernels (slabs bit-identical to the whole launch; exact against float64), then
# `f4gemm tune` of pp_128x128 (exact) and pp_128x128_p (promoted) on seven M >= 512 cells, one process per
# (mode, slab width), widths 0 (no slabs), 1024, 2048, 4096 in two alternating rounds, with the clock log
set -u
source scripts/devcall.sh; devcall_init
timeout 120 build/tests/gpu/f4gemm_gpu_tests --gtest_filter='Sm90.PrepassKernelsInNSlabs:Sm90.PrepassKernelsOnRaggedShapesAndLongK' \
    > $O/logs/gtest_slabs.log 2>&1; echo "gtest rc $?"; tail -3 $O/logs/gtest_slabs.log
S=""; for x in 512x16384x16384 1024x16384x16384 1024x10240x8192 1024x28672x8192 1024x8192x28672 2048x16384x16384 4096x16384x16384; do S="$S --shape $x"; done
devcall_smi
for round in 1 2; do
  for w in 0 1024 2048 4096; do
    for acc in promoted exact; do
      F4GEMM_PP_SLAB_N=$w timeout 60 build/cli/f4gemm tune --co-dir abtest/pp $S --accum $acc --no-verify --reps 3 --iters 10 \
          --out $O/logs/t_${acc}_w${w}_r${round}.csv > $O/logs/t_${acc}_w${w}_r${round}.log 2>&1
      echo "round $round w $w $acc rc $?"
    done
  done
done
devcall_smi_stop
gzip -f $O/logs/smi.csv
for f in $O/logs/t_*_r1.csv; do echo "== $f"; cat $f; done | cut -c1-160 | head -60
devcall_pack
