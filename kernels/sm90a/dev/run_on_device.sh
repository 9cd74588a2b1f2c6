#!/usr/bin/env bash
# Runs on the GPU machine: resource usage of every cubin, then the dev harness (correctness of every
# kernel in the manifest, then timings), each kernel under its own time limit so that a hang costs
# seconds, not the whole call. Usage: run_on_device.sh BUILD_DIR [correct|perf|all] [KERNEL...]
# BUILD_DIR holds harness and kernels/sm90a/{*.cubin,f4gemm_bf16_per1x32Fp4.csv} (built off-device).
set -uo pipefail
B=${1:?build dir}
SUITE=${2:-all}
shift $(( $# >= 2 ? 2 : $# ))
OUTDIR=${OUT:-/tmp/f4gemm_out}
mkdir -p "$OUTDIR"
K="$B/kernels/sm90a"
MAN="$K/f4gemm_bf16_per1x32Fp4.csv"
LOG="$OUTDIR/harness.log"

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader
[ -z "${F4GEMM_SKIP_RES:-}" ] && echo "== resource usage (cuobjdump -res-usage; QGMMA count in SASS)"
[ -z "${F4GEMM_SKIP_RES:-}" ] && for c in "$K"/*.cubin; do
    n=$(basename "$c" .cubin)
    res=$(cuobjdump -res-usage "$c" 2>/dev/null | grep -o "REG:[0-9]* STACK:[0-9]* SHARED:[0-9]* LOCAL:[0-9]*" | head -1)
    q=$(cuobjdump -sass "$c" 2>/dev/null | grep -c QGMMA)
    l=$(cuobjdump -sass "$c" 2>/dev/null | grep -cE "LDL|STL")
    echo "$n $res QGMMA=$q LDL/STL=$l"
done | tee "$OUTDIR/resources.txt"

kernels=("$@")
if [ ${#kernels[@]} -eq 0 ]; then
    mapfile -t kernels < <(tail -n +2 "$MAN" | cut -d, -f5)
fi
: > "$LOG"
for k in "${kernels[@]}"; do
    timeout -s KILL "${F4GEMM_KERNEL_TIMEOUT:-90}" "$B/harness" --manifest "$MAN" --kernel "$k" --suite "$SUITE" \
        >> "$LOG" 2>&1
    rc=$?
    [ $rc -ne 0 ] && echo "harness rc=$rc for $k" | tee -a "$LOG"
done
echo "== results"
grep -E "^RESULT|^kernel |rc=|error|CUDA" "$LOG" | sed -e 's/^RESULT //' > "$OUTDIR/results.txt"
# short table last
grep -E "^RESULT" "$LOG" | awk '{
    name=$2; sub("f4gemm_sm90a_","",name);
    line=sprintf("%-18s %s %s %s %s %s", name, $3, $4, $5, $6, $7);
    for (i=8;i<=NF;i++) if ($i ~ /^(max_rel_err|mismatches|us|TF\/s|GB\/s)=/ || $i=="PASS" || $i=="FAIL") line=line" "$i;
    print line }'
grep -E "rc=|CUDA error" "$LOG"
echo "passed: $(grep -c '^RESULT.* PASS$' "$LOG")  failed: $(grep -c '^RESULT.* FAIL$' "$LOG")"
