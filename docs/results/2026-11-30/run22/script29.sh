set -u
bash scripts/device_check.sh none >/dev/null 2>&1
S="--shape 1x16384x16384 --shape 1x8192x8192 --shape 1x28672x8192 --shape 1x8192x28672 --shape 16x8192x8192"
for v in var29a var29b; do
echo "== tune $v"
build/cli/f4gemm tune $S --co-dir build/$v --no-verify --reps 5 --iters 50 --out $OUT/tune_$v.csv > $OUT/tune_$v.log 2>&1; echo rc=$?
grep -E "split 0:" $OUT/tune_$v.log | sed -E "s/\[f4gemm\] +//; s/f4gemm_sm90a_//; s/.cubin//; s/ split 0://; s/TF\/s.*spread/ sp/; s/ +/ /g"
done
