#!/usr/bin/env bash
# session 38 call B (carry ["build", "abtest"]), any card: how many 1 x 2 clusters of pp_128x128_p_c2 the GPU holds
# at once (occ.py), and both kernels at slab widths whose slabs fit that (F4GEMM_PP_SLAB_N), two rounds
set -u
source scripts/devcall.sh; devcall_init
python3 docs/results/2026-12-06d/occ.py abtest/c2/f4gemm_sm90a_pp_128x128_p_c2.cubin f4gemm_sm90a_pp_128x128_p_c2 \
    $(awk -F, '/_p_c2,/{print $9, $8}' abtest/c2/f4gemm_bf16_per1x32Fp4.csv) 2>&1 | tee $O/logs/occ.log
for r in 1 2; do
  for w in 1536 1792 2048; do
    F4GEMM_PP_SLAB_N=$w timeout 80 build/cli/f4gemm tune --co-dir abtest/c2 --shape 1024x16384x16384 \
        --shape 4096x16384x16384 --accum promoted --no-verify --reps 3 --iters 10 --out $O/logs/w${w}_r$r.csv \
        > $O/logs/w${w}_r$r.log 2>&1; echo "r$r w$w rc $? $SECONDS s"
  done
  for w in 3072 3584; do
    F4GEMM_PP_SLAB_N=$w timeout 60 build/cli/f4gemm tune --co-dir abtest/c2 --shape 512x16384x16384 \
        --accum promoted --no-verify --reps 3 --iters 10 --out $O/logs/w${w}_r$r.csv \
        > $O/logs/w${w}_r$r.log 2>&1; echo "r$r w$w rc $? $SECONDS s"
  done
  devcall_pack
done
