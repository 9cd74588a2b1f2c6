#!/usr/bin/env bash
# session 38's call K, for a later session (carry ["build", "abtest"]; prepK.sh first), any card: `dec_16x80_w8`
# against `dec_16x80_w12` (f4gemm tune, graph replays, two rounds) on the cells where the 80-row tile is picked and
# on K whose chunk count 12 does not divide; then both probe builds' phases at 1 x 10240 x 8192 (PERF.md entry 87)
set -u
source scripts/devcall.sh; devcall_init
devcall_tune_rounds abtest/w8 120 1x10240x8192 16x10240x8192 1x10240x16384 1x10240x4096 16x10240x4096 24x5120x5120 1x10240x2048
python3 - 1 10240 8192 <<'PY'
import sys, os, numpy as np
m, n, k = map(int, sys.argv[1:4]); r = np.random.default_rng(7); d = f"/tmp/ops_{m}x{n}x{k}"; os.makedirs(d, exist_ok=True)
for name, rows in (("a", m), ("b", n)):
    np.save(f"{d}/{name}.npy", r.integers(0, 256, (rows, k // 2), dtype=np.uint8))
    np.save(f"{d}/s{name}.npy", r.integers(122, 133, (rows, k // 32), dtype=np.uint8))
PY
o=/tmp/ops_1x10240x8192
for k in dec_16x80_w12 dec_16x80_w8; do for i in 1 2 3; do
  f=$O/logs/p_${k}_$i
  timeout 60 build/cli/f4gemm --backend cuda --co-dir abtest/w8ts --kernel f4gemm_sm90a_${k}_ts.cubin -m 1 -n 10240 \
      -k 8192 --a $o/a.npy --a-scale $o/sa.npy --b $o/b.npy --b-scale $o/sb.npy --warmup 5 --iters 5 --no-verify \
      --out $f.npy > $f.log 2>&1
  echo "== $k run $i rc $?"; python3 scripts/dec_timeline.py $f.npy 80 2>&1 | tee $f.txt
done; done
rm -f $O/logs/*.npy; devcall_pack
