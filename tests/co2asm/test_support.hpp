// Shared helpers for the co2asm tests: finding clang-22 (tests skip without it), assembling
// fixtures, running the co2asm binary and reading its output, and byte-level file surgery for
// the deliberately modified objects of the negative tests.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "llvm_tools.hpp"

namespace co2asm_test {

// clang-22: $CO2ASM_TEST_CLANG, else clang-22 on PATH, else /usr/lib/llvm-22/bin/clang.
std::optional<std::string> find_clang();

#define CO2ASM_REQUIRE_CLANG()                                                                             \
    do {                                                                                                   \
        if (!::co2asm_test::find_clang()) {                                                                \
            GTEST_SKIP() << "clang-22 not found (install clang-22 and lld-22, or set CO2ASM_TEST_CLANG): " \
                            "co2asm fixtures are assembled at test time";                                  \
        }                                                                                                  \
    } while (0)

// One line of a fixture header: `// co2asm-variant: <target id> <code object version>`.
struct FixtureVariant {
    std::string file;  // file name inside the fixture directory
    std::string target_id;
    int code_object_version = 0;
};

std::string fixture_dir();
std::vector<FixtureVariant> load_fixture_variants();
void PrintTo(const FixtureVariant& v, std::ostream* os);  // readable gtest parameter names
std::string variant_name(const FixtureVariant& v);        // a gtest-safe name

// Assembles `source` (a path) into `object`; returns clang's result (exit code, stderr).
co2asm::ProcessResult assemble(const std::string& source, const std::string& target_id, int cov,
                               const std::string& object);

co2asm::ProcessResult run_co2asm(const std::vector<std::string>& args);
co2asm::ProcessResult run_shell(const std::string& command, const std::string& cwd);

// The command line co2asm printed after "[co2asm] reassemble with:".
std::string printed_reassemble_command(const std::string& co2asm_stdout);

std::vector<uint8_t> read_bytes(const std::string& path);
void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes);
std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);
bool file_exists(const std::string& path);
// Names in `dir` (no . and ..), to prove no temp/partial file was left.
std::vector<std::string> list_dir(const std::string& dir);

// File offset of virtual address `address` (inside an allocated section) of an ELF file.
uint64_t file_offset_of(const std::string& path, uint64_t address);
// Address of a symbol, or throws.
uint64_t symbol_address(const std::string& path, const std::string& name);

std::vector<std::string> lines_of(const std::string& text);
bool contains(const std::string& haystack, const std::string& needle);

}  // namespace co2asm_test
