#!/usr/bin/env bash
# session 37 call F (carry ["build", "abtest"]), any card: the slab rule of PERF.md entry 80 (pp_slab_width: the
# narrowest width of 2048..4096 whose slabs add no wave) against no slabs (F4GEMM_PP_SLAB_N=0), promoted pp kernel,
# two alternating rounds, one process each; the slab gpu test; then the serving grid on this build
set -u
source scripts/devcall.sh; devcall_init
timeout 60 build/tests/gpu/f4gemm_gpu_tests --gtest_filter='Sm90.PrepassKernelsInNSlabs' > $O/logs/gtest.log 2>&1
echo "gtest rc $?"; grep -E '^\[ +(OK|FAILED|PASSED) ' $O/logs/gtest.log
S=""; for x in 512x10240x8192 512x16384x16384 512x28672x8192 640x16384x16384 768x10240x8192 768x16384x16384 \
    768x28672x8192 768x8192x28672 1024x16384x16384 4096x28672x8192; do S="$S --shape $x"; done
for r in 1 2; do for w in rule 0; do
  if [ $w = rule ]; then unset F4GEMM_PP_SLAB_N; else export F4GEMM_PP_SLAB_N=0; fi
  timeout 80 build/cli/f4gemm tune --co-dir abtest/pp $S --accum promoted --no-verify --reps 3 --iters 10 \
      --out $O/logs/r_${w}_r$r.csv > $O/logs/r_${w}_r$r.log 2>&1; echo "r$r $w rc $? $SECONDS s"; devcall_pack
done; done; unset F4GEMM_PP_SLAB_N
timeout 200 python3 bench/bench.py --grid serving --untuned --clocks --out $O/logs/bench > $O/logs/bench_serving.log 2>&1
echo "bench rc $? $SECONDS s"; sed -n '/^f4gemm accum/p' $O/logs/bench_serving.log
rm -f $O/logs/bench/bench.png; devcall_pack
