// The C API (include/f4gemm/f4gemm.h) as bench/ uses it: on a machine without an NVIDIA GPU,
// f4gemm_open must fail cleanly with a one-line reason, and every call must accept a null handle.
// With a GPU, open the built-in kernels and check the kernel list and a selection.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "f4gemm/f4gemm.h"

TEST(CApi, OpenFailsCleanlyWithoutAGpuOrListsKernels) {
    f4gemm_handle* h = f4gemm_open(nullptr, 0);
    if (!std::filesystem::exists("/dev/nvidia0")) {
        ASSERT_EQ(h, nullptr);
        const std::string err = f4gemm_last_error();
        EXPECT_FALSE(err.empty());
        EXPECT_EQ(err.find('\n'), std::string::npos) << err;
        EXPECT_NE(err.find("CUDA"), std::string::npos) << err;
        return;
    }
    ASSERT_NE(h, nullptr) << f4gemm_last_error();
    EXPECT_GT(f4gemm_num_kernels(h), 0);
    EXPECT_GT(f4gemm_num_sms(h), 0);
    int kern = -1, l2 = -1;
    ASSERT_EQ(f4gemm_select(h, 16, 16384, 16384, 0, &kern, &l2), 0) << f4gemm_last_error();
    EXPECT_GE(kern, 0);
    EXPECT_NE(f4gemm_kernel_name(h, kern), nullptr);
    EXPECT_NE(f4gemm_select(h, 16, 100, 16384, 0, &kern, &l2), 0);  // N % 16
    EXPECT_NE(std::string(f4gemm_last_error()).find("N must be a multiple of 16"), std::string::npos);
    f4gemm_close(h);
}

TEST(CApi, NullHandlesAreHarmless) {
    EXPECT_EQ(f4gemm_num_kernels(nullptr), 0);
    EXPECT_EQ(f4gemm_num_sms(nullptr), 0);
    EXPECT_EQ(f4gemm_kernel_name(nullptr, 0), nullptr);
    EXPECT_EQ(f4gemm_kernel_b_layout(nullptr, 0), nullptr);
    int tm = 0, tn = 0, sk = 0;
    EXPECT_NE(f4gemm_kernel_info(nullptr, 0, &tm, &tn, &sk), 0);
    int kern = 0, l2 = 0;
    EXPECT_NE(f4gemm_select(nullptr, 16, 256, 256, 0, &kern, &l2), 0);
    EXPECT_NE(std::string(f4gemm_last_error()).find("null f4gemm handle"), std::string::npos);
    EXPECT_NE(f4gemm_gemm(nullptr, -1, 0, 16, 256, 256, 1.f, 0.f, 0, 0, 0, 0, 0, 0, 0), 0);
    f4gemm_close(nullptr);
}
