// Reading LLVM 22's text output: `llvm-objdump -d` instruction listings, the `.amdhsa_kernel`
// blocks objdump prints for `.kd` symbols, and the metadata YAML `llvm-readelf --notes` prints.
// Pure string processing, so tests can feed it recorded output.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace co2asm {

struct DisasmInstruction {
    uint64_t address = 0;
    std::string text;   // the instruction as objdump prints it, comment and trailing blanks removed
    uint64_t size = 0;  // bytes, from the encoding words in the comment
};

struct DisasmSection {
    std::string name;
    std::vector<DisasmInstruction> instructions;  // in address order
};

// Parses `llvm-objdump -d` output (instruction lines carry `// <hex address>: <encoding>`).
std::vector<DisasmSection> parse_disassembly(const std::string& objdump_output);

// Kernel name -> the lines between `.amdhsa_kernel NAME` and `.end_amdhsa_kernel` (trimmed).
std::map<std::string, std::vector<std::string>> parse_kernel_descriptor_blocks(
    const std::string& objdump_output);

// The YAML document (from `---` to `...`, inclusive) of the first NT_AMDGPU_METADATA note in
// `llvm-readelf --notes` output, without readelf's indentation of the first line.
std::optional<std::string> extract_metadata_yaml(const std::string& readelf_notes_output);

// Disassembly reduced to what check 3 compares: section headers, labels without addresses, and
// instruction text without the address/encoding comment; blank and banner lines dropped.
std::vector<std::string> normalize_disassembly(const std::string& objdump_output);

// Splits `.amdhsa_foo 12` into (".amdhsa_foo", "12"); nullopt for other lines.
std::optional<std::pair<std::string, std::string>> split_directive(const std::string& line);

std::string trim(const std::string& s);
std::vector<std::string> split_lines(const std::string& s);

}  // namespace co2asm
