#!/usr/bin/env bash
# session 32 call 2: the shipped build with 256-K stages on pab_64x128(_p) (PERF.md entry 71): gpu tests, the three
# sanitizers on the two changed kernels, a verified run per data kind; the kernels of M = 33..64 on the 14 decode
# cells (decode_measured.csv, tuned rows) and session 31's h200_retime.sh again with its logs kept (grid_measured.csv,
# tuned rows, the policy of M = 384..1024); then the regression sweep. Logs in one tar (the tool's file limit).
set -u
O=${OUT:-/tmp/out}; L=/tmp/logs; mkdir -p $O $L
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $L/gpu.txt
grep -q H200 $L/gpu.txt || { echo "not an H200: stop"; exit 3; }
pack() { (cd /tmp && tar czf $O/logs.tgz logs); }
S="--shape 40x28672x8192 --shape 48x10240x8192 --shape 48x16384x16384 --shape 64x10240x8192 --shape 64x1024x4096 --shape 64x13824x5120 --shape 64x14336x4096 --shape 64x16384x16384 --shape 64x28672x8192 --shape 64x4096x14336 --shape 64x4096x4096 --shape 64x5120x5120 --shape 64x8192x28672 --shape 64x8192x8192 "
timeout 90 scripts/tune_subset.sh 'f4gemm_sm90a_(pab_64x128|cv_64x128|cv_64x80)' $L/tune_m33_64_ex.log $S --accum exact --no-verify --reps 3 --iters 10 --out $L/tuned_m33_64_ex.csv; echo "m33_64 ex rc $?"
timeout 120 scripts/tune_subset.sh 'f4gemm_sm90a_(pab_64x128_p|cv_64x80_p|cv_64x128_p|cv_64x64_p)' $L/tune_m33_64_pr.log $S --accum promoted --no-verify --reps 3 --iters 10 --out $L/tuned_m33_64_pr.csv; echo "m33_64 pr rc $?"
grep -h best $L/tune_m33_64_ex.log $L/tune_m33_64_pr.log
OUT=$L/retime timeout 170 bash docs/results/2026-12-05/h200_retime.sh > /dev/null; echo "retime rc $?"
grep -h best $L/retime/*.log
pack
timeout 60 ctest --test-dir build -L gpu --output-on-failure > $L/gpu_tests.log 2>&1; echo "gpu tests rc $?"; grep -E 'tests passed|tests failed' $L/gpu_tests.log
F=build/cli/f4gemm
for k in f4gemm_sm90a_pab_64x128.cubin:exact f4gemm_sm90a_pab_64x128_p.cubin:promoted; do
  co=${k%%:*}; acc=${k##*:}
  for t in memcheck racecheck synccheck; do
    x=(); [ $t = synccheck ] && x=(--num-cuda-barriers 1024)
    shapes=("-m 40 -n 272 -k 512" "--splitk 1 -m 64 -n 272 -k 1536" "-m 50 -n 528 -k 2880 --beta 1")
    [ $t = racecheck ] && shapes=("-m 40 -n 272 -k 512" "--splitk 1 -m 64 -n 272 -k 1536")
    [ $t = synccheck ] && shapes=("-m 40 -n 272 -k 512")
    for args in "${shapes[@]}"; do
      out=$(timeout 60 compute-sanitizer --tool $t "${x[@]}" --error-exitcode 99 $F --backend cuda --iters 0 --kernel $co --accum $acc $args 2>&1)
      echo "$t $co $acc $args rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' <<<"$out" | tail -1) $(grep -E 'PASSED|FAILED' <<<"$out" | tail -1)" >> $L/sanitize.log
    done
  done
done
grep -c "rc=0" $L/sanitize.log; grep -v "rc=0" $L/sanitize.log
for d in seed wide gaussian nan; do for k in f4gemm_sm90a_pab_64x128.cubin:exact f4gemm_sm90a_pab_64x128_p.cubin:promoted; do
  echo "$d ${k##*:}: $($F --kernel ${k%%:*} --accum ${k##*:} --data $d -m 48 -n 1000 -k 4096 --beta 1 --iters 0 2>&1 | grep -E 'PASSED|FAILED|verify' | tr '\n' ' ')" >> $L/data.log
done; done; grep -c PASSED $L/data.log
pack
timeout 150 scripts/sweep_sm90.sh > $L/sweep.log 2>&1; echo "sweep rc $?"; tail -3 $L/sweep.log
pack
