// The C API (include/f4gemm/f4gemm.h) as bench/ and Python use it: on a machine without an NVIDIA GPU,
// f4gemm_open must fail cleanly with a one-line reason, and every call must accept a null handle and
// bad arguments with a one-line error. The GPU half (test_capi_gpu.cpp) packs and multiplies end to end.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "f4gemm/f4gemm.h"

namespace {
bool has_gpu() {
    return std::filesystem::exists("/dev/nvidia0");
}
std::string last() {
    return f4gemm_last_error();
}
}  // namespace

TEST(CApi, OpenFailsCleanlyWithoutAGpu) {
    if (has_gpu()) GTEST_SKIP() << "a GPU is present: test_capi_gpu covers the open";
    f4gemm_handle* h = f4gemm_open(nullptr, 0);
    ASSERT_EQ(h, nullptr);
    const std::string err = last();
    EXPECT_FALSE(err.empty());
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
    EXPECT_NE(err.find("CUDA"), std::string::npos) << err;
    EXPECT_EQ(f4gemm_open(nullptr, -1), nullptr);
    EXPECT_NE(last().find("device ordinal must be >= 0 (got -1)"), std::string::npos) << last();
}

TEST(CApi, NullHandlesAreHarmless) {
    EXPECT_EQ(f4gemm_num_kernels(nullptr), 0);
    EXPECT_EQ(f4gemm_num_sms(nullptr), 0);
    EXPECT_EQ(f4gemm_kernel_name(nullptr, 0), nullptr);
    EXPECT_EQ(f4gemm_kernel_b_layout(nullptr, 0), nullptr);
    EXPECT_EQ(f4gemm_kernel_accum(nullptr, 0), -1);
    EXPECT_NE(last().find("null f4gemm handle"), std::string::npos);
    EXPECT_EQ(f4gemm_kernel_k(nullptr, 0, 2880), -1);
    EXPECT_EQ(f4gemm_kernel_cw(nullptr, 0, 2880), -1);
    int tm = 0, tn = 0, sk = 0;
    EXPECT_NE(f4gemm_kernel_info(nullptr, 0, &tm, &tn, &sk), 0);
    int kern = 0, l2 = 0;
    EXPECT_NE(f4gemm_select(nullptr, 16, 256, 256, 0, F4GEMM_ACCUM_EXACT, &kern, &l2), 0);
    EXPECT_NE(last().find("null f4gemm handle"), std::string::npos);
    EXPECT_NE(f4gemm_gemm(nullptr, -1, 0, F4GEMM_ACCUM_PROMOTED, 16, 256, 256, 1.f, 0.f, 0, 0, 0, 0, 0, 0),
              0);
    EXPECT_NE(last().find("null f4gemm handle"), std::string::npos);
    EXPECT_NE(f4gemm_set_pdl(nullptr, 1), 0);
    EXPECT_NE(last().find("null f4gemm handle"), std::string::npos);
    EXPECT_NE(f4gemm_pack_weight(nullptr, 1, 1, 256, 256, 1, 0), 0);
    EXPECT_NE(last().find("null f4gemm handle"), std::string::npos);
    EXPECT_EQ(f4gemm_weight_bytes(nullptr, 256, 256), 0u);
    EXPECT_NE(f4gemm_operand_bytes(nullptr, 16, 256, nullptr, nullptr), 0);
    f4gemm_close(nullptr);
}

TEST(CApi, AccumModesAreTheLibrarysCodes) {
    EXPECT_EQ(F4GEMM_ACCUM_EXACT, 0);
    EXPECT_EQ(F4GEMM_ACCUM_PROMOTED, 1);
    // the bound's constant for 128-K chains, as include/f4gemm/accum.hpp computes it (bench.py reads a
    // kernel's own, f4gemm_kernel_cw, which needs a handle)
    EXPECT_DOUBLE_EQ(f4gemm_promoted_cw(16384), 133.0 / 8192 + 128.0 / 16777216);
    EXPECT_DOUBLE_EQ(f4gemm_promoted_cw(3072), 133.0 / 8192 + 24.0 / 16777216);
}
