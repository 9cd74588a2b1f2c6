#!/usr/bin/env bash
# Helpers for the device-call scripts under docs/results/<date>/ (source it; do not run it). On the GPU machine:
#   devcall_init   logs go to $O/logs ($O = $OUT, or /tmp/out), the card's name, clocks and power limit to
#                  logs/gpu.txt, and the build tree's absolute paths (CTest's) made valid in this checkout
#   devcall_pack   tars logs/ into $O/logs.tgz (the device tool returns at most 8 files: call it after each stage)
#   devcall_smi    starts an nvidia-smi log of clocks, power and throttle reasons (50 ms) into logs/smi.csv;
#                  devcall_smi_stop ends it
#   devcall_link_build   devcall_init's last part alone (scripts/device_check.sh uses it)
#   devcall_tune_rounds CODIR SECONDS MxNxK ...   f4gemm tune of CODIR's kernels on the shapes (graph replays,
#                  median of 3 x 10, no verify; SECONDS the limit of each round), two rounds into logs/t_r1, t_r2
#                  (.log, .csv): the kernel A/Bs of docs/results/*/call*.sh
#   devcall_grid SECONDS   the serving grid, both modes, with the untuned column, the read floor and the clock
#                  log (bench.py --grid serving --untuned --clocks, one process) into logs/bench/ and
#                  logs/bench_serving.log; prints the summary lines and packs the logs
# On the build machine, before and after a call that carries build/ (the carry holds 64 MiB):
#   bash scripts/devcall.sh carry-prep      moves the dev kernels' PTX and CMakeFiles/ out of build/ (to /tmp/f4gemm_carry)
#   bash scripts/devcall.sh carry-restore   puts them back
O=${OUT:-/tmp/out}
devcall_link_build() {  # CTest and the binaries hold the build machine's checkout path: make it this checkout
    local src
    src=$(grep -m1 '^CMAKE_HOME_DIRECTORY' build/CMakeCache.txt 2>/dev/null | cut -d= -f2)
    if [ -n "$src" ] && [ "$src" != "$PWD" ] && [ ! -e "$src" ]; then
        mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"
    fi
}
devcall_init() {
    mkdir -p "$O/logs"
    nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv | tee "$O/logs/gpu.txt"
    devcall_link_build
}
devcall_pack() { (cd "$O" && tar czf logs.tgz logs); }
devcall_tune_rounds() {
    local dir=$1 secs=$2 r S="" x
    shift 2
    for x in "$@"; do S="$S --shape $x"; done
    for r in 1 2; do
        # shellcheck disable=SC2086  # the --shape words
        timeout "$secs" build/cli/f4gemm tune --co-dir "$dir" $S --no-verify --reps 3 --iters 10 \
            --out "$O/logs/t_r$r.csv" > "$O/logs/t_r$r.log" 2>&1
        echo "r$r rc $? $SECONDS s"
    done
}
devcall_grid() {
    timeout "$1" python3 bench/bench.py --grid serving --untuned --clocks --out "$O/logs/bench" \
        > "$O/logs/bench_serving.log" 2>&1
    echo "bench rc $? $SECONDS s"
    sed -n '/^f4gemm accum/p' "$O/logs/bench_serving.log"
    rm -f "$O/logs/bench/bench.png"
    devcall_pack
}
devcall_smi() {
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
        --format=csv -lms 50 > "$O/logs/smi.csv" 2>&1 &
    DEVCALL_SMI=$!
}
devcall_smi_stop() { [ -n "${DEVCALL_SMI:-}" ] && kill "$DEVCALL_SMI" 2>/dev/null; DEVCALL_SMI=; }

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    cd "$(dirname "$0")/.."
    stash=${F4GEMM_CARRY_STASH:-/tmp/f4gemm_carry}
    case "${1:-}" in
    carry-prep)
        mkdir -p "$stash/devptx" "$stash/cmf"
        find build/kernels/sm90a/dev -maxdepth 1 -name '*.ptx' -exec mv -t "$stash/devptx/" {} +
        rm -rf build/Testing
        find build -type d -name CMakeFiles -prune | while read -r d; do
            mkdir -p "$stash/cmf/$(dirname "$d")" && mv "$d" "$stash/cmf/$d"
        done
        du -sh build ;;
    carry-restore)
        find "$stash/devptx" -maxdepth 1 -name '*.ptx' -exec mv -t build/kernels/sm90a/dev/ {} +
        (cd "$stash/cmf" && find . -type d -name CMakeFiles -prune) | while read -r d; do
            rm -rf "$d" && mv "$stash/cmf/$d" "$d"
        done
        rm -rf "$stash" ;;
    *) echo "usage: bash scripts/devcall.sh carry-prep|carry-restore (or source it in a device-call script)" >&2
       exit 2 ;;
    esac
fi
