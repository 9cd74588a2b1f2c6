#!/usr/bin/env bash
# Everything the GPU machine must show, in one call (build here, carry build/): the main job,
# the gpu-labelled tests, the regression sweep and compute-sanitizer. Logs go to $OUT.
# Usage (on the GPU machine, repo root): bash scripts/device_check.sh [tests|sweep|sanitize|all]...
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
mkdir -p "$OUT"
# CTest and the binaries hold the build tree's absolute path (/work/main/build here): make it
# valid on the GPU machine, whose checkout lives elsewhere.
source scripts/devcall.sh
devcall_link_build
steps=("$@"); [ ${#steps[@]} -eq 0 ] && steps=(all)
has() { for s in "${steps[@]}"; do [ "$s" = "$1" ] || [ "$s" = all ] && return 0; done; return 1; }
rc=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv,noheader
if has main; then
    echo "=== f4gemm (no arguments) ==="
    build/cli/f4gemm 2>&1 | tee "$OUT/main.log" || rc=1
fi
if has tests; then
    echo "=== ctest -L gpu ==="
    ctest --test-dir build -L gpu --output-on-failure 2>&1 | tee "$OUT/gpu_tests.log" | tail -25 || rc=1
    grep -q "100% tests passed" "$OUT/gpu_tests.log" || rc=1
fi
if has sweep; then
    echo "=== regression sweep ==="
    bash scripts/sweep_sm90.sh > "$OUT/sweep.log" 2>&1 || rc=1
    grep -E "FAIL|passed," "$OUT/sweep.log" | tail -20
fi
if has sanitize; then
    echo "=== compute-sanitizer ==="
    bash scripts/sanitize_sm90.sh > "$OUT/sanitize.log" 2>&1 || rc=1
    grep -cE "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards" "$OUT/sanitize.log" | sed 's/^/clean runs: /'
    grep -E "rc=[1-9]" "$OUT/sanitize.log" | head
fi
exit $rc
