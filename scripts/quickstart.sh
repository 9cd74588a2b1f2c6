#!/usr/bin/env bash
# The main job on a fresh machine: install, build, run one verified GEMM on the default shape
# (512x1024x2048) on the GPU when there is one, else on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
"${BUILD_DIR:-build}/cli/f4gemm" "$@"
