set -u
start=$(date +%s)
bash scripts/device_check.sh main tests sweep 2>&1 | grep -vE "^\[f4gemm\]" | tail -12
echo "== sanitizer (ws_swap_16x128_fs)"
k=f4gemm_sm90a_ws_swap_16x128_fs.cubin
for run in "memcheck -m 65 -n 272 -k 512" "memcheck -m 17 -n 16 -k 256 --beta 1" "memcheck -m 1 -n 1024 -k 256" "memcheck --splitk 2 -m 70 -n 272 -k 1536" "racecheck -m 65 -n 272 -k 512" "racecheck --splitk 2 -m 70 -n 272 -k 1536"; do set -- $run; tool=$1; shift
  o=$(compute-sanitizer --tool $tool --error-exitcode 99 build/cli/f4gemm --backend cuda --iters 0 --kernel $k "$@" 2>&1); echo "$tool $k $* rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' <<<"$o" | tail -1)" >> $OUT/sanitize_fs.log; done
cat $OUT/sanitize_fs.log
echo "elapsed $(( $(date +%s) - start )) s"
