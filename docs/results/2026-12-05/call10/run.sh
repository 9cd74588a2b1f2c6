#!/usr/bin/env bash
# session 31 call 10: probes of the two-converter-warpgroup 128-row converter tile (and its one-converter SPAN 2 twin):
# each role alone (scripts/cv_probes.py's bits through variant.py --define F4GEMM_CV_PROBE), CLI timing (median of 50)
set -u
D=abtest/c10; O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $O/gpu.txt
for shape in "128 16384 16384" "128 8192 16384"; do
  set -- $shape
  for k in c2p0 c2p13 c2p20 c2p25 c2p29 s2p20 s2p25; do
    for rep in 1 2; do
      t=$(build/cli/f4gemm --co-dir $D --kernel f4gemm_sm90a_cv_128x128_p_$k.cubin -m $1 -n $2 -k $3 --accum promoted --no-verify --iters 50 2>&1 | grep -i -E ' us|time' | tail -1)
      echo "$1x$2x$3 $k rep$rep: $t" | tee -a $O/probes.log
    done
  done
done
