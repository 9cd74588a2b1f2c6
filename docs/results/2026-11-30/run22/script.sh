set -u
bash scripts/device_check.sh tests 2>&1 | tail -6
S="--shape 1x16384x16384 --shape 1x8192x8192 --shape 1x28672x8192 --shape 1x8192x28672 --shape 16x16384x16384 --shape 16x8192x8192 --shape 16x28672x8192 --shape 16x8192x28672"
echo "== tune var22"
build/cli/f4gemm tune $S --co-dir build/var22 --no-verify --reps 5 --iters 50 --out $OUT/tune_var22.csv > $OUT/tune_var22.log 2>&1; echo rc=$?
grep -E "split [0-9]+:" $OUT/tune_var22.log | sed -E "s/\[f4gemm\] +//; s/f4gemm_sm90a_//; s/.cubin//; s/TF\/s.*spread/ sp/" | head -120
echo "== verified runs"
for sh in "1 16384 16384" "16 16384 16384" "16 8192 8192" "5 8192 28672"; do set -- $sh
  for k in ws_swap_16x64_m2fs ws_swap_16x128_fs; do build/cli/f4gemm --kernel f4gemm_sm90a_$k.cubin -m $1 -n $2 -k $3 2>&1 | grep -E "PASS|FAIL|error" | head -2; done; done
