// HIP backend plugin (libf4gemm_hip.so): f4gemm::Device over the HIP module API, driving aiter's
// gfx950 code objects as asm_f4gemm's Kernel::load/launch and main.cpp do (f4gemm.hpp @6524ae86):
// the missing-.co pre-check, hipModuleLoad, hipModuleGetFunction, hipModuleLaunchKernel with the
// kernarg blob in `extra`. Only src/runtime/hip_loader.cpp talks to it, through two extern "C"
// entry points, so the f4gemm binary never needs libamdhip64 to start. Not yet run on AMD hardware.
#include <hip/hip_runtime_api.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "f4gemm/codeobject.hpp"
#include "f4gemm/error.hpp"
#include "f4gemm/runtime.hpp"

namespace f4gemm {

namespace {

// "HIP error <code> (<hipGetErrorString>) in <call>": asm_f4gemm's HIP_CALL printed the same three
// facts ("[HIP ERROR] (<code>) <string>  at <file>:<line>") and exited; we throw instead.
[[noreturn]] void hip_fail(hipError_t e, const std::string& call) {
    throw Error(Errc::Device, "HIP error " + std::to_string(static_cast<int>(e)) + " (" +
                                  hipGetErrorString(e) + ") in " + call);
}

#define F4GEMM_HIP(call, what)                                  \
    do {                                                        \
        const hipError_t f4gemm_e_ = (call);                    \
        if (f4gemm_e_ != hipSuccess) hip_fail(f4gemm_e_, what); \
    } while (0)

bool is_regular_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

class HipDevice final : public Device {
public:
    explicit HipDevice(int ordinal) {
        int count = 0;
        const hipError_t e = hipGetDeviceCount(&count);
        if (e == hipErrorNoDevice || (e == hipSuccess && count == 0))
            throw Error(
                Errc::Device,
                "no AMD GPU (got 0 HIP devices" +
                    std::string(e == hipSuccess ? ""
                                                : ", HIP error " + std::to_string(static_cast<int>(e)) +
                                                      " (" + hipGetErrorString(e) + ")") +
                    "): run on a machine with an AMD GPU and ROCm, or use --backend cpu");
        if (e != hipSuccess) hip_fail(e, "hipGetDeviceCount");
        if (ordinal < 0 || ordinal >= count)
            throw Error(Errc::Device, "HIP device ordinal (got " + std::to_string(ordinal) + ", " +
                                          std::to_string(count) + " devices): pick 0.." +
                                          std::to_string(count - 1));
        ordinal_ = ordinal;
        F4GEMM_HIP(hipSetDevice(ordinal_), "hipSetDevice(" + std::to_string(ordinal_) + ")");
        hipDeviceProp_t prop;
        std::memset(&prop, 0, sizeof prop);
        F4GEMM_HIP(hipGetDeviceProperties(&prop, ordinal_), "hipGetDeviceProperties");
        props_.backend = "hip";
        props_.name = prop.name;
        // asm_f4gemm: "gfx950:sramecc+:xnack-" -> "gfx950". The CLI warns when it is not gfx950.
        const std::string gcn = prop.gcnArchName;
        props_.arch = gcn.substr(0, gcn.find(':'));
        props_.num_cu = prop.multiProcessorCount;
        props_.global_mem = prop.totalGlobalMem;
        // A blocking stream: ordered after work on the null stream, like asm_f4gemm's launches.
        F4GEMM_HIP(hipStreamCreate(&own_stream_), "hipStreamCreate");
        stream_ = own_stream_;
    }

    ~HipDevice() override {
        // Teardown errors have nowhere to go (destructors must not throw) and change nothing.
        (void)hipSetDevice(ordinal_);
        for (hipModule_t m : modules_) (void)hipModuleUnload(m);
        if (own_stream_) (void)hipStreamDestroy(own_stream_);
    }

    const DeviceProps& props() const override { return props_; }

    void* load_module(const std::string& path) override {
        // hipModuleLoad says only "file not found" without the file: name it, as asm_f4gemm does.
        if (!is_regular_file(path) || !std::ifstream(path, std::ios::binary).is_open())
            throw Error(Errc::NotFound,
                        "no such code object: " + path +
                            "\n  the manifest lists this kernel but --co-dir does not contain "
                            "it -- point --co-dir at a directory holding it");
        // Refuse a code object for another architecture before the runtime does so less clearly.
        const CodeObjectInfo info = inspect_code_object(path);
        if (info.kind == CodeObjectKind::Cubin || info.kind == CodeObjectKind::Ptx)
            throw Error(Errc::Unsupported, path + ": code object is CUDA " + info.target +
                                               ", the device is " + props_.arch +
                                               ": point --co-dir at AMDGPU code objects");
        if (info.kind == CodeObjectKind::Amdgpu && info.target.rfind("gfx", 0) == 0 &&
            info.target != props_.arch)
            throw Error(Errc::Unsupported, path + ": code object is built for " + info.target +
                                               ", the device is " + props_.arch +
                                               ": use code objects built for " + props_.arch);
        hipModule_t m = nullptr;
        F4GEMM_HIP(hipModuleLoad(&m, path.c_str()), "hipModuleLoad(" + path + ")");
        modules_.push_back(m);
        return m;
    }

    void* get_function(void* module, const std::string& symbol) override {
        hipFunction_t f = nullptr;
        F4GEMM_HIP(hipModuleGetFunction(&f, static_cast<hipModule_t>(module), symbol.c_str()),
                   "hipModuleGetFunction(" + symbol + ")");
        return f;
    }

    // HIP has no per-function opt-in for large dynamic LDS: the size goes to hipModuleLaunchKernel.
    // aiter's kernels declare their 160 KB statically (group_segment_fixed_size) and take 0.
    void set_dynamic_smem(void*, unsigned) override {}

    DevPtr alloc(size_t bytes) override {
        void* p = nullptr;
        F4GEMM_HIP(hipMalloc(&p, bytes ? bytes : 1), "hipMalloc(" + std::to_string(bytes) + ")");
        return reinterpret_cast<DevPtr>(p);
    }
    void free(DevPtr p) override {
        // Called from destructors: a failure here must not throw (it would terminate the program).
        if (p) (void)hipFree(reinterpret_cast<void*>(p));
    }
    void copy_to_device(DevPtr dst, const void* src, size_t bytes) override {
        if (!bytes) return;
        F4GEMM_HIP(hipMemcpyAsync(reinterpret_cast<void*>(dst), src, bytes, hipMemcpyHostToDevice, stream_),
                   "hipMemcpyAsync(HostToDevice)");
        F4GEMM_HIP(hipStreamSynchronize(stream_), "hipStreamSynchronize");
    }
    void copy_to_host(void* dst, DevPtr src, size_t bytes) override {
        if (!bytes) return;
        F4GEMM_HIP(hipMemcpyAsync(dst, reinterpret_cast<void*>(src), bytes, hipMemcpyDeviceToHost, stream_),
                   "hipMemcpyAsync(DeviceToHost)");
        F4GEMM_HIP(hipStreamSynchronize(stream_), "hipStreamSynchronize");
    }
    void memset(DevPtr dst, uint8_t value, size_t bytes) override {
        if (bytes)
            F4GEMM_HIP(hipMemsetAsync(reinterpret_cast<void*>(dst), value, bytes, stream_), "hipMemsetAsync");
    }
    void launch(void* function, Dim3 grid, Dim3 block, unsigned smem, const void* args, size_t args_bytes,
                bool /*overlap_prior: no programmatic launch on HIP*/) override {
        // asm_f4gemm passes the packed block through `extra`; the runtime copies it at launch, so the
        // caller's buffer may be reused afterwards. The size is always 0x174 for aiter's kernels, even
        // for noBpreShuffle_256x256 whose metadata segment is 368 bytes.
        size_t size = args_bytes;
        void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, const_cast<void*>(args),
                          HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
        F4GEMM_HIP(hipModuleLaunchKernel(static_cast<hipFunction_t>(function), grid.x, grid.y, grid.z,
                                         block.x, block.y, block.z, smem, stream_, nullptr, config),
                   "hipModuleLaunchKernel(grid " + std::to_string(grid.x) + "x" + std::to_string(grid.y) +
                       "x" + std::to_string(grid.z) + ", block " + std::to_string(block.x) + ")");
    }
    void synchronize() override { F4GEMM_HIP(hipStreamSynchronize(stream_), "hipStreamSynchronize"); }
    // A caller's hipStream_t (e.g. PyTorch's current stream) as an integer; 0 = our own stream.
    void set_stream(uint64_t stream) override {
        stream_ = stream ? reinterpret_cast<hipStream_t>(stream) : own_stream_;
    }

    void* event_create() override {
        hipEvent_t e = nullptr;
        F4GEMM_HIP(hipEventCreate(&e), "hipEventCreate");
        return e;
    }
    void event_record(void* e) override {
        F4GEMM_HIP(hipEventRecord(static_cast<hipEvent_t>(e), stream_), "hipEventRecord");
    }
    float event_elapsed_ms(void* start, void* stop) override {
        F4GEMM_HIP(hipEventSynchronize(static_cast<hipEvent_t>(stop)), "hipEventSynchronize");
        float ms = 0;
        F4GEMM_HIP(hipEventElapsedTime(&ms, static_cast<hipEvent_t>(start), static_cast<hipEvent_t>(stop)),
                   "hipEventElapsedTime");
        return ms;
    }
    void event_destroy(void* e) override {
        if (e) (void)hipEventDestroy(static_cast<hipEvent_t>(e));
    }

private:
    DeviceProps props_;
    int ordinal_ = 0;
    hipStream_t own_stream_ = nullptr;  // created here, destroyed here
    hipStream_t stream_ = nullptr;      // where work goes: own_stream_ or the caller's
    std::vector<hipModule_t> modules_;
};

}  // namespace

}  // namespace f4gemm

// ---- plugin entry points (resolved with dlsym by src/runtime/hip_loader.cpp) -------------------

extern "C" __attribute__((visibility("default"))) int f4gemm_hip_device_count(void) {
    int count = 0;
    return hipGetDeviceCount(&count) == hipSuccess ? count : 0;
}

// Returns a new Device (owned by the caller, deleted through its virtual destructor) or nullptr with
// the error message in `err`. Never throws across the C boundary.
extern "C" __attribute__((visibility("default"))) f4gemm::Device* f4gemm_hip_create(int ordinal, char* err,
                                                                                    size_t errlen) {
    std::string msg;
    try {
        return new f4gemm::HipDevice(ordinal);
    } catch (const std::exception& e) {
        msg = e.what();
    } catch (...) {
        msg = "unknown exception while creating the HIP device";
    }
    if (err && errlen) std::snprintf(err, errlen, "%s", msg.c_str());
    return nullptr;
}
