#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck over a small sweep with edge shapes, every kernel
# at least once (in the accumulation mode it implements), and synccheck of every kernel (the decode tiles also on
# their M <= 8 and M = 17..24 loops). Prints each tool's summary line; exits non-zero on any reported error.
# F4GEMM_SANITIZE_ONLY=REGEX keeps the per-kernel runs to the kernels whose code object matches (the ones a change
# rebuilt); the shape runs with the policy's picks and the C API's still run.
set -u
cd "$(dirname "$0")/.."
F4GEMM=${F4GEMM:-build/cli/f4gemm}
CS=${COMPUTE_SANITIZER:-compute-sanitizer}
rc=0
mapfile -t KERNELS < <("$F4GEMM" --list | awk '$5 ~ /\.(cubin|ptx)$/ {print $5}')
mapfile -t MODES < <("$F4GEMM" --list | awk '$5 ~ /\.(cubin|ptx)$/ {print ($6 == "" ? "exact" : $6)}')
mapfile -t SPLITK < <("$F4GEMM" --list | awk '$5 ~ /\.(cubin|ptx)$/ {print $3}')
mapfile -t TILEM < <("$F4GEMM" --list | awk '$5 ~ /\.(cubin|ptx)$/ {print $1}')
if [ -n "${F4GEMM_SANITIZE_ONLY:-}" ]; then
    for i in "${!KERNELS[@]}"; do
        [[ "${KERNELS[$i]}" =~ $F4GEMM_SANITIZE_ONLY ]] || unset "KERNELS[$i]"
    done
    [ ${#KERNELS[@]} -gt 0 ] || { echo "F4GEMM_SANITIZE_ONLY=$F4GEMM_SANITIZE_ONLY matches no kernel of --list" >&2; exit 2; }
fi
run() {  # run <tool> <f4gemm args...>
    local tool=$1; shift
    local out extra=()
    [ "$tool" = synccheck ] && extra=(--num-cuda-barriers 1024)
    out=$("$CS" --tool "$tool" "${extra[@]}" --error-exitcode 99 "$F4GEMM" --backend cuda --iters 0 "$@" 2>&1)
    local r=$?
    printf '%-9s %-70s rc=%d  %s\n' "$tool" "$*" $r "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' <<<"$out" | tail -1)"
    if [ $r -ne 0 ]; then rc=1; grep -vE '^\[f4gemm\]' <<<"$out" | head -30; fi
}
for tool in memcheck racecheck; do
    for i in "${!KERNELS[@]}"; do run $tool --kernel "${KERNELS[$i]}" --accum "${MODES[$i]}" -m 65 -n 272 -k 512; done
    # The packed weight's padding (N = 1000, K = 2880 -> 3072) and the exact fallback on wide-scale rows,
    # which reads B's scales from the W chunks.
    # (memcheck only: racecheck of the exact fallback over a whole grid takes minutes).
    [ "$tool" = memcheck ] && for i in "${!KERNELS[@]}"; do
        run $tool --kernel "${KERNELS[$i]}" --accum "${MODES[$i]}" -m 40 -n 1000 -k 2880 --data wide
    done
    # Decode rows on the 16-row kernels: the M <= 8 loops (K = 2048 fills every warpgroup's slots); racecheck
    # also on wide rows over a small grid: the exact fallback after DEC_EARLY's primed ring is drained
    for i in "${!KERNELS[@]}"; do
        [ "${TILEM[$i]}" = 16 ] || continue
        run $tool --kernel "${KERNELS[$i]}" --accum "${MODES[$i]}" -m 5 -n 272 -k 2048
        [ "$tool" = racecheck ] && run $tool --kernel "${KERNELS[$i]}" --accum "${MODES[$i]}" -m 9 -n 272 -k 1024 --data wide
    done
    run $tool -m 1 -n 1024 -k 256
    run $tool -m 17 -n 16 -k 256
    run $tool -m 130 -n 528 -k 1024 --beta 1
    run $tool --accum promoted -m 130 -n 528 -k 1024 --beta 1
done
# synccheck (barriers, mbarriers, warp syncs), with --num-cuda-barriers 1024 (run()): with the tool's default table the 32-row
# wgmma decode tile stops at its second launch with "Detected overflow of tracked cuda::barrier structures" (also at
# 256), and runs clean at 1024 and 65536 (docs/PERF.md entry 51).
for i in "${!KERNELS[@]}"; do
    run synccheck --kernel "${KERNELS[$i]}" --accum "${MODES[$i]}" -m 65 -n 272 -k 512
    case "${KERNELS[$i]}" in *_dec_*)
        run synccheck --kernel "${KERNELS[$i]}" --accum "${MODES[$i]}" -m 5 -n 272 -k 2048
        [ "${TILEM[$i]}" = 32 ] && run synccheck --kernel "${KERNELS[$i]}" --accum "${MODES[$i]}" -m 20 -n 272 -k 2048
        ;;
    esac
done
# Split-capable kernels (--list's third column), each in the mode it implements.
for i in "${!KERNELS[@]}"; do
    [ "${SPLITK[$i]}" = 1 ] || continue
    run memcheck --kernel "${KERNELS[$i]}" --accum "${MODES[$i]}" --splitk 2 -m 70 -n 272 -k 1536
    run racecheck --kernel "${KERNELS[$i]}" --accum "${MODES[$i]}" --splitk 2 -m 70 -n 272 -k 1536
done
# The pre-pass kernels in N slabs (F4GEMM_PP_SLAB_N, docs/ABI_SM90.md "N slabs"): N = 1024 in four slabs of 256 (the
# later pre-passes skip A), N = 1000 in four with a ragged last one (it converts A again), with C and beta
for i in "${!KERNELS[@]}"; do
    [[ "${KERNELS[$i]}" == *_pp_* ]] || continue
    for tool in memcheck racecheck; do
        F4GEMM_PP_SLAB_N=256 run $tool --kernel "${KERNELS[$i]}" --accum "${MODES[$i]}" -m 130 -n 1024 -k 512 --beta 1
        F4GEMM_PP_SLAB_N=256 run $tool --kernel "${KERNELS[$i]}" --accum "${MODES[$i]}" -m 65 -n 1000 -k 512
    done
done
# The device packer, A padder and quantizer (f4gemm_sm90a_util.cubin) through the C API's gpu tests.
CAPI=${CAPI_GPU_TESTS:-build/tests/capi/f4gemm_capi_gpu_tests}
if [ -x "$CAPI" ]; then
    out=$("$CS" --tool memcheck --error-exitcode 99 "$CAPI" 2>&1)
    r=$?
    printf '%-9s %-70s rc=%d  %s\n' memcheck "$CAPI" $r "$(grep -E 'ERROR SUMMARY' <<<"$out" | tail -1)"
    [ $r -ne 0 ] && { rc=1; tail -30 <<<"$out"; }
fi
exit $rc
