#!/usr/bin/env bash
# session 40 call B (carry ["build", "abtest"]), any card: (1) racecheck of dec_16x80_w12 with its ring poisoned
# (F4GEMM_DEC_POISON 1: 0xFF bytes in every slot before the first copies; a read before the copies land gives a
# wrong result) and as built (_b0), each with the float64 judge's verdict; the poisoned kernel 40 times without the
# sanitizer; (2) the float64 judge on the stream-K-always variants (G = the tiles at S = 1, fixed after call A);
# (3) their tune A/B on the cells call A did not reach
set -u
source scripts/devcall.sh; devcall_init
F=build/cli/f4gemm; CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for i in $(seq 1 8); do
  for k in po b0; do
    s="5 320 2048"; [ $((i % 2)) = 0 ] && s="5 272 2048"; set -- $s
    timeout 60 $CS --tool racecheck --racecheck-report hazard --print-limit 40 --error-exitcode 99 $F --backend cuda \
        --co-dir abtest/po --kernel f4gemm_sm90a_dec_16x80_w12_$k.cubin -m $1 -n $2 -k $3 --iters 0 > $O/logs/rc_${k}_$i.log 2>&1
    echo "rc_${k}_$i $s rc $? $(grep 'RACECHECK SUMMARY' $O/logs/rc_${k}_$i.log) $(grep -E 'PASSED|FAILED|mismatches' $O/logs/rc_${k}_$i.log | tr '\n' ' ') $SECONDS s"
  done
done > $O/logs/rc_summary.log 2>&1
cat $O/logs/rc_summary.log | cut -c1-200
for i in $(seq 1 20); do for s in "5 320 2048" "16 10240 8192"; do set -- $s
  $F --backend cuda --co-dir abtest/po --kernel f4gemm_sm90a_dec_16x80_w12_po.cubin -m $1 -n $2 -k $3 --iters 3 > /tmp/v.log 2>&1
  echo "po $s rc $? $(grep -E 'PASSED|FAILED' /tmp/v.log)"; done; done > $O/logs/po_loop.log 2>&1
sort $O/logs/po_loop.log | uniq -c; echo "poison $SECONDS s"
for k in f4gemm_sm90a_dec_16x128_wg12_sk_al f4gemm_sm90a_dec_32x128_wg12_c2_sk_al; do
  for s in "1 1000 2816" "20 528 1024" "40 10240 8192" "7 384 4096" "32 10240 8192"; do set -- $s
    for L in 0 1 2; do for d in seed wide; do
      $F --backend cuda --co-dir abtest/sk --kernel $k.cubin -m $1 -n $2 -k $3 --splitk $L --data $d --iters 0 > /tmp/v.log 2>&1
      echo "$k $s L=$L $d rc $? $(grep -E 'PASSED|FAILED' /tmp/v.log | head -1)"
    done; done
  done
done > $O/logs/verify.log 2>&1
grep -c PASSED $O/logs/verify.log; grep -v PASSED $O/logs/verify.log | head; echo "verify $SECONDS s"
devcall_pack
devcall_tune_rounds abtest/sk 150 32x10240x8192 32x16384x16384 1x10240x8192
devcall_pack
