set -u
bash scripts/device_check.sh none 2>&1 | head -1
echo "== tune wall time, same kernels and shapes: before (build_old, commit of run19) and after the image cache (ms)"
S="--shape 128x16384x16384 --shape 16x8192x28672 --no-verify --reps 3 --iters 10 --co-dir build/kernels/sm90a"
for b in build_old build build_old build; do s=$(date +%s%N); $b/cli/f4gemm tune $S --out $OUT/t_$b.csv > $OUT/tune_$b.log 2>&1; r=$?; e=$(date +%s%N); echo "$b rc=$r wall $(( (e - s) / 1000000 )) ms"; done
