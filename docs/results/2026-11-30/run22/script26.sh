set -u
bash scripts/device_check.sh none >/dev/null 2>&1
S="--shape 1x16384x16384 --shape 1x8192x8192 --shape 1x28672x8192 --shape 1x8192x28672 --shape 16x16384x16384 --shape 16x8192x8192 --shape 16x28672x8192 --shape 16x8192x28672"
echo "== tune var26"
build/cli/f4gemm tune $S --co-dir build/var26 --no-verify --reps 5 --iters 50 --out $OUT/tune_var26.csv > $OUT/tune_var26.log 2>&1; echo rc=$?
grep -E "split 0:" $OUT/tune_var26.log | sed -E "s/\[f4gemm\] +//; s/f4gemm_sm90a_//; s/.cubin//; s/ split 0://; s/TF\/s.*spread/ sp/; s/ +/ /g"
echo "
