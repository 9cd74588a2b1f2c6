set -u
bash scripts/device_check.sh none 2>&1 | head -1
echo "== tune mid (descriptor add; P4:D8 and 8-stage variants; the previous pab cubin as pabold)"; S="--shape 128x16384x16384 --shape 256x16384x16384"
build/cli/f4gemm tune $S --co-dir build/midset --no-verify --reps 5 --iters 30 --out $OUT/tune_mid4.csv > $OUT/tune_mid4.log 2>&1; echo rc=$?; grep -v "^\s*$" $OUT/tune_mid4.log | tail -20 | sed 's/\[f4gemm\]//'
for co in f4gemm_sm90a_pab_128x128 pabv_48s6 pabv_23s8; do build/cli/f4gemm --co-dir build/midset --kernel $co.cubin -m 256 -n 2064 -k 4096 2>&1 | tail -1; done
