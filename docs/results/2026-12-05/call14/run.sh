#!/usr/bin/env bash
# session 31 call 14: the shipped build with 256-K stages on pab_128x128(_p): gpu tests, sanitizers on the two
# changed kernels, a verified tune of both (every split, both modes) on edge shapes
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee $O/gpu.txt
timeout 120 ctest --test-dir build -L gpu --output-on-failure > $O/gpu_tests.log 2>&1; echo "gpu tests rc $?"; grep -E 'tests passed|tests failed' $O/gpu_tests.log
F=build/cli/f4gemm
for k in f4gemm_sm90a_pab_128x128.cubin:exact f4gemm_sm90a_pab_128x128_p.cubin:promoted; do
  co=${k%%:*}; acc=${k##*:}
  for t in memcheck racecheck synccheck; do
    x=(); [ $t = synccheck ] && x=(--num-cuda-barriers 1024)
    shapes=("-m 65 -n 272 -k 512" "--splitk 2 -m 70 -n 272 -k 1536" "-m 130 -n 528 -k 2880 --beta 1")
    [ $t = racecheck ] && shapes=("-m 65 -n 272 -k 512" "--splitk 2 -m 70 -n 272 -k 1536")
    [ $t = synccheck ] && shapes=("-m 65 -n 272 -k 512")
    for args in "${shapes[@]}"; do
      out=$(timeout 60 compute-sanitizer --tool $t "${x[@]}" --error-exitcode 99 $F --backend cuda --iters 0 --kernel $co --accum $acc $args 2>&1)
      echo "$t $co $acc $args rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' <<<"$out" | tail -1) $(grep -E 'PASSED|FAILED' <<<"$out" | tail -1)" | tee -a $O/sanitize.log
    done
  done
  timeout 30 compute-sanitizer --tool memcheck --error-exitcode 99 $F --backend cuda --iters 0 --kernel $co --accum $acc -m 40 -n 1000 -k 2880 --data wide 2>&1 | grep -E 'ERROR SUMMARY|PASSED|FAILED' | tr '\n' ' ' | sed "s/^/memcheck wide $co: /" | tee -a $O/sanitize.log; echo
done
S="--shape 256x2048x4096 --shape 300x1000x2880 --shape 130x528x1024 --shape 128x1024x8192 --shape 72x512x1280 --shape 200x1024x4096 --shape 129x2064x1280"
scripts/tune_subset.sh 'f4gemm_sm90a_pab_128x128(_p)?' $O/v_pr.log $S --accum promoted --reps 1 --iters 2 --out /tmp/v1.csv; echo "v_pr rc $?"
scripts/tune_subset.sh 'f4gemm_sm90a_pab_128x128' $O/v_ex.log $S --accum exact --reps 1 --iters 2 --out /tmp/v2.csv; echo "v_ex rc $?"
grep -c FAILED $O/v_pr.log $O/v_ex.log
for d in seed wide gaussian nan; do for k in f4gemm_sm90a_pab_128x128.cubin:exact f4gemm_sm90a_pab_128x128_p.cubin:promoted; do
  echo "$d ${k##*:}: $($F --kernel ${k%%:*} --accum ${k##*:} --data $d -m 200 -n 1000 -k 4096 --beta 1 --iters 0 2>&1 | grep -E 'PASSED|FAILED|verify' | tr '\n' ' ')" | tee -a $O/data.log
done; done
