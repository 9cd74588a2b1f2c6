set -u
bash scripts/device_check.sh none 2>&1 | head -1
echo "== gpu tests"; ctest --test-dir build -L gpu --output-on-failure > $OUT/gpu_tests5.log 2>&1; grep -E "tests passed|Failed|\*\*\*" $OUT/gpu_tests5.log | head
echo "== verify variants"; for co in f4gemm_sm90a_pab_128x128 pabm2_64s5 pabm2_64s4; do for s in "-m 300 -n 2064 -k 1024" "-m 129 -n 272 -k 4096" "-m 1 -n 64 -k 256"; do echo "$co $s: $(build/cli/f4gemm --co-dir build/midset --kernel $co.cubin $s 2>&1 | grep -E 'PASSED|FAILED|rror' | tail -1)"; done; done
echo "== tune mid"; S="--shape 128x16384x16384 --shape 256x16384x16384 --shape 512x16384x16384"
build/cli/f4gemm tune $S --co-dir build/midset --no-verify --reps 5 --iters 30 --out $OUT/tune_mid5.csv > $OUT/tune_mid5.log 2>&1; echo rc=$?; grep -v "^\s*$" $OUT/tune_mid5.log | tail -20 | sed 's/\[f4gemm\]//'
