// Builds the AMDGPU view of a code object (see code_object.hpp). Kernels are decided from the
// symbol table and the metadata, never from label names: a label such as `label_12` or `main_loop`
// is just a label.
#include "code_object.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "co2asm_error.hpp"

namespace co2asm {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

AmdgpuHeader read_amdgpu_header(const ElfFile& elf, const std::optional<std::string>& mcpu) {
    if (elf.machine() != kEmAmdgpu) {
        throw Co2asmError(fmt::format("{}: not an AMDGPU code object (e_machine {}, AMDGPU is 224)",
                                      elf.label(), elf.machine()),
                          "pass a code object built for an AMD GPU (.co/.hsaco)");
    }
    if (elf.os_abi() != kElfOsAbiAmdgpuHsa) {
        throw Co2asmError(fmt::format("{}: OS ABI {} is not AMDGPU HSA (64)", elf.label(), elf.os_abi()),
                          "co2asm handles amdhsa code objects (amdgcn-amd-amdhsa)");
    }
    AmdgpuHeader h;
    auto cov = code_object_version(elf.abi_version());
    if (!cov) {
        throw Co2asmError(
            fmt::format("{}: ELF ABI version {} is code object v{}, which clang-22 cannot build", elf.label(),
                        elf.abi_version(), elf.abi_version() + 2),
            "co2asm round-trips code object v4, v5 and v6 (ABI version 2, 3, 4)");
    }
    h.code_object_version = *cov;
    if (mcpu) {
        auto t = parse_target_id(*mcpu);
        if (!t) {
            throw Co2asmError(
                fmt::format("--mcpu {} is not a target id co2asm knows", *mcpu),
                "pass a processor with optional features, e.g. gfx950 or gfx942:sramecc+:xnack-");
        }
        h.target = *t;
        h.target_id = *mcpu;
        return h;
    }
    auto t = decode_target(elf.flags());
    if (!t) {
        throw Co2asmError(fmt::format("{}: unknown AMDGPU processor {:#x} in e_flags {:#x}", elf.label(),
                                      elf.flags() & 0xff, elf.flags()),
                          "pass the target id with --mcpu (e.g. --mcpu gfx950)");
    }
    h.target = *t;
    h.target_id = t->target_id();
    return h;
}

CodeObject load_code_object(const std::string& path, const std::optional<std::string>& mcpu) {
    return describe_code_object(ElfFile::read(path), mcpu);
}

CodeObject describe_code_object(ElfFile elf, const std::optional<std::string>& mcpu) {
    CodeObject co{std::move(elf), {}, {}, {}, {}, {}};
    const ElfFile& e = co.elf;
    co.header = read_amdgpu_header(e, mcpu);

    const ElfNote* meta_note = nullptr;
    for (const auto& n : e.notes()) {
        if (n.owner == "AMDGPU" && n.type == kNtAmdgpuMetadata) {
            if (meta_note == nullptr)
                meta_note = &n;
            else
                co.warnings.push_back("more than one NT_AMDGPU_METADATA note; only the first is kept");
        } else {
            co.warnings.push_back(fmt::format("note {} type {} is not regenerated", n.owner, n.type));
        }
    }
    if (meta_note == nullptr) {
        throw Co2asmError(
            fmt::format("{}: no AMDGPU metadata note (NT_AMDGPU_METADATA)", e.label()),
            "co2asm needs the metadata note that clang/hipcc emit; pass a complete code object");
    }
    co.metadata_note = *meta_note;
    const ByteView desc = e.note_desc(*meta_note);
    co.metadata = read_amdgpu_metadata(parse_msgpack(desc.data, desc.size, e.label()));

    std::set<std::string> meta_symbols;
    for (const auto& k : co.metadata.kernels) meta_symbols.insert(k.symbol);

    // Kernel descriptors: STT_OBJECT symbols named *.kd, plus whatever the metadata names.
    std::set<std::string> seen;
    for (const auto& sym : e.symbols()) {
        const bool named_kd = ends_with(sym.name, ".kd") && sym.type == kSttObject;
        if (!named_kd && meta_symbols.count(sym.name) == 0) continue;
        if (sym.name.size() <= 3 || !seen.insert(sym.name).second) continue;
        KernelInfo k;
        k.kd_symbol = sym.name;
        k.name = ends_with(sym.name, ".kd") ? sym.name.substr(0, sym.name.size() - 3) : sym.name;
        k.kd_address = sym.value;
        k.kd_section = sym.shndx;
        const ElfSection* sec = e.section_at(sym.shndx);
        auto bytes = e.bytes_at_address(sym.value, kKernelDescriptorSize);
        if (sec == nullptr || !bytes || !sec->contains(sym.value, kKernelDescriptorSize)) {
            throw Co2asmError(fmt::format("{}: kernel descriptor {} at {:#x} lies outside its section",
                                          e.label(), sym.name, sym.value),
                              "the symbol table is damaged; pass an intact code object");
        }
        k.fields = decode_kernel_descriptor(bytes->data);
        k.entry_address = sym.value + static_cast<uint64_t>(k.fields.entry_offset);
        k.in_metadata = meta_symbols.count(sym.name) != 0;
        for (const auto& s : e.symbols()) {
            if (s.name == k.name && s.value == k.entry_address) k.has_code_symbol = true;
        }
        co.kernels.push_back(std::move(k));
    }
    for (const auto& m : co.metadata.kernels) {
        if (seen.count(m.symbol) == 0) {
            throw Co2asmError(
                fmt::format("{}: metadata names kernel descriptor '{}' but the symbol table has no "
                            "such symbol",
                            e.label(), m.symbol),
                "the code object is stripped or damaged; pass one with its symbol table");
        }
    }
    if (co.kernels.empty()) {
        throw Co2asmError(
            fmt::format("{}: no kernel (no .kd kernel descriptor symbol, no kernel in the metadata)",
                        e.label()),
            "pass a code object that contains at least one kernel");
    }
    std::sort(co.kernels.begin(), co.kernels.end(),
              [](const KernelInfo& a, const KernelInfo& b) { return a.kd_address < b.kd_address; });
    for (const auto& k : co.kernels) {
        if (!k.in_metadata)
            co.warnings.push_back(fmt::format("kernel {} is not listed in the metadata", k.name));
    }
    return co;
}

ByteView kernel_descriptor_bytes(const CodeObject& co, const KernelInfo& kernel) {
    return *co.elf.bytes_at_address(kernel.kd_address, kKernelDescriptorSize);
}

}  // namespace co2asm
