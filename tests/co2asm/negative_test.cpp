// Negative tests: a deliberately modified object must fail --check on the right check (and only
// there); don't-care MFMA-scale bits must pass with a note; every bad input must give one line
// `co2asm: <what>: <fix>` on stderr, exit 2 and leave no output file; mutated code objects must
// never crash the reader.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "co2asm_error.hpp"
#include "code_object.hpp"
#include "file_io.hpp"
#include "test_support.hpp"

using namespace co2asm_test;

namespace {

const std::string kFixture = "gfx950_mfma_scale.s";

struct Built {
    std::unique_ptr<co2asm::ScratchDir> dir;
    std::string original;  // assembled fixture
    std::string source;    // co2asm's .s
};

// Assembles the gfx950 fixture and converts it (no reassembly yet).
Built build_and_convert(const std::string& target_id = "gfx950", int cov = 6) {
    Built b;
    b.dir = std::make_unique<co2asm::ScratchDir>();
    b.original = b.dir->path() + "/orig.co";
    b.source = b.dir->path() + "/orig.s";
    const auto as = assemble(fixture_dir() + "/" + kFixture, target_id, cov, b.original);
    EXPECT_EQ(as.exit_code, 0) << as.err;
    const auto conv = run_co2asm({b.original, "-o", b.source});
    EXPECT_EQ(conv.exit_code, 0) << conv.err;
    return b;
}

struct CheckRun {
    int exit_code = 0;
    std::vector<std::string> lines;  // the four check lines
};

CheckRun run_check(const std::string& a, const std::string& b) {
    const auto r = run_co2asm({"--check", a, b});
    CheckRun c{r.exit_code, lines_of(r.out)};
    if (c.lines.size() > 4) c.lines.resize(4);
    return c;
}

// Exactly check `failing` (1-based) differs, and --check exits 1.
void expect_only_check_fails(const CheckRun& run, int failing, const std::string& detail) {
    EXPECT_EQ(run.exit_code, 1);
    const auto& lines = run.lines;
    ASSERT_EQ(lines.size(), 4u);
    for (int i = 1; i <= 4; ++i) {
        const std::string& l = lines[i - 1];
        if (i == failing) {
            EXPECT_TRUE(contains(l, "DIFFERS")) << l;
            EXPECT_TRUE(contains(l, detail)) << l << " should mention " << detail;
        } else {
            EXPECT_TRUE(contains(l, ": identical")) << l;
        }
    }
}

std::string replace_once(std::string text, const std::string& from, const std::string& to) {
    const size_t pos = text.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    if (pos != std::string::npos) text.replace(pos, from.size(), to);
    return text;
}

// Edits co2asm's .s, reassembles it and returns the rebuilt object's path.
std::string rebuild_edited(const Built& b, const std::string& from, const std::string& to,
                           const std::string& target_id = "gfx950", int cov = 6) {
    const std::string edited = b.dir->path() + "/edited.s";
    write_text(edited, replace_once(read_text(b.source), from, to));
    const std::string object = b.dir->path() + "/edited.co";
    const auto as = assemble(edited, target_id, cov, object);
    EXPECT_EQ(as.exit_code, 0) << as.err;
    return object;
}

}  // namespace

TEST(CheckDetectsEdits, ChangedDescriptorByteFailsCheck2) {
    CO2ASM_REQUIRE_CLANG();
    const Built b = build_and_convert();
    const std::string rebuilt = rebuild_edited(b, "\n", "\n");  // unedited rebuild
    auto bytes = read_bytes(rebuilt);
    const uint64_t kd = file_offset_of(rebuilt, symbol_address(rebuilt, "preload_kernel.kd"));
    bytes[kd + 48] ^= 0x01;  // COMPUTE_PGM_RSRC1 bit 0: one more VGPR granule
    write_bytes(rebuilt, bytes);
    expect_only_check_fails(run_check(b.original, rebuilt), 2,
                            "preload_kernel.kd byte 48 (COMPUTE_PGM_RSRC1)");
}

TEST(CheckDetectsEdits, EditedDescriptorDirectiveFailsCheck2) {
    CO2ASM_REQUIRE_CLANG();
    const Built b = build_and_convert();
    const std::string rebuilt =
        rebuild_edited(b, ".amdhsa_group_segment_fixed_size 65536", ".amdhsa_group_segment_fixed_size 32768");
    expect_only_check_fails(run_check(b.original, rebuilt), 2, "GROUP_SEGMENT_FIXED_SIZE");
}

TEST(CheckDetectsEdits, ChangedInstructionFailsCheck3) {
    CO2ASM_REQUIRE_CLANG();
    const Built b = build_and_convert();
    const std::string rebuilt = rebuild_edited(b, "s_mov_b32 s14, 0\n", "s_mov_b32 s14, 1\n");
    expect_only_check_fails(run_check(b.original, rebuilt), 3, "'s_mov_b32 s14, 0' vs 's_mov_b32 s14, 1'");
}

TEST(CheckDetectsEdits, PatchedInstructionBytesFailCheck3) {
    CO2ASM_REQUIRE_CLANG();
    const Built b = build_and_convert();
    const std::string rebuilt = rebuild_edited(b, "\n", "\n");
    auto bytes = read_bytes(rebuilt);
    // s_nop 7 (BF800007) after label_0040 becomes s_nop 6.
    const uint64_t off = file_offset_of(rebuilt, symbol_address(rebuilt, "label_0040"));
    ASSERT_EQ(bytes[off], 0x07);
    bytes[off] = 0x06;
    write_bytes(rebuilt, bytes);
    expect_only_check_fails(run_check(b.original, rebuilt), 3, "s_nop 7");
}

TEST(CheckDetectsEdits, EditedMetadataFailsCheck4) {
    CO2ASM_REQUIRE_CLANG();
    const Built b = build_and_convert();
    const std::string rebuilt =
        rebuild_edited(b, ".max_flat_workgroup_size: 256", ".max_flat_workgroup_size: 1024");
    expect_only_check_fails(run_check(b.original, rebuilt), 4, ".max_flat_workgroup_size");
}

TEST(CheckDetectsEdits, OtherTargetIdOrVersionFailsCheck1Only) {
    CO2ASM_REQUIRE_CLANG();
    const Built b = build_and_convert();
    // Rebuilt without the target id's features: e_flags 0x54f -> 0x64f, nothing else moves on gfx950.
    std::string rebuilt = rebuild_edited(b, "amdgcn-amd-amdhsa--gfx950\"",
                                         "amdgcn-amd-amdhsa--gfx950:xnack-\"", "gfx950:xnack-", 6);
    expect_only_check_fails(run_check(b.original, rebuilt), 1, "e_flags 0x54f (gfx950) vs 0x64f");
    // A v6 object rebuilt as v4 differs only in the ELF header (reference doc).
    rebuilt =
        rebuild_edited(b, ".amdhsa_code_object_version 6", ".amdhsa_code_object_version 4", "gfx950", 4);
    expect_only_check_fails(run_check(b.original, rebuilt), 1, "ABI version 4 vs 2");
}

TEST(DontCareBits, MfmaScaleOpSelBitsPassWithACount) {
    CO2ASM_REQUIRE_CLANG();
    co2asm::ScratchDir dir;
    const std::string clean = dir.path() + "/clean.co";
    ASSERT_EQ(assemble(fixture_dir() + "/" + kFixture, "gfx950", 6, clean).exit_code, 0);
    // What another assembler may leave: bits 13/14 set in the 0xD3AC first dword of each
    // v_mfma_scale (both bits in the first, bit 13 in the second).
    auto bytes = read_bytes(clean);
    const auto elf = co2asm::ElfFile::read(clean);
    const auto* text = elf.find_section(".text");
    std::vector<uint64_t> mfma;
    for (uint64_t off = text->offset; off + 4 <= text->offset + text->size; off += 4) {
        uint32_t w;
        std::memcpy(&w, &bytes[off], 4);
        if ((w >> 16) == 0xD3AC) mfma.push_back(off);
    }
    ASSERT_EQ(mfma.size(), 2u);
    bytes[mfma[0] + 1] |= 0x60;
    bytes[mfma[1] + 1] |= 0x20;
    const std::string original = dir.path() + "/orig.co";
    write_bytes(original, bytes);

    const auto conv = run_co2asm({original, "-o", dir.path() + "/out.s"});
    ASSERT_EQ(conv.exit_code, 0) << conv.out << conv.err;
    EXPECT_TRUE(contains(conv.out, "4/4 checks pass (3 don't-care MFMA-scale bits)")) << conv.out;
    EXPECT_FALSE(contains(conv.out, "emitted as")) << conv.out;
    ASSERT_EQ(run_shell(printed_reassemble_command(conv.out), dir.path()).exit_code, 0);
    const std::string rebuilt = dir.path() + "/out.rebuilt.co";
    const auto r = run_co2asm({"--check", original, rebuilt});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "[3/4] code (.text) disassembly: identical (")) << r.out;
    EXPECT_TRUE(
        contains(r.out, "3 don't-care MFMA-scale op_sel bits re-encoded in 2 v_mfma_scale instructions"))
        << r.out;
    // LLVM 22 encodes the bits as 0: the rebuilt object equals the clean one.
    EXPECT_EQ(read_bytes(rebuilt), read_bytes(clean));
}

// ---- bad input ---------------------------------------------------------------------------------

namespace {

// Runs co2asm, expects exit 2 and a single `co2asm: <what>: <fix>` stderr line containing
// `expect`, and that `dir` holds exactly `files_before` afterwards.
void expect_one_line_error(const std::vector<std::string>& args, const std::string& expect,
                           const std::string& dir, const std::vector<std::string>& files_before) {
    const auto r = run_co2asm(args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(r.err.compare(0, 8, "co2asm: "), 0) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << r.err;
    EXPECT_TRUE(contains(r.err, expect)) << r.err << " should mention " << expect;
    EXPECT_GE(std::count(r.err.begin(), r.err.end(), ':'), 2) << "no fix given: " << r.err;
    EXPECT_EQ(list_dir(dir), files_before) << "co2asm left a file behind";
}

}  // namespace

TEST(BadInput, NotAnElf) {
    co2asm::ScratchDir dir;
    const std::string path = dir.path() + "/notes.co";
    write_text(path, "just some text, not a code object\n");
    expect_one_line_error({path}, "not an ELF file", dir.path(), {"notes.co"});
}

TEST(BadInput, NotAmdgpuAndTruncated) {
    CO2ASM_REQUIRE_CLANG();
    co2asm::ScratchDir dir;
    const std::string good = dir.path() + "/good.co";
    ASSERT_EQ(assemble(fixture_dir() + "/gfx1200_kernel.s", "gfx1200", 6, good).exit_code, 0);
    auto bytes = read_bytes(good);

    auto x86 = bytes;
    x86[18] = 62;  // e_machine EM_X86_64
    write_bytes(dir.path() + "/x86.co", x86);
    write_bytes(dir.path() + "/head.co", std::vector<uint8_t>(bytes.begin(), bytes.begin() + 40));
    write_bytes(dir.path() + "/cut.co", std::vector<uint8_t>(bytes.begin(), bytes.end() - 100));
    auto v3 = bytes;
    v3[8] = 1;  // ABI version 1: code object v3
    write_bytes(dir.path() + "/v3.co", v3);
    const auto files = list_dir(dir.path());
    expect_one_line_error({dir.path() + "/x86.co"}, "not an AMDGPU code object (e_machine 62", dir.path(),
                          files);
    expect_one_line_error({dir.path() + "/head.co"}, "truncated", dir.path(), files);
    expect_one_line_error({dir.path() + "/cut.co"}, "truncated", dir.path(), files);
    expect_one_line_error({dir.path() + "/v3.co"}, "code object v3", dir.path(), files);
    expect_one_line_error({dir.path() + "/missing.co"}, "cannot open", dir.path(), files);
}

TEST(BadInput, NoKernelAndNoMetadata) {
    CO2ASM_REQUIRE_CLANG();
    co2asm::ScratchDir dir;
    const std::string meta =
        "\t.amdgpu_metadata\n---\namdhsa.kernels: []\namdhsa.target: amdgcn-amd-amdhsa--gfx942\n"
        "amdhsa.version:\n  - 1\n  - 2\n...\n\t.end_amdgpu_metadata\n";
    const std::string function =
        "\t.text\n\t.globl f\n\t.p2align 8\n\t.type f,@function\nf:\n\ts_setpc_b64 s[30:31]\n";
    write_text(dir.path() + "/nokernel.s", function + meta);
    write_text(
        dir.path() + "/nometa.s",
        "\t.text\n\t.globl k\n\t.p2align 8\n\t.type k,@function\nk:\n\ts_endpgm\n\t.rodata\n\t.p2align 6\n"
        "\t.amdhsa_kernel k\n\t\t.amdhsa_next_free_vgpr 1\n\t\t.amdhsa_next_free_sgpr 1\n"
        "\t\t.amdhsa_accum_offset 4\n\t.end_amdhsa_kernel\n");
    ASSERT_EQ(assemble(dir.path() + "/nokernel.s", "gfx942", 6, dir.path() + "/nokernel.co").exit_code, 0);
    ASSERT_EQ(assemble(dir.path() + "/nometa.s", "gfx942", 6, dir.path() + "/nometa.co").exit_code, 0);
    const auto files = list_dir(dir.path());
    expect_one_line_error({dir.path() + "/nokernel.co"}, "no kernel", dir.path(), files);
    expect_one_line_error({dir.path() + "/nometa.co"}, "no AMDGPU metadata note", dir.path(), files);
    // --check reads both files the same way.
    expect_one_line_error({"--check", dir.path() + "/nometa.co", dir.path() + "/nometa.co"},
                          "no AMDGPU metadata note", dir.path(), files);
}

TEST(BadInput, ToolsMissingAndOutputNotWritable) {
    CO2ASM_REQUIRE_CLANG();
    co2asm::ScratchDir dir;
    const std::string good = dir.path() + "/good.co";
    ASSERT_EQ(assemble(fixture_dir() + "/gfx1100_wave32.s", "gfx1100", 5, good).exit_code, 0);
    const auto files = list_dir(dir.path());
    expect_one_line_error({good, "--llvm-bin", dir.path() + "/no-such-dir"}, "llvm-objdump not found",
                          dir.path(), files);
    expect_one_line_error({good, "-o", dir.path() + "/no-such-dir/out.s"}, "cannot write", dir.path(), files);
    expect_one_line_error({good, "-o", dir.path()}, "cannot write", dir.path(), files);  // a directory
    expect_one_line_error({good, "--mcpu", "gfx9999"}, "--mcpu gfx9999", dir.path(), files);
    expect_one_line_error({}, "no input file", dir.path(), files);
    expect_one_line_error({"--check", good}, "--check", dir.path(), files);
}

TEST(BadInput, MutatedCodeObjectsNeverCrashTheReader) {
    CO2ASM_REQUIRE_CLANG();
    co2asm::ScratchDir dir;
    const std::string good = dir.path() + "/good.co";
    ASSERT_EQ(assemble(fixture_dir() + "/gfx90a_three_kernels.s", "gfx90a", 5, good).exit_code, 0);
    const auto bytes = read_bytes(good);
    std::mt19937 rng(1234);  // fixed seed: the same mutations every run
    size_t accepted = 0;
    size_t rejected = 0;
    for (int i = 0; i < 3000; ++i) {
        auto m = bytes;
        const int flips = 1 + static_cast<int>(rng() % 8);
        for (int f = 0; f < flips; ++f) m[rng() % m.size()] = static_cast<uint8_t>(rng());
        if (i % 10 == 0) m.resize(rng() % m.size());
        try {
            co2asm::describe_code_object(co2asm::ElfFile::parse(std::move(m), "mutant"), std::nullopt);
            ++accepted;
        } catch (const co2asm::Co2asmError&) {
            ++rejected;
        }
    }
    EXPECT_EQ(accepted + rejected, 3000u);
    EXPECT_GT(accepted, 0u);  // most single flips land in code bytes and leave a valid object
    EXPECT_GT(rejected, 0u);
}
