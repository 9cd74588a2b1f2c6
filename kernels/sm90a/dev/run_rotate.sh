#!/usr/bin/env bash
# Device side of the rotating-accumulator experiment (docs/PERF.md entry 7): correctness of every kernel in
# BUILD's large.csv and swap.csv (one process per kernel, each under a time limit), then the perf cases of
# every kernel that passed, old and new configs alternating in one process per group.
# Usage: run_rotate.sh [BUILD=build-dev]   (BUILD from dev/build_dev.sh)
set -uo pipefail
B=${1:-build-dev}
K="$B/kernels/sm90a"
O=${OUT:-/tmp/f4gemm_out}
mkdir -p "$O"
H="$B/harness"
if ! "$H" 2>&1 | grep -q manifest; then  # built elsewhere and not loadable here: rebuild
    g++ -std=c++17 -O3 -march=x86-64-v3 -pthread -I/usr/local/cuda/include -Iinclude \
        kernels/sm90a/dev/harness.cpp -L/usr/local/cuda/lib64/stubs -lcuda -o /tmp/harness && H=/tmp/harness
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv,noheader
cp "$B/resources.txt" "$O/" 2>/dev/null
: > "$O/correct.log"
for grp in large swap; do
    ok=()
    for k in $(tail -n +2 "$K/$grp.csv" | cut -d, -f5); do
        timeout -s KILL 25 "$H" --manifest "$K/$grp.csv" --kernel "$k" --suite correct >> "$O/correct.log" 2>&1
        rc=$?
        echo "correct $k rc=$rc" | tee -a "$O/correct.log"
        [ $rc -eq 0 ] && ok+=("$k")
    done
    head -1 "$K/$grp.csv" > "$K/$grp.ok.csv"
    for k in "${ok[@]}"; do grep ",$k," "$K/$grp.csv" >> "$K/$grp.ok.csv"; done
    timeout -s KILL 65 "$H" --manifest "$K/$grp.ok.csv" --co-dir "$K" --suite perf --reps 20 > "$O/perf_$grp.log" 2>&1
    echo "perf $grp rc=$?"
done
grep -E "^RESULT" "$O/correct.log" | awk '{print $2, $3, $4, $5, $6, $7, $8, $NF}' | sed 's/f4gemm_sm90a_//' | sort | uniq -c | awk '{print}' > "$O/correct_summary.txt"
echo "== correctness: $(grep -c ' PASS$' "$O/correct.log") pass, $(grep -c ' FAIL$' "$O/correct.log") fail"
grep -E " FAIL$|first mismatch|CUDA error" "$O/correct.log" | head -20
grep -hE "^RESULT" "$O/correct.log" | awk '{n=$2; sub("f4gemm_sm90a_","",n); for(i=1;i<=NF;i++) if($i ~ /^max_rel_err=/) m[n]=(m[n]>substr($i,13)?m[n]:substr($i,13)); c[n]++} END {for (n in c) print "  " n, c[n] " cases, worst " m[n]}'
echo "== perf"
grep -hE "^RESULT" "$O/perf_large.log" "$O/perf_swap.log" | awk '{n=$2; sub("f4gemm_sm90a_ws_","",n); us=""; for(i=1;i<=NF;i++){ if($i ~ /^us=/){us=$i" "$(i+1)} if($i ~ /^(TF|GB)\/s=/) us=us" "$i } printf "%-16s %s %s %s %s %s %s\n", n, $3, $4, $5, $6, us, $NF}'
