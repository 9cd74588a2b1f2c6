set -u
# f4gemm tune of the decode kernels (shipped cubins, build/var30 = a subset of the shipped manifest), to
# measure what the untuned policy picked before (ws_swap_16x128_bp) and picks now (dec_16x64_m2)
bash scripts/device_check.sh none >/dev/null 2>&1
S="--shape 1x16384x16384 --shape 1x8192x8192 --shape 1x28672x8192 --shape 1x8192x28672 --shape 16x16384x16384 --shape 16x8192x8192 --shape 16x28672x8192 --shape 16x8192x28672 --shape 8x4096x11008 --shape 4x14336x4096"
build/cli/f4gemm tune $S --co-dir build/var30 --no-verify --reps 5 --iters 50 --out $OUT/tune_var30.csv > $OUT/tune_var30.log 2>&1; echo rc=$?
grep -E "split [0-9]:" $OUT/tune_var30.log | grep -v dropped | sed -E "s/\[f4gemm\] +//; s/f4gemm_sm90a_//; s/.cubin//; s/TF\/s.*spread/ sp/; s/ +/ /g"
for s in "1 16384 16384" "16 8192 8192" "8 4096 11008"; do set -- $s; build/cli/f4gemm --tuned /dev/null -m $1 -n $2 -k $3 2>&1 | grep -E "kernel|PASS|FAIL" | head -3; done
