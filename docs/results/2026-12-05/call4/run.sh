#!/usr/bin/env bash
# session 31 call 4: call 3 again (A pre-pass tiles against the pre-pass kernels at M = 384, 512; 768 for the boundary)
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $O/gpu.txt
S=""; for m in 384 512; do for nk in 16384x16384 10240x8192 28672x8192 8192x28672; do S="$S --shape ${m}x$nk"; done; done
S="$S --shape 768x16384x16384 --shape 768x28672x8192"
scripts/tune_subset.sh 'f4gemm_sm90a_(pp_128x128|pab_128x128|cv_128x64)' $O/t_ex.log $S --accum exact --no-verify --reps 3 --iters 10 --out $O/t_ex.csv; echo "ex rc $?"
scripts/tune_subset.sh 'f4gemm_sm90a_(pp_128x128_p|pab_128x128_p|cv_128x64_p)' $O/t_pr.log $S --accum promoted --no-verify --reps 3 --iters 10 --out $O/t_pr.csv; echo "pr rc $?"
grep -h 'best' $O/t_ex.log $O/t_pr.log
