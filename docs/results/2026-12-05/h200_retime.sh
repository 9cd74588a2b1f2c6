#!/usr/bin/env bash
# session 31 calls 5-7 (each stopped at the card check: H100) and the next session: the A pre-pass tiles against the pre-pass kernels at M = 384, 512, 768, 1024 on the grid's four N x K
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $O/gpu.txt
grep -q H200 $O/gpu.txt || { echo "not an H200: stop"; exit 3; }
S=""; for m in 384 512 768 1024; do for nk in 16384x16384 10240x8192 28672x8192 8192x28672; do S="$S --shape ${m}x$nk"; done; done
scripts/tune_subset.sh 'f4gemm_sm90a_(pp_128x128|pab_128x128|cv_128x64|cv_128x80)' $O/tune_m384_1024_ex.log $S --accum exact --no-verify --reps 3 --iters 10 --out $O/t_ex.csv; echo "ex rc $?"
scripts/tune_subset.sh 'f4gemm_sm90a_(pp_128x128_p|pab_128x128_p|cv_128x64_p|cv_128x80_p)' $O/tune_m384_1024_pr.log $S --accum promoted --no-verify --reps 3 --iters 10 --out $O/t_pr.csv; echo "pr rc $?"
grep -h 'best' $O/tune_m384_1024_ex.log $O/tune_m384_1024_pr.log
