// The front door of f4gemm: a Session is opened once (backend, device, code-object folder, manifest,
// device filter, tuned table, launcher, workspace) and then answers every request: which kernel runs a
// shape (select: the one home of the kernel-choice policy), a GEMM on host operands (the command, the
// tests) or on device pointers (the C API, Python), weight packing, and tuning. The command line, the C
// API and the Python package are thin faces over it (docs/DESIGN.md of the house, "Layers").
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "f4gemm/driver.hpp"

namespace f4gemm {

class Launcher;  // src/driver/launcher.hpp

struct SessionOptions {
    BackendKind backend = BackendKind::Auto;
    int device = 0;
    std::string co_dir;       // "" = the resolution order of resolve_co_dir
    std::string tuned;        // "" = $F4GEMM_TUNED, else the table beside the manifest
    int num_cu = 0;           // 0 = the device's SM/CU count (or the manifest's default without a device)
    bool open_device = true;  // false: resolve and read the manifest only (--list, --dry-run)
};

// A GEMM to choose a kernel for.
struct GemmRequest {
    int m = 0, n = 0, k = 0;
    std::string kernel;    // force one (knl_name or co_name); "" = the policy
    int splitk = 0;        // log2 of the K split; -1 = the heuristic tries 2/4/8/16
    int bpreshuffle = -1;  // aiter manifests: filter on B's preshuffle; -1 = the manifest's default
    bool explain = false;  // record every candidate's reason
    bool has_c = false;
    Accum accum = Accum::Exact;  // the arithmetic contract asked for (include/f4gemm/accum.hpp)
};

// select()'s answer: the kernel (none on the CPU backend), its launch plan and the reasons.
struct Choice {
    int index = -1;  // manifest index, -1 on the CPU backend
    int log2_k_split = 0;
    bool tuned = false;                           // taken from the tuned table
    std::vector<HeuristicStep> steps;             // with explain: each candidate and why it won or lost
    int num_cu = 0, bpreshuffle = 0, splitk = 0;  // the query the policy answered
    int launch_k = 0;  // the K the kernel sees: round_up(K, 256) for the packed-weight kernels
    LaunchPlan plan;   // GPU backends
    // sm90pp1: the N-slab width of the launch on num_cu SMs (pp_launch_slab_n), 0: one launch
    int slab_n = 0;
    // The request's mode; the chosen kernel's own is manifest().kernels[index].accum (kernel_accum()), which
    // is exact where a promoted request fell back. The CPU backend computes exactly in both modes.
    Accum accum = Accum::Exact;
};

// A prepared GEMM on host operands: device buffers uploaded once, run and timed as often as asked.
class Job {
public:
    virtual ~Job() = default;
    virtual std::vector<uint16_t> run_and_fetch() = 0;  // bf16 D [m, n], every element written
    virtual double time_us(int iters, int warmup) = 0;  // mean per run (device events, or host clock)
};

class Session {
public:
    explicit Session(const SessionOptions& o = {});
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    BackendKind backend() const { return backend_; }
    bool gpu() const { return backend_ == BackendKind::Cuda || backend_ == BackendKind::Hip; }
    Device* device() { return dev_.get(); }
    const DeviceProps* device_props() const { return dev_ ? &dev_->props() : nullptr; }
    const Manifest& manifest() const { return manifest_; }  // filtered for the device when there is one
    const CoDirChoice& co_dir() const { return co_; }
    const TunedTable& tuned() const { return tuned_; }
    int num_cu() const { return num_cu_; }
    // True when the manifest's kernels read B as the packed weight W (ours); false for aiter's.
    bool packed_weight() const { return packed_weight_; }

    // The one shape check: M, N >= 1, K a positive multiple of 32 (the packed-weight kernels and the
    // CPU); aiter's kernels keep the original's K % 256 and N % 16 rules and messages.
    void check_shape(int m, int n, int k) const;
    // The kernel-choice policy (docs/HEURISTIC.md): --kernel, the tuned table, then the sm_90a filters and
    // aiter's rule, for the request's accumulation mode (f4gemm::select in driver.hpp). Checks the shape. On
    // the CPU backend: no kernel, the split as asked, every result exact whatever the mode.
    Choice select(const GemmRequest& r) const;
    // The accumulation mode of what runs for `c`: its kernel's (the manifest's accum column), exact on the
    // CPU.
    Accum kernel_accum(const Choice& c) const;

    // A GEMM on plain host operands with the chosen kernel (B packed into W by the upload), or the CPU.
    std::unique_ptr<Job> prepare(const Choice& c, const Problem& p);

    // ---- host buffers (the command's pack and quantize, the numpy path) ----
    // W (header + body) of plain B [n, k/2] and its scales [n, k/32]: the host packer, the same words as the
    // device's (weight.h w_body_word); checks n and k. And back, n and k from W's header (checked).
    static std::vector<uint8_t> pack_weight_host(const uint8_t* b, const uint8_t* b_scale, int n, int k);
    static void unpack_weight_host(const uint8_t* w, size_t bytes, std::vector<uint8_t>& b,
                                   std::vector<uint8_t>& b_scale, int* n, int* k);
    // fp32 [rows, k] (k % 32 == 0) -> MXFP4 plain [rows, k/2] + [rows, k/32] (OCP MX v1.0, mx_quantize.h).
    static void quantize_host(const float* x, size_t rows, size_t k, uint8_t* packed, uint8_t* scales);

    // ---- device pointers (C API, Python): the device's stream, or `stream` when non-zero ----
    // Bytes of a packed weight W of n x k (header + body); checks n and k.
    static size_t weight_bytes(int n, int k);
    // W from plain B [n, k/2] and its scales [n, k/32] on the device (contiguous rows), by the CUDA packer
    // (bit-identical to the host's pack_weight). `w` must hold weight_bytes(n, k).
    void pack_weight(DevPtr b, DevPtr b_scale, int n, int k, DevPtr w, uint64_t stream = 0);
    // The A operand layout for m x k (what gemm() reads): data and scale bytes.
    static void operand_bytes(int m, int k, size_t* data_bytes, size_t* scale_bytes);
    // Plain A [m, k/2] + scales [m, k/32] (contiguous rows) -> the operand layout, padded by W's rule
    // (f4gemm_sm90a_pad_a).
    void pad_a(DevPtr a, DevPtr a_scale, int m, int k, DevPtr a_out, DevPtr a_scale_out, uint64_t stream = 0);
    // bf16 (is_bf16) or fp32 x [m, k] (row pitch ldx elements) -> MXFP4 in the operand layout, bit-identical
    // to the host's quantize_mxfp4 (f4gemm_sm90a_quantize).
    void quantize(DevPtr x, bool is_bf16, int m, int k, int ldx, DevPtr a_out, DevPtr a_scale_out,
                  uint64_t stream = 0);
    // A GEMM on device pointers: A in the operand layout (round_up(M,256) rows of round_up(K,256)/2 bytes,
    // scales round_up(K,256)/32 per row; for K % 256 == 0 the plain layout with rows allocated to 256), W
    // packed for (n, k), C (may be 0 when beta == 0) and D bf16 [m, n]. `kernel` -1 = select().
    struct DeviceGemm {
        int m = 0, n = 0, k = 0;
        float alpha = 1.f, beta = 0.f;
        DevPtr a = 0, a_scale = 0, w = 0, c = 0, d = 0;
        int kernel = -1, log2_k_split = 0;
        Accum accum = Accum::Exact;  // the request's mode: select()'s pools, and the check of a forced kernel
        // Programmatic dependent launch: the GEMM's first kernel may be scheduled before the kernel ahead of
        // it on the stream completes; our kernels wait for it before touching memory (docs/KERNELS_SM90.md
        // "Launch overlap"), so any predecessor is safe. Off by default: a single GEMM gains nothing.
        bool pdl = false;
    };
    void gemm(const DeviceGemm& g, uint64_t stream = 0);

    // ---- tuning (GPU) ----
    struct TuneSpec {
        std::vector<std::array<int, 3>> shapes;  // M, N, K
        int iters = 20, warmup = 5, reps = 3;
        bool verify = true;
        double verify_max_macs = 17179869184.0;
        Timing timing = Timing::Graph;
        // The mode tuned for (and written in each row): exact measures the exact kernels; promoted measures
        // every kernel (an exact one meets the promoted bound). Each candidate is verified by its own
        // kernel's contract.
        Accum accum = Accum::Exact;
    };
    // Measures every kernel x split for each shape; `log` receives one line per candidate and shape.
    TunedTable tune(const TuneSpec& spec, const std::function<void(const std::string&)>& log);

private:
    void check_weight(DevPtr w, int n, int k);
    void load_util();
    BackendKind backend_ = BackendKind::Cpu;
    std::unique_ptr<Device> dev_;
    CoDirChoice co_;
    Manifest manifest_;
    TunedTable tuned_;
    int num_cu_ = 0;
    int lab_slab_n_ = -1;  // F4GEMM_PP_SLAB_N (lab_pp_slab_n), read once
    bool packed_weight_ = false;
    std::unique_ptr<Launcher> launcher_;
    void launch_util(void* fn, size_t grid, const void* args, size_t bytes, uint64_t stream);
    void* util_pack_ = nullptr;  // f4gemm_sm90a_util.cubin: the weight packer, A padder, quantizer
    void* util_pad_a_ = nullptr;
    void* util_quantize_ = nullptr;
    struct WeightRecord {
        DevPtr w;
        int n, k;
    };
    std::vector<WeightRecord> weights_;   // weights this session packed: their (n, k), checked by gemm()
    WeightRecord* find_weight(DevPtr w);  // nullptr when w is not in weights_
};

}  // namespace f4gemm
