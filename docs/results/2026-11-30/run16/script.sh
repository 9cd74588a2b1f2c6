set -u
bash scripts/device_check.sh none 2>&1 | head -1
echo "== check_frag16"; python3 bench/check_frag16.py 2>&1 | tail -1 | tee $OUT/check_frag16.log; grep -q PASSED $OUT/check_frag16.log || exit 1
echo "== gpu tests"; ctest --test-dir build -L gpu --output-on-failure > $OUT/gpu_tests.log 2>&1; grep -E "tests passed|Failed|\*\*\*" $OUT/gpu_tests.log | head
echo "== bench"; python3 bench/bench.py --out $OUT > $OUT/bench.log 2>&1; echo rc=$?; grep -A20 "shape kernel" $OUT/bench.log | head -20
echo "== sweep"; bash scripts/sweep_sm90.sh > $OUT/sweep.log 2>&1; echo rc=$?; grep -E "FAIL|passed," $OUT/sweep.log | tail -4
echo "== sanitizer (dec kernels)"
for k in f4gemm_sm90a_dec_16x64_m2.cubin f4gemm_sm90a_dec_16x64_w16.cubin f4gemm_sm90a_dec_16x32_m2.cubin; do for run in "memcheck -m 17 -n 272 -k 512" "memcheck -m 1 -n 1040 -k 512 --beta 1" "racecheck -m 17 -n 272 -k 512"; do set -- $run; tool=$1; shift
  o=$(compute-sanitizer --tool $tool --error-exitcode 99 build/cli/f4gemm --backend cuda --iters 0 --kernel $k "$@" 2>&1); echo "$tool $k $* rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' <<<"$o" | tail -1)" >> $OUT/sanitize_dec.log; done; done
grep -c "rc=0 .*0 \(errors\|hazards\)" $OUT/sanitize_dec.log | sed 's/^/clean of 9: /'; grep -v "rc=0" $OUT/sanitize_dec.log | head -3
echo "== tune decode"; S="--shape 1x16384x16384 --shape 1x8192x8192 --shape 1x28672x8192 --shape 1x8192x28672 --shape 16x16384x16384 --shape 16x8192x8192 --shape 16x28672x8192 --shape 16x8192x28672"
build/cli/f4gemm tune $S --co-dir build/decset --no-verify --reps 5 --iters 50 --out $OUT/tune_dec.csv > $OUT/tune_dec.log 2>&1; echo rc=$?; grep best $OUT/tune_dec.log | sed 's/\[f4gemm\] //'
