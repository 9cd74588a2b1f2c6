set -u
bash scripts/device_check.sh none 2>&1 | head -1
echo "== gpu tests"; ctest --test-dir build -L gpu --output-on-failure > $OUT/gpu_tests.log 2>&1; grep -E "tests passed|Failed|\*\*\*|pab" $OUT/gpu_tests.log | head -20
echo "== tune mid/large"; S="--shape 128x16384x16384 --shape 256x16384x16384 --shape 4096x4096x4096 --shape 8192x8192x8192 --shape 2048x8192x8192 --shape 4096x28672x4096"
build/cli/f4gemm tune $S --co-dir build/midset --no-verify --reps 5 --iters 30 --out $OUT/tune_mid.csv > $OUT/tune_mid.log 2>&1; echo rc=$?; grep -v "^\s*$" $OUT/tune_mid.log | tail -40
