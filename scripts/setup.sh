#!/usr/bin/env bash
# Installs every build and test dependency of f4gemm on a fresh Debian 12 machine.
# Idempotent: re-running it only checks that everything is present. Versions are pinned
# where the package manager lets us (PyPI); Debian 12's archive pins the rest.
set -euo pipefail

DEBS=(
  cmake ninja-build g++ pkg-config
  libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev googletest
  llvm-22 clang-22 lld-22          # co2asm and its fixtures (clang-22 links with lld-22)
  libamdhip64-dev                  # HIP backend: host headers + libamdhip64 (no AMD GPU here)
  python3-numpy                    # tests write/read .npy cross-checks
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
echo "[setup] dependencies present"
