#!/usr/bin/env bash
# session 38: the converter tiles with A's image stage multicast over clusters of CLUSTER_N CTAs (PERF.md entry 83),
# lab variants (scripts/variant.py) beside the shipped picks they would replace: abtest/cn80 (80-row weight tiles:
# N = 10240 only, where 128 tiles divide by 4) and abtest/cn128 (128-row weight tiles, every grid N)
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -rf abtest/cn80 abtest/cn128
b() { python3 scripts/variant.py "$@" | tail -1; }
also() { for n in "$@"; do echo --also "f4gemm_sm90a_$n"; done; }
for c in 2 4; do
  b abtest/cn80 f4gemm_sm90a_cv_64x80_p n$c CLUSTER_N=$c
  b abtest/cn80 f4gemm_sm90a_cv_128x80_p n$c CLUSTER_N=$c
  b abtest/cn80 f4gemm_sm90a_cv_128x80 n$c CLUSTER_N=$c
  b abtest/cn128 f4gemm_sm90a_cv_64x128_p n$c CLUSTER_N=$c
  b abtest/cn128 f4gemm_sm90a_cv_128x128_p c2n$c CONV_WG=2 REG_CONV=72 SPAN=1 CLUSTER_N=$c
done
b abtest/cn128 f4gemm_sm90a_cv_128x128_p c2n1 CONV_WG=2 REG_CONV=72 SPAN=1 CLUSTER_N=1
b abtest/cn80 f4gemm_sm90a_cv_64x80_p b0 --with-built build $(also cv_128x80_p cv_128x80 pab_64x128_p \
    pab_128x128_p pab_128x128)
b abtest/cn128 f4gemm_sm90a_cv_64x128_p b0 --with-built build $(also pab_64x128_p pab_128x128_p)
build/cli/f4gemm --co-dir abtest/cn80 --list | tail -n +2 | awk '{print $5, $6}'
build/cli/f4gemm --co-dir abtest/cn128 --list | tail -n +2 | awk '{print $5, $6}'
