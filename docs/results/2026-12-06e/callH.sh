#!/usr/bin/env bash
# session 39 call H (carry ["build", "abtest"]): is call G's racecheck report on dec_16x80_w12 (M = 5, N = 272,
# K = 2048) new? The same racecheck on main's build (this session's) and on the kernel compiled from ac66b44's source
# (abtest/old80), three times each
set -u
source scripts/devcall.sh; devcall_init
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for d in build/kernels/sm90a abtest/old80; do for i in 1 2 3; do
  $CS --tool racecheck --error-exitcode 99 build/cli/f4gemm --backend cuda --co-dir $d \
      --kernel f4gemm_sm90a_dec_16x80_w12.cubin --accum exact -m 5 -n 272 -k 2048 --iters 0 > $O/logs/rc_$(basename $d)_$i.log 2>&1
  echo "$d run $i rc $? $(grep 'RACECHECK SUMMARY' $O/logs/rc_$(basename $d)_$i.log)"
done; done
devcall_pack
