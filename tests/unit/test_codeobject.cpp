// Code-object identification: cubins and PTX built by nvcc at test time for sm_80 and sm_90a,
// an AMDGPU header, and junk; and the run/refuse rule for CUDA devices.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "f4gemm/codeobject.hpp"
#include "f4gemm/error.hpp"

using namespace f4gemm;

TEST(CodeObject, CubinsAndPtxFromNvcc) {
#ifndef F4GEMM_TEST_CUBIN_DIR
    GTEST_SKIP() << "nvcc not available at build time";
#else
    const std::string dir = F4GEMM_TEST_CUBIN_DIR;
    const CodeObjectInfo c80 = inspect_code_object(dir + "/tiny_sm80.cubin");
    EXPECT_EQ(c80.kind, CodeObjectKind::Cubin);
    EXPECT_EQ(c80.sm, 80);
    const CodeObjectInfo c90 = inspect_code_object(dir + "/tiny_sm90a.cubin");
    EXPECT_EQ(c90.kind, CodeObjectKind::Cubin);
    EXPECT_EQ(c90.sm, 90);
    const CodeObjectInfo p90 = inspect_code_object(dir + "/tiny_sm90a.ptx");
    EXPECT_EQ(p90.kind, CodeObjectKind::Ptx);
    EXPECT_EQ(p90.sm, 90);
    EXPECT_TRUE(p90.arch_specific);
    EXPECT_EQ(p90.target, "sm_90a");

    std::string why;
    EXPECT_TRUE(cuda_can_run(c90, 9, 0, &why));
    EXPECT_FALSE(cuda_can_run(c80, 9, 0, &why));
    EXPECT_NE(why.find("sm_80"), std::string::npos) << why;
    EXPECT_NE(why.find("sm_90"), std::string::npos) << why;
    EXPECT_TRUE(cuda_can_run(c80, 8, 6, &why));    // same major, later minor
    EXPECT_FALSE(cuda_can_run(c90, 10, 0, &why));  // sm_90a SASS does not run on Blackwell
    EXPECT_FALSE(cuda_can_run(p90, 10, 0, &why));  // arch-specific PTX: exactly 9.0
    EXPECT_TRUE(cuda_can_run(p90, 9, 0, &why));
#endif
}

TEST(CodeObject, AmdgpuAndJunk) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "f4gemm_codeobject_test";
    fs::create_directories(dir);
    // A 64-byte ELF64 header: e_machine 224 (AMDGPU), e_flags mach 0x04f (gfx950).
    unsigned char h[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 64, 4};
    const uint16_t machine = 224;
    const uint32_t flags = 0x54f;
    std::memcpy(h + 18, &machine, 2);
    std::memcpy(h + 48, &flags, 4);
    std::ofstream(dir / "k.co", std::ios::binary).write(reinterpret_cast<char*>(h), 64);
    const CodeObjectInfo amd = inspect_code_object((dir / "k.co").string());
    EXPECT_EQ(amd.kind, CodeObjectKind::Amdgpu);
    EXPECT_EQ(amd.target, "gfx950");
    std::string why;
    EXPECT_FALSE(cuda_can_run(amd, 9, 0, &why));
    EXPECT_NE(why.find("gfx950"), std::string::npos);

    std::ofstream(dir / "junk.bin") << "not a code object";
    EXPECT_EQ(inspect_code_object((dir / "junk.bin").string()).kind, CodeObjectKind::Unknown);
    std::ofstream(dir / "trunc.co", std::ios::binary).write(reinterpret_cast<char*>(h), 20);
    EXPECT_THROW(inspect_code_object((dir / "trunc.co").string()), Error);
    try {
        inspect_code_object((dir / "absent.cubin").string());
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::NotFound);
        EXPECT_NE(std::string(e.what()).find("absent.cubin"), std::string::npos);
    }
    fs::remove_all(dir);
}
