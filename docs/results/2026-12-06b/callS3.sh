#!/usr/bin/env bash
# session 36 call S3 (the same H100, warm): pp_128x128_p (promoted) on six cells, widths 0 / 1536 / 2048 / 2560, two
# alternating rounds
O=$OUT; mkdir -p $O/logs; S="--shape 512x16384x16384 --shape 2048x16384x16384 --shape 1024x10240x8192 --shape 1024x8192x28672 --shape 4096x28672x8192 --shape 1024x16384x16384"; for r in 1 2; do for w in 0 1536 2048 2560; do F4GEMM_PP_SLAB_N=$w timeout 40 build/cli/f4gemm tune --co-dir abtest/pp $S --accum promoted --no-verify --reps 3 --iters 10 --out $O/logs/v_w${w}_r$r.csv > $O/logs/v_w${w}_r$r.log 2>&1; echo "r$r w$w rc $? $SECONDS"; (cd $O && tar czf logs.tgz logs); done; done; for f in $O/logs/v_*.csv; do echo "$f $(tail -n +2 $f | cut -d, -f2,3,4,8 | tr '\n' ' ')"; done
