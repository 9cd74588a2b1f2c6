#!/usr/bin/env bash
# session 32 call 8 (the session's last device time): the serving-grid bench on the final build (256-K A pre-pass
# tiles of both heights, max_m 768 / 512, the tuned rows of call 1), both modes, untuned picks too, on whichever card
# comes (the card is in gpu.txt and the bench log's first line); on an H200, with the time the bench leaves, the kernels of
# M = 33..64 on the 14 decode cells (decode_measured.csv). Logs in one tar (the tool's file limit).
set -u
O=${OUT:-/tmp/out}; L=/tmp/logs; mkdir -p $O $L
LIMIT=${LIMIT:-520}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $L/gpu.txt
left() { local t=$(( $1 - SECONDS )); [ $t -lt 1 ] && t=1; echo $t; }  # seconds until $1 (at least 1: timeout 0 would mean none)
pack() { (cd /tmp && tar czf $O/logs.tgz logs); }
timeout $(left $((LIMIT - 10))) python3 -u bench/bench.py --grid serving --untuned --out $L/bench > $L/bench_serving.log 2>&1; echo "bench rc $? at ${SECONDS} s"
tail -8 $L/bench_serving.log
pack
if grep -q H200 $L/gpu.txt && [ $((LIMIT - SECONDS)) -gt 60 ]; then
  S="--shape 40x28672x8192 --shape 48x10240x8192 --shape 48x16384x16384 --shape 64x10240x8192 --shape 64x1024x4096 --shape 64x13824x5120 --shape 64x14336x4096 --shape 64x16384x16384 --shape 64x28672x8192 --shape 64x4096x14336 --shape 64x4096x4096 --shape 64x5120x5120 --shape 64x8192x28672 --shape 64x8192x8192 "
  timeout $(left $((LIMIT - 75))) scripts/tune_subset.sh 'f4gemm_sm90a_(pab_64x128|cv_64x128|cv_64x80)' $L/tune_m33_64_ex.log $S --accum exact --no-verify --reps 3 --iters 10 --out $L/tuned_m33_64_ex.csv; echo "m33_64 ex rc $?"
  pack
  timeout $(left $((LIMIT - 5))) scripts/tune_subset.sh 'f4gemm_sm90a_(pab_64x128_p|cv_64x80_p|cv_64x128_p|cv_64x64_p)' $L/tune_m33_64_pr.log $S --accum promoted --no-verify --reps 3 --iters 10 --out $L/tuned_m33_64_pr.csv; echo "m33_64 pr rc $?"
  pack
fi
