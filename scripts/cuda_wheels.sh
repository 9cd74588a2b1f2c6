# Sourced by setup.sh and build.sh: which nvcc builds the sm_90a kernels. A system CUDA toolkit's nvcc
# when there is one (PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin: the places
# kernels/sm90a/CMakeLists.txt searches); else NVIDIA's CUDA 13.0 compiler wheels from PyPI, pinned
# below (the versions of the toolkit the kernels were measured with, nvcc V13.0.88) and installed by
# setup.sh with `pip install --target` into F4GEMM_CUDA_WHEELS_DIR, outside the tree so every clone
# and build directory on the machine shares one copy. F4GEMM_FORCE_PIP_NVCC=1 ignores the system
# toolkit (to exercise the wheel route on a machine that has one).
F4GEMM_CUDA_WHEELS=(
  nvidia-cuda-nvcc==13.0.88     # bin/: nvcc, ptxas, fatbinary, nvlink, cudafe++, nvcc.profile
  nvidia-nvvm==13.0.88          # nvvm/: cicc, libnvvm, libdevice
  nvidia-cuda-crt==13.0.88      # include/crt/ (host_config.h, host_defines.h, ...)
  nvidia-cuda-runtime==13.0.96  # include/cuda_runtime.h and cuda.h, lib/libcudart_static.a (bench/readfloor)
  nvidia-cuda-cccl==13.0.85     # include/cccl/ (libcu++, CUB), on nvcc.profile's -isystem path
)
F4GEMM_CUDA_WHEELS_DIR=${F4GEMM_CUDA_WHEELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/f4gemm/cuda-13.0.88}
F4GEMM_CUDA_WHEELS_ROOT=$F4GEMM_CUDA_WHEELS_DIR/nvidia/cu13  # the toolkit root the wheels share
F4GEMM_WHEEL_NVCC=$F4GEMM_CUDA_WHEELS_ROOT/bin/nvcc

# Prints the system CUDA toolkit's program $1 (PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin: the
# places kernels/sm90a/CMakeLists.txt searches for nvcc), or fails when there is none.
f4gemm_system_cuda_tool() {
  local c
  for c in "$(command -v "$1" 2>/dev/null || true)" "${CUDA_HOME:+$CUDA_HOME/bin/$1}" \
           "${CUDA_PATH:+$CUDA_PATH/bin/$1}" "/usr/local/cuda/bin/$1"; do
    if [ -n "$c" ] && [ -x "$c" ]; then echo "$c"; return 0; fi
  done
  return 1
}

# Prints the system nvcc, or fails when there is none (or F4GEMM_FORCE_PIP_NVCC=1).
f4gemm_system_nvcc() {
  [ "${F4GEMM_FORCE_PIP_NVCC:-0}" = 1 ] && return 1
  f4gemm_system_cuda_tool nvcc
}

# The SASS tools (cuobjdump, and nvdisasm, which it runs): the tests that compare machine code
# (tests/python/test_sass_same.py, test_variant.py, test_cv_probes.py) need them, and a machine whose only
# CUDA is the compiler (system or wheels) has none. NVIDIA publishes them on PyPI from 13.2 on: the oldest
# such release, pinned; they read the 13.0 compiler's sm_90a cubins. setup.sh installs them like the compiler
# wheels when no system cuobjdump is found; test.sh puts their bin/ on PATH for the tests.
F4GEMM_SASS_WHEELS=(
  nvidia-cuda-cuobjdump==13.2.51  # bin/cuobjdump
  nvidia-cuda-nvdisasm==13.2.51   # bin/nvdisasm (cuobjdump -sass runs it)
)
F4GEMM_SASS_WHEELS_DIR=${F4GEMM_SASS_WHEELS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/f4gemm/sass-13.2.51}
F4GEMM_SASS_WHEELS_BIN=$F4GEMM_SASS_WHEELS_DIR/nvidia/cu13/bin

# Prints the system cuobjdump, or fails when there is none.
f4gemm_system_cuobjdump() { f4gemm_system_cuda_tool cuobjdump; }
