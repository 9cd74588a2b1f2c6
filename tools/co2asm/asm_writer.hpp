// Renders a code object as assembly that clang-22 reassembles into an equivalent object: code
// sections from objdump's instruction text (at their exact addresses, alignment padding turned
// back into .p2align), kernel descriptors as fixed-up `.amdhsa_kernel` blocks, other data as
// bytes, symbols with their binding/type/visibility/size, and the metadata YAML. Any instruction
// or descriptor the plan marks raw is emitted as bytes instead (the self-verification fallback);
// a word objdump could not decode is emitted as `.long` with a comment saying so.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "code_object.hpp"
#include "objdump_parse.hpp"

namespace co2asm {

// Which generated line came from what, so an assembler error or a difference can be traced back.
struct LineOwner {
    enum class Kind { None, Instruction, Descriptor };
    Kind kind = Kind::None;
    uint32_t section = 0;  // Instruction: section index
    uint64_t address = 0;  // Instruction: address
    std::string kernel;    // Descriptor: kernel name
};

struct RenderPlan {
    std::set<std::pair<uint32_t, uint64_t>> raw_instructions;  // (section index, address)
    std::map<std::string, std::string> raw_descriptors;        // kernel -> why
};

struct RenderInput {
    const CodeObject* code_object = nullptr;
    std::vector<DisasmSection> disassembly;                             // objdump -d -z of the code sections
    std::map<std::string, std::vector<std::string>> descriptor_blocks;  // objdump's .amdhsa_kernel blocks
    std::string metadata_yaml;
    std::string source_label;  // shown in the header comment
};

// Words objdump printed as `.long 0x...` because LLVM 22's disassembler rejects them (seen on
// gfx1250 code objects), per section and function: they reassemble to the same bytes, but the .s
// holds no instruction text for them.
struct UndecodedRegion {
    std::string section;
    std::string function;  // the kernel or function symbol at or before the words; empty if none
    bool kernel = false;   // `function` is a kernel's code symbol
    uint64_t begin = 0;    // address of the first word
    uint64_t end = 0;      // one past the last byte of the last word
    size_t words = 0;
    size_t runs = 0;  // maximal runs of consecutive undecoded words
};

// The comment on each undecoded word's `.long` line.
extern const char* const kUndecodedComment;

struct RenderedAssembly {
    std::string text;
    std::vector<LineOwner> owners;                       // owners[i] is line i + 1
    std::map<std::string, std::string> raw_descriptors;  // kernels emitted as bytes, with the reason
    size_t instructions = 0;  // decoded instructions (undecoded words not included)
    size_t raw_instruction_count = 0;
    std::vector<UndecodedRegion> undecoded;  // in section, then address order
    size_t undecoded_words = 0;
};

RenderedAssembly render_assembly(const RenderInput& input, const RenderPlan& plan);

// The directives of one kernel descriptor after co2asm's fix-ups, or an empty vector with `why` set
// when the block cannot carry the descriptor (it is then emitted as bytes).
std::vector<std::string> fix_descriptor_block(const std::vector<std::string>& objdump_lines,
                                              const KernelDescriptorFields& fields,
                                              const AmdgpuTarget& target, std::string* why);

// `name` as an assembler symbol: bare when it is a plain identifier, else quoted.
std::string asm_symbol(const std::string& name);

}  // namespace co2asm
