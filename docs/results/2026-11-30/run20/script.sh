set -u
bash scripts/device_check.sh none 2>&1 | head -1
echo "== gpu tests"; ctest --test-dir build -L gpu --output-on-failure > $OUT/gpu_tests.log 2>&1; grep -E "tests passed|Failed|\*\*\*|Tune" $OUT/gpu_tests.log | head
grep -E "operand images|best 200" $OUT/gpu_tests.log | head -3
echo "== tune wall time, same kernels and shapes: before (build_old, commit of run19) and after the image cache"
S="--shape 128x16384x16384 --shape 16x8192x28672 --no-verify --reps 3 --iters 10 --co-dir build/kernels/sm90a"
for b in build_old build; do s=$(date +%s.%N); $b/cli/f4gemm tune $S --out $OUT/t_$b.csv > $OUT/tune_$b.log 2>&1; e=$(date +%s.%N); echo "$b rc=$? wall $(echo "$e - $s" | bc) s; $(grep best $OUT/tune_$b.log | sed 's/\[f4gemm\] //' | tr '\n' ' ')"; done
