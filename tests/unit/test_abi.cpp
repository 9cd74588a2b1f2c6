// Kernel ABI: every kernarg offset of kernarg.h checked on the bytes make_kernel_args produces (the
// static_asserts pin the struct; these pin the fill), aiter's split-K gdz rule, the split error,
// buffer sizes per layout, and the sm90v1 extension (workspace, num_splits, k_per_split).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "f4gemm/abi.hpp"
#include "f4gemm/error.hpp"

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
