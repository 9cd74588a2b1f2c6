#!/usr/bin/env bash
# session 31 call 11: the skeleton probe (29) and the whole kernel (0) of cv_128x128_p_c2 over K: the per-stage
# hand-off cost as a slope (CLI timing, median of 50, twice each)
set -u
D=abtest/c10; O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $O/gpu.txt
for K in 1024 2048 4096 8192 16384; do
  for k in c2p29 c2p0 c2p25; do
    for rep in 1 2; do
      t=$(build/cli/f4gemm --co-dir $D --kernel f4gemm_sm90a_cv_128x128_p_$k.cubin -m 128 -n 16384 -k $K --accum promoted --no-verify --iters 50 2>&1 | grep -E ' us ' | tail -1)
      echo "128x16384x$K $k rep$rep: $t" | tee -a $O/probes_k.log
    done
  done
done
