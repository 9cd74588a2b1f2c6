#!/usr/bin/env bash
# The test command: installs dependencies, builds, runs every CTest test. GPU-labelled tests
# skip cleanly on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" "$@"
