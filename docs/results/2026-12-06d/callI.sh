#!/usr/bin/env bash
# session 38 call I (carry ["build", "abtest"]; the DEC_PARAM_PF 1 variants in abtest/pf by scripts/variant.py), any
# card: the decode picks with the parameter block's lines touched first by seven warps against their shipped builds
# (and a plain rebuild, _b0), f4gemm tune (graph replays), two rounds (PERF.md entry 86)
set -u
source scripts/devcall.sh; devcall_init
devcall_tune_rounds abtest/pf 120 1x10240x2048 1x10240x8192 16x10240x8192 1x16384x16384 16x16384x16384 1x28672x8192 32x10240x8192
devcall_pack
