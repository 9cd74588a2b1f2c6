#!/usr/bin/env bash
# Warp-stall breakdown (cycles per issued instruction, by reason) plus issue, tensor-pipe and DRAM
# utilisation of one kernel launch, on the GPU machine: the figures that say whether a kernel waits on
# memory, on dependencies or on a pipe. Used for docs/PERF.md.
# Usage: scripts/ncu_stalls.sh KERNEL_CO_NAME M N K [co-dir [f4gemm arguments, e.g. --accum promoted]]
set -euo pipefail
cd "$(dirname "$0")/.."
co=$1 m=$2 n=$3 k=$4 dir=${5:-build/kernels/sm90a}
shift $(($# < 5 ? $# : 5))
R=""
for r in long_scoreboard short_scoreboard wait math_pipe_throttle barrier not_selected mio_throttle lg_throttle \
    dispatch_stall no_instruction tex_throttle membar selected sleeping drain misc branch_resolving imc_miss; do
    R="$R,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
done
R="${R#,},smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
R="$R,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.per_cycle_active,gpu__time_duration.sum"
ncu --clock-control none --kernel-name "regex:${co%.*}" --launch-skip 1 --launch-count 1 --metrics "$R" \
    build/cli/f4gemm --co-dir "$dir" --kernel "$co" -m "$m" -n "$n" -k "$k" --iters 2 "$@" 2>&1 |
    grep -E "smsp__|sm__|dram__|gpu__" | sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' |
    awk '{print $1, $(NF-1), $NF}' | sort -k3 -g -r
