# Shared part of the regression sweeps (sourced, not run): argument parsing and check(), which
# runs one f4gemm case on $BACKEND and judges it by exit status (the original run_tests.sh grepped
# the output for "PASSED"). Sets F4GEMM, CO, EXTRA, pass, fail.
# Usage in a sweep: BACKEND=cuda; source scripts/sweep_common.sh "$@"
F4GEMM=${F4GEMM:-build/cli/f4gemm}
CO=()
if [ "${1:-}" = "--co-dir" ]; then CO=(--co-dir "$2"); shift 2; fi
[ "${1:-}" = "--" ] && shift
EXTRA=("$@")
if [ ! -x "$F4GEMM" ]; then
    echo "no f4gemm binary at $F4GEMM: build it (scripts/build.sh) or set F4GEMM" >&2
    exit 1
fi
pass=0; fail=0
# The original run_tests.sh's heuristic shapes ("M N K"), shared by both sweeps.
HEURISTIC_SHAPES=("128 1024 1024" "256 2048 2048" "300 2048 1024" "1 4096 2048" "17 512 256" "512 1024 2048"
                  "2048 8192 1024" "4096 4096 512")
check() {  # check "<description>" f4gemm-args...
    local desc=$1; shift
    local out rc
    out=$("$F4GEMM" "${CO[@]}" --backend "$BACKEND" --iters 0 "${EXTRA[@]}" "$@" 2>&1)
    rc=$?
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1))
        printf '  ok   %-58s %s %s\n' "$desc" "$(grep -o 'kernel [^ ]*' <<<"$out" | head -1)" \
            "$(grep -o 'max_rel_err=[^ ]*' <<<"$out")"
    else
        fail=$((fail + 1))
        printf '  FAIL %s (rc %d)\n' "$desc" $rc
        sed 's/^/       /' <<<"$out"
    fi
}
