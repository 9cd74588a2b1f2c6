#!/usr/bin/env bash
# session 36 call S2 (the same H100, warm, after callS.sh ran past its 400 s and its logs did not come back): the
# pp kernels on three cells, widths 0 / 2048 / 4096, both modes, two alternating rounds, logs packed after each
O=$OUT; mkdir -p $O/logs; S="--shape 1024x16384x16384 --shape 1024x28672x8192 --shape 4096x16384x16384"; for r in 1 2; do for w in 0 2048 4096; do for a in promoted exact; do F4GEMM_PP_SLAB_N=$w timeout 40 build/cli/f4gemm tune --co-dir abtest/pp $S --accum $a --no-verify --reps 3 --iters 10 --out $O/logs/u_${a}_w${w}_r$r.csv > $O/logs/u_${a}_w${w}_r$r.log 2>&1; echo "r$r w$w $a rc $? $SECONDS"; (cd $O && tar czf logs.tgz logs); done; done; done; cat $O/logs/u_*_r1.csv | cut -c1-120
