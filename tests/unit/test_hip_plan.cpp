// Everything the HIP backend would pass to hipModuleLaunchKernel for asm_f4gemm's 51 regression
// cases (run_tests.sh: 8 heuristic shapes, the 35 kernels forced at 300x2048x1024, 8 split-K runs),
// checked on the CPU against values derived by hand from the seed spec (sections 3-6): the kernel,
// the 0x174 kernarg bytes, grid, gdz, buffer sizes. Plus: the HIP plugin loads and reports no device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "f4gemm/abi.hpp"
#include "f4gemm/error.hpp"
#include "f4gemm/heuristic.hpp"
#include "f4gemm/manifest.hpp"
#include "f4gemm/runtime.hpp"

using namespace f4gemm;

namespace {

const Manifest& aiter() {
    static const Manifest m = [] {
        std::string p = F4GEMM_AITER_CSV;
        return load_manifest(p.substr(0, p.find_last_of('/')));
    }();
    return m;
}

// Buffer sizes by hand: A = round_up(M,256)*K/2, B = round_up(N,256)*K/2, sn = round_up(K/32,8),
// SA = round_up(M,256)*sn, SB = round_up(N,256)*sn, D = round_up(M,32)*N*2 (seed spec section 6).
struct Sizes {
    int m, n, k;
    size_t a, b, sa, sb, d;
    uint32_t sn;
};
const Sizes kSizes[] = {
    {128, 1024, 1024, 256 * 512, 1024 * 512, 256 * 32, 1024 * 32, 128 * 1024 * 2, 32},
    {256, 2048, 2048, 256 * 1024, 2048 * 1024, 256 * 64, 2048 * 64, 256 * 2048 * 2, 64},
    {300, 2048, 1024, 512 * 512, 2048 * 512, 512 * 32, 2048 * 32, 320 * 2048 * 2, 32},
    {1, 4096, 2048, 256 * 1024, 4096 * 1024, 256 * 64, 4096 * 64, 32 * 4096 * 2, 64},
    {17, 512, 256, 256 * 128, 512 * 128, 256 * 8, 512 * 8, 32 * 512 * 2, 8},
    {512, 1024, 2048, 512 * 1024, 1024 * 1024, 512 * 64, 1024 * 64, 512 * 1024 * 2, 64},
    {2048, 8192, 1024, 2048 * 512, 8192 * 512, 2048 * 32, 8192 * 32, 2048 * 8192 * 2, 32},
    {4096, 4096, 512, 4096 * 256, 4096 * 256, 4096 * 16, 4096 * 16, 4096 * 4096 * 2, 16},
    {256, 1024, 4096, 256 * 2048, 1024 * 2048, 256 * 128, 1024 * 128, 256 * 1024 * 2, 128},
};

const Sizes& sizes_for(int m, int n, int k) {
    for (const Sizes& s : kSizes)
        if (s.m == m && s.n == n && s.k == k) return s;
    throw std::runtime_error("no hand-derived sizes for this shape");
}

struct Case {
    std::string desc;
    int m, n, k;
    std::string kernel;  // --kernel (co_name), empty = heuristic
    int bpre;            // --bpreshuffle
    int splitk;          // --splitk
    // expected, by hand
    int index;
    std::string co;
    unsigned gx, gy, gz;
    int log2;
    int k_per_split;
    bool zero_out;
};

std::string co_of(const std::string& tile, bool pre = true) {
    return std::string("f4gemm_bf16_per1x32Fp4_") + (pre ? "BpreShuffle_" : "noBpreShuffle_") + tile + ".co";
}

std::vector<Case> regression_cases() {
    std::vector<Case> c;
    // == heuristic kernel selection over a shape sweep == (256 CUs, --splitk 0, --bpreshuffle 1)
    c.push_back(
        {"heuristic 128x1024x1024", 128, 1024, 1024, "", 1, 0, 34, co_of("96x640"), 2, 2, 1, 0, 1024, false});
    c.push_back(
        {"heuristic 256x2048x2048", 256, 2048, 2048, "", 1, 0, 34, co_of("96x640"), 4, 3, 1, 0, 2048, false});
    c.push_back(
        {"heuristic 300x2048x1024", 300, 2048, 1024, "", 1, 0, 34, co_of("96x640"), 4, 4, 1, 0, 1024, false});
    c.push_back(
        {"heuristic 1x4096x2048", 1, 4096, 2048, "", 1, 0, 13, co_of("256x128"), 32, 1, 1, 0, 2048, false});
    c.push_back(
        {"heuristic 17x512x256", 17, 512, 256, "", 1, 0, 13, co_of("256x128"), 4, 1, 1, 0, 256, false});
    c.push_back(
        {"heuristic 512x1024x2048", 512, 1024, 2048, "", 1, 0, 34, co_of("96x640"), 2, 6, 1, 0, 2048, false});
    // 256x256 is split-capable; at --splitk 0 it runs one chunk: k_per_split = K, gdz 1, no memset.
    c.push_back({"heuristic 2048x8192x1024", 2048, 8192, 1024, "", 1, 0, 1, co_of("256x256"), 32, 8, 1, 0,
                 1024, false});
    c.push_back({"heuristic 4096x4096x512", 4096, 4096, 512, "", 1, 0, 1, co_of("256x256"), 16, 16, 1, 0, 512,
                 false});

    // == every kernel in the manifest (M=300 N=2048 K=1024) == grid (ceil(2048/tN), ceil(300/tM), 1)
    struct Forced {
        int index;
        const char* tile;
        bool pre;
        unsigned gx, gy;
    } forced[] = {
        {0, "256x256", false, 8, 2},  {1, "256x256", true, 8, 2},   {2, "128x512", true, 4, 3},
        {3, "192x256", true, 8, 2},   {4, "224x256", true, 8, 2},   {5, "128x128", true, 16, 3},
        {6, "128x256", true, 8, 3},   {7, "128x384", true, 6, 3},   {8, "160x128", true, 16, 2},
        {9, "160x256", true, 8, 2},   {10, "160x384", true, 6, 2},  {11, "192x128", true, 16, 2},
        {12, "224x128", true, 16, 2}, {13, "256x128", true, 16, 2}, {14, "32x1024", true, 2, 10},
        {15, "32x128", true, 16, 10}, {16, "32x256", true, 8, 10},  {17, "32x384", true, 6, 10},
        {18, "32x512", true, 4, 10},  {19, "32x640", true, 4, 10},  {20, "32x768", true, 3, 10},
        {21, "32x896", true, 3, 10},  {22, "64x1024", true, 2, 5},  {23, "64x128", true, 16, 5},
        {24, "64x256", true, 8, 5},   {25, "64x384", true, 6, 5},   {26, "64x512", true, 4, 5},
        {27, "64x640", true, 4, 5},   {28, "64x768", true, 3, 5},   {29, "64x896", true, 3, 5},
        {30, "96x128", true, 16, 4},  {31, "96x256", true, 8, 4},   {32, "96x384", true, 6, 4},
        {33, "96x512", true, 4, 4},   {34, "96x640", true, 4, 4},
    };
    for (const Forced& f : forced) {
        const std::string name = co_of(f.tile, f.pre);
        c.push_back(
            {name, 300, 2048, 1024, name, f.pre ? 1 : 0, 0, f.index, name, f.gx, f.gy, 1, 0, 1024, false});
    }

    // == splitK == M=256 N=1024 K=4096: k_num 2^L, k_per_split = 4096/2^L (already a multiple of
    // 256), gdz = 2^L, D memset before each launch.
    const int kps[] = {0, 2048, 1024, 512, 256};
    for (int L = 1; L <= 4; ++L) {
        const std::string n256 = co_of("256x256"), n128 = co_of("128x512");
        c.push_back({n256 + " splitk=" + std::to_string(L), 256, 1024, 4096, n256, 1, L, 1, n256, 4, 1,
                     1u << L, L, kps[L], true});
        c.push_back({n128 + " splitk=" + std::to_string(L), 256, 1024, 4096, n128, 1, L, 2, n128, 2, 2,
                     1u << L, L, kps[L], true});
    }
    return c;
}

// The expected 0x174-byte block, written field by field at the offsets of seed spec section 4.
std::vector<uint8_t> expected_kernargs(const DevicePointers& p, uint32_t m, uint32_t n, uint32_t k,
                                       uint32_t sn, int32_t log2) {
    std::vector<uint8_t> b(0x174, 0);
    auto put = [&](size_t off, const void* v, size_t len) { std::memcpy(b.data() + off, v, len); };
    const float alpha = 1.0f, beta = 0.0f;
    put(0x000, &p.d, 8);
    put(0x010, &p.c, 8);
    put(0x020, &p.a, 8);
    put(0x030, &p.b, 8);
    put(0x040, &alpha, 4);
    put(0x050, &beta, 4);
    put(0x060, &n, 4);  // stride_D0
    put(0x080, &n, 4);  // stride_C0
    put(0x0a0, &k, 4);  // stride_A0, fp4 elements
    put(0x0c0, &k, 4);  // stride_B0
    put(0x0e0, &m, 4);
    put(0x0f0, &n, 4);
    put(0x100, &k, 4);
    put(0x110, &p.scale_a, 8);
    put(0x120, &p.scale_b, 8);
    put(0x130, &sn, 4);
    put(0x150, &sn, 4);
    put(0x170, &log2, 4);
    return b;
}

}  // namespace

TEST(HipPlan, FiftyOneRegressionCases) {
    const std::vector<Case> cases = regression_cases();
    ASSERT_EQ(cases.size(), 51u);
    DevicePointers ptr;  // what hipMalloc might return; C stays null as in asm_f4gemm
    ptr.d = 0x7f0000100000ull;
    ptr.a = 0x7f0000200000ull;
    ptr.b = 0x7f0000300000ull;
    ptr.scale_a = 0x7f0000400000ull;
    ptr.scale_b = 0x7f0000500000ull;

    for (const Case& c : cases) {
        SCOPED_TRACE(c.desc);
        // The CLI's selection, as asm_f4gemm's main: a forced kernel runs at max(--splitk, 0).
        int idx = -1, log2 = std::max(c.splitk, 0);
        if (!c.kernel.empty()) {
            idx = find_kernel(aiter(), c.kernel);
        } else {
            HeuristicQuery q;
            q.m = c.m;
            q.n = c.n;
            q.k = c.k;
            q.num_cu = 256;
            q.log2_k_split = c.splitk;
            q.bpreshuffle = c.bpre;
            const HeuristicResult h = select_kernel(aiter(), q);
            idx = h.index;
            log2 = h.log2_k_split;
        }
        ASSERT_EQ(idx, c.index);
        const KernelConfig& kc = aiter().kernels[idx];
        EXPECT_EQ(kc.co_name, c.co);

        const LaunchPlan p = make_launch_plan(kc, c.m, c.n, c.k, log2, false);
        EXPECT_EQ(p.grid.x, c.gx);
        EXPECT_EQ(p.grid.y, c.gy);
        EXPECT_EQ(p.grid.z, c.gz);
        EXPECT_EQ(p.gdz, static_cast<int>(c.gz));
        EXPECT_EQ(p.block.x, 256u);  // 4 x wave64
        EXPECT_EQ(p.block.y, 1u);
        EXPECT_EQ(p.block.z, 1u);
        EXPECT_EQ(p.smem_bytes, 0u);  // 160 KB LDS is static in the code object
        EXPECT_EQ(p.log2_k_split, c.log2);
        EXPECT_EQ(p.k_per_split, c.k_per_split);
        EXPECT_EQ(p.zero_out, c.zero_out);

        const Sizes& s = sizes_for(c.m, c.n, c.k);
        EXPECT_EQ(p.a_bytes, s.a);
        EXPECT_EQ(p.b_bytes, s.b);
        EXPECT_EQ(p.sa_bytes, s.sa);
        EXPECT_EQ(p.sb_bytes, s.sb);
        EXPECT_EQ(p.d_bytes, s.d);
        EXPECT_EQ(p.c_bytes, 0u);
        EXPECT_EQ(p.workspace_bytes, 0u);
        EXPECT_EQ(p.scale_stride, s.sn);
        EXPECT_EQ(p.args_bytes, 0x174u);  // also for noBpreShuffle, whose metadata segment is 368

        // B layout follows the kernel's manifest row, not --bpreshuffle.
        EXPECT_EQ(kc.b_layout,
                  c.co.find("noBpreShuffle") == std::string::npos ? BLayout::Aiter16x16 : BLayout::Plain);
        EXPECT_EQ(kc.scale_layout, ScaleLayout::AiterShuffled);

        const std::vector<uint8_t> blob = make_arg_blob(kc, p, ptr, c.m, c.n, c.k, 1.0f, 0.0f);
        const std::vector<uint8_t> want = expected_kernargs(ptr, c.m, c.n, c.k, s.sn, c.log2);
        ASSERT_EQ(blob.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i)
            if (blob[i] != want[i]) {
                ADD_FAILURE() << "kernarg byte 0x" << std::hex << i << ": got 0x" << int(blob[i])
                              << ", want 0x" << int(want[i]);
                break;
            }
    }
}

TEST(HipPlan, SplitGdzBelowKNum) {
    // Issue 5's example: K=1280 with --splitk 2 on the 256x256 tile -> gdz 3 (k_per_split 512).
    const KernelConfig& kc = aiter().kernels[1];
    const LaunchPlan p = make_launch_plan(kc, 256, 1024, 1280, 2, false);
    EXPECT_EQ(p.grid.x, 4u);
    EXPECT_EQ(p.grid.y, 1u);
    EXPECT_EQ(p.grid.z, 3u);
    EXPECT_EQ(p.k_per_split, 512);
    EXPECT_TRUE(p.zero_out);
    const std::vector<uint8_t> blob = make_arg_blob(kc, p, DevicePointers{}, 256, 1024, 1280, 1.0f, 0.0f);
    int32_t log2 = 0;
    std::memcpy(&log2, blob.data() + 0x170, 4);
    EXPECT_EQ(log2, 2);  // the kernel derives its chunk from log2 itself, so gdz never enters the block
}

TEST(HipPlan, PluginReportsNoDeviceHere) {
    if (!hip_compiled()) GTEST_SKIP() << "HIP backend not compiled in (no libamdhip64-dev at configure time)";
    const int count = hip_device_count();
    if (count > 0) {  // on an AMD machine: the device opens and says what it is
        std::unique_ptr<Device> d = make_hip_device(0);
        EXPECT_EQ(d->props().backend, "hip");
        EXPECT_FALSE(d->props().arch.empty());
        EXPECT_EQ(d->props().arch.find(':'), std::string::npos);
        EXPECT_GT(d->props().num_cu, 0);
        return;
    }
    try {
        make_hip_device(0);
        FAIL() << "make_hip_device succeeded with hip_device_count() == 0";
    } catch (const Error& e) {
        const std::string msg = e.what();
        if (e.code() == Errc::Unsupported && msg.find("plugin not loadable") != std::string::npos)
            GTEST_SKIP() << msg;
        EXPECT_EQ(e.code(), Errc::Device) << msg;
        EXPECT_NE(msg.find("no AMD GPU"), std::string::npos) << msg;
        EXPECT_NE(msg.find("--backend cpu"), std::string::npos) << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
}
