// CUDA backend: f4gemm::Device over the CUDA driver API. libcuda.so.1 is opened with dlopen at
// run time, so the same f4gemm binary starts on machines without the NVIDIA driver (CI) and
// reports "no device" there. Every failing call is reported with its CUresult name and the call.
#include <dlfcn.h>

#include <cuda.h>

#include <mutex>
#include <string>
#include <vector>

#include "f4gemm/codeobject.hpp"
#include "f4gemm/error.hpp"
#include "f4gemm/runtime.hpp"

namespace f4gemm {

namespace {

// The driver entry points we use, resolved by their ABI names (the _v2 names are what cuda.h's
// macros map to in CUDA 13).
struct CudaApi {
    void* lib = nullptr;
    std::string load_error;
#define F4GEMM_CU_FN(name, sym, ...) CUresult (*name)(__VA_ARGS__) = nullptr;
#include "cuda_api.inc"
#undef F4GEMM_CU_FN
    bool ok() const {
        return lib != nullptr;
    }
};

const CudaApi& api() {
    static CudaApi a;
    static std::once_flag once;
    std::call_once(once, [] {
        void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* e = dlerror();
            a.load_error = e ? e : "dlopen(libcuda.so.1) failed";
            return;
        }
        bool all = true;
#define F4GEMM_CU_FN(name, sym, ...)                                                            \
    a.name = reinterpret_cast<decltype(a.name)>(dlsym(lib, sym));                               \
    if (!a.name) {                                                                              \
        all = false;                                                                            \
        a.load_error = std::string("libcuda.so.1 lacks ") + sym + ": update the NVIDIA driver"; \
    }
#include "cuda_api.inc"
#undef F4GEMM_CU_FN
        if (all && a.cuInit(0) == CUDA_SUCCESS) {
            a.lib = lib;
        } else {
            if (all) a.load_error = "cuInit failed: no usable NVIDIA driver";
            dlclose(lib);
        }
    });
    return a;
}

std::string result_name(CUresult r) {
    const char* name = nullptr;
    const char* text = nullptr;
    if (api().cuGetErrorName) api().cuGetErrorName(r, &name);
    if (api().cuGetErrorString) api().cuGetErrorString(r, &text);
    std::string s = name ? name : ("CUresult " + std::to_string(int(r)));
    if (text) s += std::string(" (") + text + ")";
    return s;
}

void check(CUresult r, const char* call) {
    if (r != CUDA_SUCCESS)
        throw Error(Errc::Device, std::string("CUDA error ") + result_name(r) + " in " + call);
}
#define F4GEMM_CU(call_expr, fn) check(api().fn call_expr, #fn)

class CudaDevice final : public Device {
public:
    explicit CudaDevice(int ordinal) {
        const CudaApi& a = api();
        int count = 0;
        F4GEMM_CU((&count), cuDeviceGetCount);
        if (ordinal < 0 || ordinal >= count)
            throw Error(Errc::Device, "CUDA device " + std::to_string(ordinal) + " does not exist (" +
                                          std::to_string(count) + " present): pick another --device");
        F4GEMM_CU((&dev_, ordinal), cuDeviceGet);
        char name[256] = {0};
        F4GEMM_CU((name, int(sizeof(name)), dev_), cuDeviceGetName);
        int sms = 0;
        F4GEMM_CU((&props_.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_),
                  cuDeviceGetAttribute);
        F4GEMM_CU((&props_.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev_),
                  cuDeviceGetAttribute);
        F4GEMM_CU((&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev_), cuDeviceGetAttribute);
        size_t mem = 0;
        F4GEMM_CU((&mem, dev_), cuDeviceTotalMem);
        props_.backend = "cuda";
        props_.name = name;
        props_.num_cu = sms;
        props_.global_mem = mem;
        props_.arch = "sm_" + std::to_string(props_.cc_major * 10 + props_.cc_minor) +
                      (props_.cc_major == 9 && props_.cc_minor == 0 ? "a" : "");
        F4GEMM_CU((&ctx_, dev_), cuDevicePrimaryCtxRetain);
        F4GEMM_CU((ctx_), cuCtxSetCurrent);
        // A blocking stream: it orders after the synchronous cuMemcpyHtoD calls on the legacy stream.
        F4GEMM_CU((&own_stream_, CU_STREAM_DEFAULT), cuStreamCreate);
        stream_ = own_stream_;
        (void)a;
    }
    ~CudaDevice() override {
        for (CUmodule m : modules_) api().cuModuleUnload(m);
        if (own_stream_) api().cuStreamDestroy(own_stream_);
        if (ctx_) api().cuDevicePrimaryCtxRelease(dev_);
    }

    const DeviceProps& props() const override { return props_; }

    void* load_module(const std::string& path) override {
        const CodeObjectInfo info = inspect_code_object(path);  // NotFound names the path
        std::string why;
        if (!cuda_can_run(info, props_.cc_major, props_.cc_minor, &why))
            throw Error(Errc::Unsupported, path + ": " + why + ": rebuild it for " + props_.arch +
                                               " or point --co-dir at code objects for this device");
        CUmodule m = nullptr;
        const CUresult r = api().cuModuleLoad(&m, path.c_str());
        if (r != CUDA_SUCCESS)
            throw Error(Errc::Device, "CUDA error " + result_name(r) + " in cuModuleLoad(" + path + ")");
        modules_.push_back(m);
        return m;
    }

    void* get_function(void* module, const std::string& symbol) override {
        CUfunction f = nullptr;
        const CUresult r = api().cuModuleGetFunction(&f, static_cast<CUmodule>(module), symbol.c_str());
        if (r != CUDA_SUCCESS)
            throw Error(Errc::NotFound, "CUDA error " + result_name(r) + " in cuModuleGetFunction(" + symbol +
                                            "): the manifest's knl_name must name an extern \"C\" "
                                            "kernel of the code object");
        return f;
    }
    bool has_global(void* module, const std::string& symbol) override {
        CUdeviceptr p = 0;
        size_t bytes = 0;
        return api().cuModuleGetGlobal(&p, &bytes, static_cast<CUmodule>(module), symbol.c_str()) ==
               CUDA_SUCCESS;
    }

    void set_dynamic_smem(void* function, unsigned bytes) override {
        if (bytes > 48 * 1024)
            F4GEMM_CU((static_cast<CUfunction>(function), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                       int(bytes)),
                      cuFuncSetAttribute);
    }

    DevPtr alloc(size_t bytes) override {
        CUdeviceptr p = 0;
        F4GEMM_CU((&p, bytes ? bytes : 1), cuMemAlloc);
        return p;
    }
    void free(DevPtr p) override {
        if (p) api().cuMemFree(p);
    }
    void copy_to_device(DevPtr dst, const void* src, size_t bytes) override {
        if (bytes) F4GEMM_CU((dst, src, bytes), cuMemcpyHtoD);
    }
    void copy_to_host(void* dst, DevPtr src, size_t bytes) override {
        F4GEMM_CU((stream_), cuStreamSynchronize);
        if (bytes) F4GEMM_CU((dst, src, bytes), cuMemcpyDtoH);
    }
    void memset(DevPtr dst, uint8_t value, size_t bytes) override {
        if (bytes) F4GEMM_CU((dst, value, bytes, stream_), cuMemsetD8Async);
    }
    size_t bytes_from(DevPtr p) override {
        CUdeviceptr base = 0;
        size_t size = 0;
        if (api().cuMemGetAddressRange(&base, &size, p) != CUDA_SUCCESS) return 0;
        return base + size > p ? size_t(base + size - p) : 0;
    }
    bool capturing() override {
        CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
        if (api().cuStreamIsCapturing(stream_, &st) != CUDA_SUCCESS) return false;
        return st != CU_STREAM_CAPTURE_STATUS_NONE;
    }
    void launch(void* function, Dim3 grid, Dim3 block, unsigned smem, const void* args, size_t args_bytes,
                bool overlap_prior) override {
        size_t size = args_bytes;
        void* config[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, const_cast<void*>(args),
                          CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
        // One launch path: cuLaunchKernelEx, with no attribute for a plain launch. With overlap_prior,
        // programmatic dependent launch: scheduled once every CTA of the kernel ahead has started (its
        // griddepcontrol.launch_dependents); our kernels wait (griddepcontrol.wait) before touching memory.
        // Stream capture records it as a programmatic graph edge.
        CUlaunchAttribute attr{};
        attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig lc{};
        lc.gridDimX = grid.x;
        lc.gridDimY = grid.y;
        lc.gridDimZ = grid.z;
        lc.blockDimX = block.x;
        lc.blockDimY = block.y;
        lc.blockDimZ = block.z;
        lc.sharedMemBytes = smem;
        lc.hStream = stream_;
        lc.attrs = overlap_prior ? &attr : nullptr;
        lc.numAttrs = overlap_prior ? 1 : 0;
        F4GEMM_CU((&lc, static_cast<CUfunction>(function), nullptr, config), cuLaunchKernelEx);
    }
    void synchronize() override { F4GEMM_CU((stream_), cuStreamSynchronize); }
    void set_stream(uint64_t stream) override {
        stream_ = stream ? reinterpret_cast<CUstream>(stream) : own_stream_;
    }

    void* event_create() override {
        CUevent e = nullptr;
        F4GEMM_CU((&e, CU_EVENT_DEFAULT), cuEventCreate);
        return e;
    }
    void event_record(void* e) override { F4GEMM_CU((static_cast<CUevent>(e), stream_), cuEventRecord); }
    float event_elapsed_ms(void* start, void* stop) override {
        F4GEMM_CU((static_cast<CUevent>(stop)), cuEventSynchronize);
        float ms = 0;
        F4GEMM_CU((&ms, static_cast<CUevent>(start), static_cast<CUevent>(stop)), cuEventElapsedTime);
        return ms;
    }
    void event_destroy(void* e) override {
        if (e) api().cuEventDestroy(static_cast<CUevent>(e));
    }

    bool graphs_supported() const override { return true; }
    // Thread-local mode: only this thread's unsafe calls (synchronous copies) are refused while capturing.
    void capture_begin() override {
        F4GEMM_CU((stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), cuStreamBeginCapture);
    }
    void* capture_end() override {
        CUgraph g = nullptr;
        F4GEMM_CU((stream_, &g), cuStreamEndCapture);
        CUgraphExec exec = nullptr;
        const CUresult r = api().cuGraphInstantiateWithFlags(&exec, g, 0);
        api().cuGraphDestroy(g);
        check(r, "cuGraphInstantiateWithFlags");
        return exec;
    }
    void graph_launch(void* graph) override {
        F4GEMM_CU((static_cast<CUgraphExec>(graph), stream_), cuGraphLaunch);
    }
    void graph_destroy(void* graph) override {
        if (graph) api().cuGraphExecDestroy(static_cast<CUgraphExec>(graph));
    }

private:
    DeviceProps props_;
    CUdevice dev_ = 0;
    CUcontext ctx_ = nullptr;
    CUstream stream_ = nullptr;  // where work goes (own or borrowed)
    CUstream own_stream_ = nullptr;
    std::vector<CUmodule> modules_;
};

}  // namespace

bool cuda_compiled() {
    return true;
}

int cuda_device_count() {
    if (!api().ok()) return 0;
    int n = 0;
    return api().cuDeviceGetCount(&n) == CUDA_SUCCESS ? n : 0;
}

std::unique_ptr<Device> make_cuda_device(int ordinal) {
    if (!api().ok())
        throw Error(Errc::Device, "no CUDA device: " + api().load_error +
                                      ": run on a machine with an NVIDIA GPU "
                                      "or use --backend cpu");
    return std::make_unique<CudaDevice>(ordinal);
}

}  // namespace f4gemm
