#!/usr/bin/env bash
# session 39 call I (carry ["build", "abtest"]), any card: the GPU tests on main's final build (the test file's
# helpers refactored after call G); call H's racecheck question (this build's dec_16x80_w12 against ac66b44's, in
# abtest/old80); then the serving grid, both modes, with the untuned column, the read floor and the clock log
set -u
source scripts/devcall.sh; devcall_init
(cd build && timeout 200 ctest -L gpu --output-on-failure > $O/logs/ctest_gpu.log 2>&1); echo "ctest rc $? $SECONDS s"
tail -3 $O/logs/ctest_gpu.log; devcall_pack
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for d in build/kernels/sm90a abtest/old80; do for i in 1 2; do
  $CS --tool racecheck --error-exitcode 99 build/cli/f4gemm --backend cuda --co-dir $d \
      --kernel f4gemm_sm90a_dec_16x80_w12.cubin --accum exact -m 5 -n 272 -k 2048 --iters 0 > $O/logs/rc_$(basename $d)_$i.log 2>&1
  echo "$d run $i rc $? $(grep 'RACECHECK SUMMARY' $O/logs/rc_$(basename $d)_$i.log)"
done; done
devcall_pack
timeout 270 python3 bench/bench.py --grid serving --untuned --clocks --out $O/logs/bench > $O/logs/bench_serving.log 2>&1
echo "bench rc $? $SECONDS s"; sed -n '/^f4gemm accum/p' $O/logs/bench_serving.log
rm -f $O/logs/bench/bench.png; devcall_pack
