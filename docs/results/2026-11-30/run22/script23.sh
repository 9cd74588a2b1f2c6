set -u
bash scripts/device_check.sh none >/dev/null 2>&1
S="--shape 1x16384x16384 --shape 1x8192x8192 --shape 1x28672x8192 --shape 1x8192x28672 --shape 16x16384x16384 --shape 16x8192x8192 --shape 16x28672x8192 --shape 16x8192x28672"
echo "== tune var23"
build/cli/f4gemm tune $S --co-dir build/var23 --no-verify --reps 5 --iters 50 --out $OUT/tune_var23.csv > $OUT/tune_var23.log 2>&1; echo rc=$?
grep -E "split 0:" $OUT/tune_var23.log | sed -E "s/\[f4gemm\] +//; s/f4gemm_sm90a_//; s/.cubin//; s/ split 0://; s/TF\/s.*spread/ sp/; s/ +/ /g"
for k in v_m2_p4 v_w16_p8; do build/cli/f4gemm --co-dir build/var23 --kernel f4gemm_sm90a_$k.cubin -m 5 -n 8192 -k 28672 2>&1 | grep -E "PASS|FAIL|rror" | head -2; done
