// CUDA factories for builds without the CUDA backend: they say it was not compiled in.
#ifndef F4GEMM_HAVE_CUDA
#include "f4gemm/error.hpp"
#include "f4gemm/runtime.hpp"

namespace f4gemm {
bool cuda_compiled() {
    return false;
}
int cuda_device_count() {
    return 0;
}
std::unique_ptr<Device> make_cuda_device(int) {
    throw Error(Errc::Unsupported,
                "CUDA backend not compiled in: rebuild with the CUDA toolkit's cuda.h "
                "(-DF4GEMM_WITH_CUDA=ON) or use --backend cpu");
}
}  // namespace f4gemm
#endif
