#!/usr/bin/env bash
# session 38 call D (carry ["build", "abtest"]), any card: the gpu-labelled tests on this session's main (the slab
# width's one home, pp_launch_slab_n), and how many clusters of 2 and 4 CTAs of the CLUSTER_N converter tiles the GPU
# holds at once (occ.py on call C's cubins, PERF.md entry 83)
set -u
source scripts/devcall.sh; devcall_init
for c in n2 n4; do
  for k in cv_64x80_p cv_128x80_p; do
    f=abtest/cn80/f4gemm_sm90a_${k}_$c.cubin
    python3 docs/results/2026-12-06d/occ.py $f f4gemm_sm90a_${k}_$c \
        $(awk -F, "/_${k}_$c,/{print \$9, \$8}" abtest/cn80/f4gemm_bf16_per1x32Fp4.csv) 2>&1 | tee -a $O/logs/occ.log
  done
done
timeout 400 ctest --test-dir build -L gpu --output-on-failure > $O/logs/gpu_tests.log 2>&1
echo "ctest rc $? $SECONDS s"; tail -4 $O/logs/gpu_tests.log
devcall_pack
