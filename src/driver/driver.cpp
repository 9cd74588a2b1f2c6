// The driver between the command line / C API and the backends: code-object folder and backend
// resolution (asm_f4gemm main.cpp's order, extended with our own kernels), kernel selection,
// buffers in each kernel's layouts, launch, timing and the CPU path.
#include "launcher.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <thread>

#include "f4gemm/cpu_backend.hpp"
#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"
#include "f4gemm/layout.hpp"
#include "f4gemm/reference.hpp"

namespace f4gemm {

namespace {

bool file_exists(const std::string& p) {
    return std::ifstream(p).good();
}

std::string exe_dir() {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0) return "";
    std::string s(buf, size_t(n));
    const size_t slash = s.rfind('/');
    return slash == std::string::npos ? "" : s.substr(0, slash);
}

const char* env(const char* name) {
    const char* v = std::getenv(name);
    return (v && *v) ? v : nullptr;
}

}  // namespace

BackendKind parse_backend(const std::string& s) {
    if (s == "auto") return BackendKind::Auto;
    if (s == "cpu") return BackendKind::Cpu;
    if (s == "cuda") return BackendKind::Cuda;
    if (s == "hip") return BackendKind::Hip;
    throw Error(Errc::InvalidArgument, "unknown backend '" + s + "': use auto, cpu, cuda or hip");
}

const char* to_string(BackendKind b) {
    switch (b) {
        case BackendKind::Auto:
            return "auto";
        case BackendKind::Cpu:
            return "cpu";
        case BackendKind::Cuda:
            return "cuda";
        case BackendKind::Hip:
            return "hip";
    }
    return "?";
}

std::string builtin_co_dir() {
    std::vector<std::string> candidates;
    if (const char* e = env("F4GEMM_CO_DIR")) candidates.push_back(e);
    const std::string here = exe_dir();
    if (!here.empty()) {
        candidates.push_back(here + "/../share/f4gemm/sm90a");  // installed: bin/ beside share/
        candidates.push_back(here + "/../kernels/sm90a");       // build tree: build/cli/f4gemm
        candidates.push_back(here + "/../../kernels/sm90a");    // build tree: build/tests/x/test
        candidates.push_back(here + "/kernels/sm90a");
    }
#ifdef F4GEMM_INSTALL_CO_DIR
    candidates.push_back(F4GEMM_INSTALL_CO_DIR);
#endif
#ifdef F4GEMM_BUILD_CO_DIR
    candidates.push_back(F4GEMM_BUILD_CO_DIR);
#endif
    for (const std::string& c : candidates)
        if (file_exists(c + "/" + kManifestFile)) return c;
    return "";
}

CoDirChoice resolve_co_dir(const std::string& flag, bool allow_builtin) {
    if (!flag.empty()) return {flag, "--co-dir"};
    if (const char* d = env("AITER_F4GEMM_DIR")) return {d, "AITER_F4GEMM_DIR"};
    if (const char* d = env("AITER_ASM_DIR")) return {std::string(d) + "/gfx950/f4gemm", "AITER_ASM_DIR"};
    if (allow_builtin) {
        const std::string b = builtin_co_dir();
        if (!b.empty()) return {b, "built-in"};
    }
    return {"", ""};
}

BackendKind resolve_backend(BackendKind requested) {
    switch (requested) {
        case BackendKind::Cpu:
            return BackendKind::Cpu;
        case BackendKind::Cuda:
            if (!cuda_compiled())
                throw Error(Errc::Unsupported,
                            "--backend cuda: the CUDA backend was not compiled in (see f4gemm "
                            "--version): rebuild with the CUDA toolkit or use --backend cpu");
            return BackendKind::Cuda;
        case BackendKind::Hip:
            if (!hip_compiled())
                throw Error(Errc::Unsupported,
                            "--backend hip: the HIP backend was not compiled in (see f4gemm "
                            "--version): rebuild with libamdhip64-dev or use --backend cpu");
            return BackendKind::Hip;
        case BackendKind::Auto:
            if (cuda_device_count() > 0) return BackendKind::Cuda;
            if (hip_device_count() > 0) return BackendKind::Hip;
            return BackendKind::Cpu;
    }
    return BackendKind::Cpu;
}

Manifest filter_for_device(const Manifest& m, BackendKind backend, const std::string& device_arch) {
    Manifest out = m;
    out.kernels.clear();
    const std::string prefix = backend == BackendKind::Cuda ? "sm_" : "gfx";
    for (const KernelConfig& kc : m.kernels)
        if (kc.arch.rfind(prefix, 0) == 0) out.kernels.push_back(kc);
    if (out.kernels.empty()) {
        std::string archs;
        for (const KernelConfig& kc : m.kernels)
            if (archs.find(kc.arch) == std::string::npos) archs += (archs.empty() ? "" : ",") + kc.arch;
        throw Error(Errc::NotFound, "manifest " + m.path + " lists no kernel for " + device_arch +
                                        " (its kernels are for " + archs +
                                        "): point --co-dir at code objects for this device");
    }
    return out;
}

int default_bpreshuffle(const Manifest& m) {
    for (const KernelConfig& kc : m.kernels)
        if (kc.bpreshuffle) return 1;
    return 0;
}

int default_num_cu(const Manifest& m) {
    for (const KernelConfig& kc : m.kernels) {
        if (kc.arch.rfind("gfx950", 0) == 0) return 256;
        if (kc.arch.rfind("sm_90", 0) == 0) return 132;
    }
    throw Error(Errc::InvalidArgument,
                "no device to read the CU count from and no default for this manifest's "
                "architecture: pass --num-cu N");
}

size_t kernel_k(BLayout b_layout, size_t k) {
    return b_layout == BLayout::Frag16S ? w_k_pad(k) : k;
}

int kernel_k(const KernelConfig& kc, int k) {
    return int(kernel_k(kc.b_layout, size_t(k)));
}

bool kernel_takes_nk(const KernelConfig& kc, int n, int k) {
    return kc.b_layout == BLayout::Frag16S || (k % 256 == 0 && n % 16 == 0);
}

void check_shape_aiter(int m, int n, int k) {
    if (m <= 0)
        throw Error(Errc::InvalidArgument,
                    "M must be positive (got " + std::to_string(m) + "): pass -m N with N >= 1");
    if (n <= 0)
        throw Error(Errc::InvalidArgument,
                    "N must be positive (got " + std::to_string(n) + "): pass -n N with N >= 16");
    if (k <= 0)
        throw Error(Errc::InvalidArgument,
                    "K must be positive (got " + std::to_string(k) + "): pass -k K with K >= 256");
    if (k % 256)
        throw Error(Errc::InvalidArgument,
                    "K must be a multiple of 256 (got " + std::to_string(k) + "): pad K with zero blocks");
    if (n % 16)
        throw Error(Errc::InvalidArgument, "N must be a multiple of 16 for the B preshuffle (got " +
                                               std::to_string(n) + "): pad N to a multiple of 16");
}

Problem make_problem(int m, int n, int k, float alpha, float beta, DataKind kind, uint32_t seed_a,
                     uint32_t seed_b, bool with_c) {
    Problem p;
    p.m = m;
    p.n = n;
    p.k = k;
    p.alpha = alpha;
    p.beta = beta;
    p.a = make_operand(size_t(m), size_t(k), seed_a, kind);
    p.b = make_operand(size_t(n), size_t(k), seed_b, kind);
    if (with_c) {
        // C on the scale of the product's outputs, bf16: exercises beta without dominating.
        std::mt19937 rng(seed_a ^ 0x9e3779b9u);
        std::normal_distribution<float> dist(0.f, 64.f);
        p.c.resize(size_t(m) * size_t(n));
        for (auto& v : p.c) v = float_to_bf16(dist(rng));
    }
    return p;
}

std::vector<float> reference_for(const Problem& p) {
    std::vector<float> c;
    if (!p.c.empty()) {
        c.resize(p.c.size());
        for (size_t i = 0; i < c.size(); ++i) c[i] = bf16_to_float(p.c[i]);
    }
    // Dequantized in float64: exact products for any E8M0 scale (wide-scale data included).
    return reference_gemm_mx(p.a, p.b, p.alpha, p.beta, c.empty() ? nullptr : c.data());
}

MxReferenceAbs reference_abs_for(const Problem& p) {
    std::vector<float> c;
    if (!p.c.empty()) {
        c.resize(p.c.size());
        for (size_t i = 0; i < c.size(); ++i) c[i] = bf16_to_float(p.c[i]);
    }
    return reference_gemm_mx_abs(p.a, p.b, p.alpha, p.beta, c.empty() ? nullptr : c.data());
}

VerifyResult verify_result(const Problem& p, const std::vector<uint16_t>& d, Accum accum, int launch_k,
                           bool bf16_split_reduction, size_t chain_k) {
    const size_t m = size_t(p.m), n = size_t(p.n);
    if (d.size() != m * n)
        throw Error(Errc::InvalidArgument, "verify_result: d has " + std::to_string(d.size()) +
                                               " elements, the problem's D has " + std::to_string(m * n) +
                                               ": pass the bf16 [M, N] result");
    if (accum == Accum::Promoted) {
        const MxReferenceAbs r = reference_abs_for(p);
        return verify_promoted_bf16(d.data(), n, r.ref.data(), r.abs_sum.data(), m, n, p.alpha,
                                    promoted_cw(size_t(launch_k), chain_k));
    }
    const std::vector<float> ref = reference_for(p);
    return verify_bf16(d.data(), n, ref.data(), m, n, default_tolerance(bf16_split_reduction));
}

// ---- GPU ---------------------------------------------------------------------------------------

Launcher::Launcher(Device& dev, Manifest manifest)
    : dev_(dev),
      manifest_(std::move(manifest)),
      functions_(manifest_.kernels.size(), nullptr),
      prepass_(manifest_.kernels.size(), nullptr),
      bconv_(manifest_.kernels.size(), nullptr),
      pdl_ok_(manifest_.kernels.size(), false) {
    // Lab knob (PERF.md entries 56, 57): F4GEMM_SPLIT_COUNTERS=0 counts split-K tiles in the zeroed
    // workspace, as before the counter buffer, for A/B timing in one build.
    if (const char* v = env("F4GEMM_SPLIT_COUNTERS")) {
        const std::string s = v;
        if (s != "0" && s != "1")
            throw Error(Errc::InvalidArgument,
                        "F4GEMM_SPLIT_COUNTERS (got '" + s +
                            "'): set it to 0 (the workspace memset) or 1, or unset it");
        split_counters_ = s == "1";
    }
    pp_slab_n_ = lab_pp_slab_n();
}

// Lab knob (PERF.md entry 79): F4GEMM_PP_SLAB_N=W runs every sm90pp1 GEMM wider than W in N slabs of W
// columns (make_pp_slab_launches), 0 none, instead of pp_slab_width's width (pp_launch_slab_n)
int lab_pp_slab_n() {
    const char* v = env("F4GEMM_PP_SLAB_N");
    if (!v) return -1;
    char* end = nullptr;
    const long w = std::strtol(v, &end, 10);
    if (end == v || *end || w < 0 || w > (1L << 30) || w % 256 != 0)
        throw Error(Errc::InvalidArgument, std::string("F4GEMM_PP_SLAB_N (got '") + v +
                                               "'): set it to a multiple of 256 (0: no slabs), or unset it");
    return int(w);
}

Launcher::~Launcher() {
    if (workspace_) dev_.free(workspace_);
    if (counters_) dev_.free(counters_);
}

void Launcher::set_image_cache(bool on) {
    image_cache_ = on;
    if (!on) clear_image_cache();
}

void Launcher::clear_image_cache() {
    images_.clear();
    image_hits_ = 0;
}

std::shared_ptr<const OperandImage> Launcher::image(const Problem& p, bool is_b, BLayout bl, ScaleLayout sl) {
    const MxOperand& op = is_b ? p.b : p.a;
    const size_t rows = size_t(is_b ? p.n : p.m), k = size_t(p.k);
    auto make = [&] {
        // The packed-weight kernels: B as the W body, A padded to the same round_up(K, 256).
        const size_t kp = kernel_k(bl, k);
        return std::make_shared<const OperandImage>(
            is_b ? make_b_image(op.packed.data(), op.scales.data(), rows, k, bl, sl)
                 : make_a_image(op.packed.data(), op.scales.data(), rows, k, sl, kp));
    };
    if (!image_cache_) return make();
    const ImageKey key{is_b, op.packed.data(), op.scales.data(), rows, k, int(bl), int(sl)};
    const auto it = images_.find(key);
    if (it != images_.end()) {
        ++image_hits_;
        return it->second;
    }
    return images_.emplace(key, make()).first->second;
}

void Launcher::prepare(int index) {
    if (functions_.at(size_t(index))) return;
    const KernelConfig& kc = manifest_.kernels[size_t(index)];
    const std::string path = manifest_.dir + "/" + kc.co_name;
    if (!file_exists(path))
        throw Error(Errc::NotFound,
                    "no such code object: " + path +
                        "\n  the manifest lists this kernel but --co-dir does not contain it -- "
                        "point --co-dir at a directory holding it");
    void* module = dev_.load_module(path);
    void* fn = dev_.get_function(module, kc.knl_name);
    dev_.set_dynamic_smem(fn, unsigned(kc.smem_bytes));
    if (has_prepass(kc.abi))
        prepass_[size_t(index)] = dev_.get_function(module, kc.knl_name + kPrepassSuffix);
    if (has_bconv(kc.abi)) {
        bconv_[size_t(index)] = dev_.get_function(module, kc.knl_name + kBconvSuffix);
        // Lab knob: the converter's CTA count (PERF.md entry 44)
        if (const char* v = env("F4GEMM_BCONV_CTAS")) {
            char* end = nullptr;
            const long c = std::strtol(v, &end, 10);
            if (*end || c < 1 || c > 1024)
                throw Error(Errc::InvalidArgument, std::string("F4GEMM_BCONV_CTAS (got '") + v +
                                                       "'): set it to a CTA count 1..1024, or unset it");
            bconv_ctas_ = unsigned(c);
        }
    }
    pdl_ok_[size_t(index)] = dev_.has_global(module, F4GEMM_PDL_SYMBOL);
    functions_[size_t(index)] = fn;
}

void Launcher::launch(int index, const LaunchPlan& plan, DevicePointers ptr, int m, int n, int k, float alpha,
                      float beta, bool pdl) {
    prepare(index);
    const KernelConfig& kc = manifest_.kernels[size_t(index)];
    if (!plan.workspace_bytes) {
        ptr.workspace = 0;
    } else if (!ptr.workspace) {  // the caller's own workspace (a recorded graph's), else the shared one
        if (plan.workspace_bytes > workspace_bytes_) {
            if (workspace_) dev_.free(workspace_);
            workspace_ = dev_.alloc(plan.workspace_bytes);
            workspace_bytes_ = plan.workspace_bytes;
        }
        ptr.workspace = workspace_;
    }
    // sm90v1 split-K: the tile counters in the launcher's buffer, so the workspace needs no memset (PERF.md
    // entry 56: without the memset every split launch ran 1-8% faster, and a memset keeps the launch from
    // starting early).
    bool zero_workspace = plan.zero_workspace;
    ptr.counters = 0;
    if (split_counters_ && zero_workspace && plan.counter_slots > 0 && plan.counter_slots <= kCounterSlots) {
        if (!counters_) {
            counters_ = dev_.alloc(kCounterSlots * sizeof(uint32_t));
            dev_.memset(counters_, 0, kCounterSlots * sizeof(uint32_t));
        }
        ptr.counters = counters_;
        zero_workspace = false;
    }
    if (plan.zero_out) dev_.memset(ptr.d, 0, plan.d_bytes);
    if (zero_workspace) dev_.memset(ptr.workspace, 0, plan.workspace_bytes);
    // Only the GEMM's first kernel may start early, and not after a memset (no kernel to overlap). The GEMM
    // kernel after its own pre-pass launches plainly: overlapping them measured 2-4% slower (PERF.md entry
    // 38).
    const bool early = pdl && pdl_ok_[size_t(index)] && !plan.zero_out && !zero_workspace;
    const int slab_n = pp_launch_slab_n(kc, m, n, k, dev_.props().num_cu, pp_slab_n_);
    if (slab_n > 0) {
        // N slabs: pre-pass and GEMM per slab, in stream order on the one workspace; only the first pre-pass
        // may start early
        bool first = true;
        for (const PpSlabLaunch& s :
             make_pp_slab_launches(kc, ptr, m, n, k, alpha, beta, plan.c_bytes != 0, slab_n)) {
            dev_.launch(prepass_[size_t(index)], s.pre_grid, plan.pre_block, 0, s.args.data(), s.args.size(),
                        first && early);
            dev_.launch(functions_[size_t(index)], s.grid, plan.block, plan.smem_bytes, s.args.data(),
                        s.args.size(), false);
            first = false;
        }
        return;
    }
    const std::vector<uint8_t> args = make_arg_blob(kc, plan, ptr, m, n, k, alpha, beta);
    if (plan.pre_grid.x)
        dev_.launch(prepass_[size_t(index)], plan.pre_grid, plan.pre_block, 0, args.data(), args.size(),
                    early);
    // sm90pp2: _bconv and the GEMM both launch early, always: _bconv waits for the pre-pass and then lets the
    // GEMM launch, which waits on the ready counters _bconv raises (docs/ABI_SM90.md). Without the attribute
    // (a backend that ignores it) the three run one after the other, with the same results.
    if (plan.bconv_grid.x) {
        Dim3 grid = plan.bconv_grid;
        if (bconv_ctas_) grid.x = bconv_ctas_;
        dev_.launch(bconv_[size_t(index)], grid, plan.bconv_block, 0, args.data(), args.size(), true);
    }
    dev_.launch(functions_[size_t(index)], plan.grid, plan.block, plan.smem_bytes, args.data(), args.size(),
                plan.bconv_grid.x || (early && !plan.pre_grid.x));
}

GpuGemm::GpuGemm(Device& dev, const Manifest& m, int kernel_index, int log2_k_split, const Problem& p)
    : GpuGemm(std::make_unique<Launcher>(dev, m), nullptr, kernel_index, log2_k_split, p) {}

GpuGemm::GpuGemm(Launcher& launcher, int kernel_index, int log2_k_split, const Problem& p)
    : GpuGemm(nullptr, &launcher, kernel_index, log2_k_split, p) {}

// own_ is initialised before launcher_ (declaration order), so a GEMM that owns its launcher refers to it.
GpuGemm::GpuGemm(std::unique_ptr<Launcher> own, Launcher* shared, int kernel_index, int log2_k_split,
                 const Problem& p)
    : own_(std::move(own)),
      launcher_(shared ? *shared : *own_),
      index_(kernel_index),
      kc_(launcher_.manifest().kernels.at(size_t(kernel_index))),
      m_(p.m),
      n_(p.n),
      k_(p.k),
      launch_k_(kernel_k(kc_, p.k)),
      alpha_(p.alpha),
      beta_(p.beta) {
    plan_ = make_launch_plan(kc_, p.m, p.n, launch_k_, log2_k_split, !p.c.empty());
    launcher_.prepare(index_);
    upload(p);
}

void GpuGemm::upload(const Problem& p) {
    Device& dev = launcher_.device();
    DevicePointers ptr;
    const std::shared_ptr<const OperandImage> a_img =
        launcher_.image(p, false, kc_.b_layout, kc_.scale_layout);
    const std::shared_ptr<const OperandImage> b_img =
        launcher_.image(p, true, kc_.b_layout, kc_.scale_layout);
    const OperandImage& a = *a_img;
    const OperandImage& b = *b_img;
    auto put = [&](const std::vector<uint8_t>& host, size_t plan_bytes) {
        const DevPtr d = dev.alloc(std::max(host.size(), plan_bytes));
        dev.copy_to_device(d, host.data(), host.size());
        return d;
    };
    ptr.a = put(a.data, plan_.a_bytes);
    ptr.scale_a = put(a.scales, plan_.sa_bytes);
    ptr.b = put(b.data, plan_.b_bytes);
    ptr.scale_b = b.scales.empty() ? 0 : put(b.scales, plan_.sb_bytes);  // W carries B's scales
    ptr.d = dev.alloc(plan_.d_bytes);
    dev.memset(ptr.d, 0, plan_.d_bytes);  // aiter allocates D zeroed; padding rows stay defined
    if (!p.c.empty()) {
        ptr.c = dev.alloc(p.c.size() * 2);
        dev.copy_to_device(ptr.c, p.c.data(), p.c.size() * 2);
    }
    sets_.push_back(ptr);
    dev.synchronize();
}

void GpuGemm::add_rotation_set(const Problem& p) {
    if (p.m != m_ || p.n != n_ || p.k != k_)
        throw Error(Errc::InvalidArgument, "rotation set has another shape than the GEMM");
    upload(p);
}

GpuGemm::~GpuGemm() {
    if (graph_) launcher_.device().graph_destroy(graph_);
    if (own_workspace_) launcher_.device().free(own_workspace_);
    for (const DevicePointers& p : sets_)
        for (DevPtr d : {p.a, p.scale_a, p.b, p.scale_b, p.d, p.c})
            if (d) launcher_.device().free(d);
}

void GpuGemm::run_once(int set) {
    DevicePointers ptr = sets_.at(size_t(set));
    ptr.workspace = own_workspace_;  // 0: the launcher's shared one
    launcher_.launch(index_, plan_, ptr, m_, n_, launch_k_, alpha_, beta_);
}

void GpuGemm::ensure_graph(int iters) {
    if (graph_ && graph_iters_ == iters) return;
    Device& dev = launcher_.device();  // a backend without graphs throws from capture_begin()
    if (graph_) dev.graph_destroy(graph_);
    graph_ = nullptr;
    // A graph keeps the pointers it recorded: it gets its own workspace, which no other GEMM of the shared
    // launcher can free by growing the shared one. Allocations happen before the capture.
    if (plan_.workspace_bytes && !own_workspace_) own_workspace_ = dev.alloc(plan_.workspace_bytes);
    run_once(0);
    dev.synchronize();
    const int nsets = int(sets_.size());
    dev.capture_begin();
    try {
        for (int i = 0; i < iters; ++i) run_once(i % nsets);
    } catch (...) {
        try {
            dev.graph_destroy(dev.capture_end());  // leave the stream out of capture
        } catch (...) {
        }
        throw;
    }
    graph_ = dev.capture_end();
    graph_iters_ = iters;
    dev.graph_launch(graph_);  // the first replay uploads the graph: not timed
    dev.synchronize();
}

std::vector<uint16_t> GpuGemm::run_and_fetch(Timing timing) {
    Device& dev = launcher_.device();
    if (timing == Timing::Graph) ensure_graph(graph_ ? graph_iters_ : 1);
    // Poison D so an element the kernel never writes shows up as NaN (a mismatch), unless the
    // kernel accumulates into D (aiter's split-K), which the launch zeroes.
    if (!plan_.zero_out) dev.memset(sets_[0].d, 0xFF, plan_.d_bytes);
    if (timing == Timing::Graph)
        dev.graph_launch(graph_);  // its first run is on set 0
    else
        run_once(0);
    dev.synchronize();
    std::vector<uint16_t> d(size_t(m_) * size_t(n_));
    dev.copy_to_host(d.data(), sets_[0].d, d.size() * 2);
    return d;
}

double GpuGemm::time_us(int iters, int warmup, Timing timing) {
    Device& dev = launcher_.device();
    const int nsets = int(sets_.size());
    for (int i = 0; i < warmup; ++i) run_once(i % nsets);
    dev.synchronize();
    if (iters <= 0) return 0;
    if (timing == Timing::Graph) ensure_graph(iters);
    void* beg = dev.event_create();
    void* end = dev.event_create();
    dev.event_record(beg);
    if (timing == Timing::Graph)
        dev.graph_launch(graph_);
    else
        for (int i = 0; i < iters; ++i) run_once(i % nsets);
    dev.event_record(end);
    const float ms = dev.event_elapsed_ms(beg, end);
    dev.event_destroy(beg);
    dev.event_destroy(end);
    return double(ms) * 1000.0 / iters;
}

// ---- CPU ---------------------------------------------------------------------------------------

namespace {
CpuGemmArgs cpu_args(const Problem& p, int log2_k_split, int threads) {
    CpuGemmArgs a;
    a.a = &p.a;
    a.b = &p.b;
    a.m = size_t(p.m);
    a.n = size_t(p.n);
    a.k = size_t(p.k);
    a.alpha = p.alpha;
    a.beta = p.beta;
    a.c = p.c.empty() ? nullptr : p.c.data();
    a.threads = threads;
    // The same chunking as the GPU kernels' split-K (aiter's gdz rule).
    const int l = std::max(log2_k_split, 0);
    const int k_num = 1 << l;
    if (p.k % k_num)
        throw Error(Errc::InvalidArgument, "K(" + std::to_string(p.k) + ") % (1 << log2_k_split)(" +
                                               std::to_string(k_num) + ") != 0: pick a smaller --splitk");
    a.k_per_split = int(round_up(size_t(p.k / k_num), 256));
    a.splits = int(ceil_div(size_t(p.k), size_t(a.k_per_split)));
    return a;
}
}  // namespace

std::vector<uint16_t> cpu_run(const Problem& p, int log2_k_split, int threads) {
    std::vector<uint16_t> d(size_t(p.m) * size_t(p.n));
    cpu_gemm(cpu_args(p, log2_k_split, threads), d.data(), size_t(p.n));
    return d;
}

double cpu_time_us(const Problem& p, int log2_k_split, int iters, int warmup) {
    std::vector<uint16_t> d(size_t(p.m) * size_t(p.n));
    const CpuGemmArgs args = cpu_args(p, log2_k_split, 0);
    for (int i = 0; i < warmup; ++i) cpu_gemm(args, d.data(), size_t(p.n));
    if (iters <= 0) return 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) cpu_gemm(args, d.data(), size_t(p.n));
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::micro>(t1 - t0).count() / iters;
}

}  // namespace f4gemm
