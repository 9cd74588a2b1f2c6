#!/usr/bin/env bash
# session 37 call D (carry ["build", "abtest"]), any card: the gpu-labelled tests on the build with the N-slab rule
# (entry 79), the serving grid (both modes, untuned column, clock log), the promoted pp kernel's slab widths at M = 512
# and 768 (two alternating rounds, one process per width), compute-sanitizer on the pp kernels (now also in slabs) and
# the sweep; logs packed after each stage
set -u
source scripts/devcall.sh; devcall_init
timeout 170 ctest --test-dir build -L gpu --output-on-failure > $O/logs/gpu_tests.log 2>&1; echo "gpu tests rc $?"
grep -E 'tests passed|tests failed|\(Failed\)|Total Test time' $O/logs/gpu_tests.log
devcall_pack
timeout 200 python3 bench/bench.py --grid serving --untuned --clocks --out $O/logs/bench > $O/logs/bench_serving.log 2>&1
echo "bench rc $? $SECONDS s"; sed -n '/^f4gemm accum/p' $O/logs/bench_serving.log
rm -f $O/logs/bench/bench.png; devcall_pack
S5="--shape 512x10240x8192 --shape 512x16384x16384 --shape 512x28672x8192 --shape 512x8192x28672"
S7="--shape 768x10240x8192 --shape 768x16384x16384 --shape 768x28672x8192 --shape 768x8192x28672"
for r in 1 2; do
  for w in 0 4096; do F4GEMM_PP_SLAB_N=$w timeout 40 build/cli/f4gemm tune --co-dir abtest/pp $S5 --accum promoted \
      --no-verify --reps 3 --iters 10 --out $O/logs/m512_w${w}_r$r.csv > $O/logs/m512_w${w}_r$r.log 2>&1
      echo "m512 r$r w$w rc $? $SECONDS s"; done
  for w in 0 2560 2816; do F4GEMM_PP_SLAB_N=$w timeout 40 build/cli/f4gemm tune --co-dir abtest/pp $S7 --accum promoted \
      --no-verify --reps 3 --iters 10 --out $O/logs/m768_w${w}_r$r.csv > $O/logs/m768_w${w}_r$r.log 2>&1
      echo "m768 r$r w$w rc $? $SECONDS s"; done
  devcall_pack
done
F4GEMM_SANITIZE_ONLY='_pp_128x128(_p)?\.cubin' timeout 170 bash scripts/sanitize_sm90.sh > $O/logs/sanitize.log 2>&1
echo "sanitize rc $? $SECONDS s"; grep -c 'rc=0' $O/logs/sanitize.log; grep -v 'rc=0' $O/logs/sanitize.log | head -5
devcall_pack
timeout 150 bash scripts/sweep_sm90.sh > $O/logs/sweep.log 2>&1; echo "sweep rc $? $SECONDS s"; tail -2 $O/logs/sweep.log
devcall_pack
