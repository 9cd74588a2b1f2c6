#!/usr/bin/env bash
# Configures and builds f4gemm into ${BUILD_DIR:-build} (Ninja, Release). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
# Without a system nvcc, the one setup.sh installed from PyPI wheels (scripts/cuda_wheels.sh) builds
# the kernels and the test cubins, and its cuda.h serves the driver backend.
source scripts/cuda_wheels.sh
cuda_args=()
if ! f4gemm_system_nvcc >/dev/null && [ -x "$F4GEMM_WHEEL_NVCC" ]; then
  cuda_args=(-DCMAKE_CUDA_COMPILER="$F4GEMM_WHEEL_NVCC" -DF4GEMM_NVCC="$F4GEMM_WHEEL_NVCC"
             -DF4GEMM_CUDA_ROOT="$F4GEMM_CUDA_WHEELS_ROOT")
fi
[ -f "$BUILD_DIR/build.ninja" ] ||
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release ${cuda_args[@]+"${cuda_args[@]}"} "$@"
cmake --build "$BUILD_DIR" -j "$(nproc)"
