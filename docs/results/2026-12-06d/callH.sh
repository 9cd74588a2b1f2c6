#!/usr/bin/env bash
# session 38 call H (carry ["build"]), any card: where the 80-row decode tile's stalls sit, instruction by
# instruction (ncu's source page, SASS, warp-state samples every 32 cycles), at 1 x 10240 x 1024 (entry 85: its
# partials-to-shared-memory phase 2.8 us there) and 1 x 10240 x 8192, the third of four launches
set -u
source scripts/devcall.sh; devcall_init
for k in 1024 8192; do
  timeout 150 ncu --kernel-name regex:'dec_16x80_w12$' --launch-skip 2 --launch-count 1 --warp-sampling-interval 0 \
      --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
      build/cli/f4gemm --backend cuda --kernel f4gemm_sm90a_dec_16x80_w12.cubin -m 1 -n 10240 -k $k \
      --warmup 0 --iters 4 --no-verify > $O/logs/src_$k.csv 2> $O/logs/src_$k.err
  echo "ncu K=$k rc $? $SECONDS s $(wc -l < $O/logs/src_$k.csv) lines"; devcall_pack
done
