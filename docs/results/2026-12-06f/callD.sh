#!/usr/bin/env bash
# session 40 call D (carry ["build"]), any card: the stream-K dev kernels with a proxy fence before each next tile
# (the partials' and images' generic writes ordered before the next tile's bulk copies): racecheck with hazard
# reports where call C's reported (a CTA's second tile), the stream-K GPU test
set -u
source scripts/devcall.sh; devcall_init
F=build/cli/f4gemm; CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for k in f4gemm_sm90a_dec_16x128_wg12_sk f4gemm_sm90a_dec_32x128_wg12_c2_sk; do
  for s in "20 2560 4096 2" "1 10240 2048 3" "40 1000 2816 1"; do set -- $s
    timeout 90 $CS --tool racecheck --racecheck-report hazard --print-limit 20 --error-exitcode 99 $F --backend cuda \
        --co-dir build/kernels/sm90a/dev --kernel $k.cubin -m $1 -n $2 -k $3 --splitk $4 --iters 0 > $O/logs/rc_${k#f4gemm_sm90a_}_$1_$4.log 2>&1
    echo "$k $s rc $? $(grep 'RACECHECK SUMMARY' $O/logs/rc_${k#f4gemm_sm90a_}_$1_$4.log) $(grep -E 'PASSED|FAILED' $O/logs/rc_${k#f4gemm_sm90a_}_$1_$4.log)"
  done
done 2>&1 | tee $O/logs/rc_summary.log | cut -c1-220
(cd build && timeout 120 ctest -R 'DecStreamK' --output-on-failure > $O/logs/ctest_sk.log 2>&1); echo "ctest rc $? $SECONDS s"; tail -3 $O/logs/ctest_sk.log
devcall_pack
