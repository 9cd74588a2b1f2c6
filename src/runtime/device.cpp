// Defaults of the Device interface shared by every backend.
#include "f4gemm/error.hpp"
#include "f4gemm/runtime.hpp"

namespace f4gemm {

void Device::set_stream(uint64_t stream) {
    if (stream) throw Error(Errc::Unsupported, "this backend cannot run on a caller's stream: pass stream 0");
}

}  // namespace f4gemm
