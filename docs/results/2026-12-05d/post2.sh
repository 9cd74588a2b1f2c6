#!/usr/bin/env bash
# session 34, after call2.sh (or session 35's callH.sh) on an H200, its logs unpacked into the folder given as $1
# (default docs/results/2026-12-05d/call2/; it holds retime.log and gpu.txt): the re-time of the
# eight 256-K cv kernels replaces their rows in the policy tests' three tables (measured_table.py --update), the time
# model is refitted to them (fit_time_model.py --write), and the build and the policy tests are rerun
set -euo pipefail
cd "$(dirname "$0")/../../.."
D=${1:-docs/results/2026-12-05d/call2}
L=$D/retime.log
grep -q H200 "$D/gpu.txt" || { echo "post2.sh: $D/gpu.txt names no H200" >&2; exit 2; }
for t in decode grid offgrid; do
    python3 scripts/measured_table.py "$L" --update tests/data/${t}_measured.csv -o tests/data/${t}_measured.csv \
        --comment "${COMMENT:-The eight cv kernels rebuilt with 256-K stages (PERF.md entry 77) re-timed on the H200 ($L), replacing their rows}"
done
M=build/kernels/sm90a/f4gemm_bf16_per1x32Fp4.csv
T="tests/data/grid_measured.csv tests/data/decode_measured.csv tests/data/offgrid_measured.csv"
python3 scripts/fit_time_model.py $M $T --write kernels/sm90a/kernels.json | tail -20
ninja -C build >/dev/null
python3 scripts/fit_time_model.py $M $T --check >/dev/null && echo "fit_time_model --check: ok"
ctest --test-dir build -R 'Sm90Policy|Tuned|TimeModel' --output-on-failure | tail -4
