#!/usr/bin/env bash
# session 38 call F (carry ["build", "abtest"]; prepF.sh first), any card: one launch's phases per CTA for the two
# unsplit decode picks (DEC_PROBE_TS builds): the D of the last of 5 timed launches after 5 warm-ups, three processes
# per shape; `scripts/dec_timeline.py` prints each (PERF.md entry 85)
set -u
source scripts/devcall.sh; devcall_init
ops() {  # M N K: random e2m1 bytes, scales 2^-5 .. 2^5 (no NaN, no wide rows), as .npy (--out needs real data)
  python3 - "$@" <<'PY'
import sys, numpy as np
m, n, k = map(int, sys.argv[1:4]); r = np.random.default_rng(7); d = f"/tmp/ops_{m}x{n}x{k}"
import os; os.makedirs(d, exist_ok=True)
for name, rows in (("a", m), ("b", n)):
    np.save(f"{d}/{name}.npy", r.integers(0, 256, (rows, k // 2), dtype=np.uint8))
    np.save(f"{d}/s{name}.npy", r.integers(122, 133, (rows, k // 32), dtype=np.uint8))
PY
}
run() {  # kernel tile_n M N K
  ops $3 $4 $5; o=/tmp/ops_$3x$4x$5
  for i in 1 2 3; do
    f=$O/logs/${CALLF_PREFIX:-d}_$1_$3x$4x$5_$i
    timeout 60 build/cli/f4gemm --backend cuda --co-dir abtest/dt --kernel f4gemm_sm90a_$1_ts.cubin -m $3 -n $4 -k $5 \
        --a $o/a.npy --a-scale $o/sa.npy --b $o/b.npy --b-scale $o/sb.npy \
        --warmup 5 --iters 5 --no-verify --out $f.npy > $f.log 2>&1
    echo "== $1 $3x$4x$5 run $i rc $? $(grep -o '[0-9.]* us' $f.log | head -1)"
    python3 scripts/dec_timeline.py $f.npy $2 2>&1 | tee $f.txt
  done
}
run dec_16x80_w12 80 1 10240 8192
run dec_16x80_w12 80 1 10240 1024
run dec_16x80_w12 80 16 10240 8192
run dec_16x128_wg12 128 1 16384 16384
run dec_16x128_wg12 128 1 16384 1024
run dec_16x128_wg12 128 16 16384 16384
rm -f $O/logs/*.npy; devcall_pack
