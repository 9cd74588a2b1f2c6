// Kernel ABI: every kernarg offset of kernarg.h checked on the bytes make_kernel_args produces (the
// static_asserts pin the struct; these pin the fill), aiter's split-K gdz rule, the split error,
// buffer sizes per layout, the sm90v1 extension (workspace, num_splits, k_per_split) and the sm90pp1
// pre-pass plan (second launch geometry, pre-pass image size, no split, workspace not zeroed).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "f4gemm/abi.hpp"
#include "f4gemm/error.hpp"
#include "test_util.hpp"

using namespace f4gemm;

namespace {

KernelConfig kernel(int tm, int tn, int split, int bpre) {
    KernelConfig k;
    k.tile_m = tm;
    k.tile_n = tn;
    k.split_k = split;
    k.bpreshuffle = bpre;
    k.b_layout = bpre ? BLayout::Aiter16x16 : BLayout::Plain;
    k.co_name = "t_" + std::to_string(tm) + "x" + std::to_string(tn) + ".co";
    return k;
}

template <typename T>
T at(const std::vector<uint8_t>& b, size_t off) {
    T v;
    std::memcpy(&v, b.data() + off, sizeof v);
    return v;
}

std::vector<uint8_t> bytes_of(const void* p, size_t n) {
    const uint8_t* c = static_cast<const uint8_t*>(p);
    return std::vector<uint8_t>(c, c + n);
}

std::string error_of(const KernelConfig& k, int m, int n, int kk, int L) {
    try {
        make_launch_plan(k, m, n, kk, L, false);
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::InvalidArgument);
        return e.what();
    }
    ADD_FAILURE() << "no error";
    return "";
}

}  // namespace

TEST(Abi, StructSizes) {
    EXPECT_EQ(sizeof(F4gemmKernelArgs), 0x174u);
    EXPECT_EQ(sizeof(F4gemmSm90Args), 0x1a0u);
    EXPECT_EQ(offsetof(F4gemmSm90Args, base), 0u);
}

TEST(Abi, EveryFieldAtItsOffset) {
    const KernelConfig k = kernel(256, 256, 1, 1);
    const LaunchPlan p = make_launch_plan(k, 300, 2048, 1024, 2, false);
    DevicePointers ptr;
    ptr.d = 0x1111222233334444ull;
    ptr.c = 0x5555666677778888ull;
    ptr.a = 0x0102030405060708ull;
    ptr.b = 0x1112131415161718ull;
    ptr.scale_a = 0x2122232425262728ull;
    ptr.scale_b = 0x3132333435363738ull;
    const F4gemmKernelArgs a = make_kernel_args(p, ptr, 300, 2048, 1024, 1.5f, -0.25f);
    const std::vector<uint8_t> b = bytes_of(&a, sizeof a);

    EXPECT_EQ(at<uint64_t>(b, 0x000), ptr.d);
    EXPECT_EQ(at<uint64_t>(b, 0x010), ptr.c);
    EXPECT_EQ(at<uint64_t>(b, 0x020), ptr.a);
    EXPECT_EQ(at<uint64_t>(b, 0x030), ptr.b);
    EXPECT_EQ(at<float>(b, 0x040), 1.5f);
    EXPECT_EQ(at<float>(b, 0x050), -0.25f);
    EXPECT_EQ(at<uint32_t>(b, 0x060), 2048u);  // stride_D0 = N (dead in aiter's kernels)
    EXPECT_EQ(at<uint32_t>(b, 0x070), 0u);     // stride_D1
    EXPECT_EQ(at<uint32_t>(b, 0x080), 2048u);  // stride_C0 = N, used for the D store
    EXPECT_EQ(at<uint32_t>(b, 0x090), 0u);
    EXPECT_EQ(at<uint32_t>(b, 0x0a0), 1024u);  // stride_A0 in fp4 elements = K
    EXPECT_EQ(at<uint32_t>(b, 0x0b0), 0u);
    EXPECT_EQ(at<uint32_t>(b, 0x0c0), 1024u);  // stride_B0 = K
    EXPECT_EQ(at<uint32_t>(b, 0x0d0), 0u);
    EXPECT_EQ(at<uint32_t>(b, 0x0e0), 300u);
    EXPECT_EQ(at<uint32_t>(b, 0x0f0), 2048u);
    EXPECT_EQ(at<uint32_t>(b, 0x100), 1024u);
    EXPECT_EQ(at<uint64_t>(b, 0x110), ptr.scale_a);
    EXPECT_EQ(at<uint64_t>(b, 0x120), ptr.scale_b);
    EXPECT_EQ(at<uint32_t>(b, 0x130), 32u);  // round_up(1024/32, 8) bytes
    EXPECT_EQ(at<uint32_t>(b, 0x140), 0u);
    EXPECT_EQ(at<uint32_t>(b, 0x150), 32u);
    EXPECT_EQ(at<uint32_t>(b, 0x160), 0u);
    EXPECT_EQ(at<int32_t>(b, 0x170), 2);

    // Every pad byte is zero (asm_f4gemm memsets the block; aiter leaves garbage).
    const size_t field_offsets[] = {0x000, 0x010, 0x020, 0x030, 0x040, 0x050, 0x060, 0x070,
                                    0x080, 0x090, 0x0a0, 0x0b0, 0x0c0, 0x0d0, 0x0e0, 0x0f0,
                                    0x100, 0x110, 0x120, 0x130, 0x140, 0x150, 0x160, 0x170};
    std::vector<bool> in_field(0x174, false);
    for (size_t off : field_offsets) {
        const bool ptr_slot = off <= 0x030 || off == 0x110 || off == 0x120;
        for (size_t i = 0; i < (ptr_slot ? 8u : 4u); ++i) in_field[off + i] = true;
    }
    for (size_t i = 0; i < 0x174; ++i) {
        if (!in_field[i]) {
            EXPECT_EQ(b[i], 0) << "pad byte 0x" << std::hex << i;
        }
    }
}

TEST(Abi, SplitGdzRule) {
    const KernelConfig k256 = kernel(256, 256, 1, 1);
    // K=1280, L=2: k_num 4, k_per_split round_up(320, 256) = 512, gdz ceil(1280/512) = 3.
    LaunchPlan p = make_launch_plan(k256, 256, 1024, 1280, 2, false);
    EXPECT_EQ(p.k_num, 4);
    EXPECT_EQ(p.k_per_split, 512);
    EXPECT_EQ(p.gdz, 3);
    EXPECT_EQ(p.grid.z, 3u);
    EXPECT_EQ(p.log2_k_split, 2);
    EXPECT_TRUE(p.zero_out);
    // K=256, L=2: k_per_split round_up(64, 256) = 256, gdz 1, but D is still zeroed (k_num > 1).
    p = make_launch_plan(k256, 256, 1024, 256, 2, false);
    EXPECT_EQ(p.k_per_split, 256);
    EXPECT_EQ(p.gdz, 1);
    EXPECT_EQ(p.log2_k_split, 2);
    EXPECT_TRUE(p.zero_out);
    // L=0 on a split-capable kernel.
    p = make_launch_plan(k256, 256, 1024, 4096, 0, false);
    EXPECT_EQ(p.k_num, 1);
    EXPECT_EQ(p.k_per_split, 4096);
    EXPECT_EQ(p.gdz, 1);
    EXPECT_FALSE(p.zero_out);
    // L=4, K=4096: 16 chunks of 256.
    p = make_launch_plan(k256, 256, 1024, 4096, 4, false);
    EXPECT_EQ(p.k_per_split, 256);
    EXPECT_EQ(p.gdz, 16);
    EXPECT_EQ(p.grid.x, 4u);
    EXPECT_EQ(p.grid.y, 1u);
}

TEST(Abi, NonSplitKernelIgnoresSplit) {
    const KernelConfig k = kernel(96, 640, 0, 1);
    for (int L : {-1, 0, 3, 9}) {
        const LaunchPlan p = make_launch_plan(k, 300, 2048, 1280, L, false);
        EXPECT_EQ(p.log2_k_split, 0);
        EXPECT_EQ(p.k_num, 1);
        EXPECT_EQ(p.gdz, 1);
        EXPECT_FALSE(p.zero_out);
        EXPECT_EQ(p.grid.x, 4u);  // ceil(2048/640)
        EXPECT_EQ(p.grid.y, 4u);  // ceil(300/96)
        EXPECT_EQ(p.grid.z, 1u);
        EXPECT_EQ(p.block.x, 256u);
        EXPECT_EQ(p.block.y, 1u);
    }
}

TEST(Abi, SplitErrors) {
    const KernelConfig k = kernel(256, 256, 1, 1);
    std::string e = error_of(k, 256, 1024, 1280, 9);
    EXPECT_EQ(e.rfind("K(1280) % (1 << log2_k_split)(512) != 0", 0), 0u) << e;  // asm_f4gemm's wording
    e = error_of(k, 256, 1024, 256, 40);
    EXPECT_EQ(e.rfind("K(256) % (1 << log2_k_split)(", 0), 0u) << e;
    e = error_of(k, 256, 1024, 256, -1);
    EXPECT_NE(e.find("log2_k_split (got -1)"), std::string::npos) << e;
    EXPECT_NE(error_of(k, 0, 1024, 256, 0).find("(got M=0 N=1024 K=256)"), std::string::npos);
    EXPECT_NE(error_of(k, 1, 1024, 100, 0).find("K (got 100)"), std::string::npos);
}

TEST(Abi, BufferSizes) {
    KernelConfig k = kernel(96, 640, 0, 1);
    LaunchPlan p = make_launch_plan(k, 300, 2048, 1024, 0, false);
    EXPECT_EQ(p.a_bytes, 512u * 512u);  // round_up(300,256) rows x K/2
    EXPECT_EQ(p.b_bytes, 2048u * 512u);
    EXPECT_EQ(p.scale_stride, 32u);  // round_up(1024/32, 8)
    EXPECT_EQ(p.sa_bytes, 512u * 32u);
    EXPECT_EQ(p.sb_bytes, 2048u * 32u);
    EXPECT_EQ(p.d_bytes, 320u * 2048u * 2u);  // round_up(300,32) rows bf16
    EXPECT_EQ(p.c_bytes, 0u);
    EXPECT_EQ(p.workspace_bytes, 0u);
    EXPECT_EQ(p.args_bytes, 0x174u);

    // K/32 = 9 is not a multiple of 8: aiter pads the scale columns to 16, plain keeps 9.
    p = make_launch_plan(k, 1, 16, 288, 0, true);
    EXPECT_EQ(p.a_bytes, 256u * 144u);
    EXPECT_EQ(p.b_bytes, 256u * 144u);
    EXPECT_EQ(p.scale_stride, 16u);
    EXPECT_EQ(p.sa_bytes, 256u * 16u);
    EXPECT_EQ(p.d_bytes, 32u * 16u * 2u);
    EXPECT_EQ(p.c_bytes, 1u * 16u * 2u);
    k.scale_layout = ScaleLayout::Plain;
    p = make_launch_plan(k, 1, 16, 288, 0, true);
    EXPECT_EQ(p.scale_stride, 9u);
    EXPECT_EQ(p.sa_bytes, 256u * 9u);
    EXPECT_EQ(p.sb_bytes, 256u * 9u);
}

TEST(Abi, Sm90v1Extension) {
    KernelConfig k = kernel(128, 256, 1, 0);
    k.abi = KernelAbi::Sm90v1;
    k.arch = "sm_90a";
    k.threads = 384;
    k.smem_bytes = 200704;
    // M=300 N=1000 K=3072 L=2: grid (4, 3), k_per_split round_up(768,256) = 768, gdz 4.
    const LaunchPlan p = make_launch_plan(k, 300, 1000, 3072, 2, false);
    EXPECT_EQ(p.grid.x, 4u);
    EXPECT_EQ(p.grid.y, 3u);
    EXPECT_EQ(p.grid.z, 4u);
    EXPECT_EQ(p.block.x, 384u);
    EXPECT_EQ(p.smem_bytes, 200704u);
    EXPECT_EQ(p.k_per_split, 768);
    EXPECT_FALSE(p.zero_out);  // reduced in the fp32 workspace, D overwritten
    // fp32 partials [4][3*128][4*256] + 12 tile counters.
    EXPECT_EQ(p.workspace_bytes, 4u * 384u * 1024u * 4u + 12u * 4u);
    EXPECT_EQ(sm90_workspace_bytes(k, 300, 1000, 4), p.workspace_bytes);
    EXPECT_EQ(sm90_workspace_bytes(k, 300, 1000, 1), 0u);
    EXPECT_EQ(p.args_bytes, 0x1a0u);

    DevicePointers ptr;
    ptr.d = 0xd0;
    ptr.a = 0xa0;
    ptr.workspace = 0xabcdef000ull;
    const std::vector<uint8_t> blob = make_arg_blob(k, p, ptr, 300, 1000, 3072, 1.0f, 0.0f);
    ASSERT_EQ(blob.size(), 0x1a0u);
    const F4gemmKernelArgs prefix = make_kernel_args(p, ptr, 300, 1000, 3072, 1.0f, 0.0f);
    EXPECT_EQ(std::memcmp(blob.data(), &prefix, 0x174), 0);
    for (size_t i = 0x174; i < 0x180; ++i) EXPECT_EQ(blob[i], 0);
    EXPECT_EQ(at<uint64_t>(blob, 0x180), 0xabcdef000ull);
    EXPECT_EQ(at<uint64_t>(blob, 0x188), p.workspace_bytes);
    EXPECT_EQ(at<uint32_t>(blob, 0x190), 4u);
    EXPECT_EQ(at<uint32_t>(blob, 0x194), 768u);
    EXPECT_EQ(at<uint32_t>(blob, 0x198), 0u);
    EXPECT_EQ(at<uint32_t>(blob, 0x19c), 0u);

    // Without a split the workspace pointer and size are 0.
    const LaunchPlan q = make_launch_plan(k, 300, 1000, 3072, 0, false);
    const F4gemmSm90Args s = make_sm90_args(q, ptr, 300, 1000, 3072, 1.0f, 0.0f);
    EXPECT_EQ(s.ptr_workspace, 0u);
    EXPECT_EQ(s.workspace_bytes, 0u);
    EXPECT_EQ(s.num_splits, 1u);
    EXPECT_EQ(s.k_per_split, 3072u);
}

TEST(Abi, Sm90v1WorkspaceZeroingAndNoPrepass) {
    KernelConfig k = kernel(128, 256, 1, 0);
    k.abi = KernelAbi::Sm90v1;
    k.threads = 384;
    // Split (L=2, gdz 4 as above): the partials and counters need zeroing before the launch, unless the
    // launch brings a counter buffer for the plan's 3 x 4 tiles (ptr_counters at 0x198; the Launcher's).
    LaunchPlan p = make_launch_plan(k, 300, 1000, 3072, 2, false);
    EXPECT_EQ(p.gdz, 4);
    EXPECT_TRUE(p.zero_workspace);
    EXPECT_EQ(p.counter_slots, 12u);  // ceil(300 / 128) x ceil(1000 / 256)
    EXPECT_EQ(p.pre_grid.x, 0u);      // one launch only
    EXPECT_EQ(p.pre_block.x, 0u);
    DevicePointers sp;
    sp.workspace = 0x1234000ull;
    sp.counters = 0x5678000ull;
    std::vector<uint8_t> sblob = make_arg_blob(k, p, sp, 300, 1000, 3072, 1.0f, 0.0f);
    EXPECT_EQ(at<uint64_t>(sblob, 0x180), 0x1234000ull);
    EXPECT_EQ(at<uint64_t>(sblob, 0x198), 0x5678000ull);
    sp.counters = 0;  // none: the kernel counts after the partials in the (zeroed) workspace
    sblob = make_arg_blob(k, p, sp, 300, 1000, 3072, 1.0f, 0.0f);
    EXPECT_EQ(at<uint64_t>(sblob, 0x198), 0u);
    // No split: no workspace, nothing to zero, and the blob's workspace slots stay 0.
    p = make_launch_plan(k, 300, 1000, 3072, 0, false);
    EXPECT_EQ(p.workspace_bytes, 0u);
    EXPECT_FALSE(p.zero_workspace);
    EXPECT_EQ(p.pre_grid.x, 0u);
    DevicePointers ptr;
    ptr.workspace = 0x1234000ull;
    const std::vector<uint8_t> blob = make_arg_blob(k, p, ptr, 300, 1000, 3072, 1.0f, 0.0f);
    ASSERT_EQ(blob.size(), 0x1a0u);
    EXPECT_EQ(at<uint64_t>(blob, 0x180), 0u);
    EXPECT_EQ(at<uint64_t>(blob, 0x188), 0u);
    EXPECT_EQ(at<uint32_t>(blob, 0x190), 1u);
    EXPECT_EQ(p.counter_slots, 0u);
    ptr.counters = 0x5678000ull;  // ignored without a split
    EXPECT_EQ(at<uint64_t>(make_arg_blob(k, p, ptr, 300, 1000, 3072, 1.0f, 0.0f), 0x198), 0u);
    // aiter's split zeroes D, never a workspace.
    const LaunchPlan a = make_launch_plan(kernel(256, 256, 1, 1), 256, 1024, 1280, 2, false);
    EXPECT_TRUE(a.zero_out);
    EXPECT_EQ(a.workspace_bytes, 0u);
    EXPECT_FALSE(a.zero_workspace);
    EXPECT_EQ(a.pre_grid.x, 0u);
}

namespace {

// The f4gemm_sm90a_pp_128x128 row of kernels/sm90a/CMakeLists.txt: 128 * (1 + 128/64) threads,
// smem 6 stages * (128 + 128) * 128 + 16 * 6 + 4 * (128 + 128) + 1024 = 198752.
KernelConfig pp_128x128() {
    KernelConfig k = kernel(128, 128, 0, 0);
    k.abi = KernelAbi::Sm90pp1;
    k.arch = "sm_90a";
    k.threads = 384;
    k.smem_bytes = 198752;
    k.scale_layout = ScaleLayout::Plain;
    k.knl_name = "f4gemm_sm90a_pp_128x128";
    return k;
}

// Device pointers of a pp launch, made up (the plan never dereferences them), with a workspace
DevicePointers pp_pointers() {
    DevicePointers ptr = test::made_up_pointers();
    ptr.workspace = 0x7f0000100000ull;
    return ptr;
}

}  // namespace

TEST(Abi, Sm90pp1LaunchPlan) {
    const KernelConfig k = pp_128x128();
    // M=300 N=2064 K=1024: tiles_m 3, tiles_n 17 (2064 = 16 * 128 + 16), Mr = 384, Nr = 2176.
    for (int L : {0, 3}) {  // non-split kernel: L is ignored
        const LaunchPlan p = make_launch_plan(k, 300, 2064, 1024, L, false);
        EXPECT_EQ(p.grid.x, 17u);
        EXPECT_EQ(p.grid.y, 3u);
        EXPECT_EQ(p.grid.z, 1u);
        EXPECT_EQ(p.block.x, 384u);
        EXPECT_EQ(p.smem_bytes, 198752u);
        EXPECT_EQ(p.gdz, 1);
        EXPECT_EQ(p.log2_k_split, 0);
        EXPECT_EQ(p.k_per_split, 1024);
        EXPECT_FALSE(p.zero_out);
        // Pre-pass: one warp per row, 8 rows per 256-thread CTA: (384 + 2176) / 8 = 320 CTAs.
        EXPECT_EQ(p.pre_grid.x, 320u);
        EXPECT_EQ(p.pre_grid.y, 1u);
        EXPECT_EQ(p.pre_grid.z, 1u);
        EXPECT_EQ(p.pre_block.x, 256u);
        EXPECT_EQ(p.pre_block.y, 1u);
        EXPECT_EQ(p.pre_block.z, 1u);
        // e5m2 images (384 + 2176) x 1024 bytes, then one uint32 per row: 2621440 + 10240.
        EXPECT_EQ(p.workspace_bytes, 2631680u);
        EXPECT_FALSE(p.zero_workspace);  // the pre-pass writes every byte of it
        EXPECT_EQ(p.args_bytes, 0x1a0u);
        // The operand buffers are the sm90v1 ones (rows padded to 256, plain scales).
        EXPECT_EQ(p.a_bytes, 512u * 512u);
        EXPECT_EQ(p.b_bytes, 2304u * 512u);
        EXPECT_EQ(p.scale_stride, 32u);
    }
    EXPECT_EQ(sm90pp_workspace_bytes(k, 300, 2064, 1024), 2631680u);
    // M=1 N=16 K=256: Mr = Nr = 128; 256 * 256 + 4 * 256 bytes, 256 / 8 = 32 pre-pass CTAs.
    const LaunchPlan s = make_launch_plan(k, 1, 16, 256, 0, false);
    EXPECT_EQ(s.grid.x, 1u);
    EXPECT_EQ(s.grid.y, 1u);
    EXPECT_EQ(s.workspace_bytes, 66560u);
    EXPECT_EQ(s.pre_grid.x, 32u);
    // The pre-pass grid rounds up: tiles 4 x 12 (not a real config), M=1 N=1: Mr + Nr = 16 -> 2 CTAs;
    // tiles 4 x 8: 12 rows -> 2 CTAs (the last one half idle).
    KernelConfig odd = k;
    odd.tile_m = 4;
    odd.tile_n = 12;
    EXPECT_EQ(make_launch_plan(odd, 1, 1, 256, 0, false).pre_grid.x, 2u);
    odd.tile_n = 8;
    EXPECT_EQ(make_launch_plan(odd, 1, 1, 256, 0, false).pre_grid.x, 2u);
    EXPECT_EQ(sm90pp_workspace_bytes(odd, 1, 1, 256), 12u * 256u + 4u * 12u);
    // Degenerate inputs give 0 rather than wrapping.
    EXPECT_EQ(sm90pp_workspace_bytes(k, 0, 16, 256), 0u);
    EXPECT_EQ(sm90pp_workspace_bytes(k, 1, 16, 0), 0u);
}

TEST(Abi, Sm90pp2LaunchPlanAddsTheConverterAndItsCounters) {
    KernelConfig k = pp_128x128();
    k.abi = KernelAbi::Sm90pp2;
    // M=300 N=2064 K=1024: the sm90pp1 plan, plus 17 B tiles x 8 stages of uint32 ready counters after the
    // row words, and the converter's launch.
    const LaunchPlan p = make_launch_plan(k, 300, 2064, 1024, 0, false);
    const LaunchPlan p1 = make_launch_plan(pp_128x128(), 300, 2064, 1024, 0, false);
    EXPECT_EQ(p.grid.x, p1.grid.x);
    EXPECT_EQ(p.grid.y, p1.grid.y);
    EXPECT_EQ(p.pre_grid.x, 320u);  // the pre-pass still visits every row (B's: row words, counters)
    EXPECT_EQ(p.pre_block.x, 256u);
    EXPECT_EQ(p.workspace_bytes, 2631680u + 4u * 17u * 8u);
    EXPECT_EQ(sm90pp_workspace_bytes(k, 300, 2064, 1024), p.workspace_bytes);
    EXPECT_FALSE(p.zero_workspace);  // the pre-pass zeroes the counters
    EXPECT_EQ(p.bconv_grid.x, kBconvCtas);
    EXPECT_EQ(p.bconv_grid.y, 1u);
    EXPECT_EQ(p.bconv_block.x, kBconvThreads);
    EXPECT_EQ(p1.bconv_grid.x, 0u);  // sm90pp1: no converter
    EXPECT_TRUE(has_prepass(KernelAbi::Sm90pp2));
    EXPECT_TRUE(has_bconv(KernelAbi::Sm90pp2));
    EXPECT_FALSE(has_bconv(KernelAbi::Sm90pp1));
    k.split_k = 1;
    const std::string e = error_of(k, 300, 2064, 1024, 0);
    EXPECT_NE(e.find("(got splitK=1 with abi sm90pp2)"), std::string::npos) << e;
}

TEST(Abi, Sm90pp1RejectsSplitK) {
    KernelConfig k = pp_128x128();
    k.split_k = 1;
    for (int L : {-1, 0, 2}) {  // -1 (--splitk -1 unresolved): the pre-pass error, not the split advice
        const std::string e = error_of(k, 300, 2064, 1024, L);
        EXPECT_NE(e.find("kernel t_128x128.co (got splitK=1 with abi sm90pp1)"), std::string::npos) << e;
        EXPECT_NE(e.find("set splitK to 0 in the manifest"), std::string::npos) << e;
    }
    EXPECT_THROW(make_launch_plan(k, 300, 2064, 1024, 0, false), Error);
}

TEST(Abi, Sm90pp1ArgBlobCarriesTheWorkspace) {
    const KernelConfig k = pp_128x128();
    const LaunchPlan p = make_launch_plan(k, 300, 2064, 1024, 0, false);
    const DevicePointers ptr = pp_pointers();
    const std::vector<uint8_t> blob = make_arg_blob(k, p, ptr, 300, 2064, 1024, 2.0f, 0.0f);
    ASSERT_EQ(blob.size(), 0x1a0u);
    const F4gemmKernelArgs prefix = make_kernel_args(p, ptr, 300, 2064, 1024, 2.0f, 0.0f);
    EXPECT_EQ(std::memcmp(blob.data(), &prefix, 0x174), 0);
    EXPECT_EQ(at<uint32_t>(blob, 0x0e0), 300u);
    EXPECT_EQ(at<uint32_t>(blob, 0x0f0), 2064u);
    EXPECT_EQ(at<uint32_t>(blob, 0x100), 1024u);
    EXPECT_EQ(at<uint32_t>(blob, 0x130), 32u);  // plain scale rows: K/32 bytes
    EXPECT_EQ(at<int32_t>(blob, 0x170), 0);
    for (size_t i = 0x174; i < 0x180; ++i) EXPECT_EQ(blob[i], 0);
    // Without a split the workspace pointer is still passed (sm90v1 passes it only when gdz > 1).
    EXPECT_EQ(at<uint64_t>(blob, 0x180), 0x7f0000100000ull);
    EXPECT_EQ(at<uint64_t>(blob, 0x188), 2631680u);
    EXPECT_EQ(at<uint32_t>(blob, 0x190), 1u);     // num_splits
    EXPECT_EQ(at<uint32_t>(blob, 0x194), 1024u);  // k_per_split = round_up(K, 256)
    EXPECT_EQ(at<uint32_t>(blob, 0x198), 0u);
    EXPECT_EQ(at<uint32_t>(blob, 0x19c), 0u);
    const F4gemmSm90Args s = make_sm90_args(p, ptr, 300, 2064, 1024, 2.0f, 0.0f);
    EXPECT_EQ(s.ptr_workspace, 0x7f0000100000ull);
    EXPECT_EQ(s.workspace_bytes, 2631680u);
}

TEST(Abi, Sm90pp1NSlabs) {
    // M=300 N=2064 K=1024 in slabs of 768: 768, 768, 528 columns. Mr = 384; Nr 768, 768, 640.
    const KernelConfig k = pp_128x128();
    DevicePointers ptr = pp_pointers();
    ptr.c = 0xc0000;
    const std::vector<PpSlabLaunch> s = make_pp_slab_launches(k, ptr, 300, 2064, 1024, 2.0f, 0.5f, true, 768);
    ASSERT_EQ(s.size(), 3u);
    const size_t group = frag16s_group_bytes(1024);  // 64 + 8 * 1088 bytes per 16 rows of W
    EXPECT_EQ(group, 8768u);
    const int n0[3] = {0, 768, 1536}, w[3] = {768, 768, 528};
    const unsigned pre[3] = {(384 + 768) / 8, 768 / 8, (384 + 640) / 8};  // the last slab converts A again
    const unsigned tiles[3] = {6, 6, 5};
    for (int i = 0; i < 3; ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(s[i].n0, n0[i]);
        EXPECT_EQ(s[i].n, w[i]);
        EXPECT_EQ(s[i].pre_grid.x, pre[i]);
        EXPECT_EQ(s[i].grid.x, tiles[i]);
        EXPECT_EQ(s[i].grid.y, 3u);
        ASSERT_EQ(s[i].args.size(), 0x1a0u);
        EXPECT_EQ(at<uint64_t>(s[i].args, 0x000),
                  0xd000u + 2u * n0[i]);  // D and C advanced by n0 bf16 columns
        EXPECT_EQ(at<uint64_t>(s[i].args, 0x010), 0xc0000u + 2u * n0[i]);
        EXPECT_EQ(at<uint64_t>(s[i].args, 0x020), 0xa000u);                         // A whole
        EXPECT_EQ(at<uint64_t>(s[i].args, 0x030), 0xb000u + group * (n0[i] / 16));  // W from group n0 / 16
        EXPECT_EQ(at<uint32_t>(s[i].args, 0x060), 2064u);  // stride_D0, stride_C0: the whole N
        EXPECT_EQ(at<uint32_t>(s[i].args, 0x080), 2064u);
        EXPECT_EQ(at<uint32_t>(s[i].args, 0x0e0), 300u);
        EXPECT_EQ(at<uint32_t>(s[i].args, 0x0f0), uint32_t(w[i]));
        EXPECT_EQ(at<uint32_t>(s[i].args, 0x174), i == 1 ? 1u : 0u);   // prepass_skip_a
        EXPECT_EQ(at<uint64_t>(s[i].args, 0x180), 0x7f0000100000ull);  // one workspace, the slab's size
        EXPECT_EQ(at<uint64_t>(s[i].args, 0x188), sm90pp_workspace_bytes(k, 300, w[i], 1024));
        EXPECT_EQ(at<float>(s[i].args, 0x040), 2.0f);
        EXPECT_EQ(at<float>(s[i].args, 0x050), 0.5f);
    }
    // A slab as wide as N or wider: one launch, the unslabbed plan's grids and block
    const LaunchPlan p = make_launch_plan(k, 300, 2064, 1024, 0, false);
    const std::vector<PpSlabLaunch> one =
        make_pp_slab_launches(k, ptr, 300, 2064, 1024, 1.0f, 0.0f, false, 4096);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].pre_grid.x, p.pre_grid.x);
    EXPECT_EQ(one[0].grid.x, p.grid.x);
    EXPECT_EQ(
        std::memcmp(one[0].args.data(), make_arg_blob(k, p, ptr, 300, 2064, 1024, 1.0f, 0.0f).data(), 0x1a0),
        0);
    // Refusals name the value and the fix
    for (int bad : {0, -128, 64, 200}) {
        try {
            make_pp_slab_launches(k, ptr, 300, 2064, 1024, 1.0f, 0.0f, false, bad);
            ADD_FAILURE() << bad;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("N slab (got " + std::to_string(bad) + ")"),
                      std::string::npos);
            EXPECT_NE(std::string(e.what()).find("multiple of its tile_n (128)"), std::string::npos);
        }
    }
    KernelConfig v1 = kernel(128, 128, 0, 0);
    try {
        make_pp_slab_launches(v1, ptr, 300, 2064, 1024, 1.0f, 0.0f, false, 768);
        ADD_FAILURE();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("for sm90pp1 kernels only"), std::string::npos) << e.what();
    }
}

TEST(Abi, PpSlabWidthAddsNoWaveOnPromotedKernelsOnly) {
    KernelConfig k = pp_128x128();
    k.accum = Accum::Promoted;
    // 132 SMs, 128 x 128 tiles: the narrowest width of 2048..4096 (steps of 256) whose slabs, each in whole
    // waves, take no more waves than the unslabbed grid
    EXPECT_EQ(pp_slab_width(k, 1024, 16384, 8192, 132),
              2048);  // 8 slabs of 128 tiles: 8 waves, as unslabbed (7.8)
    EXPECT_EQ(pp_slab_width(k, 2048, 16384, 8192, 132),
              2048);  // 8 slabs of 256 tiles, 2 waves each: 16 (15.5)
    EXPECT_EQ(pp_slab_width(k, 1000, 8192, 8192, 132), 2048);  // tiles_m 8 as at 1024
    EXPECT_EQ(pp_slab_width(k, 1024, 8191, 8192, 132),
              2048);  // 3 slabs and a ragged one of 2047 columns: 4 (3.9)
    EXPECT_EQ(pp_slab_width(k, 512, 16384, 8192, 132),
              4096);  // 2048 would run 8 waves of 64 tiles against 4 (3.9)
    EXPECT_EQ(pp_slab_width(k, 512, 8192, 8192, 132), 4096);  // two slabs of 128 tiles: 2 waves (1.9)
    EXPECT_EQ(pp_slab_width(k, 512, 10240, 8192, 132),
              3584);  // 112, 112 and 96 tiles: 3 waves (2.4); 4096 also 3
    EXPECT_EQ(pp_slab_width(k, 768, 10240, 8192, 132), 2560);  // four slabs of 120 tiles: 4 waves (3.6)
    EXPECT_EQ(pp_slab_width(k, 768, 16384, 8192, 132),
              2816);  // five of 132 tiles and one of 108: 6 (5.8); 2560: 7
    EXPECT_EQ(pp_slab_width(k, 768, 28672, 8192, 132), 2816);  // ten of 132 and one of 24: 11 (10.2)
    EXPECT_EQ(pp_slab_width(k, 640, 16384, 8192, 132), 3328);  // four of 130 tiles and one of 120: 5 (4.8)
    EXPECT_EQ(pp_slab_width(k, 4096, 28672, 8192, 132),
              0);  // 2048: 14 slabs of 4 waves = 56 against 55 (54.3)
    EXPECT_EQ(pp_slab_width(k, 1152, 16384, 8192, 132),
              0);  // 2048: 144 tiles, a second, nearly empty wave each
    EXPECT_EQ(pp_slab_width(k, 256, 16384, 8192, 132),
              0);  // even waves only from 8192 columns, past the widest
    EXPECT_EQ(pp_slab_width(k, 1024, 2048, 8192, 132), 0);      // no width below N
    EXPECT_EQ(pp_slab_width(k, 1024, 16384, 8192, 114), 0);     // 9 waves unslabbed; every width's take 10+
    EXPECT_EQ(pp_slab_width(k, 1024, 16384, 8192, 128), 2048);  // exactly one wave a slab
    EXPECT_EQ(pp_slab_width(k, 1024, 16384, 8192, 0), 0);
    EXPECT_EQ(pp_slab_width(k, 0, 16384, 8192, 132), 0);
    EXPECT_EQ(pp_slab_width(k, 1024, 16384, 28672, 132), 2048);  // K does not change the count
    EXPECT_EQ(pp_slab_width(k, 1024, 16384, 8191, 132), 0);      // below kPpSlabMinK: not measured
    EXPECT_EQ(pp_slab_width(k, 1024, 8192, 512, 132), 0);
    k.accum = Accum::Exact;  // measured slower in slabs
    EXPECT_EQ(pp_slab_width(k, 1024, 16384, 8192, 132), 0);
    KernelConfig v1 = kernel(128, 128, 0, 0);
    v1.accum = Accum::Promoted;
    EXPECT_EQ(pp_slab_width(v1, 1024, 16384, 8192, 132), 0);  // not sm90pp1
}

// The width a launch uses (the launcher's and --dry-run's one answer): the rule, or the lab knob's value.
TEST(Abi, PpLaunchSlabNIsTheRuleOrTheLabKnob) {
    KernelConfig k = pp_128x128();
    k.accum = Accum::Promoted;
    EXPECT_EQ(pp_launch_slab_n(k, 1024, 16384, 8192, 132, -1), 2048);  // unset: pp_slab_width's
    EXPECT_EQ(pp_launch_slab_n(k, 1024, 16384, 8192, 132, 0), 0);      // 0: none
    EXPECT_EQ(pp_launch_slab_n(k, 1024, 16384, 8192, 132, 4096), 4096);
    EXPECT_EQ(pp_launch_slab_n(k, 1024, 4096, 8192, 132, 4096), 0);     // not below N: one launch
    EXPECT_EQ(pp_launch_slab_n(k, 1024, 4097, 8192, 132, 4096), 4096);  // a ragged last slab of one column
    EXPECT_EQ(pp_launch_slab_n(k, 1024, 16384, 512, 132, 1024), 1024);  // the knob ignores the rule's K floor
    k.accum = Accum::Exact;
    EXPECT_EQ(pp_launch_slab_n(k, 1024, 16384, 8192, 132, -1), 0);       // the rule: promoted only
    EXPECT_EQ(pp_launch_slab_n(k, 1024, 16384, 8192, 132, 2048), 2048);  // the knob: any sm90pp1 kernel
    KernelConfig v1 = kernel(128, 128, 0, 0);
    EXPECT_EQ(pp_launch_slab_n(v1, 1024, 16384, 8192, 132, 2048), 0);  // not sm90pp1: never slabbed
}

TEST(Abi, AiterBlobIsThePrefix) {
    const KernelConfig k = kernel(256, 256, 0, 0);
    const LaunchPlan p = make_launch_plan(k, 17, 512, 256, 0, false);
    DevicePointers ptr;
    ptr.d = 1;
    const std::vector<uint8_t> blob = make_arg_blob(k, p, ptr, 17, 512, 256, 1.0f, 0.0f);
    ASSERT_EQ(blob.size(), 0x174u);
    const F4gemmKernelArgs a = make_kernel_args(p, ptr, 17, 512, 256, 1.0f, 0.0f);
    EXPECT_EQ(std::memcmp(blob.data(), &a, 0x174), 0);
    EXPECT_EQ(at<int32_t>(blob, 0x170), 0);
}

TEST(Abi, Sm90pa1LaunchPlanConvertsAOnly) {
    KernelConfig k = pp_128x128();
    k.abi = KernelAbi::Sm90pa1;
    k.knl_name = "f4gemm_sm90a_pa_128x128";
    // M=300 N=2064 K=1024: Mr = 384 rows of A only -> 48 pre-pass blocks of 8 warps; the workspace is the
    // A image (384 x 1024 bytes) and one word per A row.
    const LaunchPlan p = make_launch_plan(k, 300, 2064, 1024, 0, false);
    EXPECT_EQ(p.grid.x, 17u);
    EXPECT_EQ(p.grid.y, 3u);
    EXPECT_EQ(p.pre_grid.x, 48u);
    EXPECT_EQ(p.pre_grid.y, 1u);  // one K slice of F4GEMM_SM90PA_PREPASS_SLICE_K = 1024
    EXPECT_EQ(p.pre_grid.z, 1u);
    EXPECT_EQ(p.pre_block.x, 256u);
    EXPECT_EQ(p.workspace_bytes, size_t(384) * 1024 + 4 * 384);
    // A warp per (row, K slice): K = 16384 -> 16 slices, K = 1280 -> 2 (the last one a quarter full). The
    // sm90pp1 pre-pass keeps a warp per row (its B items fill the SMs).
    EXPECT_EQ(make_launch_plan(k, 128, 16384, 16384, 0, false).pre_grid.y, 16u);
    EXPECT_EQ(make_launch_plan(k, 128, 16384, 16384, 0, false).pre_grid.x, 16u);
    EXPECT_EQ(make_launch_plan(k, 128, 512, 1280, 0, false).pre_grid.y, 2u);
    EXPECT_EQ(make_launch_plan(pp_128x128(), 128, 512, 16384, 0, false).pre_grid.y, 1u);
    EXPECT_EQ(sm90pa_workspace_bytes(k, 300, 512, 1024), size_t(384) * 1024 + 4 * 384);
    EXPECT_FALSE(p.zero_workspace);
    EXPECT_TRUE(has_prepass(KernelAbi::Sm90pa1));
    EXPECT_TRUE(has_prepass(KernelAbi::Sm90pp1));
    EXPECT_FALSE(has_prepass(KernelAbi::Sm90v1));
    // Split in 4 (the A pre-pass tiles split K): the same pre-pass, K in 4 parts of 256, and the partials (4
    // x 384 x 2176 fp32) and tile counters (17 x 3) after the image, rounded up to 256 bytes.
    k.split_k = 1;
    const LaunchPlan s = make_launch_plan(k, 300, 2064, 1024, 2, false);
    EXPECT_EQ(s.grid.z, 4u);
    EXPECT_EQ(s.k_per_split, 256);
    EXPECT_EQ(s.pre_grid.x, 48u);
    EXPECT_EQ(s.pre_grid.y, 1u);  // the pre-pass converts the whole K whatever the split
    const size_t image = size_t(384) * 1024 + 4 * 384, offset = (image + 255) / 256 * 256;
    EXPECT_EQ(offset, size_t(394752));
    EXPECT_EQ(sm90pa_partials_offset(k, 300, 1024), offset);
    EXPECT_EQ(s.workspace_bytes, offset + size_t(4) * 384 * 2176 * 4 + 17 * 3 * 4);
    EXPECT_EQ(s.workspace_bytes, sm90pa_workspace_bytes(k, 300, 2064, 1024, 4));
    EXPECT_EQ(s.workspace_bytes - offset, sm90_workspace_bytes(k, 300, 2064, 4));
    EXPECT_TRUE(s.zero_workspace);
    EXPECT_EQ(s.counter_slots, size_t(17 * 3));
    // Unsplit (L = 0) on a split-capable kernel: the image only, no memset.
    const LaunchPlan u = make_launch_plan(k, 300, 2064, 1024, 0, false);
    EXPECT_EQ(u.workspace_bytes, image);
    EXPECT_FALSE(u.zero_workspace);
    // The kernels that convert both operands first still refuse a split.
    KernelConfig pp = pp_128x128();
    pp.split_k = 1;
    try {
        make_launch_plan(pp, 300, 2064, 1024, 0, false);
        FAIL() << "splitK=1 with sm90pp1 must be refused";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("abi sm90pp1"), std::string::npos) << e.what();
    }
}
