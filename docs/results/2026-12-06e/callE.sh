#!/usr/bin/env bash
# session 39 call E (carry ["build", "abtest"]; prepC.sh first), any card: is the unneeded CTAs' cost in the kernel
# or between kernels? ncu's kernel duration (launches serialised, no overlap) of dec_32x128_wg12_c2_sk at 32 x
# 10240 x 8192 in 1, 2 and 4 splits and of its shipped twin; then f4gemm tune with host-loop timing on that cell
set -u
source scripts/devcall.sh; devcall_init
for kl in "f4gemm_sm90a_dec_32x128_wg12_c2.cubin 0" "f4gemm_sm90a_dec_32x128_wg12_c2_sk.cubin 0" \
          "f4gemm_sm90a_dec_32x128_wg12_c2_sk.cubin 1" "f4gemm_sm90a_dec_32x128_wg12_c2_sk.cubin 2" \
          "f4gemm_sm90a_dec_32x128_wg12_c2_sk_last.cubin 1"; do
  set -- $kl
  timeout 60 ncu --metrics gpu__time_duration.sum,sm__cycles_active.avg,launch__grid_size -k regex:dec_32 \
      build/cli/f4gemm --backend cuda --co-dir abtest/sk2 --kernel $1 -m 32 -n 10240 -k 8192 --splitk $2 \
      --warmup 2 --iters 3 --no-verify > $O/logs/ncu_${1%.cubin}_L$2.log 2>&1
  echo "== $1 L$2 rc $?"; grep -E 'gpu__time_duration|launch__grid_size|sm__cycles_active' $O/logs/ncu_${1%.cubin}_L$2.log | tail -3
done
timeout 100 build/cli/f4gemm tune --co-dir abtest/sk2 --shape 32x10240x8192 --shape 1x16384x16384 --timing loop \
    --no-verify --reps 3 --iters 20 --out $O/logs/tl.csv > $O/logs/tl.log 2>&1; echo "tune loop rc $? $SECONDS s"
devcall_pack
