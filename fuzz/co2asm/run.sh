#!/usr/bin/env bash
# Builds fuzz_code_object with clang-14's libFuzzer plus ASan/UBSan and runs it on seeds made from
# the test fixtures (assembled with clang-22). Not part of the CMake build.
# Usage: fuzz/co2asm/run.sh [SECONDS=300] [JOBS=1]; output in $CO2ASM_FUZZ_DIR (default
# build/fuzz-co2asm): the binary, corpus/, crash-* reproducers and fuzz.log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${CO2ASM_FUZZ_DIR:-$root/build/fuzz-co2asm}
seconds=${1:-300}
jobs=${2:-1}
cxx=${CXX_FUZZ:-clang++-14}
clang22=${CLANG22:-clang-22}
mkdir -p "$out/corpus" "$out/seeds"

core="$root/tools/co2asm"
"$cxx" -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DFMT_HEADER_ONLY -I"$core" "$here/fuzz_code_object.cpp" "$core/elf_file.cpp" "$core/msgpack_reader.cpp" \
    "$core/amdgpu_target.cpp" "$core/code_object.cpp" "$core/objdump_parse.cpp" -o "$out/fuzz_code_object"

# Seeds: every fixture variant as a real code object.
if command -v "$clang22" > /dev/null; then
    for fixture in "$root"/tests/co2asm/fixtures/*.s; do
        grep '^// co2asm-variant:' "$fixture" | while read -r _ _ target version; do
            name=$(basename "$fixture" .s)_${target//[:+-]/_}_v$version.co
            "$clang22" -x assembler -target amdgcn-amd-amdhsa -mcpu="$target" -mcode-object-version="$version" \
                "$fixture" -o "$out/seeds/$name"
        done
    done
else
    echo "run.sh: $clang22 not found; fuzzing without seed code objects" >&2
fi

cd "$out"
args=(-max_total_time="$seconds" -dict="$here/elf.dict" -max_len=65536 -print_final_stats=1)
if [ "$jobs" -gt 1 ]; then
    # Parallel jobs log to fuzz-<n>.log; each runs for the whole time.
    ./fuzz_code_object "${args[@]}" -jobs="$jobs" -workers="$jobs" corpus seeds
    cat fuzz-*.log > fuzz.log
    grep -E '^Done|ERROR|SUMMARY' fuzz.log || true
else
    ./fuzz_code_object "${args[@]}" corpus seeds 2>&1 | tee fuzz.log
fi
