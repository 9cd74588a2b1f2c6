#!/usr/bin/env bash
# session 31 call 3: where the A pre-pass tiles (max_m 256) stand against the pre-pass kernels (pp) at M = 384..1024
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $O/gpu.txt
N4="16384x16384 10240x8192 28672x8192 8192x28672"
EX=""; for m in 384 512 1024; do for nk in $N4; do EX="$EX --shape ${m}x$nk"; done; done
PR=""; for m in 384 512 1024; do for nk in $N4; do PR="$PR --shape ${m}x$nk"; done; done
scripts/tune_subset.sh 'f4gemm_sm90a_(pp_128x128|pab_128x128|cv_128x64|cv_128x80)' $O/t_ex.log $EX --accum exact --no-verify --reps 3 --iters 10 --out $O/t_ex.csv; echo "ex rc $?"
scripts/tune_subset.sh 'f4gemm_sm90a_(pp_128x128_p|pab_128x128_p|cv_128x64_p|cv_128x80_p)' $O/t_pr.log $PR --accum promoted --no-verify --reps 3 --iters 10 --out $O/t_pr.csv; echo "pr rc $?"
grep -h 'best' $O/t_ex.log $O/t_pr.log
