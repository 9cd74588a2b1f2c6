// The four checks (see equivalence.hpp). Check 3 compares LLVM 22's disassembly with addresses and
// encodings stripped, then the bytes, so a difference objdump hides is still caught; only bits 13/14
// of a v_mfma_scale_* first dword are forgiven (amdgpu_target.hpp says why).
#include "equivalence.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>

namespace co2asm {
namespace {

uint32_t load_u32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

bool is_mfma_scale(const std::string& text) {
    return text.compare(0, 13, "v_mfma_scale_") == 0;
}

int popcount(uint32_t v) {
    int n = 0;
    for (; v != 0; v &= v - 1) ++n;
    return n;
}

std::vector<const ElfSection*> code_sections(const ElfFile& elf) {
    std::vector<const ElfSection*> out;
    for (const auto& s : elf.sections()) {
        if (s.type == kShtProgbits && s.is_alloc() && s.is_exec()) out.push_back(&s);
    }
    return out;
}

const KernelInfo* find_kernel(const CodeObject& co, const std::string& kd_symbol) {
    for (const auto& k : co.kernels) {
        if (k.kd_symbol == kd_symbol) return &k;
    }
    return nullptr;
}

CheckResult check_header(const CodeObject& a, const CodeObject& b) {
    CheckResult r{"ELF header", true, ""};
    const ElfFile& x = a.elf;
    const ElfFile& y = b.elf;
    std::vector<std::string> diffs;
    if (x.abi_version() != y.abi_version()) {
        diffs.push_back(fmt::format("ABI version {} vs {} (code object v{} vs v{})", x.abi_version(),
                                    y.abi_version(), x.abi_version() + 2, y.abi_version() + 2));
    }
    if (x.flags() != y.flags()) {
        auto tx = decode_target(x.flags());
        auto ty = decode_target(y.flags());
        diffs.push_back(fmt::format("e_flags {:#x} ({}) vs {:#x} ({})", x.flags(), tx ? tx->target_id() : "?",
                                    y.flags(), ty ? ty->target_id() : "?"));
    }
    if (x.os_abi() != y.os_abi()) diffs.push_back(fmt::format("OS ABI {} vs {}", x.os_abi(), y.os_abi()));
    if (x.machine() != y.machine())
        diffs.push_back(fmt::format("e_machine {} vs {}", x.machine(), y.machine()));
    if (!diffs.empty()) {
        r.pass = false;
        r.detail = fmt::format("DIFFERS: {}", fmt::join(diffs, "; "));
        return r;
    }
    auto t = decode_target(x.flags());
    r.detail =
        fmt::format("identical (ABI version {} = code object v{}, e_flags {:#x} = {})", x.abi_version(),
                    x.abi_version() + 2, x.flags(), t ? t->target_id() : "unknown processor");
    return r;
}

CheckResult check_descriptors(const CodeObject& a, const CodeObject& b) {
    CheckResult r{"kernel descriptors", true, ""};
    std::vector<std::string> diffs;
    for (const auto& k : a.kernels) {
        const KernelInfo* other = find_kernel(b, k.kd_symbol);
        if (other == nullptr) {
            diffs.push_back(fmt::format("{} missing from the rebuilt object", k.kd_symbol));
            continue;
        }
        const ByteView x = kernel_descriptor_bytes(a, k);
        const ByteView y = kernel_descriptor_bytes(b, *other);
        for (unsigned i = 0; i < kKernelDescriptorSize; ++i) {
            if (x.data[i] == y.data[i]) continue;
            diffs.push_back(fmt::format("{} byte {} ({}) {:#04x} vs {:#04x}", k.kd_symbol, i,
                                        kernel_descriptor_field(i), x.data[i], y.data[i]));
            break;
        }
    }
    for (const auto& k : b.kernels) {
        if (find_kernel(a, k.kd_symbol) == nullptr)
            diffs.push_back(fmt::format("{} only in the rebuilt object", k.kd_symbol));
    }
    if (!diffs.empty()) {
        r.pass = false;
        r.detail = fmt::format("DIFFERS: {}", fmt::join(diffs, "; "));
    } else {
        r.detail = fmt::format("identical ({} x {} bytes)", a.kernels.size(), kKernelDescriptorSize);
    }
    return r;
}

CheckResult check_code(const CodeObject& a, const CodeObject& b, const LlvmTools& tools,
                       size_t* dont_care_bits) {
    CheckResult r{"code (.text) disassembly", true, ""};
    const std::string dis_a = disassemble_code(tools, a.elf.label());
    const std::string dis_b = disassemble_code(tools, b.elf.label());
    const auto lines_a = normalize_disassembly(dis_a);
    const auto lines_b = normalize_disassembly(dis_b);
    const size_t common = std::min(lines_a.size(), lines_b.size());
    size_t first = common;
    size_t differing = 0;
    for (size_t i = 0; i < std::max(lines_a.size(), lines_b.size()); ++i) {
        const bool same = i < common && lines_a[i] == lines_b[i];
        if (!same) {
            ++differing;
            first = std::min(first, i);
        }
    }
    if (differing != 0) {
        r.pass = false;
        r.detail =
            fmt::format("DIFFERS: {} of {} lines; first at line {}: '{}' vs '{}'", differing, lines_a.size(),
                        first + 1, first < lines_a.size() ? trim(lines_a[first]) : "<end>",
                        first < lines_b.size() ? trim(lines_b[first]) : "<end>");
        return r;
    }
    // Same text: now the bytes, where only the known don't-care bits may differ.
    const auto parsed = parse_disassembly(dis_a);
    CodeByteDiff total;
    size_t sections = 0;
    for (const ElfSection* s : code_sections(a.elf)) {
        const ElfSection* t = b.elf.find_section(s->name);
        if (t == nullptr || t->size != s->size) {
            r.pass = false;
            r.detail = fmt::format("DIFFERS: section {} has another size in the rebuilt object", s->name);
            return r;
        }
        std::vector<DisasmInstruction> insns;
        for (const auto& ds : parsed) {
            if (ds.name == s->name) insns = ds.instructions;
        }
        const CodeByteDiff d = diff_code_bytes(*s, a.elf.section_bytes(*s), b.elf.section_bytes(*t), insns);
        total.dont_care_bits += d.dont_care_bits;
        total.dont_care_instructions += d.dont_care_instructions;
        if (d.other_bytes != 0 && total.other_bytes == 0) total.first_other_address = d.first_other_address;
        total.other_bytes += d.other_bytes;
        ++sections;
    }
    *dont_care_bits = total.dont_care_bits;
    if (total.other_bytes != 0) {
        r.pass = false;
        r.detail = fmt::format(
            "DIFFERS: disassembly identical but {} bytes differ outside the known don't-care bits "
            "(first at {:#x})",
            total.other_bytes, total.first_other_address);
        return r;
    }
    size_t insn_lines = 0;
    size_t undecoded_lines = 0;  // objdump's `.long 0x...` for words LLVM 22 cannot decode
    for (const auto& l : lines_a) {
        const bool line_of_code = !l.empty() && l[0] == '\t';
        const bool undecoded = line_of_code && l.size() > 1 && l[1] == '.';
        insn_lines += line_of_code && !undecoded;
        undecoded_lines += undecoded;
    }
    r.detail = fmt::format("identical ({} instructions", insn_lines);
    if (undecoded_lines != 0) r.detail += fmt::format(", {} words LLVM 22 cannot decode", undecoded_lines);
    if (total.dont_care_bits == 0) {
        r.detail += ", bytes identical)";
    } else {
        r.detail += fmt::format(
            "; {} don't-care MFMA-scale op_sel bits re-encoded in {} v_mfma_scale instructions, "
            "not a difference)",
            total.dont_care_bits, total.dont_care_instructions);
    }
    return r;
}

std::string metadata_yaml(const LlvmTools& tools, const std::string& path) {
    return extract_metadata_yaml(run_tool({tools.readelf, "--notes", path}, "reading the metadata note"))
        .value_or("");
}

CheckResult check_metadata(const CodeObject& a, const CodeObject& b, const LlvmTools& tools) {
    CheckResult r{"metadata note", true, ""};
    const ByteView x = a.elf.note_desc(a.metadata_note);
    const ByteView y = b.elf.note_desc(b.metadata_note);
    if (x.size == y.size && std::memcmp(x.data, y.data, x.size) == 0) {
        r.detail =
            fmt::format("identical ({} bytes of msgpack, {} kernels)", x.size, a.metadata.kernels.size());
        return r;
    }
    // Bytes differ: equal YAML still means equal content (e.g. an integer stored wider).
    const auto ya = split_lines(metadata_yaml(tools, a.elf.label()));
    const auto yb = split_lines(metadata_yaml(tools, b.elf.label()));
    if (ya == yb && !ya.empty()) {
        r.detail = fmt::format("identical as YAML ({} lines; msgpack encodings differ: {} vs {} bytes)",
                               ya.size(), x.size, y.size);
        return r;
    }
    r.pass = false;
    size_t i = 0;
    while (i < ya.size() && i < yb.size() && ya[i] == yb[i]) ++i;
    r.detail = fmt::format("DIFFERS: msgpack {} vs {} bytes; first YAML difference at line {}: '{}' vs '{}'",
                           x.size, y.size, i + 1, i < ya.size() ? trim(ya[i]) : "<end>",
                           i < yb.size() ? trim(yb[i]) : "<end>");
    return r;
}

}  // namespace

bool EquivalenceReport::all_pass() const {
    return std::all_of(checks.begin(), checks.end(), [](const CheckResult& c) { return c.pass; });
}

std::string disassemble_code(const LlvmTools& tools, const std::string& path) {
    return run_tool({tools.objdump, "-d", "-z", path}, "disassembling " + path);
}

CodeByteDiff diff_code_bytes(const ElfSection& section, ByteView original, ByteView rebuilt,
                             const std::vector<DisasmInstruction>& original_instructions) {
    CodeByteDiff d;
    // Instruction containing each byte, for attributing differences.
    std::map<uint64_t, const DisasmInstruction*> starts;
    for (const auto& insn : original_instructions) starts[insn.address] = &insn;
    auto instruction_at = [&](uint64_t address) -> const DisasmInstruction* {
        auto it = starts.upper_bound(address);
        if (it == starts.begin()) return nullptr;
        --it;
        const uint64_t size = std::max<uint64_t>(it->second->size, 4);
        return address < it->first + size ? it->second : nullptr;
    };
    std::set<uint64_t> dont_care_insns;
    const size_t n = std::min(original.size, rebuilt.size);
    for (size_t off = 0; off < n; ++off) {
        if (original.data[off] == rebuilt.data[off]) continue;
        const uint64_t address = section.addr + off;
        const DisasmInstruction* insn = instruction_at(address);
        if (insn != nullptr && is_mfma_scale(insn->text) && address < insn->address + 4 &&
            insn->address + 4 <= section.addr + n) {
            const size_t base = static_cast<size_t>(insn->address - section.addr);
            const uint32_t x = load_u32(original.data + base);
            const uint32_t y = load_u32(rebuilt.data + base);
            const uint32_t mask = mfma_scale_dont_care_mask(x);
            const unsigned shift = static_cast<unsigned>(address - insn->address) * 8;
            const uint32_t byte_xor = ((x ^ y) >> shift) & 0xffu;
            if (mask != 0 && (x >> 16) == (y >> 16) && (byte_xor & ~(mask >> shift)) == 0) {
                d.dont_care_bits += static_cast<size_t>(popcount(byte_xor));
                dont_care_insns.insert(insn->address);
                continue;
            }
        }
        if (d.other_bytes == 0) d.first_other_address = address;
        ++d.other_bytes;
        d.other_instructions.insert(insn != nullptr ? insn->address : address);
    }
    const size_t longer = std::max(original.size, rebuilt.size);
    if (longer > n) {
        if (d.other_bytes == 0) d.first_other_address = section.addr + n;
        d.other_bytes += longer - n;
    }
    d.dont_care_instructions = dont_care_insns.size();
    return d;
}

ItemDifferences find_item_differences(const CodeObject& a, const std::vector<DisasmSection>& code_a,
                                      const CodeObject& b, const std::vector<DisasmSection>& code_b) {
    ItemDifferences out;
    const CheckResult header = check_header(a, b);
    if (!header.pass) out.unfixable.push_back("ELF header: " + header.detail);
    for (const auto& k : a.kernels) {
        const KernelInfo* other = find_kernel(b, k.kd_symbol);
        if (other == nullptr) {
            out.unfixable.push_back(k.kd_symbol + " missing from the rebuilt object");
            continue;
        }
        const ByteView x = kernel_descriptor_bytes(a, k);
        const ByteView y = kernel_descriptor_bytes(b, *other);
        if (std::memcmp(x.data, y.data, kKernelDescriptorSize) != 0) out.descriptors.insert(k.name);
    }
    const ByteView ma = a.elf.note_desc(a.metadata_note);
    const ByteView mb = b.elf.note_desc(b.metadata_note);
    if (ma.size != mb.size || std::memcmp(ma.data, mb.data, ma.size) != 0) {
        out.unfixable.push_back("metadata note bytes differ");
    }
    for (const ElfSection* s : code_sections(a.elf)) {
        const ElfSection* t = b.elf.find_section(s->name);
        if (t == nullptr) {
            out.unfixable.push_back("section " + s->name + " missing from the rebuilt object");
            continue;
        }
        std::vector<DisasmInstruction> ia;
        std::vector<DisasmInstruction> ib;
        for (const auto& ds : code_a)
            if (ds.name == s->name) ia = ds.instructions;
        for (const auto& ds : code_b)
            if (ds.name == s->name) ib = ds.instructions;
        std::map<uint64_t, const DisasmInstruction*> by_address;
        for (const auto& insn : ib) by_address[insn.address - t->addr] = &insn;
        const ByteView ba = a.elf.section_bytes(*s);
        const ByteView bb = b.elf.section_bytes(*t);
        for (const auto& insn : ia) {
            const uint64_t off = insn.address - s->addr;
            auto it = by_address.find(off);
            if (it == by_address.end() || it->second->size != insn.size) {
                // Layout diverges from here; fixing this one instruction is the next step.
                out.instructions.insert({s->index, insn.address});
                break;
            }
            bool differs = it->second->text != insn.text;
            if (!differs && off + insn.size <= ba.size && off + insn.size <= bb.size) {
                for (uint64_t w = 0; w < insn.size && !differs; w += 4) {
                    uint32_t x = load_u32(ba.data + off + w);
                    uint32_t y = load_u32(bb.data + off + w);
                    if (w == 0 && is_mfma_scale(insn.text)) {
                        const uint32_t mask = mfma_scale_dont_care_mask(x);
                        x &= ~mask;
                        y &= ~mask;
                    }
                    differs = x != y;
                }
            }
            if (differs) out.instructions.insert({s->index, insn.address});
        }
        if (s->size != t->size && out.instructions.empty()) {
            out.unfixable.push_back("section " + s->name + " changed size");
        }
    }
    return out;
}

EquivalenceReport check_equivalence(const CodeObject& a, const CodeObject& b, const LlvmTools& tools) {
    EquivalenceReport report;
    report.checks.push_back(check_header(a, b));
    report.checks.push_back(check_descriptors(a, b));
    report.checks.push_back(check_code(a, b, tools, &report.dont_care_bits));
    report.checks.push_back(check_metadata(a, b, tools));
    return report;
}

}  // namespace co2asm
