set -u
bash scripts/device_check.sh main tests sweep 2>&1 | grep -vE "^\[f4gemm\]" | tail -30
echo "== sanitizer (pab)"
k=f4gemm_sm90a_pab_128x128.cubin
for run in "memcheck -m 65 -n 272 -k 512" "memcheck -m 130 -n 528 -k 1024 --beta 1" "memcheck -m 1 -n 16 -k 256" "racecheck -m 65 -n 272 -k 512" "racecheck -m 130 -n 528 -k 1024 --beta 1"; do set -- $run; tool=$1; shift
  o=$(compute-sanitizer --tool $tool --error-exitcode 99 build/cli/f4gemm --backend cuda --iters 0 --kernel $k "$@" 2>&1); echo "$tool $k $* rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' <<<"$o" | tail -1)" >> $OUT/sanitize_pab.log; done
cat $OUT/sanitize_pab.log
echo "== bench"; python3 bench/bench.py --out $OUT > $OUT/bench.log 2>&1; echo rc=$?; grep -A20 "shape kernel" $OUT/bench.log | head -20; grep -iE "copy|mismatch|max_rel" $OUT/bench.log | head -5
