#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck over a small sweep with edge shapes, every kernel
# at least once. Prints each tool's summary line; exits non-zero on any reported error.
set -u
cd "$(dirname "$0")/.."
F4GEMM=${F4GEMM:-build/cli/f4gemm}
CS=${COMPUTE_SANITIZER:-compute-sanitizer}
rc=0
mapfile -t KERNELS < <("$F4GEMM" --list | awk '$5 ~ /\.(cubin|ptx)$/ {print $5}')
run() {  # run <tool> <f4gemm args...>
    local tool=$1; shift
    local out
    out=$("$CS" --tool "$tool" --error-exitcode 99 "$F4GEMM" --backend cuda --iters 0 "$@" 2>&1)
    local r=$?
    printf '%-9s %-70s rc=%d  %s\n' "$tool" "$*" $r "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' <<<"$out" | tail -1)"
    if [ $r -ne 0 ]; then rc=1; grep -vE '^\[f4gemm\]' <<<"$out" | head -30; fi
}
for tool in memcheck racecheck; do
    for k in "${KERNELS[@]}"; do run $tool --kernel "$k" -m 65 -n 272 -k 512; done
    run $tool -m 1 -n 1024 -k 256
    run $tool -m 17 -n 16 -k 256
    run $tool -m 130 -n 528 -k 1024 --beta 1
done
for k in $("$F4GEMM" --list | awk '$5 ~ /\.(cubin|ptx)$/ && $3 == 1 {print $5}'); do
    run memcheck --kernel "$k" --splitk 2 -m 70 -n 272 -k 1536
    run racecheck --kernel "$k" --splitk 2 -m 70 -n 272 -k 1536
done
exit $rc
