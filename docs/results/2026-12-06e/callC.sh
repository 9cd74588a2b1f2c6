#!/usr/bin/env bash
# session 39 call C (carry ["build", "abtest"]; prepC.sh first), any card: the stream-K builds with the unneeded
# CTAs leaving before pdl_wait, first (*_sk) or last (*_sk_last) in the launch, against the shipped decode picks
# (f4gemm tune, graph replays, two rounds); the stream-K test again on the rebuilt *_sk
set -u
source scripts/devcall.sh; devcall_init
timeout 100 build/tests/gpu/f4gemm_gpu_tests --gtest_filter='Sm90.DecStreamK*:Sm90.SplitK*' > $O/logs/gtest.log 2>&1
echo "gtest rc $? $SECONDS s"; tail -1 $O/logs/gtest.log
devcall_tune_rounds abtest/sk2 150 32x10240x8192 32x28672x8192 1x28672x8192 16x28672x8192 1x16384x16384 16x10240x8192 64x10240x8192
devcall_pack
