#!/usr/bin/env bash
# Installs every build and test dependency of f4gemm on a fresh Debian 12 machine.
# Idempotent: re-running it only checks that everything is present. Versions are pinned
# where the package manager lets us (PyPI); Debian 12's archive pins the rest.
set -euo pipefail

DEBS=(
  cmake ninja-build g++ pkg-config
  libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev googletest
  llvm-22 clang-22 lld-22          # co2asm and its fixtures (clang-22 links with lld-22)
  clang-format-14                  # scripts/format_check.sh
  libamdhip64-dev                  # HIP backend: host headers + libamdhip64 (no AMD GPU here)
  python3-numpy                    # tests write/read .npy cross-checks
  python3-pip                      # the pinned PyPI wheels below
  python3-venv python3-dev         # the Python package: a fresh venv in scripts/test.sh, Python.h for its extension
)

missing=()
for p in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# CuTe/CUTLASS headers (the wheel carries include/). Pinned.
PIP_PKGS=("nvidia-cutlass==4.2.0.0")
py=python3
for spec in "${PIP_PKGS[@]}"; do
  name=${spec%%==*}; ver=${spec##*==}
  have=$($py -m pip show "$name" 2>/dev/null | awk '/^Version:/{print $2}') || true
  [ "$have" = "$ver" ] || $py -m pip install -q "$spec"
done
# nvcc: a machine with only the NVIDIA driver gets NVIDIA's pinned CUDA 13.0 compiler wheels in a
# prefix of their own (scripts/cuda_wheels.sh); build.sh points CMake at that nvcc.
source "$(dirname "$0")/cuda_wheels.sh"
# install_wheels DIR EXE PIN...: the pinned wheels into DIR unless its stamp holds these pins and EXE is there.
# --no-deps: each wheel needed is listed and pinned; --target keeps them out of Python's site-packages (and out
# of PEP 668's way); --upgrade replaces an older pin's files. Returns pip's status.
install_wheels() {
  local dir=$1 exe=$2
  shift 2
  local stamp="$dir/.f4gemm-wheels"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$*" ] || ! [ -x "$exe" ]; then
    $py -m pip install -q --root-user-action=ignore --no-deps --no-compile --upgrade --target "$dir" "$@" || return
    echo "$*" >"$stamp"
  fi
}
if ! f4gemm_system_nvcc >/dev/null; then
  install_wheels "$F4GEMM_CUDA_WHEELS_DIR" "$F4GEMM_WHEEL_NVCC" "${F4GEMM_CUDA_WHEELS[@]}"
  "$F4GEMM_WHEEL_NVCC" --version | grep release | sed 's/^/[setup] nvcc from PyPI wheels: /'
fi
# cuobjdump and nvdisasm for the SASS-comparing tests, where the machine has none (scripts/cuda_wheels.sh).
# Optional: without them those tests skip, so a failed install warns instead of stopping the setup.
if ! f4gemm_system_cuobjdump >/dev/null; then
  if ! install_wheels "$F4GEMM_SASS_WHEELS_DIR" "$F4GEMM_SASS_WHEELS_BIN/cuobjdump" "${F4GEMM_SASS_WHEELS[@]}"; then
    echo "[setup] warning: could not install ${F4GEMM_SASS_WHEELS[*]}: the SASS-comparing tests will skip" >&2
  fi
  if [ -x "$F4GEMM_SASS_WHEELS_BIN/cuobjdump" ]; then
    "$F4GEMM_SASS_WHEELS_BIN/cuobjdump" --version | grep release | sed 's/^/[setup] cuobjdump from PyPI wheels: /'
  fi
fi
echo "[setup] dependencies present"
