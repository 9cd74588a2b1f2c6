#!/usr/bin/env bash
# session 34, after call2.sh on an H200 (its logs unpacked into docs/results/2026-12-05d/call2/): the re-time of the
# eight 256-K cv kernels replaces their rows in the policy tests' three tables (measured_table.py --update), the time
# model is refitted to them (fit_time_model.py --write), and the build and the policy tests are rerun
set -euo pipefail
cd "$(dirname "$0")/../../.."
L=docs/results/2026-12-05d/call2/retime.log
grep -q H200 docs/results/2026-12-05d/call2/gpu.txt || { echo "post2.sh: call2 did not run on an H200" >&2; exit 2; }
for t in decode grid offgrid; do
    python3 scripts/measured_table.py "$L" --update tests/data/${t}_measured.csv -o tests/data/${t}_measured.csv \
        --comment "Session 34 (PERF.md entry 77): the eight cv kernels rebuilt with 256-K stages re-timed on the H200 (docs/results/2026-12-05d/call2/retime.log), replacing their rows"
done
M=build/kernels/sm90a/f4gemm_bf16_per1x32Fp4.csv
T="tests/data/grid_measured.csv tests/data/decode_measured.csv tests/data/offgrid_measured.csv"
python3 scripts/fit_time_model.py $M $T --write kernels/sm90a/kernels.json | tail -20
ninja -C build >/dev/null
python3 scripts/fit_time_model.py $M $T --check >/dev/null && echo "fit_time_model --check: ok"
ctest --test-dir build -R 'Sm90Policy|Tuned|TimeModel' --output-on-failure | tail -4
