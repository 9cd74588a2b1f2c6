#!/usr/bin/env bash
# session 40 call C (carry ["build"]), any card: the GPU tests on main's final build (the DEC_SK dev kernels now
# hold only the stream-K path: Sm90.DecStreamKRunsShareTiles runs them at L = 0..3); compute-sanitizer memcheck,
# racecheck and synccheck on those two dev kernels; on an H200 only, then the serving grid (both modes, untuned
# column, read floor, clock log: the issues' table)
set -u
source scripts/devcall.sh; devcall_init
(cd build && timeout 200 ctest -L gpu --output-on-failure > $O/logs/ctest_gpu.log 2>&1); echo "ctest rc $? $SECONDS s"
tail -3 $O/logs/ctest_gpu.log; devcall_pack
F=build/cli/f4gemm; CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for k in f4gemm_sm90a_dec_16x128_wg12_sk f4gemm_sm90a_dec_32x128_wg12_c2_sk; do
  for t in memcheck racecheck synccheck; do
    for s in "20 2560 4096 0" "20 2560 4096 2" "40 1000 2816 1" "1 10240 2048 3"; do set -- $s
      x=(); [ $t = synccheck ] && x=(--num-cuda-barriers 1024)
      timeout 90 $CS --tool $t "${x[@]}" --error-exitcode 99 $F --backend cuda --co-dir build/kernels/sm90a/dev \
          --kernel $k.cubin -m $1 -n $2 -k $3 --splitk $4 --iters 0 > /tmp/s.log 2>&1
      echo "$t $k $s rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/s.log | tail -1) $(grep -E 'PASSED|FAILED' /tmp/s.log)"
    done
  done
done > $O/logs/sanitize_sk.log 2>&1
grep -c 'rc 0' $O/logs/sanitize_sk.log; grep -v 'rc 0' $O/logs/sanitize_sk.log | head; echo "sanitize $SECONDS s"
devcall_pack
grep -q H200 $O/logs/gpu.txt || { echo "not an H200: no grid"; exit 0; }
timeout 280 python3 bench/bench.py --grid serving --untuned --clocks --out $O/logs/bench > $O/logs/bench_serving.log 2>&1
echo "bench rc $? $SECONDS s"; sed -n '/^f4gemm accum/p' $O/logs/bench_serving.log
rm -f $O/logs/bench/bench.png; devcall_pack
