// The round trip on fixtures assembled at test time: every `co2asm-variant` of every
// tests/co2asm/fixtures/*.s goes through disassemble (co2asm), reassemble (the command co2asm
// printed), and `co2asm --check`; plus the generated descriptor sweeps, the processor table
// checked against llvm-readelf-22, and words LLVM 22 cannot decode spliced into a gfx12 object.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <sstream>

#include "amdgpu_target.hpp"
#include "code_object.hpp"
#include "file_io.hpp"
#include "fixture_generator.hpp"
#include "test_support.hpp"

using namespace co2asm_test;

namespace {

// Runs co2asm on `object` and the printed command, then --check; asserts each step and that the
// four checks pass. Returns co2asm's stdout.
std::string round_trip(const std::string& dir, const std::string& object, const std::string& target_id,
                       int cov, const std::vector<std::string>& extra_args = {}) {
    std::vector<std::string> args = {object, "-o", dir + "/out.s"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    const auto conv = run_co2asm(args);
    EXPECT_EQ(conv.exit_code, 0) << conv.out << conv.err;
    const std::string command = printed_reassemble_command(conv.out);
    EXPECT_TRUE(contains(command, " -x assembler -target amdgcn-amd-amdhsa -mcpu=" + target_id +
                                      " -mcode-object-version=" + std::to_string(cov) + " "))
        << command;
    const auto rebuilt = run_shell(command, dir);
    EXPECT_EQ(rebuilt.exit_code, 0) << command << "\n" << rebuilt.err;
    const auto check = run_co2asm({"--check", object, dir + "/out.rebuilt.co"});
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
    const auto lines = lines_of(check.out);
    EXPECT_EQ(lines.size(), 5u) << check.out;
    for (size_t i = 0; i < 4 && i < lines.size(); ++i) {
        EXPECT_EQ(lines[i].compare(0, 5, "[" + std::to_string(i + 1) + "/4]"), 0) << lines[i];
        EXPECT_TRUE(contains(lines[i], ": identical")) << lines[i];
    }
    return conv.out;
}

class FixtureRoundTrip : public ::testing::TestWithParam<FixtureVariant> {};

}  // namespace

TEST_P(FixtureRoundTrip, DisassembleReassembleCheck) {
    CO2ASM_REQUIRE_CLANG();
    const FixtureVariant& v = GetParam();
    co2asm::ScratchDir dir;
    const std::string object = dir.path() + "/orig.co";
    const auto as = assemble(fixture_dir() + "/" + v.file, v.target_id, v.code_object_version, object);
    ASSERT_EQ(as.exit_code, 0) << as.err;

    const auto tid = run_co2asm({"--print-target-id", object});
    EXPECT_EQ(tid.exit_code, 0);
    EXPECT_EQ(tid.out, v.target_id + "\n");

    const std::string out = round_trip(dir.path(), object, v.target_id, v.code_object_version);
    // The fix-ups alone must do it: nothing fell back to bytes.
    EXPECT_FALSE(contains(out, "emitted as")) << out;
    EXPECT_TRUE(contains(out, "verified: reassembled with clang and compared, 4/4 checks pass")) << out;

    // Stronger than the four checks: same symbols (local labels stay local, sizes kept) and,
    // built by the same clang, the same file.
    const auto a = co2asm::ElfFile::read(object);
    const auto b = co2asm::ElfFile::read(dir.path() + "/out.rebuilt.co");
    ASSERT_EQ(a.symbols().size(), b.symbols().size());
    for (size_t i = 0; i < a.symbols().size(); ++i) {
        const auto& x = a.symbols()[i];
        const auto& y = b.symbols()[i];
        EXPECT_EQ(x.name, y.name);
        EXPECT_EQ(x.value, y.value) << x.name;
        EXPECT_EQ(x.size, y.size) << x.name;
        EXPECT_EQ(x.bind, y.bind) << x.name;
        EXPECT_EQ(x.type, y.type) << x.name;
        EXPECT_EQ(x.visibility, y.visibility) << x.name;
    }
    const std::string source = read_text(dir.path() + "/out.s");
    for (const auto& sym : a.symbols()) {
        if (sym.bind == co2asm::kStbLocal && !sym.name.empty() && sym.name[0] != '_') {
            EXPECT_FALSE(contains(source, ".globl " + sym.name + "\n")) << sym.name << " was made global";
        }
    }
    EXPECT_EQ(read_bytes(object), read_bytes(dir.path() + "/out.rebuilt.co"));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureRoundTrip, ::testing::ValuesIn(load_fixture_variants()),
                         [](const ::testing::TestParamInfo<FixtureVariant>& info) {
                             return variant_name(info.param);
                         });

TEST(FixtureSet, CoversTheRequiredTargetsAndVersions) {
    std::set<std::string> processors;
    std::set<int> versions;
    for (const auto& v : load_fixture_variants()) {
        processors.insert(v.target_id.substr(0, v.target_id.find(':')));
        versions.insert(v.code_object_version);
    }
    for (const std::string p : {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200"}) {
        EXPECT_EQ(processors.count(p), 1u) << p;
    }
    EXPECT_EQ(versions, (std::set<int>{4, 5, 6}));
}

struct SweepCase {
    std::string target_id;
    co2asm_test::SweepShape shape;
};

void PrintTo(const SweepCase& c, std::ostream* os) {
    *os << c.target_id;
}

class DescriptorSweep : public ::testing::TestWithParam<SweepCase> {};

TEST_P(DescriptorSweep, EveryNextFreeSgprAndUserSgprCountSurvives) {
    CO2ASM_REQUIRE_CLANG();
    const SweepCase& c = GetParam();
    co2asm::ScratchDir dir;
    const std::string processor = c.target_id.substr(0, c.target_id.find(':'));
    write_text(dir.path() + "/sweep.s", descriptor_sweep_source(c.shape, processor));
    const std::string object = dir.path() + "/orig.co";
    const auto as = assemble(dir.path() + "/sweep.s", c.target_id, 6, object);
    ASSERT_EQ(as.exit_code, 0) << as.err;
    // --no-verify: the fix-ups must be right on their own, without the byte fallback.
    const std::string out = round_trip(dir.path(), object, c.target_id, 6, {"--no-verify"});
    EXPECT_FALSE(contains(out, "emitted as")) << out;
    const auto a = co2asm::load_code_object(object, std::nullopt);
    const auto b = co2asm::load_code_object(dir.path() + "/out.rebuilt.co", std::nullopt);
    ASSERT_EQ(a.kernels.size(),
              static_cast<size_t>(c.shape.max_next_free_sgpr + 1 + c.shape.max_user_sgpr_count - 1));
    ASSERT_EQ(a.kernels.size(), b.kernels.size());
    std::set<unsigned> granules;
    for (size_t i = 0; i < a.kernels.size(); ++i) {
        const auto x = co2asm::kernel_descriptor_bytes(a, a.kernels[i]);
        const auto y = co2asm::kernel_descriptor_bytes(b, b.kernels[i]);
        EXPECT_EQ(std::memcmp(x.data, y.data, 64), 0) << a.kernels[i].name;
        granules.insert(a.kernels[i].fields.granulated_wavefront_sgpr_count());
    }
    // gfx9 spreads the sweep over granules 0..13; gfx10+ keeps the field 0.
    EXPECT_EQ(granules.size(), processor.rfind("gfx1", 0) == 0 && processor.size() > 5 ? 1u : 14u);
}

INSTANTIATE_TEST_SUITE_P(Targets, DescriptorSweep,
                         ::testing::Values(SweepCase{"gfx90a", {102, true, true, 16}},
                                           SweepCase{"gfx90a:xnack-", {102, true, true, 16}},
                                           SweepCase{"gfx90a:xnack+", {102, true, true, 16}},
                                           SweepCase{"gfx942", {102, true, false, 16}},
                                           SweepCase{"gfx950:sramecc+:xnack-", {102, true, false, 16}},
                                           SweepCase{"gfx1100", {106, false, false, 16}}),
                         [](const ::testing::TestParamInfo<SweepCase>& info) {
                             return variant_name({".s", info.param.target_id, 6}).substr(1);
                         });

TEST(ProcessorTable, MatchesLlvmReadelf) {
    CO2ASM_REQUIRE_CLANG();
    co2asm::ScratchDir dir;
    const std::string object = dir.path() + "/base.co";
    const auto as = assemble(fixture_dir() + "/gfx1200_kernel.s", "gfx1200", 6, object);
    ASSERT_EQ(as.exit_code, 0) << as.err;
    auto bytes = read_bytes(object);
    const auto tools = co2asm::find_llvm_tools(std::nullopt);
    std::vector<std::string> argv = {tools.readelf, "-h"};
    const auto processors = co2asm::known_processors();
    for (const auto& [mach, name] : processors) {
        bytes[48] = static_cast<uint8_t>(mach);  // e_flags low byte: EF_AMDGPU_MACH
        const std::string path = dir.path() + "/" + name + ".co";
        write_bytes(path, bytes);
        argv.push_back(path);
    }
    const auto r = co2asm::run_process(argv);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    size_t index = 0;
    size_t checked = 0;
    for (const auto& line : lines_of(r.out)) {
        if (!contains(line, "Flags:")) continue;
        ASSERT_LT(index, processors.size());
        const std::string& name = processors[index++].second;
        // LLVM 22 no longer names gfx940/gfx941 (merged into gfx942); every other entry must agree.
        if (name == "gfx940" || name == "gfx941") continue;
        EXPECT_TRUE(contains(line, ", " + name)) << line << " expected " << name;
        ++checked;
    }
    EXPECT_EQ(index, processors.size());
    EXPECT_GT(checked, 50u);
}

// ---- self-verification fallbacks -----------------------------------------------------------------

namespace {

// Converts, rebuilds with the printed command and --checks `object`; returns co2asm's stdout.
std::string convert_rebuild_check(const std::string& dir, const std::string& object) {
    const auto conv = run_co2asm({object, "-o", dir + "/out.s"});
    EXPECT_EQ(conv.exit_code, 0) << conv.out << conv.err;
    EXPECT_TRUE(contains(conv.out, "verified: reassembled with clang and compared, 4/4 checks pass"))
        << conv.out;
    EXPECT_EQ(run_shell(printed_reassemble_command(conv.out), dir).exit_code, 0);
    const auto check = run_co2asm({"--check", object, dir + "/out.rebuilt.co"});
    EXPECT_EQ(check.exit_code, 0) << check.out;
    return conv.out;
}

}  // namespace

TEST(SelfVerification, InstructionThatDoesNotReencodeIsKeptAsLong) {
    CO2ASM_REQUIRE_CLANG();
    co2asm::ScratchDir dir;
    const std::string clean = dir.path() + "/clean.co";
    ASSERT_EQ(assemble(fixture_dir() + "/gfx950_mfma_scale.s", "gfx950", 6, clean).exit_code, 0);
    // s_waitcnt lgkmcnt(0) is BF8CC07F on gfx9; bit 7 is unused, so objdump prints the same text
    // and clang encodes it back without the bit.
    auto bytes = read_bytes(clean);
    const uint8_t waitcnt[] = {0x7f, 0xc0, 0x8c, 0xbf};
    auto it = std::search(bytes.begin(), bytes.end(), std::begin(waitcnt), std::end(waitcnt));
    ASSERT_NE(it, bytes.end());
    *it = 0xff;
    const std::string object = dir.path() + "/orig.co";
    write_bytes(object, bytes);
    const std::string out = convert_rebuild_check(dir.path(), object);
    EXPECT_TRUE(contains(out, "1 of 27 instructions emitted as .long")) << out;
    EXPECT_TRUE(contains(read_text(dir.path() + "/out.s"), "\t.long 0xbf8cc0ff  // s_waitcnt lgkmcnt(0)\n"));
    EXPECT_EQ(read_bytes(object), read_bytes(dir.path() + "/out.rebuilt.co"));
}

TEST(SelfVerification, DescriptorFieldWithoutDirectiveIsKeptAsData) {
    CO2ASM_REQUIRE_CLANG();
    co2asm::ScratchDir dir;
    const std::string object = dir.path() + "/orig.co";
    ASSERT_EQ(assemble(fixture_dir() + "/gfx1100_wave32.s", "gfx1100", 5, object).exit_code, 0);
    // COMPUTE_PGM_RSRC3 bit 10 (TRAP_ON_START on gfx11): objdump can only print it as a comment.
    auto bytes = read_bytes(object);
    const uint64_t rsrc3 =
        file_offset_of(object, symbol_address(object, "wave32_kernel.kd")) + co2asm::kKdRsrc3;
    bytes[rsrc3 + 1] |= 0x04;
    write_bytes(object, bytes);
    const std::string out = convert_rebuild_check(dir.path(), object);
    EXPECT_TRUE(contains(
        out, "kernel descriptor of wave32_kernel emitted as data: descriptor field TRAP_ON_START = 1"))
        << out;
    EXPECT_FALSE(contains(out, "wave64_kernel emitted")) << out;
    EXPECT_TRUE(contains(read_text(dir.path() + "/out.s"), "\t.quad wave32_kernel-wave32_kernel.kd  //"));
    EXPECT_EQ(read_bytes(object), read_bytes(dir.path() + "/out.rebuilt.co"));
}

TEST(SelfVerification, McpuOverrideChangesOnlyTheHeader) {
    CO2ASM_REQUIRE_CLANG();
    co2asm::ScratchDir dir;
    const std::string object = dir.path() + "/orig.co";
    ASSERT_EQ(assemble(fixture_dir() + "/gfx950_mfma_scale.s", "gfx950", 6, object).exit_code, 0);
    const auto conv = run_co2asm({object, "-o", dir.path() + "/out.s", "--mcpu", "gfx950:xnack-"});
    ASSERT_EQ(conv.exit_code, 0) << conv.err;
    EXPECT_TRUE(contains(conv.out, "the ELF header follows --mcpu gfx950:xnack-, not the object's gfx950"))
        << conv.out;
    const std::string command = printed_reassemble_command(conv.out);
    EXPECT_TRUE(contains(command, "-mcpu=gfx950:xnack- ")) << command;
    ASSERT_EQ(run_shell(command, dir.path()).exit_code, 0);
    const auto check = run_co2asm({"--check", object, dir.path() + "/out.rebuilt.co"});
    EXPECT_EQ(check.exit_code, 1);
    EXPECT_TRUE(
        contains(check.out, "[1/4] ELF header: DIFFERS: e_flags 0x54f (gfx950) vs 0x64f (gfx950:xnack-)"))
        << check.out;
    EXPECT_TRUE(contains(check.out, "[2/4] kernel descriptors: identical")) << check.out;
}

// ---- words LLVM 22 cannot decode --------------------------------------------------------------------

namespace {

std::string hex(uint64_t v) {
    std::ostringstream s;
    s << "0x" << std::hex << v;
    return s.str();
}

class UndecodedWords : public ::testing::TestWithParam<std::string> {};

}  // namespace

// gfx1250 code objects hold words LLVM 22's disassembler rejects; objdump prints them as `.long`.
// Spliced here into the gfx12 fixture: 0xbfff0000 and 0xbf7f0000 are SOPP opcodes without an
// instruction on gfx1200 and gfx1250 (llvm-objdump-22 prints `.long 0xbfff0000`).
TEST_P(UndecodedWords, AreMarkedCountedAndLocated) {
    CO2ASM_REQUIRE_CLANG();
    const std::string target = GetParam();
    co2asm::ScratchDir dir;
    const std::string clean = dir.path() + "/clean.co";
    ASSERT_EQ(assemble(fixture_dir() + "/gfx1200_kernel.s", target, 6, clean).exit_code, 0);
    const uint64_t kernel = symbol_address(clean, "rdna4_kernel");
    auto bytes = read_bytes(clean);
    // (offset in the kernel, the instruction there, the undecodable word put in its place)
    const struct {
        uint64_t offset;
        uint32_t was;
        uint32_t word;
    } splices[] = {{0x08, 0xbfc70000u, 0xbfff0000u},   // s_wait_kmcnt 0x0
                   {0x20, 0x80048104u, 0xbfff0000u},   // s_add_co_u32 s4, s4, 1
                   {0x24, 0xbf0a8304u, 0xbf7f0000u}};  // s_cmp_lt_u32 s4, 3
    for (const auto& s : splices) {
        const uint64_t at = file_offset_of(clean, kernel + s.offset);
        uint32_t v = 0;
        std::memcpy(&v, bytes.data() + at, 4);
        ASSERT_EQ(v, s.was) << "fixture layout changed at +" << hex(s.offset);
        std::memcpy(bytes.data() + at, &s.word, 4);
    }
    const std::string object = dir.path() + "/orig.co";
    write_bytes(object, bytes);

    const auto conv = run_co2asm({object, "-o", dir.path() + "/out.s"});
    ASSERT_EQ(conv.exit_code, 0) << conv.out << conv.err;
    EXPECT_TRUE(contains(conv.out, "[co2asm] 3 word(s) of code not decoded by LLVM 22, in 1 region(s)"))
        << conv.out;
    EXPECT_TRUE(contains(conv.out,
                         "4/4 checks pass; 3 word(s) not decoded by LLVM 22 are raw .long, "
                         "not editable instructions\n"))
        << conv.out;
    EXPECT_TRUE(contains(conv.err, "co2asm: warning: 3 word(s) in kernel rdna4_kernel (.text " +
                                       hex(kernel + 0x08) + "-" + hex(kernel + 0x28) +
                                       ", 2 run(s)) not decoded by LLVM 22"))
        << conv.err;
    EXPECT_FALSE(contains(conv.out, "emitted as")) << conv.out;  // no fallback: the bytes come back

    const std::string source = read_text(dir.path() + "/out.s");
    const std::string comment = "  // not decoded by LLVM 22: raw word, not editable as an instruction\n";
    size_t marked = 0;
    for (size_t p = source.find(comment); p != std::string::npos; p = source.find(comment, p + 1)) ++marked;
    EXPECT_EQ(marked, 3u) << source;
    EXPECT_TRUE(contains(source, "\n\t.long 0xbfff0000" + comment + "\t.long 0xbf7f0000" + comment))
        << source;
    EXPECT_TRUE(contains(source, "// 3 word(s) of code were not decoded by LLVM 22")) << source;

    ASSERT_EQ(run_shell(printed_reassemble_command(conv.out), dir.path()).exit_code, 0);
    const auto check = run_co2asm({"--check", object, dir.path() + "/out.rebuilt.co"});
    EXPECT_EQ(check.exit_code, 0) << check.out;
    EXPECT_TRUE(
        contains(check.out, "identical (7 instructions, 3 words LLVM 22 cannot decode, bytes identical)"))
        << check.out;
    EXPECT_EQ(read_bytes(object), read_bytes(dir.path() + "/out.rebuilt.co"));
}

INSTANTIATE_TEST_SUITE_P(Gfx12, UndecodedWords, ::testing::Values("gfx1200", "gfx1250"));
