// The AMDGPU view of a code object: target and code object version from the ELF header, the
// kernels (kernel descriptor symbols from the symbol table, cross-checked with the metadata
// note's `.symbol`s) and the NT_AMDGPU_METADATA note. Rejects what co2asm cannot round-trip with a
// one-line Co2asmError.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "amdgpu_target.hpp"
#include "elf_file.hpp"
#include "msgpack_reader.hpp"

namespace co2asm {

constexpr uint32_t kNtAmdgpuMetadata = 32;
constexpr uint8_t kElfOsAbiAmdgpuHsa = 64;

struct AmdgpuHeader {
    AmdgpuTarget target;    // from e_flags, or from --mcpu when given
    std::string target_id;  // clang -mcpu value
    int code_object_version = 0;
};

// Checks e_machine/OS ABI/ABI version and decodes the target; `mcpu` overrides the target id.
AmdgpuHeader read_amdgpu_header(const ElfFile& elf, const std::optional<std::string>& mcpu);

struct KernelInfo {
    std::string name;       // the kernel's code symbol; its descriptor is `name + ".kd"`
    std::string kd_symbol;  // NAME.kd
    uint32_t kd_section = 0;
    uint64_t kd_address = 0;
    uint64_t entry_address = 0;    // kd address + KERNEL_CODE_ENTRY_BYTE_OFFSET
    bool has_code_symbol = false;  // a symbol `name` sits at entry_address
    bool in_metadata = false;
    KernelDescriptorFields fields;
};

struct CodeObject {
    ElfFile elf;
    AmdgpuHeader header;
    std::vector<KernelInfo> kernels;  // in descriptor address order
    ElfNote metadata_note;
    AmdgpuMetadata metadata;
    std::vector<std::string> warnings;  // things co2asm cannot carry over, said once each
};

CodeObject load_code_object(const std::string& path, const std::optional<std::string>& mcpu);
// Same from bytes already in memory (tests, fuzzing).
CodeObject describe_code_object(ElfFile elf, const std::optional<std::string>& mcpu);

// The 64 descriptor bytes of a kernel (checked to lie in the file by describe_code_object).
ByteView kernel_descriptor_bytes(const CodeObject& co, const KernelInfo& kernel);

}  // namespace co2asm
