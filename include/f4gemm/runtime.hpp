// The one narrow interface every GPU backend implements (src/runtime/<vendor>/): device
// properties, code-object modules, memory, launch with an argument blob, events. Vendor headers
// stay inside src/runtime/<vendor>/; nothing here aliases one vendor's API to another's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "f4gemm/dim3.hpp"

namespace f4gemm {

struct DeviceProps {
    std::string backend;  // "cuda" | "hip"
    std::string name;     // e.g. "NVIDIA H200", "AMD Instinct MI355X"
    std::string arch;     // "sm_90a"-style for CUDA (sm_<major><minor>, 'a' added for 9.0), gfx name for HIP
    int num_cu = 0;       // SMs / CUs
    int cc_major = 0, cc_minor = 0;  // CUDA compute capability (0 for HIP)
    size_t global_mem = 0;
};

using DevPtr = uint64_t;

class Device {
public:
    virtual ~Device() = default;
    virtual const DeviceProps& props() const = 0;

    // Loads a code object file (.cubin/.ptx for CUDA, .co/.hsaco for HIP). A missing file is
    // Errc::NotFound naming the path; a code object for another architecture is Errc::Unsupported
    // before any launch. Handles stay valid for the Device's lifetime.
    virtual void* load_module(const std::string& path) = 0;
    virtual void* get_function(void* module, const std::string& symbol) = 0;
    // Whether the module defines the global `symbol` (a code object's declaration of what its kernels do:
    // F4GEMM_PDL_SYMBOL). Backends that cannot tell answer false.
    virtual bool has_global(void* module, const std::string& symbol) {
        (void)module;
        (void)symbol;
        return false;
    }
    virtual void set_dynamic_smem(void* function, unsigned bytes) = 0;

    virtual DevPtr alloc(size_t bytes) = 0;
    virtual void free(DevPtr p) = 0;
    virtual void copy_to_device(DevPtr dst, const void* src, size_t bytes) = 0;
    virtual void copy_to_host(void* dst, DevPtr src, size_t bytes) = 0;
    virtual void memset(DevPtr dst, uint8_t value, size_t bytes) = 0;  // async on the stream
    // Bytes from `p` to the end of the device allocation holding it (a caller's buffer-size check); 0 when
    // the backend cannot tell or `p` is no device allocation. A pooled allocator (PyTorch's) may hand out
    // parts of larger allocations, so this is an upper bound of the caller's buffer.
    virtual size_t bytes_from(DevPtr p) {
        (void)p;
        return 0;
    }
    // True while the stream in use is being captured into a graph (no synchronous copies then).
    virtual bool capturing() { return false; }
    // Async on the stream. overlap_prior: the kernel may be scheduled before the kernel ahead of it on the
    // stream completes (CUDA programmatic dependent launch); only for kernels that wait for their
    // predecessors (griddepcontrol.wait) before they touch global memory. Backends without it ignore it.
    virtual void launch(void* function, Dim3 grid, Dim3 block, unsigned smem, const void* args,
                        size_t args_bytes, bool overlap_prior = false) = 0;
    virtual void synchronize() = 0;
    // Use another stream (a CUstream/hipStream_t as an integer, e.g. PyTorch's current stream)
    // for memsets, launches and events; 0 returns to the device's own stream.
    virtual void set_stream(uint64_t stream);

    // Events on the device's stream, for timing.
    virtual void* event_create() = 0;
    virtual void event_record(void* event) = 0;
    virtual float event_elapsed_ms(void* start, void* stop) = 0;  // synchronizes on stop
    virtual void event_destroy(void* event) = 0;

    // Graphs, for timing without the host's per-launch cost (as bench/bench.py times): the memsets
    // and launches issued between capture_begin() and capture_end() are recorded, not run, and the
    // returned executable graph replays them with graph_launch() on the stream. Backends without
    // graphs answer false to graphs_supported(), and the others throw Errc::Unsupported.
    virtual bool graphs_supported() const { return false; }
    virtual void capture_begin();
    virtual void* capture_end();
    virtual void graph_launch(void* graph);
    virtual void graph_destroy(void* graph);
};

// Factories. Each throws Errc::Unsupported naming the backend when it was not compiled in, and
// Errc::Device when the runtime reports no usable device.
bool cuda_compiled();
bool hip_compiled();
int cuda_device_count();  // 0 when not compiled, no driver or no device; never throws
int hip_device_count();
std::unique_ptr<Device> make_cuda_device(int ordinal = 0);
std::unique_ptr<Device> make_hip_device(int ordinal = 0);

}  // namespace f4gemm
