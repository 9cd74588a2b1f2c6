#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds + runs the consumer project against it.
set -euo pipefail
build=$1; src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
test -x "$tmp/prefix/bin/f4gemm"
test -f "$tmp/prefix/include/f4gemm/kernarg.h"
test -f "$tmp/prefix/include/f4gemm/session.hpp"
test -f "$tmp/prefix/include/f4gemm/f4gemm.h"
# Only the public headers: the launch machinery and the data-preparation kernels' blocks stay private.
test ! -e "$tmp/prefix/include/f4gemm/launcher.hpp"
test ! -e "$tmp/prefix/include/f4gemm/util_args.h"
test ! -e "$tmp/prefix/include/f4gemm/cpu_backend.hpp"
cmake -S "$src" -B "$tmp/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/configure.log"
cmake --build "$tmp/consumer" > "$tmp/build.log"
"$tmp/consumer/consumer"
"$tmp/prefix/bin/f4gemm" --version
