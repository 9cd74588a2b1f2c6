// The HIP factories of runtime.hpp, without HIP headers: they dlopen the backend plugin
// libf4gemm_hip.so (src/runtime/hip/) so that the f4gemm binary starts on machines without
// libamdhip64 (the H200 machine, CI images without ROCm) and says why HIP is unavailable there.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "f4gemm/error.hpp"
#include "f4gemm/runtime.hpp"

namespace f4gemm {

#ifdef F4GEMM_HAVE_HIP

namespace {

constexpr const char* kPluginFile = "libf4gemm_hip.so";

struct HipPlugin {
    int (*device_count)() = nullptr;
    Device* (*create)(int, char*, size_t) = nullptr;
    std::string error;  // why it is not loadable
    bool ok() const { return create != nullptr; }
};

bool is_file(const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string exe_dir() {
    std::vector<char> buf(PATH_MAX + 1, 0);
    const ssize_t n = ::readlink("/proc/self/exe", buf.data(), PATH_MAX);
    if (n <= 0) return "";
    std::string p(buf.data(), static_cast<size_t>(n));
    const size_t slash = p.find_last_of('/');
    return slash == std::string::npos ? "" : p.substr(0, slash);
}

// The folder of the binary holding this code: the executable, or libf4gemm.so when the runtime is
// used through the C API from another program (python, say).
std::string self_dir() {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&exe_dir), &info) || !info.dli_fname) return "";
    const std::string p = info.dli_fname;
    const size_t slash = p.find_last_of('/');
    return slash == std::string::npos ? "" : p.substr(0, slash);
}

// Where the plugin may live, in order: $F4GEMM_HIP_PLUGIN (a file or a folder), beside the
// executable and the install layouts relative to it, beside the library holding this code, then the
// build tree and install prefix baked in at configure time.
std::vector<std::string> candidates() {
    std::vector<std::string> c;
    if (const char* env = std::getenv("F4GEMM_HIP_PLUGIN"); env && *env) {
        const std::string e = env;
        struct stat st {};
        if (::stat(e.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
            c.push_back(e + "/" + kPluginFile);
        else
            c.push_back(e);
    }
    const std::string dir = exe_dir();
    if (!dir.empty()) {
        c.push_back(dir + "/" + kPluginFile);
        c.push_back(dir + "/../lib/" + kPluginFile);
        c.push_back(dir + "/../lib/x86_64-linux-gnu/" + kPluginFile);
        c.push_back(dir + "/../lib64/" + kPluginFile);
    }
    const std::string self = self_dir();
    if (!self.empty() && self != dir) c.push_back(self + "/" + kPluginFile);
#ifdef F4GEMM_BUILD_LIB_DIR
    c.push_back(std::string(F4GEMM_BUILD_LIB_DIR) + "/" + kPluginFile);
#endif
#ifdef F4GEMM_INSTALL_LIB_DIR
    c.push_back(std::string(F4GEMM_INSTALL_LIB_DIR) + "/" + kPluginFile);
#endif
    return c;
}

const HipPlugin& plugin() {
    static HipPlugin p;
    static std::once_flag once;
    std::call_once(once, [] {
        void* lib = nullptr;
        std::string first_error;  // from a candidate that exists: the informative one
        for (const std::string& path : candidates()) {
            if (!is_file(path)) continue;
            lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (lib) break;
            const char* e = dlerror();
            if (first_error.empty()) first_error = e ? e : "dlopen(" + path + ") failed";
        }
        if (!lib && first_error.empty()) {  // last resort: the dynamic loader's own search path
            lib = dlopen(kPluginFile, RTLD_NOW | RTLD_LOCAL);
            if (!lib) {
                const char* e = dlerror();
                first_error = std::string(e ? e : "dlopen failed") +
                              " (looked beside the executable, in its ../lib and the build tree; "
                              "F4GEMM_HIP_PLUGIN may name the file)";
            }
        }
        if (!lib) {
            p.error = first_error;
            return;
        }
        // Never dlclose'd: Devices it creates live in its code.
        p.device_count = reinterpret_cast<int (*)()>(dlsym(lib, "f4gemm_hip_device_count"));
        p.create = reinterpret_cast<Device* (*)(int, char*, size_t)>(dlsym(lib, "f4gemm_hip_create"));
        if (!p.device_count || !p.create) {
            p.device_count = nullptr;
            p.create = nullptr;
            p.error = std::string(kPluginFile) +
                      " lacks f4gemm_hip_create/f4gemm_hip_device_count (a stale build?)";
        }
    });
    return p;
}

}  // namespace

bool hip_compiled() {
    return true;
}

int hip_device_count() {
    const HipPlugin& p = plugin();
    return p.ok() ? p.device_count() : 0;
}

std::unique_ptr<Device> make_hip_device(int ordinal) {
    const HipPlugin& p = plugin();
    if (!p.ok())
        throw Error(Errc::Unsupported, "HIP backend plugin not loadable: " + p.error +
                                           ": install ROCm's libamdhip64 or use --backend cpu");
    char err[1024] = {0};
    Device* d = p.create(ordinal, err, sizeof err);
    if (!d) throw Error(Errc::Device, err[0] ? err : "HIP device creation failed: use --backend cpu");
    return std::unique_ptr<Device>(d);
}

#else  // !F4GEMM_HAVE_HIP

bool hip_compiled() {
    return false;
}
int hip_device_count() {
    return 0;
}
std::unique_ptr<Device> make_hip_device(int) {
    throw Error(Errc::Unsupported, "HIP backend not compiled in: rebuild with libamdhip64-dev installed");
}

#endif

}  // namespace f4gemm
