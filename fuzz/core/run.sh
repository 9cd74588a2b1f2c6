#!/usr/bin/env bash
# Builds fuzz_inputs (manifest CSV, tuned CSV and .npy parsers) with clang-14's libFuzzer plus
# ASan/UBSan and runs it. Not part of the CMake build.
# Usage: fuzz/core/run.sh [SECONDS=120]; output in $CORE_FUZZ_DIR (default build/fuzz-core).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${CORE_FUZZ_DIR:-$root/build/fuzz-core}
seconds=${1:-120}
mkdir -p "$out/corpus" "$out/seeds"
clang++-14 -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DFMT_HEADER_ONLY -I"$root/include" "$here/fuzz_inputs.cpp" "$root/src/core/manifest.cpp" \
    "$root/src/core/tuned.cpp" "$root/src/core/npy.cpp" "$root/src/core/layout.cpp" -o "$out/fuzz_inputs"
# Seeds: aiter's manifest, a tuned table, a real .npy.
{ printf '\0'; cat "$root/tests/data/aiter-gfx950/f4gemm_bf16_per1x32Fp4.csv"; } > "$out/seeds/manifest"
printf '\1cu_num,M,N,K,kernelName,splitK,us,tflops\n132,1,16,256,k.cubin,0,1,1\n' > "$out/seeds/tuned"
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    /usr/bin/python3 -c "import numpy as np, sys; np.save('$out/seeds/x.npy', np.arange(12, dtype=np.float32).reshape(3,4))"
    { printf '\2'; cat "$out/seeds/x.npy"; } > "$out/seeds/npy" && rm "$out/seeds/x.npy"
fi
cd "$out"
./fuzz_inputs -max_total_time="$seconds" -max_len=8192 -print_final_stats=1 corpus seeds 2>&1 | tee fuzz.log | \
    grep -E '^Done|ERROR|SUMMARY|stat::number_of_executed_units' || true
