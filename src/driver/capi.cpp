// The C API of include/f4gemm/f4gemm.h: a thin face over the Session. Errors become a thread-local
// message and a non-zero return, never an exception across the C boundary.
#include "f4gemm/f4gemm.h"

#include <memory>
#include <string>

#include "f4gemm/error.hpp"
#include "f4gemm/layout.hpp"
#include "f4gemm/session.hpp"

struct f4gemm_handle {
    std::unique_ptr<f4gemm::Session> session;
    bool pdl = false;  // f4gemm_set_pdl
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

f4gemm::Session& session(const f4gemm_handle* h) {
    if (!h || !h->session)
        throw f4gemm::Error(f4gemm::Errc::InvalidArgument, "null f4gemm handle: call f4gemm_open first");
    return *h->session;
}

const f4gemm::KernelConfig& kernel_at(const f4gemm_handle* h, int i) {
    const f4gemm::Manifest& m = session(h).manifest();
    if (i < 0 || i >= int(m.kernels.size()))
        throw f4gemm::Error(f4gemm::Errc::InvalidArgument, "kernel index " + std::to_string(i) +
                                                               " out of range: the manifest has " +
                                                               std::to_string(m.kernels.size()) + " kernels");
    return m.kernels[size_t(i)];
}

// The F4GEMM_ACCUM_* value of the C API as the library's mode; another value is an error naming both.
f4gemm::Accum accum_of(int accum) {
    if (accum == F4GEMM_ACCUM_EXACT) return f4gemm::Accum::Exact;
    if (accum == F4GEMM_ACCUM_PROMOTED) return f4gemm::Accum::Promoted;
    throw f4gemm::Error(f4gemm::Errc::InvalidArgument,
                        "accum " + std::to_string(accum) +
                            ": unknown mode: pass F4GEMM_ACCUM_EXACT (0) or F4GEMM_ACCUM_PROMOTED (1)");
}

}  // namespace

extern "C" {

const char* f4gemm_last_error(void) {
    return g_last_error.c_str();
}

f4gemm_handle* f4gemm_open(const char* co_dir, int device) {
    f4gemm_handle* h = nullptr;
    guarded([&] {
        if (device < 0)
            throw f4gemm::Error(f4gemm::Errc::InvalidArgument,
                                "device ordinal must be >= 0 (got " + std::to_string(device) + ")");
        f4gemm::SessionOptions o;
        o.backend = f4gemm::BackendKind::Cuda;
        o.device = device;
        o.co_dir = co_dir ? co_dir : "";
        auto owned = std::make_unique<f4gemm_handle>();
        owned->session = std::make_unique<f4gemm::Session>(o);
        h = owned.release();
    });
    return h;
}

void f4gemm_close(f4gemm_handle* h) {
    delete h;
}

int f4gemm_num_kernels(const f4gemm_handle* h) {
    return h && h->session ? int(h->session->manifest().kernels.size()) : 0;
}

const char* f4gemm_kernel_name(const f4gemm_handle* h, int i) {
    if (!h || i < 0 || i >= f4gemm_num_kernels(h)) return nullptr;
    return h->session->manifest().kernels[size_t(i)].co_name.c_str();
}

const char* f4gemm_kernel_b_layout(const f4gemm_handle* h, int i) {
    if (!h || i < 0 || i >= f4gemm_num_kernels(h)) return nullptr;
    return f4gemm::to_string(h->session->manifest().kernels[size_t(i)].b_layout);
}

double f4gemm_promoted_cw(size_t k_launch) {
    return f4gemm::promoted_cw(k_launch);
}

double f4gemm_kernel_cw(const f4gemm_handle* h, int i, int k) {
    double cw = -1;
    if (k > 0)
        guarded([&] {
            const f4gemm::KernelConfig& kc = kernel_at(h, i);
            cw = f4gemm::promoted_cw(size_t(f4gemm::kernel_k(kc, k)), f4gemm::chain_k(kc));
        });
    return cw;
}

int f4gemm_kernel_k(const f4gemm_handle* h, int i, int k) {
    int kk = -1;
    if (k > 0) guarded([&] { kk = f4gemm::kernel_k(kernel_at(h, i), k); });
    return kk;
}

int f4gemm_kernel_accum(const f4gemm_handle* h, int i) {
    int mode = -1;
    guarded([&] {
        mode = kernel_at(h, i).accum == f4gemm::Accum::Promoted ? F4GEMM_ACCUM_PROMOTED : F4GEMM_ACCUM_EXACT;
    });
    return mode;
}

int f4gemm_kernel_info(const f4gemm_handle* h, int i, int* tile_m, int* tile_n, int* split_k) {
    return guarded([&] {
        const f4gemm::KernelConfig& kc = kernel_at(h, i);
        if (tile_m) *tile_m = kc.tile_m;
        if (tile_n) *tile_n = kc.tile_n;
        if (split_k) *split_k = kc.split_k;
    });
}

int f4gemm_num_sms(const f4gemm_handle* h) {
    return h && h->session ? h->session->num_cu() : 0;
}

int f4gemm_select(f4gemm_handle* h, int m, int n, int k, int splitk, int accum, int* kernel,
                  int* log2_k_split) {
    return guarded([&] {
        f4gemm::Session& s = session(h);
        if (!kernel || !log2_k_split)
            throw f4gemm::Error(f4gemm::Errc::InvalidArgument, "f4gemm_select: null output pointer");
        f4gemm::GemmRequest r;
        r.m = m;
        r.n = n;
        r.k = k;
        r.splitk = splitk;
        r.accum = accum_of(accum);
        const f4gemm::Choice c = s.select(r);
        *kernel = c.index;
        *log2_k_split = c.log2_k_split;
    });
}

size_t f4gemm_weight_bytes(const f4gemm_handle* h, int n, int k) {
    size_t bytes = 0;
    guarded([&] {
        session(h);
        bytes = f4gemm::Session::weight_bytes(n, k);
    });
    return bytes;
}

int f4gemm_operand_bytes(const f4gemm_handle* h, int m, int k, size_t* data_bytes, size_t* scale_bytes) {
    return guarded([&] {
        session(h);
        f4gemm::Session::operand_bytes(m, k, data_bytes, scale_bytes);
    });
}

int f4gemm_pad_a(f4gemm_handle* h, uint64_t a, uint64_t a_scale, int m, int k, uint64_t a_out,
                 uint64_t a_scale_out, uint64_t stream) {
    return guarded([&] { session(h).pad_a(a, a_scale, m, k, a_out, a_scale_out, stream); });
}

int f4gemm_quantize(f4gemm_handle* h, uint64_t x, int is_bf16, int m, int k, int ldx, uint64_t a_out,
                    uint64_t a_scale_out, uint64_t stream) {
    return guarded([&] { session(h).quantize(x, is_bf16 != 0, m, k, ldx, a_out, a_scale_out, stream); });
}

int f4gemm_pack_weight(f4gemm_handle* h, uint64_t b, uint64_t b_scale, int n, int k, uint64_t w,
                       uint64_t stream) {
    return guarded([&] { session(h).pack_weight(b, b_scale, n, k, w, stream); });
}

int f4gemm_gemm(f4gemm_handle* h, int kernel, int log2_k_split, int accum, int m, int n, int k, float alpha,
                float beta, uint64_t a, uint64_t a_scale, uint64_t w, uint64_t c, uint64_t d,
                uint64_t stream) {
    return guarded([&] {
        f4gemm::Session& s = session(h);
        f4gemm::Session::DeviceGemm g;
        g.accum = accum_of(accum);
        g.m = m;
        g.n = n;
        g.k = k;
        g.alpha = alpha;
        g.beta = beta;
        g.a = a;
        g.a_scale = a_scale;
        g.w = w;
        g.c = c;
        g.d = d;
        g.kernel = kernel;
        g.log2_k_split = log2_k_split;
        g.pdl = h->pdl;
        s.gemm(g, stream);
    });
}

int f4gemm_set_pdl(f4gemm_handle* h, int on) {
    return guarded([&] {
        session(h);  // a null handle is refused
        if (on != 0 && on != 1)
            throw f4gemm::Error(f4gemm::Errc::InvalidArgument, "f4gemm_set_pdl: on is " + std::to_string(on) +
                                                                   ": pass 1 (early start) or 0");
        h->pdl = on == 1;
    });
}

}  // extern "C"
