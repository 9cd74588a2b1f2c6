set -u
bash scripts/device_check.sh none 2>&1 | head -1
echo "== gpu tests"; ctest --test-dir build -L gpu --output-on-failure > $OUT/gpu_tests.log 2>&1; grep -E "tests passed|Failed|\*\*\*|pab" $OUT/gpu_tests.log | head -20
echo "== tune mid/large"; S="--shape 128x16384x16384 --shape 256x16384x16384 --shape 8192x8192x8192 --shape 4096x4096x4096"
build/cli/f4gemm tune $S --co-dir build/midset --no-verify --reps 5 --iters 30 --out $OUT/tune_mid.csv > $OUT/tune_mid.log 2>&1; echo rc=$?; grep -v "^\s*$" $OUT/tune_mid.log | tail -40 | sed 's/\[f4gemm\]//'
echo "== ncu pab 128x16384x16384"
R=""
for r in long_scoreboard short_scoreboard wait math_pipe_throttle barrier not_selected mio_throttle lg_throttle dispatch_stall no_instruction membar selected sleeping misc branch_resolving; do R="$R,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
R="${R#,},smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
R="$R,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum"
for co in f4gemm_sm90a_pab_128x128 f4gemm_sm90a_pab_128x128_p1; do echo "-- $co"
ncu --clock-control none --kernel-name "regex:^${co}\$" --launch-skip 1 --launch-count 1 --metrics "$R" \
    build/cli/f4gemm --co-dir build/midset --kernel $co.cubin -m 128 -n 16384 -k 16384 --iters 3 --no-verify 2>&1 |
    grep -E "smsp__|sm__|dram__|gpu__|lts__|rror" | sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | awk '{print $1, $(NF-1), $NF}' | sort -k3 -g -r | head -14
done
