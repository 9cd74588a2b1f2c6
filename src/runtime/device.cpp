// Defaults of the Device interface shared by every backend.
#include "f4gemm/error.hpp"
#include "f4gemm/runtime.hpp"

namespace f4gemm {

void Device::set_stream(uint64_t stream) {
    if (stream) throw Error(Errc::Unsupported, "this backend cannot run on a caller's stream: pass stream 0");
}

namespace {
[[noreturn]] void no_graphs() {
    throw Error(Errc::Unsupported, "this backend has no graphs: time with launch loops (tune --timing loop)");
}
}  // namespace

void Device::capture_begin() {
    no_graphs();
}
void* Device::capture_end() {
    no_graphs();
}
void Device::graph_launch(void*) {
    no_graphs();
}
void Device::graph_destroy(void*) {
    no_graphs();
}

}  // namespace f4gemm
