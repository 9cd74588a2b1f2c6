#!/usr/bin/env bash
# session 39 call B (carry ["build", "abtest"]; prepB.sh first), any card: the stream-K decode builds (DEC_SK 1,
# PERF.md entry 88) judged (gtest: the new stream-K test, split-K, the dev ladder), %nsmid, then timed with the
# shipped decode picks and dec_16x80_w8 (f4gemm tune: every kernel and split, graph replays) on the grid's
# decode cells, two rounds
set -u
source scripts/devcall.sh; devcall_init
python3 - > $O/logs/nsmid.log 2>&1 <<'PY'
import cupy as cp
k = cp.RawKernel(r'''extern "C" __global__ void f(unsigned* o){ unsigned n, s; asm("mov.u32 %0, %%nsmid;" : "=r"(n));
asm("mov.u32 %0, %%smid;" : "=r"(s)); if (threadIdx.x == 0) { o[0] = n; atomicMax(o + 1, s); } }''', 'f')
o = cp.zeros(2, dtype=cp.uint32); k((1024,), (32,), (o,)); print("nsmid", int(o[0]), "max smid seen", int(o[1]),
      "SMs", cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"])
PY
cat $O/logs/nsmid.log
timeout 200 build/tests/gpu/f4gemm_gpu_tests --gtest_filter='Sm90.DecStreamK*:Sm90.SplitK*:Sm90.DevLadderKernels' \
    > $O/logs/gtest.log 2>&1; echo "gtest rc $? $SECONDS s"; tail -3 $O/logs/gtest.log
devcall_tune_rounds abtest/sk 150 $(for n in 16384x16384 10240x8192 28672x8192 8192x28672; do
  for m in 1 16 32 64; do echo ${m}x$n; done; done)
devcall_pack
