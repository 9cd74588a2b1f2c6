// The driver: everything between a parsed command line (or the C API) and a backend -- where
// the code objects are, which backend runs, which kernel is chosen, the launch, verification
// against the float64 reference, timing. Used by the f4gemm command, the C API and the tests.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "f4gemm/abi.hpp"
#include "f4gemm/heuristic.hpp"
#include "f4gemm/layout.hpp"
#include "f4gemm/manifest.hpp"
#include "f4gemm/operands.hpp"
#include "f4gemm/runtime.hpp"
#include "f4gemm/tuned.hpp"
#include "f4gemm/verify.hpp"

namespace f4gemm {

enum class BackendKind { Auto, Cpu, Cuda, Hip };
BackendKind parse_backend(const std::string& s);  // auto|cpu|cuda|hip; throws InvalidArgument
const char* to_string(BackendKind b);

// Where code objects come from, in the original's order: --co-dir, $AITER_F4GEMM_DIR,
// $AITER_ASM_DIR/gfx950/f4gemm; then ours: $F4GEMM_CO_DIR, the installed share/f4gemm/sm90a,
// the build tree's kernels/sm90a (both found relative to the running executable). "" if none.
struct CoDirChoice {
    std::string dir;
    std::string source;  // "--co-dir", "AITER_F4GEMM_DIR", ..., "built-in"
};
CoDirChoice resolve_co_dir(const std::string& flag, bool allow_builtin);
std::string builtin_co_dir();  // our sm_90a kernels folder, "" if not found

// Which backend runs: an explicit choice is checked (compiled in? device present?), auto picks
// CUDA, then HIP, then the CPU.
BackendKind resolve_backend(BackendKind requested);

// The manifest rows a device can run: CUDA takes arch "sm_*", HIP takes "gfx*". Returns the
// filtered manifest (same order); throws Errc::NotFound when nothing is left.
Manifest filter_for_device(const Manifest& m, BackendKind backend, const std::string& device_arch);

// --bpreshuffle default: 1 when the manifest holds a preshuffled-B kernel (always true for
// aiter's, which reproduces the original's default), else 0.
int default_bpreshuffle(const Manifest& m);
// --num-cu default without a device: 256 for gfx950 manifests (MI355X), 132 for sm_90a (H200).
int default_num_cu(const Manifest& m);

struct Selection {
    int index = -1;  // into the manifest
    int log2_k_split = 0;
    bool tuned = false;         // taken from the tuned table
    HeuristicResult heuristic;  // steps filled when explain was asked for
};
// The kernel-choice policy (src/driver/session.cpp, its one home; Session::select is how the faces reach
// it): --kernel NAME (knl_name or co_name; forced split = max(L, 0)), else the tuned table's entry for
// (q.num_cu, M, N, K) when it names a kernel of the manifest, else our sm_90a filters (max_m, smallest
// covering tile, one kernel per tile width by priority) and aiter's heuristic.
Selection select(const Manifest& m, const std::string& kernel, const HeuristicQuery& q, bool explain,
                 const TunedTable* tuned = nullptr);

// The K a kernel is launched with: the packed-weight (frag16s) kernels read B and A padded to
// round_up(K, 256) (include/f4gemm/weight.h); the others take K as it is.
int kernel_k(const KernelConfig& kc, int k);

// Host-side operands of one problem, plain layouts.
struct Problem {
    int m = 0, n = 0, k = 0;
    float alpha = 1.f, beta = 0.f;
    MxOperand a, b;
    std::vector<uint16_t> c;  // bf16 [m, n] or empty
};
// aiter's shape rules (the original's messages): K % 256, N % 16, all positive. Session::check_shape
// applies them to aiter's manifests; the packed-weight kernels and the CPU take any N and K % 32.
void check_shape_aiter(int m, int n, int k);
// The seed's operands (or another DataKind) for m x n x k.
Problem make_problem(int m, int n, int k, float alpha, float beta, DataKind kind, uint32_t seed_a,
                     uint32_t seed_b, bool with_c);

// The float64 reference for a problem (C taken as its bf16 values).
std::vector<float> reference_for(const Problem& p);

// Launches manifest kernels on device pointers the caller owns (plain layouts or the kernel's,
// as its manifest row says): loads each code object once, keeps the split-K workspace, fills the
// argument blob. Used by GpuGemm, `f4gemm tune` and the C API that bench/ calls.
class Launcher {
public:
    Launcher(Device& dev, Manifest manifest);
    ~Launcher();
    Launcher(const Launcher&) = delete;
    Launcher& operator=(const Launcher&) = delete;

    const Manifest& manifest() const { return manifest_; }
    Device& device() { return dev_; }
    // Loads the code object of kernel `index` (a missing file is named, as asm_f4gemm does).
    void prepare(int index);
    // The memsets the kernel needs (aiter split: D; sm90v1 split: workspace), then the launch (pre-pass
    // ABIs: <knl_name>_prepass, then the GEMM, in stream order).
    // `ptr.workspace`: 0 for the launcher's own (grown as needed, so a larger plan may free the one an
    // earlier launch used), else the caller's, of at least plan.workspace_bytes. Asynchronous on the
    // device's stream.
    void launch(int index, const LaunchPlan& plan, DevicePointers ptr, int m, int n, int k, float alpha,
                float beta);

    // Host operand images (make_a_image / make_b_image), kept while the cache is on and keyed by the
    // operand's host buffers, shape and layout: `f4gemm tune` uploads the same problems for every
    // candidate kernel, and packing B (frag16s, bit-plane) took ~0.3-0.5 s per upload at 16384^2. Off by
    // default; the caller must clear it (or turn it off) before those host buffers change or go away.
    void set_image_cache(bool on);
    void clear_image_cache();
    size_t image_cache_hits() const { return image_hits_; }
    size_t image_cache_size() const { return images_.size(); }
    // The image of A (is_b false) or B of `p` in the given layouts: from the cache when it is on.
    std::shared_ptr<const OperandImage> image(const Problem& p, bool is_b, BLayout bl, ScaleLayout sl);

private:
    Device& dev_;
    Manifest manifest_;
    std::vector<void*> functions_;  // per manifest index, nullptr until prepared
    std::vector<void*> prepass_;    // pre-pass ABIs: <knl_name>_prepass per manifest index
    DevPtr workspace_ = 0;
    size_t workspace_bytes_ = 0;
    // (is_b, packed, scales, rows, k, b layout, scale layout) -> image
    using ImageKey = std::tuple<bool, const void*, const void*, size_t, size_t, int, int>;
    bool image_cache_ = false;
    std::map<ImageKey, std::shared_ptr<const OperandImage>> images_;
    size_t image_hits_ = 0;
};

// A GEMM on a GPU device, kernel from a manifest: owns device buffers for one problem (and
// `sets` copies of the operands with other seeds, rotated by time_us so that timing at shapes
// that fit in L2 does not measure the cache).
class GpuGemm {
public:
    GpuGemm(Device& dev, const Manifest& m, int kernel_index, int log2_k_split, const Problem& p);
    GpuGemm(Launcher& launcher, int kernel_index, int log2_k_split, const Problem& p);
    ~GpuGemm();
    GpuGemm(const GpuGemm&) = delete;
    GpuGemm& operator=(const GpuGemm&) = delete;

    const LaunchPlan& plan() const { return plan_; }
    const KernelConfig& kernel() const { return kc_; }
    int launch_k() const { return launch_k_; }
    // Adds one more operand set (same shape) that time_us rotates over.
    void add_rotation_set(const Problem& p);
    int sets() const { return int(sets_.size()); }
    // One launch on operand set `set` (with the memsets the kernel needs), asynchronous.
    void run_once(int set = 0);
    // How runs are issued. Loop: one by one from the host (the original asm_f4gemm's method). Graph:
    // recorded once into a graph that is then replayed (bench/bench.py's method), which leaves out the
    // host's per-launch cost (docs/BENCH.md); needs Device::graphs_supported().
    enum class Timing { Loop, Graph };
    // Poisons D (NaN bf16) unless the kernel accumulates into D, runs once (Graph: replays the recorded
    // runs, the first of which is on set 0), returns set 0's bf16 D [m, n].
    std::vector<uint16_t> run_and_fetch(Timing timing = Timing::Loop);
    // Mean microseconds per run over `iters` runs after `warmup` runs, with device events, rotating
    // over the operand sets.
    double time_us(int iters, int warmup, Timing timing = Timing::Loop);

private:
    void upload(const Problem& p);
    void ensure_graph(int iters);  // records `iters` runs (rotating sets) unless that graph exists
    std::unique_ptr<Launcher> own_;
    Launcher& launcher_;
    int index_;
    KernelConfig kc_;
    LaunchPlan plan_;
    int m_, n_, k_;
    int launch_k_;  // kernel_k(kc_, k_)
    float alpha_, beta_;
    std::vector<DevicePointers> sets_;
    void* graph_ = nullptr;  // the recorded runs of the last Timing::Graph call, and how many
    int graph_iters_ = 0;
    DevPtr own_workspace_ = 0;  // set with the first graph: the workspace the graph's launches use
};

// The CPU backend as the same kind of object, so the command treats both alike.
std::vector<uint16_t> cpu_run(const Problem& p, int log2_k_split, int threads = 0);
double cpu_time_us(const Problem& p, int log2_k_split, int iters, int warmup);

}  // namespace f4gemm
