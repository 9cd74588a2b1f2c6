// The launch machinery under the Session (private to src/driver; tests reach it through their include
// path): the Launcher loads each code object once and launches manifest kernels on device pointers,
// GpuGemm owns one problem's device buffers (in each kernel's layouts, B as the packed weight for ours)
// and runs, fetches and times it; cpu_run / cpu_time_us are the CPU backend's equivalent.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "f4gemm/driver.hpp"

namespace f4gemm {

// F4GEMM_PP_SLAB_N (lab knob, PERF.md entry 79): the N-slab width it sets for every sm90pp1 launch (0: none),
// -1 where unset; a value that is not a multiple of 256 throws InvalidArgument naming the fix. The Launcher
// and the Session each read it once, at construction, and pass it to pp_launch_slab_n.
int lab_pp_slab_n();

// Launches manifest kernels on device pointers the caller owns (plain layouts or the kernel's,
// as its manifest row says): loads each code object once, keeps the split-K workspace, fills the
// argument blob. Used by GpuGemm, `f4gemm tune` and the C API that bench/ calls.
class Launcher {
public:
    // Split-K tile counters the launcher keeps (256 KB): a split launch with more output tiles (over 65536,
    // e.g. M x N = 8192 x 16384 in 16 x 128 tiles) counts in its zeroed workspace instead.
    static constexpr size_t kCounterSlots = 65536;
    Launcher(Device& dev, Manifest manifest);
    ~Launcher();
    Launcher(const Launcher&) = delete;
    Launcher& operator=(const Launcher&) = delete;

    const Manifest& manifest() const { return manifest_; }
    Device& device() { return dev_; }
    // Loads the code object of kernel `index` (a missing file is named, as asm_f4gemm does).
    void prepare(int index);
    // The memsets the kernel needs (aiter split: D; sm90v1 split: none, or the workspace where the plan's
    // tile counters exceed the counter buffer), then the launch (pre-pass ABIs: <knl_name>_prepass, then the
    // GEMM, in stream order). An sm90v1 split counts its tiles in the launcher's counter buffer
    // (kCounterSlots uint32s, allocated and zeroed at the first such launch, never reallocated, so a recorded
    // graph may keep it; each tile's last CTA resets its counter), so it needs no memset and may start early.
    // `ptr.workspace`: 0 for the launcher's own (grown as needed, so a larger plan may free the one an
    // earlier launch used), else the caller's, of at least plan.workspace_bytes. Asynchronous on the
    // device's stream.
    // `pdl`: the first kernel (the pre-pass of a pre-pass ABI) may start before the kernel ahead of it on the
    // stream completes (programmatic dependent launch), where its code object declares that its kernels wait
    // for their predecessors (F4GEMM_PDL_SYMBOL) and no memset comes between.
    void launch(int index, const LaunchPlan& plan, DevicePointers ptr, int m, int n, int k, float alpha,
                float beta, bool pdl = false);
    // Whether kernel `index` (prepared) may be launched early (its code object's F4GEMM_PDL_SYMBOL).
    bool waits_for_predecessors(int index) const { return pdl_ok_.at(size_t(index)); }

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
    std::vector<void*> bconv_;      // sm90pp2: <knl_name>_bconv per manifest index
    unsigned bconv_ctas_ = 0;   // F4GEMM_BCONV_CTAS, read when an sm90pp2 kernel is prepared; 0: the plan's
    std::vector<bool> pdl_ok_;  // per manifest index: the code object declares F4GEMM_PDL_SYMBOL
    DevPtr workspace_ = 0;
    size_t workspace_bytes_ = 0;
    DevPtr counters_ = 0;  // sm90v1 split-K tile counters, kCounterSlots uint32s, zero between launches
    bool split_counters_ = true;  // F4GEMM_SPLIT_COUNTERS=0 (lab): the workspace memset instead
    int pp_slab_n_ = -1;          // lab_pp_slab_n(): F4GEMM_PP_SLAB_N, -1 unset (pp_launch_slab_n's lab_n)
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
    using Timing = f4gemm::Timing;
    // Poisons D (NaN bf16) unless the kernel accumulates into D, runs once (Graph: replays the recorded
    // runs, the first of which is on set 0), returns set 0's bf16 D [m, n].
    std::vector<uint16_t> run_and_fetch(Timing timing = Timing::Loop);
    // Mean microseconds per run over `iters` runs after `warmup` runs, with device events, rotating
    // over the operand sets.
    double time_us(int iters, int warmup, Timing timing = Timing::Loop);

private:
    // The two public constructors: with its own launcher (own set, shared null) or a shared one.
    GpuGemm(std::unique_ptr<Launcher> own, Launcher* shared, int kernel_index, int log2_k_split,
            const Problem& p);
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
