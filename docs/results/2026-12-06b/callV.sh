#!/usr/bin/env bash
# session 36 call V (carry ["build"]), any card: the pre-pass and promoted gpu tests on the build with the slab
# rule (pp_slab_width), then the serving grid, both modes, with the untuned column
set -u
source scripts/devcall.sh; devcall_init
timeout 150 build/tests/gpu/f4gemm_gpu_tests --gtest_filter='Sm90.Prepass*:Sm90Promoted.*' > $O/logs/gtest.log 2>&1
echo "gtest rc $?"; grep -E '^\[ +(OK|FAILED|PASSED) ' $O/logs/gtest.log | tail -12
devcall_pack
timeout 200 python3 bench/bench.py --grid serving --untuned --out $O/logs/bench > $O/logs/bench_serving.log 2>&1
echo "bench rc $?"; sed -n '/^f4gemm accum/p' $O/logs/bench_serving.log
grep -E '^ +(1024|4096)x.*promoted f4gemm' $O/logs/bench_serving.log | cut -c1-175
devcall_pack
