#!/usr/bin/env bash
# session 32 call 5 (H200 only): the kernels of M = 33..64 on the 14 decode cells (pab_64x128(_p) at 256-K stages,
# PERF.md entry 71: decode_measured.csv, tuned rows) and session 31's h200_retime.sh with its logs kept (PERF.md
# entry 72: grid_measured.csv, tuned rows, pab_128x128(_p)'s max_m); their best rows merged into the build's tuned
# table (not the three cells whose best kernel is outside the timed subset: 64x1024x4096, 64x4096x4096,
# 64x5120x5120), then the serving-grid bench, both modes, untuned picks too. Logs in one tar (the tool's file limit).
set -u
O=${OUT:-/tmp/out}; L=/tmp/logs; mkdir -p $O $L
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $L/gpu.txt
grep -q H200 $L/gpu.txt || { echo "not an H200: stop"; exit 3; }
pack() { (cd /tmp && tar czf $O/logs.tgz logs); }
S="--shape 40x28672x8192 --shape 48x10240x8192 --shape 48x16384x16384 --shape 64x10240x8192 --shape 64x1024x4096 --shape 64x13824x5120 --shape 64x14336x4096 --shape 64x16384x16384 --shape 64x28672x8192 --shape 64x4096x14336 --shape 64x4096x4096 --shape 64x5120x5120 --shape 64x8192x28672 --shape 64x8192x8192 "
timeout 90 scripts/tune_subset.sh 'f4gemm_sm90a_(pab_64x128|cv_64x128|cv_64x80)' $L/tune_m33_64_ex.log $S --accum exact --no-verify --reps 3 --iters 10 --out $L/tuned_m33_64_ex.csv; echo "m33_64 ex rc $?"
timeout 110 scripts/tune_subset.sh 'f4gemm_sm90a_(pab_64x128_p|cv_64x80_p|cv_64x128_p|cv_64x64_p)' $L/tune_m33_64_pr.log $S --accum promoted --no-verify --reps 3 --iters 10 --out $L/tuned_m33_64_pr.csv; echo "m33_64 pr rc $?"
grep -h best $L/tune_m33_64_ex.log $L/tune_m33_64_pr.log
OUT=$L/retime timeout 170 bash docs/results/2026-12-05/h200_retime.sh > /dev/null; echo "retime rc $?"
grep -h best $L/retime/*.log
pack
T=build/kernels/sm90a/f4gemm_bf16_per1x32Fp4_tuned.csv; cp $T $L/tuned_before.csv
for f in $L/tuned_m33_64_ex.csv $L/tuned_m33_64_pr.csv; do grep -vE '^132,64,(1024,4096|4096,4096|5120,5120),' $f > $f.kept; done
python3 scripts/merge_tuned.py $T $L/tuned_m33_64_ex.csv.kept $L/tuned_m33_64_pr.csv.kept $L/retime/t_ex.csv $L/retime/t_pr.csv; echo "merge rc $?"; cp $T $L/tuned_after.csv
echo "bench starts at ${SECONDS} s"
timeout $((580 - SECONDS)) python3 -u bench/bench.py --grid serving --untuned --out $L/bench > $L/bench_serving.log 2>&1; echo "bench rc $? at ${SECONDS} s"
tail -12 $L/bench_serving.log
pack
