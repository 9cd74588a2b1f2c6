#!/usr/bin/env bash
# session 31 call 2: where the three M = 128 promoted designs spend the SM at 128 x 16384^2 (ncu, unmodified clocks)
set -u
D=abtest/c1; O=${OUT:-/tmp/out}; mkdir -p $O
M="l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_elapsed"
for co in f4gemm_sm90a_pab_128x128_p f4gemm_sm90a_cv_128x128_p_c2 f4gemm_sm90a_cv_128x64_p; do
  ncu --clock-control none --kernel-name "regex:${co}" --launch-skip 1 --launch-count 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats \
      build/cli/f4gemm --co-dir $D --kernel $co.cubin -m 128 -n 16384 -k 16384 --accum promoted --no-verify --iters 2 > $O/ncu_sec_${co#f4gemm_sm90a_}.txt 2>&1
  echo "$co sections rc $?"
  ncu --clock-control none --kernel-name "regex:${co}" --launch-skip 1 --launch-count 1 --metrics "$M" \
      build/cli/f4gemm --co-dir $D --kernel $co.cubin -m 128 -n 16384 -k 16384 --accum promoted --no-verify --iters 2 > $O/ncu_met_${co#f4gemm_sm90a_}.txt 2>&1
  echo "$co metrics rc $?"
done
grep -h -E 'Duration|SM Frequency|Issue Slots Busy|L1/TEX Cache Throughput|Shared|Tensor|highest|pct|Kernel Name|==ERR' $O/ncu_*.txt | cut -c1-150
