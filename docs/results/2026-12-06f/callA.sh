#!/usr/bin/env bash
# session 40 call A (carry ["build", "abtest"]), any card: (1) the float64 judge on the stream-K-always lab variants
# (DEC_SK_ALWAYS 1: the stream-K path in the unsplit launch); (2) racecheck's dec_16x80_w12 report with each hazard's
# threads (--racecheck-report hazard), beside shapes and kernels that share its loop; (3) the tune A/B: plain path,
# stream-K path at S = 1, stream-K in S = 2..8 of the same kernels, against the shipped twins
set -u
source scripts/devcall.sh; devcall_init
F=build/cli/f4gemm; CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for k in f4gemm_sm90a_dec_16x128_wg12_sk_al f4gemm_sm90a_dec_32x128_wg12_c2_sk_al; do
  for s in "1 1000 2816" "20 528 1024" "40 10240 8192" "7 384 4096"; do set -- $s
    for L in 0 1 2; do
      for d in seed wide; do
        $F --backend cuda --co-dir abtest/sk --kernel $k.cubin -m $1 -n $2 -k $3 --splitk $L --data $d --iters 0 > /tmp/v.log 2>&1
        echo "$k $s L=$L $d rc $? $(grep -E 'PASSED|FAILED' /tmp/v.log | head -1)"
      done
    done
  done
done > $O/logs/verify.log 2>&1
grep -c PASSED $O/logs/verify.log; grep -v PASSED $O/logs/verify.log | head; echo "verify $SECONDS s"
i=0
for spec in "dec_16x80_w12 5 272 2048" "dec_16x80_w12 5 272 2048" "dec_16x80_w12 5 272 2048" "dec_16x80_w12 5 320 2048" \
            "dec_16x80_w12 5 320 2048" "dec_16x80_w12 16 272 2048" "dec_16x64_w12 5 272 2048" "dec_16x112_w12 5 272 2048"; do
  set -- $spec; i=$((i+1))
  timeout 60 $CS --tool racecheck --racecheck-report hazard --print-limit 400 --error-exitcode 99 $F --backend cuda \
      --kernel f4gemm_sm90a_$1.cubin --accum exact -m $2 -n $3 -k $4 --iters 0 > $O/logs/rc_$i.log 2>&1
  echo "rc_$i $spec rc $? $(grep 'RACECHECK SUMMARY' $O/logs/rc_$i.log) $SECONDS s"
done
devcall_pack
devcall_tune_rounds abtest/sk 200 1x16384x16384 16x16384x16384 32x10240x8192 32x16384x16384 1x10240x8192
devcall_pack
