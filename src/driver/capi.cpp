// The C API of include/f4gemm/f4gemm.h over the driver's Launcher: errors become a thread-local
// message and a non-zero return, never an exception across the C boundary.
#include "f4gemm/f4gemm.h"

#include <memory>
#include <string>

#include "f4gemm/driver.hpp"
#include "f4gemm/error.hpp"
#include "f4gemm/tuned.hpp"

struct f4gemm_handle {
    std::unique_ptr<f4gemm::Device> dev;
    std::unique_ptr<f4gemm::Launcher> launcher;
    f4gemm::TunedTable tuned;
};

namespace {

thread_local std::string g_last_error;

template <typename F>
int guarded(F&& f) {
    try {
        g_last_error.clear();
        f();
        return 0;
    } catch (const std::exception& e) {
        g_last_error = e.what();
        return 1;
    }
}

void require_handle(const f4gemm_handle* h) {
    if (!h) throw f4gemm::Error(f4gemm::Errc::InvalidArgument, "null f4gemm handle: call f4gemm_open first");
}

}  // namespace

extern "C" {

const char* f4gemm_last_error(void) {
    return g_last_error.c_str();
}

f4gemm_handle* f4gemm_open(const char* co_dir, int device) {
    f4gemm_handle* h = nullptr;
    guarded([&] {
        auto owned = std::make_unique<f4gemm_handle>();
        owned->dev = f4gemm::make_cuda_device(device);
        const f4gemm::CoDirChoice co = f4gemm::resolve_co_dir(co_dir ? co_dir : "", true);
        if (co.dir.empty())
            throw f4gemm::Error(f4gemm::Errc::Manifest,
                                "no code-object directory: pass co_dir or build the kernels");
        f4gemm::Manifest m = f4gemm::filter_for_device(f4gemm::load_manifest(co.dir),
                                                       f4gemm::BackendKind::Cuda, owned->dev->props().arch);
        owned->tuned = f4gemm::load_tuned_for(co.dir, "");
        owned->launcher = std::make_unique<f4gemm::Launcher>(*owned->dev, std::move(m));
        h = owned.release();
    });
    return h;
}

void f4gemm_close(f4gemm_handle* h) {
    if (!h) return;
    h->launcher.reset();
    h->dev.reset();
    delete h;
}

int f4gemm_num_kernels(const f4gemm_handle* h) {
    return h ? int(h->launcher->manifest().kernels.size()) : 0;
}

const char* f4gemm_kernel_name(const f4gemm_handle* h, int i) {
    if (!h || i < 0 || i >= f4gemm_num_kernels(h)) return nullptr;
    return h->launcher->manifest().kernels[size_t(i)].co_name.c_str();
}

const char* f4gemm_kernel_b_layout(const f4gemm_handle* h, int i) {
    if (!h || i < 0 || i >= f4gemm_num_kernels(h)) return nullptr;
    return f4gemm::to_string(h->launcher->manifest().kernels[size_t(i)].b_layout);
}

int f4gemm_kernel_info(const f4gemm_handle* h, int i, int* tile_m, int* tile_n, int* split_k) {
    return guarded([&] {
        if (!h || i < 0 || i >= f4gemm_num_kernels(h))
            throw f4gemm::Error(f4gemm::Errc::InvalidArgument,
                                "kernel index " + std::to_string(i) + " out of range");
        const f4gemm::KernelConfig& kc = h->launcher->manifest().kernels[size_t(i)];
        if (tile_m) *tile_m = kc.tile_m;
        if (tile_n) *tile_n = kc.tile_n;
        if (split_k) *split_k = kc.split_k;
    });
}

int f4gemm_num_sms(const f4gemm_handle* h) {
    return h ? h->dev->props().num_cu : 0;
}

int f4gemm_select(f4gemm_handle* h, int m, int n, int k, int splitk, int* kernel, int* log2_k_split) {
    return guarded([&] {
        require_handle(h);
        if (!kernel || !log2_k_split)
            throw f4gemm::Error(f4gemm::Errc::InvalidArgument, "f4gemm_select: null output pointer");
        f4gemm::check_shape(m, n, k);
        const f4gemm::Manifest& man = h->launcher->manifest();
        f4gemm::HeuristicQuery q{m, n, k, h->dev->props().num_cu, splitk, f4gemm::default_bpreshuffle(man)};
        const f4gemm::Selection s = f4gemm::select(man, "", q, false, &h->tuned);
        *kernel = s.index;
        *log2_k_split = s.log2_k_split;
    });
}

int f4gemm_gemm(f4gemm_handle* h, int kernel, int log2_k_split, int m, int n, int k, float alpha, float beta,
                uint64_t a, uint64_t a_scale, uint64_t b, uint64_t b_scale, uint64_t c, uint64_t d,
                uint64_t stream) {
    return guarded([&] {
        require_handle(h);
        f4gemm::check_shape(m, n, k);
        if (kernel < 0 && f4gemm_select(h, m, n, k, 0, &kernel, &log2_k_split) != 0)
            throw f4gemm::Error(f4gemm::Errc::NotFound, g_last_error);
        if (kernel >= f4gemm_num_kernels(h))
            throw f4gemm::Error(f4gemm::Errc::InvalidArgument,
                                "kernel index " + std::to_string(kernel) + " out of range");
        if (beta != 0.f && !c)
            throw f4gemm::Error(f4gemm::Errc::InvalidArgument, "beta != 0 needs a C pointer");
        const f4gemm::KernelConfig& kc = h->launcher->manifest().kernels[size_t(kernel)];
        const f4gemm::LaunchPlan plan = f4gemm::make_launch_plan(kc, m, n, k, log2_k_split, c != 0);
        f4gemm::DevicePointers ptr;
        ptr.a = a;
        ptr.scale_a = a_scale;
        ptr.b = b;
        ptr.scale_b = b_scale;
        ptr.c = c;
        ptr.d = d;
        h->dev->set_stream(stream);
        try {
            h->launcher->launch(kernel, plan, ptr, m, n, k, alpha, beta);
        } catch (...) {
            h->dev->set_stream(0);
            throw;
        }
        h->dev->set_stream(0);
    });
}

}  // extern "C"
