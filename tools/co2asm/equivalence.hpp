// The four round-trip checks between an original code object and its rebuild: (1) ELF header
// (ABI version, e_flags), (2) kernel descriptors byte-identical, (3) code identical as
// disassembly, with byte differences allowed only in the known MFMA-scale don't-care bits, (4)
// metadata note identical. Also the per-instruction/per-descriptor differences the converter's
// self-verification uses to pick what to emit as bytes.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "code_object.hpp"
#include "llvm_tools.hpp"
#include "objdump_parse.hpp"

namespace co2asm {

struct CheckResult {
    std::string name;
    bool pass = false;
    std::string detail;
};

struct EquivalenceReport {
    std::vector<CheckResult> checks;  // always four, in order
    size_t dont_care_bits = 0;
    bool all_pass() const;
};

// Runs objdump/readelf through `tools` for checks 3 and 4.
EquivalenceReport check_equivalence(const CodeObject& original, const CodeObject& rebuilt,
                                    const LlvmTools& tools);

// Byte comparison of one code section, classified with the original's instruction boundaries.
struct CodeByteDiff {
    size_t dont_care_bits = 0;          // differing bits that are MFMA-scale don't-cares
    size_t dont_care_instructions = 0;  // instructions with such bits
    size_t other_bytes = 0;             // differing bytes outside them
    uint64_t first_other_address = 0;
    std::set<uint64_t> other_instructions;  // addresses of instructions with other differences
};

CodeByteDiff diff_code_bytes(const ElfSection& section, ByteView original, ByteView rebuilt,
                             const std::vector<DisasmInstruction>& original_instructions);

// What self-verification needs to refine a render plan.
struct ItemDifferences {
    std::set<std::string> descriptors;                     // kernel names whose 64 bytes differ
    std::set<std::pair<uint32_t, uint64_t>> instructions;  // (original section index, address)
    std::vector<std::string> unfixable;                    // differences no fallback can repair
};

ItemDifferences find_item_differences(const CodeObject& original,
                                      const std::vector<DisasmSection>& original_code,
                                      const CodeObject& rebuilt,
                                      const std::vector<DisasmSection>& rebuilt_code);

// `objdump -d -z` of the code sections (what check 3 and the converter read).
std::string disassemble_code(const LlvmTools& tools, const std::string& path);

}  // namespace co2asm
