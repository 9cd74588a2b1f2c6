set -u
bash scripts/device_check.sh none 2>&1 | head -2
echo "== gpu tests"; ctest --test-dir build -L gpu --output-on-failure > $OUT/gpu_tests.log 2>&1; grep -E "tests passed|Failed|\*\*\*" $OUT/gpu_tests.log | head
echo "== check_frag16"; python3 bench/check_frag16.py 2>&1 | tail -2
echo "== sanitizer (dec kernels)"
for tool in memcheck racecheck; do for k in f4gemm_sm90a_dec_16x64_m2.cubin f4gemm_sm90a_dec_16x64_w16.cubin f4gemm_sm90a_dec_16x32_m2.cubin; do for s in "-m 17 -n 272 -k 512" "-m 1 -n 1040 -k 384 --beta 1"; do
  o=$(compute-sanitizer --tool $tool --error-exitcode 99 build/cli/f4gemm --backend cuda --iters 0 --kernel $k $s 2>&1); echo "$tool $k $s rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' <<<"$o" | tail -1)" >> $OUT/sanitize_dec.log; done; done; done
grep -c "rc=0 .*0 \(errors\|hazards\)" $OUT/sanitize_dec.log | sed 's/^/clean: /'; grep -v "rc=0" $OUT/sanitize_dec.log | head -3
echo "== tune decode"; S="--shape 1x16384x16384 --shape 1x8192x8192 --shape 1x28672x8192 --shape 1x8192x28672 --shape 16x16384x16384 --shape 16x8192x8192 --shape 16x28672x8192 --shape 16x8192x28672"
build/cli/f4gemm tune $S --co-dir build/decset --no-verify --reps 5 --iters 50 --out $OUT/tune_dec.csv > $OUT/tune_dec.log 2>&1; echo rc=$?; grep best $OUT/tune_dec.log | sed 's/\[f4gemm\] //'
python3 scripts/merge_tuned.py build/kernels/sm90a/f4gemm_bf16_per1x32Fp4_tuned.csv $OUT/tune_dec.csv
echo "== main"; build/cli/f4gemm 2>&1 | tail -2
echo "== sweep"; bash scripts/sweep_sm90.sh > $OUT/sweep.log 2>&1; echo rc=$?; grep -E "FAIL|passed," $OUT/sweep.log | tail -4
echo "== bench"; python3 bench/bench.py --out $OUT > $OUT/bench.log 2>&1; echo rc=$?; tail -30 $OUT/bench.log
