#!/usr/bin/env bash
# session 33 call 1 (abtest/c1, c2 from prep1.sh; carry ["build", "abtest"]): the converter tiles (cv_*) with 256-K
# stages (K_STAGE 256) against the shipped 128-K builds and the A pre-pass tiles of the same height, verified (float64
# judge, both modes, K with an odd number of 256-K stages among the shapes) then timed in one process per height;
# clocks and power logged beside (nvidia-smi -lms 50). Card-independent (same-process ratios): any H100 or H200.
set -u
source scripts/devcall.sh; devcall_init; devcall_smi
pack() { devcall_pack; }
T="--no-verify --reps 3 --iters 10"
v() {  # DIR NAME SHAPES...: verify both modes
    local d=$1 n=$2; shift 2; local s=""; for x in "$@"; do s="$s --shape $x"; done
    for a in promoted exact; do
        timeout 70 build/cli/f4gemm tune --co-dir $d $s --accum $a --reps 1 --iters 2 --out /tmp/v.csv \
            > $O/logs/v_${n}_$a.log 2>&1; echo "v_${n}_$a rc $? FAILED lines: $(grep -c FAILED $O/logs/v_${n}_$a.log)"
    done
}
t() {  # DIR NAME TIMEOUT SHAPES...: time both modes
    local d=$1 n=$2 to=$3; shift 3; local s=""; for x in "$@"; do s="$s --shape $x"; done
    for a in promoted exact; do
        date +%T.%N > $O/logs/t_${n}_$a.start
        timeout $to build/cli/f4gemm tune --co-dir $d $s --accum $a $T --out /tmp/t.csv > $O/logs/t_${n}_$a.log 2>&1
        echo "t_${n}_$a rc $?"; grep -h best $O/logs/t_${n}_$a.log
    done
}
v abtest/c1 c1 64x528x1280 48x1000x2816 40x2080x768
v abtest/c2 c2 130x528x1024 200x2080x768 256x1040x3840
pack
t abtest/c1 c1 120 64x10240x8192 48x10240x8192 40x10240x8192 64x16384x16384 64x28672x8192 64x8192x8192
pack
t abtest/c2 c2 120 128x10240x8192 192x10240x8192 256x10240x8192 128x8192x8192 128x16384x16384 256x16384x16384 \
    128x28672x8192
devcall_smi_stop
pack
