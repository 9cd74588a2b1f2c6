// Which launches the Launcher makes early (programmatic dependent launch, docs/KERNELS_SM90.md "Launch
// overlap"), on a stand-in device that records each launch's flag: only kernels whose code object declares
// F4GEMM_PDL_SYMBOL, only where the caller asks, only the GEMM's first kernel (a pre-pass ABI's pre-pass; its
// GEMM kernel then launches plainly) and only where no memset comes between it and the kernel ahead.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <vector>

#include "f4gemm/error.hpp"
#include "f4gemm/kernarg.h"
#include "launcher.hpp"
#include "test_util.hpp"

using namespace f4gemm;
namespace fs = std::filesystem;

namespace {
struct Launch {
    bool early;
    unsigned smem;
    Dim3 grid;
};

class RecordingDevice final : public Device {
public:
    explicit RecordingDevice(bool declares, int num_cu = 0) : declares_(declares) { props_.num_cu = num_cu; }
    const DeviceProps& props() const override { return props_; }
    void* load_module(const std::string&) override { return this; }
    void* get_function(void*, const std::string& s) override { return &names_[s]; }
    bool has_global(void*, const std::string& s) override {
        asked_.push_back(s);
        return declares_ && s == F4GEMM_PDL_SYMBOL;
    }
    void set_dynamic_smem(void*, unsigned) override {}
    DevPtr alloc(size_t) override { return DevPtr(0x1000 * ++allocs_); }
    void free(DevPtr) override {}
    void copy_to_device(DevPtr, const void*, size_t) override {}
    void copy_to_host(void*, DevPtr, size_t) override {}
    void memset(DevPtr, uint8_t, size_t) override { ++memsets_; }
    void launch(void*, Dim3 grid, Dim3, unsigned smem, const void*, size_t, bool overlap_prior) override {
        launches_.push_back({overlap_prior, smem, grid});
    }
    void synchronize() override {}
    void* event_create() override { return this; }
    void event_record(void*) override {}
    float event_elapsed_ms(void*, void*) override { return 0.f; }
    void event_destroy(void*) override {}

    std::vector<Launch> launches_;
    std::vector<std::string> asked_;
    int memsets_ = 0;

private:
    bool declares_;
    DeviceProps props_;
    std::map<std::string, int> names_;
    int allocs_ = 0;
};

// One sm_90a sm90v1 kernel with the given split-K capability (with_abi changes its abi).
Manifest one_kernel(int split_k) {
    return test::one_kernel_manifest(
        fs::temp_directory_path() / "f4gemm_launch_overlap",
        "64,128," + std::to_string(split_k) + ",0,k,k.cubin,sm_90a,384,1000,sm90v1,frag16s,plain");
}

Manifest with_abi(Manifest m, KernelAbi abi) {
    m.kernels.at(0).abi = abi;
    return m;
}

// The launches of one GEMM (64 x 1024 x 4096, `log2_k_split`) with `pdl` asked.

std::vector<Launch> launches(const Manifest& m, bool declares, bool pdl, int log2_k_split = 0,
                             int* memsets = nullptr) {
    RecordingDevice dev(declares);
    Launcher l(dev, m);
    const KernelConfig& kc = m.kernels.at(0);
    const LaunchPlan plan = make_launch_plan(kc, 64, 1024, 4096, log2_k_split, false);
    const DevicePointers ptr = test::made_up_pointers();
    l.launch(0, plan, ptr, 64, 1024, 4096, 1.f, 0.f, pdl);
    l.launch(0, plan, ptr, 64, 1024, 4096, 1.f, 0.f, pdl);  // the flag is read once, at load
    EXPECT_EQ(dev.asked_, std::vector<std::string>{F4GEMM_PDL_SYMBOL});
    EXPECT_EQ(l.waits_for_predecessors(0), declares);
    if (memsets) *memsets = dev.memsets_;
    return dev.launches_;
}

// Does the PTX line touch global memory (a load, store, atomic or copy that is not param, shared, local or
// const only)? Every cp.* copy reads or writes global memory.
bool global_access(const std::string& line) {
    static const std::regex op(R"(^\s*(@!?%p\d+\s+)?(ld|ldu|st|atom|red|prefetch|cp)\.)");
    std::smatch mm;
    if (!std::regex_search(line, mm, op)) return false;
    if (mm[2] == "cp") return true;
    for (const char* space : {".param", ".shared", ".local", ".const"})
        if (line.find(space) != std::string::npos) return false;
    return true;
}
}  // namespace

// The code objects this build wrote (kernels/sm90a): each declares F4GEMM_PDL_GLOBAL, and in every kernel of
// each (the GEMM and its pre-pass) griddepcontrol.wait comes before the first instruction that touches global
// memory, which is what makes an early launch safe after any kernel.
TEST(LaunchOverlap, EveryBuiltKernelWaitsBeforeItTouchesGlobalMemory) {
    Manifest m;
    try {
        m = load_manifest(F4GEMM_SM90A_BUILD_DIR);
    } catch (const Error&) {
        GTEST_SKIP() << "no built sm_90a manifest in " << F4GEMM_SM90A_BUILD_DIR;
    }
    int entries = 0;
    for (const KernelConfig& kc : m.kernels) {
        fs::path ptx = fs::path(m.dir) / kc.co_name;
        ptx.replace_extension(".ptx");
        std::ifstream in(ptx);
        ASSERT_TRUE(in) << ptx;
        std::stringstream ss;
        ss << in.rdbuf();
        const std::string text = ss.str();
        EXPECT_NE(text.find(std::string(".global .align 4 .u32 ") + F4GEMM_PDL_SYMBOL + " = 1;"),
                  std::string::npos)
            << kc.co_name << " does not declare " << F4GEMM_PDL_SYMBOL;
        std::istringstream lines(text);
        std::string line, entry;
        bool waited = true;
        while (std::getline(lines, line)) {
            if (line.find(".entry ") != std::string::npos) {
                EXPECT_TRUE(entry.empty() || waited) << entry << " never waits";
                entry = line.substr(line.find(".entry ") + 7);
                waited = false;
                ++entries;
            } else if (line.find("griddepcontrol.wait") != std::string::npos) {
                waited = true;
            } else if (!entry.empty() && !waited && global_access(line)) {
                ADD_FAILURE() << kc.co_name << ": " << entry
                              << " touches global memory before griddepcontrol.wait: " << line;
                waited = true;  // one report per kernel
            }
        }
        EXPECT_TRUE(entry.empty() || waited) << entry << " never waits";
    }
    EXPECT_GE(entries, int(m.kernels.size()));
}

TEST(LaunchOverlap, OneKernelGemmIsEarlyOnlyWhereAskedAndDeclared) {
    const Manifest m = one_kernel(0);
    for (bool declares : {false, true})
        for (bool pdl : {false, true}) {
            const std::vector<Launch> l = launches(m, declares, pdl);
            ASSERT_EQ(l.size(), 2u);
            for (const Launch& x : l) {
                EXPECT_EQ(x.early, declares && pdl) << "declares " << declares << " pdl " << pdl;
                EXPECT_EQ(x.smem, 1000u);
            }
        }
}

TEST(LaunchOverlap, OnlyThePrepassOfAPrepassAbiIsEarly) {
    for (KernelAbi abi : {KernelAbi::Sm90pa1, KernelAbi::Sm90pp1}) {
        const Manifest m = with_abi(one_kernel(0), abi);
        for (bool declares : {false, true})
            for (bool pdl : {false, true}) {
                const std::vector<Launch> l = launches(m, declares, pdl);
                ASSERT_EQ(l.size(), 4u);  // pre-pass, GEMM, twice
                for (int i = 0; i < 4; i += 2) {
                    EXPECT_EQ(l[i].smem, 0u);  // the pre-pass (static shared memory only)
                    EXPECT_EQ(l[i].early, declares && pdl);
                    EXPECT_EQ(l[i + 1].smem, 1000u);
                    EXPECT_FALSE(l[i + 1].early);  // after its own pre-pass: plain (measured faster)
                }
            }
    }
}

TEST(LaunchOverlap, Sm90pp2LaunchesItsConverterAndGemmEarlyAlways) {
    // sm90pp2: pre-pass (early as any first kernel), then _bconv and the GEMM, both always early: _bconv
    // waits for the pre-pass itself and lets the GEMM start, which waits on _bconv's ready counters.
    const Manifest m = with_abi(one_kernel(0), KernelAbi::Sm90pp2);
    for (bool declares : {false, true})
        for (bool pdl : {false, true}) {
            const std::vector<Launch> l = launches(m, declares, pdl);
            ASSERT_EQ(l.size(), 6u);  // pre-pass, converter, GEMM, twice
            for (int i = 0; i < 6; i += 3) {
                EXPECT_EQ(l[i].smem, 0u);
                EXPECT_EQ(l[i].early, declares && pdl);
                EXPECT_EQ(l[i + 1].smem, 0u);
                EXPECT_TRUE(l[i + 1].early);
                EXPECT_EQ(l[i + 2].smem, 1000u);
                EXPECT_TRUE(l[i + 2].early);
            }
        }
}

// An sm90v1 split counts its tiles in the launcher's counter buffer, zeroed once when it is allocated (the
// tiles' last CTAs reset their counters): no memset per launch, so the split launches early too (PERF.md
// entry 56). A plan with more tiles than the buffer holds counts in its workspace, zeroed before each launch,
// and that memset makes the kernel plain.
TEST(LaunchOverlap, AMemsetAheadMakesTheFirstKernelPlain) {
    const Manifest m = one_kernel(1);
    int memsets = 0;
    const std::vector<Launch> l = launches(m, true, true, 2, &memsets);
    ASSERT_EQ(memsets, 1);  // the counter buffer, at the first split launch only
    ASSERT_EQ(l.size(), 2u);
    for (const Launch& x : l) EXPECT_TRUE(x.early);
    // Unsplit, the same kernel is early and nothing is zeroed.
    const std::vector<Launch> u = launches(m, true, true, 0, &memsets);
    EXPECT_EQ(memsets, 0);
    for (const Launch& x : u) EXPECT_TRUE(x.early);
    // 64 x 128 tiles over M = 1088 (17 tile rows) and N = 524288 (4096 tile columns): 69632 tiles, more than
    // the buffer's 65536.
    RecordingDevice dev(true);
    Launcher big(dev, m);
    const LaunchPlan plan = make_launch_plan(m.kernels.at(0), 1088, 524288, 4096, 1, false);
    ASSERT_GT(plan.counter_slots, Launcher::kCounterSlots);
    const DevicePointers ptr = test::made_up_pointers();
    big.launch(0, plan, ptr, 1088, 524288, 4096, 1.f, 0.f, true);
    EXPECT_EQ(dev.memsets_, 1);  // the workspace (partials and counters), before the launch
    ASSERT_EQ(dev.launches_.size(), 1u);
    EXPECT_FALSE(dev.launches_[0].early);
}

// The lab knob F4GEMM_SPLIT_COUNTERS (PERF.md entries 56, 57: the A/B of the counter buffer in one build): 0
// zeroes the workspace before every split launch, as before the buffer; 1 is the default; any other value is
// an error that names it.
TEST(LaunchOverlap, SplitCountersKnobChoosesTheMemsetAndRejectsOtherValues) {
    const Manifest m = one_kernel(1);
    const char* old = std::getenv("F4GEMM_SPLIT_COUNTERS");
    const std::string saved = old ? old : "";
    setenv("F4GEMM_SPLIT_COUNTERS", "0", 1);
    int memsets = 0;
    const std::vector<Launch> l = launches(m, true, true, 2, &memsets);
    EXPECT_EQ(memsets, 2);  // the workspace, before each of the two launches
    for (const Launch& x : l) EXPECT_FALSE(x.early);
    setenv("F4GEMM_SPLIT_COUNTERS", "1", 1);
    launches(m, true, true, 2, &memsets);
    EXPECT_EQ(memsets, 1);  // the counter buffer, once
    setenv("F4GEMM_SPLIT_COUNTERS", "yes", 1);
    RecordingDevice dev(true);
    try {
        Launcher bad(dev, m);
        ADD_FAILURE() << "F4GEMM_SPLIT_COUNTERS=yes was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("F4GEMM_SPLIT_COUNTERS (got 'yes')"), std::string::npos)
            << e.what();
    }
    if (old)
        setenv("F4GEMM_SPLIT_COUNTERS", saved.c_str(), 1);
    else
        unsetenv("F4GEMM_SPLIT_COUNTERS");
}

// N slabs (docs/ABI_SM90.md "N slabs", PERF.md entry 79): the launcher runs a promoted sm90pp1 GEMM that
// pp_slab_width slabs as a pre-pass and a GEMM per slab, only the first pre-pass early; the exact kernel, a
// device whose SMs a slab would not fill, K below kPpSlabMinK and F4GEMM_PP_SLAB_N=0 launch it whole;
// F4GEMM_PP_SLAB_N=W forces W, and a value that is not a multiple of 256 is an error naming it.
TEST(LaunchOverlap, PromotedPpLaunchesInSlabsOnlyTheFirstPrepassEarly) {
    Manifest m = with_abi(one_kernel(0), KernelAbi::Sm90pp1);
    m.kernels.at(0).tile_m = 128;
    m.kernels.at(0).tile_n = 128;
    const char* old = std::getenv("F4GEMM_PP_SLAB_N");
    const std::string saved = old ? old : "";
    unsetenv("F4GEMM_PP_SLAB_N");
    const auto run = [&](Accum accum, int num_cu, int k = 8192) {
        m.kernels.at(0).accum = accum;
        RecordingDevice dev(true, num_cu);
        Launcher l(dev, m);
        const LaunchPlan plan = make_launch_plan(m.kernels.at(0), 1024, 16384, k, 0, false);
        l.launch(0, plan, test::made_up_pointers(), 1024, 16384, k, 1.f, 0.f, true);
        return dev.launches_;
    };
    const std::vector<Launch> s = run(Accum::Promoted, 132);
    ASSERT_EQ(s.size(), 16u);  // 8 slabs of 2048 columns: 8 x 16 = 128 tiles each
    for (size_t i = 0; i < s.size(); i += 2) {
        SCOPED_TRACE(i);
        EXPECT_EQ(s[i].smem, 0u);  // the pre-pass: A and B's first slab, then B alone
        EXPECT_EQ(s[i].grid.x, i == 0 ? (1024u + 2048u) / 8 : 2048u / 8);
        EXPECT_EQ(s[i].early, i == 0);
        EXPECT_EQ(s[i + 1].smem, 1000u);  // the GEMM of the slab
        EXPECT_EQ(s[i + 1].grid.x, 16u);
        EXPECT_EQ(s[i + 1].grid.y, 8u);
        EXPECT_FALSE(s[i + 1].early);
    }
    EXPECT_EQ(run(Accum::Exact, 132).size(), 2u);     // the exact kernel: whole
    EXPECT_EQ(run(Accum::Promoted, 114).size(), 2u);  // 128 tiles a slab on 114 SMs: every width adds waves
    EXPECT_EQ(run(Accum::Promoted, 132, 4096).size(), 2u);  // K below kPpSlabMinK: whole
    setenv("F4GEMM_PP_SLAB_N", "0", 1);
    EXPECT_EQ(run(Accum::Promoted, 132).size(), 2u);
    setenv("F4GEMM_PP_SLAB_N", "4096", 1);
    EXPECT_EQ(run(Accum::Promoted, 132).size(), 8u);
    EXPECT_EQ(run(Accum::Exact, 132).size(), 8u);          // the knob applies to every sm90pp1 launch
    EXPECT_EQ(run(Accum::Promoted, 132, 512).size(), 8u);  // and at any K
    setenv("F4GEMM_PP_SLAB_N", "100", 1);
    try {
        run(Accum::Promoted, 132);
        ADD_FAILURE() << "F4GEMM_PP_SLAB_N=100 was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("F4GEMM_PP_SLAB_N (got '100')"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("multiple of 256"), std::string::npos) << e.what();
    }
    if (old)
        setenv("F4GEMM_PP_SLAB_N", saved.c_str(), 1);
    else
        unsetenv("F4GEMM_PP_SLAB_N");
}
