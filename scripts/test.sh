#!/usr/bin/env bash
# The test command: installs dependencies, builds, runs every CTest test. GPU-labelled tests
# skip cleanly on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" "$@"

# The Python package (docs/PYTHON.md): a fresh clone (the committed tree) pip-installed into a fresh virtual
# environment, its build requirements fetched by pip's build isolation, every version pinned by
# python/constraints-ci.txt; then its tests with numpy on the CPU backend (the gpu-marked ones skip without a GPU).
# F4GEMM_SKIP_PYTHON=1 skips this part.
if [ "${F4GEMM_SKIP_PYTHON:-0}" != 1 ]; then
  py_tmp=$(mktemp -d)
  trap 'rm -rf "$py_tmp"' EXIT
  git clone -q . "$py_tmp/src"
  python3 -m venv "$py_tmp/venv"
  export PIP_CONSTRAINT="$PWD/python/constraints-ci.txt" PIP_DISABLE_PIP_VERSION_CHECK=1
  "$py_tmp/venv/bin/python" -m pip install -q numpy pytest
  # The kernels go into the package when nvcc is there: the system's, else the pinned wheels' (as build.sh).
  source scripts/cuda_wheels.sh
  py_cfg=()
  expect_kernels=0
  if f4gemm_system_nvcc >/dev/null; then
    expect_kernels=1
  elif [ -x "$F4GEMM_WHEEL_NVCC" ]; then
    expect_kernels=1
    py_cfg=(--config-settings=cmake.define.CMAKE_CUDA_COMPILER="$F4GEMM_WHEEL_NVCC"
            --config-settings=cmake.define.F4GEMM_NVCC="$F4GEMM_WHEEL_NVCC"
            --config-settings=cmake.define.F4GEMM_CUDA_ROOT="$F4GEMM_CUDA_WHEELS_ROOT")
  fi
  echo "[test] pip install of a fresh clone into a fresh venv (${py_tmp}), kernels expected: $expect_kernels"
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$py_tmp/venv/bin/python" -m pip install -q ${py_cfg[@]+"${py_cfg[@]}"} \
    "$py_tmp/src"
  rc=0
  # F4GEMM_BUILD_DIR: this checkout's build (its cubins), for the tests of the repository's scripts
  build_dir="$PWD/${BUILD_DIR:-build}"
  # cuobjdump on PATH for the SASS-comparing tests: the system's, else setup.sh's pinned wheels
  # (scripts/cuda_wheels.sh); without either those tests skip
  cuobj=$(f4gemm_system_cuobjdump || true)
  if [ -z "$cuobj" ] && [ -x "$F4GEMM_SASS_WHEELS_BIN/cuobjdump" ]; then cuobj=$F4GEMM_SASS_WHEELS_BIN/cuobjdump; fi
  if [ -n "$cuobj" ]; then
    export PATH="$(dirname "$cuobj"):$PATH"
    echo "[test] cuobjdump for the SASS tests: $cuobj"
  fi
  (cd "$py_tmp" && F4GEMM_EXPECT_KERNELS=$expect_kernels F4GEMM_BUILD_DIR="$build_dir" venv/bin/python -m pytest \
    -p no:cacheprovider -q src/tests/python) || rc=$?
  if [ "$rc" -eq 5 ]; then
    echo "[test] pytest collected no Python tests: tests/python is missing from the clone" >&2
    exit 1
  fi
  exit "$rc"
fi
