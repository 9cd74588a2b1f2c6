// libFuzzer target for co2asm's parsers of untrusted bytes: the ELF64 reader (header, section
// headers, symbol table, notes), the NT_AMDGPU_METADATA MessagePack reader and the AMDGPU view on
// top (kernel descriptors, target decoding). Any input must parse or throw Co2asmError; crashes,
// sanitizer reports and other exceptions are findings. Built and run by run.sh (not by CMake).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "co2asm_error.hpp"
#include "code_object.hpp"
#include "elf_file.hpp"
#include "msgpack_reader.hpp"
#include "objdump_parse.hpp"

namespace {

// Reads every byte view the reader hands out, so ASan sees any out-of-bounds view.
unsigned touch(co2asm::ByteView v) {
    unsigned sum = 0;
    for (size_t i = 0; i < v.size; ++i) sum += v.data[i];
    return sum;
}

void exercise_elf(const uint8_t* data, size_t size) {
    const co2asm::ElfFile elf = co2asm::ElfFile::parse(std::vector<uint8_t>(data, data + size), "fuzz");
    unsigned sink = 0;
    for (const auto& s : elf.sections()) {
        sink += touch(elf.section_bytes(s));
        if (auto v = elf.bytes_at_address(s.addr, s.size > 64 ? 64 : s.size)) sink += touch(*v);
    }
    for (const auto& n : elf.notes()) {
        const co2asm::ByteView desc = elf.note_desc(n);
        sink += touch(desc);
        try {
            co2asm::read_amdgpu_metadata(co2asm::parse_msgpack(desc.data, desc.size, "fuzz"));
        } catch (const co2asm::Co2asmError&) {
        }
    }
    for (const auto& sym : elf.symbols()) {
        if (auto v = elf.bytes_at_address(sym.value, 64)) sink += touch(*v);
    }
    const co2asm::CodeObject co = co2asm::describe_code_object(elf, std::nullopt);
    for (const auto& k : co.kernels) sink += touch(co2asm::kernel_descriptor_bytes(co, k));
    static volatile unsigned keep;
    keep = sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        exercise_elf(data, size);
    } catch (const co2asm::Co2asmError&) {
    }
    // The metadata reader on raw bytes too: valid ELF wrappers are rare among mutants.
    try {
        co2asm::read_amdgpu_metadata(co2asm::parse_msgpack(data, size, "fuzz"));
    } catch (const co2asm::Co2asmError&) {
    }
    // The objdump/readelf text parsers see LLVM's output only, but must not fall over on any text.
    const std::string text(reinterpret_cast<const char*>(data), size);
    co2asm::parse_disassembly(text);
    co2asm::normalize_disassembly(text);
    co2asm::parse_kernel_descriptor_blocks(text);
    co2asm::extract_metadata_yaml(text);
    return 0;
}
