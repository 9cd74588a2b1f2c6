// Assembly rendering (see asm_writer.hpp). Everything is placed by address: code and data are
// emitted in address order with every byte of each section accounted for, so the rebuilt sections
// have the original layout; a byte objdump did not decode is emitted as data.
#include "asm_writer.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace co2asm {
namespace {

// objdump prints a word its decoder rejects as `.long 0x...` (`.short`/`.byte` for a tail); no
// instruction mnemonic starts with a dot.
bool is_undecoded(const std::string& text) {
    return !text.empty() && text[0] == '.';
}

// `s_nop 0`, the filler LLVM's assembler uses for .p2align in code on gfx9-gfx12 (observed with
// clang-22 for gfx90a, gfx950, gfx1100, gfx1200).
constexpr uint32_t kSNop0 = 0xBF800000u;

uint32_t load_u32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

unsigned log2_floor(uint64_t v) {
    unsigned r = 0;
    while (v > 1) {
        v >>= 1;
        ++r;
    }
    return r;
}

unsigned trailing_zeros(uint64_t v) {
    unsigned r = 0;
    while (v != 0 && (v & 1) == 0) {
        v >>= 1;
        ++r;
    }
    return r;
}

class Emitter {
public:
    void line(const std::string& s, const LineOwner& owner = {}) {
        text_ += s;
        text_ += '\n';
        owners_.push_back(owner);
    }
    std::string take_text() { return std::move(text_); }
    std::vector<LineOwner> take_owners() { return std::move(owners_); }

private:
    std::string text_;
    std::vector<LineOwner> owners_;
};

std::string section_directive(const ElfSection& s) {
    if (s.name == ".text" && s.type == kShtProgbits && s.flags == (kShfAlloc | kShfExecinstr))
        return "\t.text";
    std::string flags;
    if (s.flags & kShfAlloc) flags += 'a';
    if (s.flags & kShfWrite) flags += 'w';
    if (s.flags & kShfExecinstr) flags += 'x';
    if (s.flags & kShfMerge) flags += 'M';
    if (s.flags & kShfStrings) flags += 'S';
    std::string d = fmt::format("\t.section {},\"{}\",@{}", asm_symbol(s.name), flags,
                                s.type == kShtNobits ? "nobits" : "progbits");
    if (s.flags & kShfMerge) d += fmt::format(",{}", s.entsize);
    return d;
}

// Emits bytes as .byte rows, with runs of zeros as .zero.
void emit_bytes(Emitter& out, const uint8_t* data, size_t size) {
    size_t i = 0;
    while (i < size) {
        size_t zeros = 0;
        while (i + zeros < size && data[i + zeros] == 0) ++zeros;
        if (zeros >= 8 || (zeros > 0 && i + zeros == size)) {
            out.line(fmt::format("\t.zero {}", zeros));
            i += zeros;
            continue;
        }
        std::string row = "\t.byte ";
        for (size_t n = 0; n < 16 && i < size; ++n, ++i) {
            if (n > 0) row += ", ";
            row += fmt::format("{:#04x}", data[i]);
        }
        out.line(row);
    }
}

// Symbols of one section, with the addresses at which something must be said.
struct SectionSymbols {
    std::map<uint64_t, std::vector<const ElfSymbol*>> starts;
    std::map<uint64_t, std::vector<std::string>> ends;  // lines to emit at the end address
    std::set<uint64_t> function_starts;
    std::set<uint64_t> size_ends;  // start + size of every sized symbol
};

class Renderer {
public:
    Renderer(const RenderInput& input, const RenderPlan& plan)
        : in_(input), co_(*input.code_object), plan_(plan) {}

    RenderedAssembly run() {
        const auto& h = co_.header;
        out_.line(fmt::format("// Regenerated from {} by co2asm: target {}, code object v{}, {} kernel(s).",
                              in_.source_label, h.target_id, h.code_object_version, co_.kernels.size()));
        out_.line(
            fmt::format("// Reassemble: clang-22 -x assembler -target amdgcn-amd-amdhsa -mcpu={} "
                        "-mcode-object-version={} FILE.s -o FILE.co",
                        h.target_id, h.code_object_version));
        out_.line(fmt::format("\t.amdgcn_target \"amdgcn-amd-amdhsa--{}\"", h.target_id));
        out_.line(fmt::format("\t.amdhsa_code_object_version {}", h.code_object_version));
        prepare_descriptors();
        render_absolute_symbols();
        for (const auto& s : co_.elf.sections()) {
            if (is_code_section(s)) render_code_section(s);
        }
        for (const auto& s : co_.elf.sections()) {
            if (is_data_section(s)) render_data_section(s);
        }
        out_.line("");
        out_.line("\t.amdgpu_metadata");
        for (const auto& l : split_lines(in_.metadata_yaml)) out_.line(l);
        out_.line("\t.end_amdgpu_metadata");
        RenderedAssembly r;
        r.text = out_.take_text();
        r.owners = out_.take_owners();
        r.raw_descriptors = raw_descriptors_;
        r.instructions = instructions_;
        r.raw_instruction_count = raw_instructions_;
        r.undecoded = undecoded_;
        for (const auto& u : undecoded_) r.undecoded_words += u.words;
        if (r.undecoded_words != 0) {
            // Said once at the top too, so a reader of the .s knows before meeting the first one.
            const std::string note = fmt::format(
                "// {} word(s) of code were not decoded by LLVM 22: `.long` lines marked \"not decoded\" "
                "below, raw bytes, not editable as instructions.",
                r.undecoded_words);
            const size_t first_line_end = r.text.find('\n') + 1;
            r.text.insert(first_line_end, note + "\n");
            r.owners.insert(r.owners.begin() + 1, LineOwner{});
        }
        return r;
    }

    static bool is_code_section(const ElfSection& s) {
        return s.type == kShtProgbits && s.is_alloc() && s.is_exec() && s.size > 0;
    }

    static bool is_data_section(const ElfSection& s) {
        // Sections the linker makes by itself are left to it.
        static const std::set<std::string> kLinkerMade = {".dynamic",      ".got",          ".got.plt",
                                                          ".plt",          ".interp",       ".eh_frame",
                                                          ".eh_frame_hdr", ".relro_padding"};
        return (s.type == kShtProgbits || s.type == kShtNobits) && s.is_alloc() && !s.is_exec() &&
               s.size > 0 && kLinkerMade.count(s.name) == 0;
    }

private:
    // Constants the compiler publishes as absolute symbols (e.g. `gemm.num_vgpr`); `.set` makes
    // the same symbols.
    void render_absolute_symbols() {
        constexpr uint16_t kShnAbs = 0xfff1;
        bool first = true;
        for (const auto& sym : co_.elf.symbols()) {
            if (sym.shndx != kShnAbs || sym.name.empty() || sym.name.compare(0, 2, ".L") == 0) continue;
            if (sym.type != kSttNotype && sym.type != kSttObject) continue;
            if (first) out_.line("");
            first = false;
            const std::string name = asm_symbol(sym.name);
            if (sym.bind == kStbGlobal) out_.line("\t.globl " + name);
            if (sym.bind == kStbWeak) out_.line("\t.weak " + name);
            out_.line(fmt::format("\t.set {}, {:#x}", name, sym.value));
        }
    }

    // Decides, per kernel, the fixed `.amdhsa_kernel` block or the reason it goes out as bytes.
    void prepare_descriptors() {
        for (const auto& k : co_.kernels) {
            std::string why;
            if (auto it = plan_.raw_descriptors.find(k.name); it != plan_.raw_descriptors.end()) {
                why = it->second;
            } else if (!k.has_code_symbol) {
                why = "no symbol named after the kernel at its entry point";
            } else if (auto block = in_.descriptor_blocks.find(k.name);
                       block == in_.descriptor_blocks.end()) {
                why = "objdump printed no .amdhsa_kernel block for it";
            } else {
                auto lines = fix_descriptor_block(block->second, k.fields, co_.header.target, &why);
                if (!lines.empty()) blocks_[k.name] = std::move(lines);
            }
            if (!why.empty()) raw_descriptors_[k.name] = why;
        }
    }

    bool descriptor_as_block(const std::string& kd_symbol) const {
        for (const auto& k : co_.kernels) {
            if (k.kd_symbol == kd_symbol) return blocks_.count(k.name) != 0;
        }
        return false;
    }

    SectionSymbols collect_symbols(const ElfSection& s) {
        SectionSymbols ss;
        std::set<std::string> names;
        for (const auto& sym : co_.elf.symbols()) {
            if (sym.shndx != s.index || sym.name.empty()) continue;
            if (sym.type != kSttNotype && sym.type != kSttFunc && sym.type != kSttObject) continue;
            if (sym.value < s.addr || sym.value - s.addr > s.size) continue;
            if (descriptor_as_block(sym.name)) continue;   // .amdhsa_kernel defines it
            if (!names.insert(sym.name).second) continue;  // a duplicate local name cannot be defined twice
            ss.starts[sym.value].push_back(&sym);
            if (sym.type == kSttFunc) ss.function_starts.insert(sym.value);
            if (sym.size > 0) ss.size_ends.insert(sym.value + sym.size);
        }
        // A kernel entry needs its alignment even when its symbol is untyped (hand-written asm).
        for (const auto& k : co_.kernels) {
            if (k.has_code_symbol && s.contains(k.entry_address, 0))
                ss.function_starts.insert(k.entry_address);
        }
        return ss;
    }

    // Directives and label for the symbols starting at `address`. Sizes become end labels when the
    // end is a boundary we pass (so an edited function keeps a right size), else a number.
    void emit_symbol_starts(SectionSymbols& ss, uint64_t address, const std::set<uint64_t>& boundaries) {
        auto it = ss.starts.find(address);
        if (it == ss.starts.end()) return;
        for (const ElfSymbol* sym : it->second) {
            const std::string name = asm_symbol(sym->name);
            if (sym->bind == kStbGlobal) out_.line("\t.globl " + name);
            if (sym->bind == kStbWeak) out_.line("\t.weak " + name);
            emit_visibility(name, kernel_code_visibility(*sym));
            if (sym->type == kSttFunc) out_.line(fmt::format("\t.type {},@function", name));
            if (sym->type == kSttObject) out_.line(fmt::format("\t.type {},@object", name));
            if (sym->size > 0) {
                const uint64_t end = sym->value + sym->size;
                if (end > sym->value && boundaries.count(end) != 0) {
                    const std::string label = fmt::format(".Lco2asm_end{}", end_labels_++);
                    ss.ends[end].push_back(label + ":");
                    ss.ends[end].push_back(fmt::format("\t.size {}, {}-{}", name, label, name));
                } else {
                    out_.line(fmt::format("\t.size {}, {}", name, sym->size));
                }
            }
            out_.line(name + ":");
        }
    }

    void emit_visibility(const std::string& name, uint8_t visibility) {
        if (visibility == kStvHidden) out_.line("\t.hidden " + name);
        if (visibility == kStvProtected) out_.line("\t.protected " + name);
        if (visibility == kStvInternal) out_.line("\t.internal " + name);
    }

    const ElfSymbol* find_symbol(const std::string& name) const {
        for (const auto& sym : co_.elf.symbols()) {
            if (sym.name == name) return &sym;
        }
        return nullptr;
    }

    // `.amdhsa_kernel K` copies K's visibility to K.kd, then makes a default K protected (LLVM's
    // EmitAmdhsaKernelDescriptor). So K is declared with the descriptor's visibility, and given its
    // own after the block when that differs.
    uint8_t kernel_code_visibility(const ElfSymbol& sym) const {
        if (blocks_.count(sym.name) == 0) return sym.visibility;
        const ElfSymbol* kd = find_symbol(sym.name + ".kd");
        return kd != nullptr ? kd->visibility : sym.visibility;
    }

    void emit_symbol_ends(SectionSymbols& ss, uint64_t address) {
        auto it = ss.ends.find(address);
        if (it == ss.ends.end()) return;
        for (const auto& l : it->second) out_.line(l);
        ss.ends.erase(it);
    }

    void render_code_section(const ElfSection& s) {
        const ByteView bytes = co_.elf.section_bytes(s);
        // Instructions objdump printed for this section, kept when in range and increasing.
        struct Item {
            uint64_t address;
            uint64_t size;
            const std::string* text;
        };
        std::vector<Item> items;
        for (const auto& ds : in_.disassembly) {
            if (ds.name != s.name) continue;
            for (const auto& insn : ds.instructions) {
                if (insn.address < s.addr || insn.address >= s.addr + s.size) continue;
                if (!items.empty() &&
                    insn.address < items.back().address + std::max<uint64_t>(items.back().size, 1)) {
                    continue;
                }
                items.push_back({insn.address, insn.size, &insn.text});
            }
        }
        for (size_t i = 0; i < items.size(); ++i) {
            // Without a readable encoding the instruction runs to the next one.
            const uint64_t next = i + 1 < items.size() ? items[i + 1].address : s.addr + s.size;
            if (items[i].size == 0 || items[i].address + items[i].size > next)
                items[i].size = next - items[i].address;
        }
        SectionSymbols ss = collect_symbols(s);
        const auto functions = function_starts(s);
        std::set<uint64_t> boundaries = {s.addr + s.size};
        for (const auto& it : items) boundaries.insert(it.address);
        for (const auto& [addr, syms] : ss.starts) boundaries.insert(addr);

        // Alignment padding before a function: the s_nop 0 run that `.p2align` recreates exactly.
        std::map<uint64_t, unsigned> align_at;  // function address -> p2align
        std::set<uint64_t> padding;             // addresses of dropped s_nop 0
        const unsigned section_align = log2_floor(std::max<uint64_t>(s.addralign, 1));
        for (uint64_t f : ss.function_starts) {
            if (f == s.addr) continue;
            const unsigned a = std::min(section_align, trailing_zeros(f - s.addr));
            if (a < 3) continue;
            align_at[f] = a;
            const uint64_t max_pad_words = ((uint64_t{1} << a) - 1) / 4;
            auto it = std::lower_bound(items.begin(), items.end(), f,
                                       [](const Item& x, uint64_t addr) { return x.address < addr; });
            uint64_t dropped = 0;
            while (it != items.begin() && dropped < max_pad_words) {
                --it;
                const bool nop = it->size == 4 && load_u32(bytes.data + (it->address - s.addr)) == kSNop0 &&
                                 plan_.raw_instructions.count({s.index, it->address}) == 0;
                // A label or a symbol's end inside the run would move if the run were dropped.
                const uint64_t after = it->address + 4;
                const bool no_label_inside =
                    after == f || (ss.starts.count(after) == 0 && ss.size_ends.count(after) == 0);
                if (!nop || it->address + 4 != f - dropped * 4 || !no_label_inside) break;
                padding.insert(it->address);
                ++dropped;
            }
        }

        out_.line("");
        out_.line(section_directive(s));
        if (section_align > 0) out_.line(fmt::format("\t.p2align {}", section_align));
        uint64_t cursor = s.addr;
        auto at_boundary = [&](uint64_t address) {
            if (auto a = align_at.find(address); a != align_at.end())
                out_.line(fmt::format("\t.p2align {}", a->second));
            emit_symbol_ends(ss, address);
            emit_symbol_starts(ss, address, boundaries);
        };
        auto emit_gap = [&](uint64_t from, uint64_t to) {
            // Bytes objdump printed nothing for; labels inside still get their place.
            uint64_t a = from;
            while (a < to) {
                auto next_label = ss.starts.upper_bound(a);
                const uint64_t b = next_label == ss.starts.end() ? to : std::min(to, next_label->first);
                at_boundary(a);
                emit_bytes(out_, bytes.data + (a - s.addr), b - a);
                a = b;
            }
        };
        for (const auto& it : items) {
            if (it.address > cursor) emit_gap(cursor, it.address);
            at_boundary(it.address);
            cursor = it.address + it.size;
            if (padding.count(it.address)) continue;
            LineOwner owner{LineOwner::Kind::Instruction, s.index, it.address, {}};
            if (is_undecoded(*it.text)) {
                note_undecoded(s, functions, it.address, it.size);
                if (it.size % 4 == 0) {
                    for (uint64_t o = 0; o < it.size; o += 4) {
                        out_.line(
                            fmt::format("\t.long {:#010x}  // {}",
                                        load_u32(bytes.data + (it.address - s.addr) + o), kUndecodedComment),
                            owner);
                    }
                } else {
                    out_.line(fmt::format("\t{}  // {}", *it.text, kUndecodedComment), owner);
                }
                continue;
            }
            ++instructions_;
            const bool whole_words = it.size % 4 == 0;
            if (plan_.raw_instructions.count({s.index, it.address}) != 0 && whole_words) {
                ++raw_instructions_;
                std::string words;
                for (uint64_t o = 0; o < it.size; o += 4) {
                    words += fmt::format("{}{:#010x}", o == 0 ? "" : ", ",
                                         load_u32(bytes.data + (it.address - s.addr) + o));
                }
                out_.line(fmt::format("\t.long {}  // {}", words, *it.text), owner);
            } else {
                out_.line("\t" + *it.text, owner);
            }
        }
        if (cursor < s.addr + s.size) emit_gap(cursor, s.addr + s.size);
        at_boundary(s.addr + s.size);
        for (auto& [addr, lines] : ss.ends) {
            for (const auto& l : lines) out_.line(l);
        }
    }

    // Kernel code symbols and functions of a code section: start address -> (name, is a kernel).
    std::map<uint64_t, std::pair<std::string, bool>> function_starts(const ElfSection& s) const {
        std::map<uint64_t, std::pair<std::string, bool>> f;
        for (const auto& sym : co_.elf.symbols()) {
            if (sym.shndx == s.index && sym.type == kSttFunc && !sym.name.empty() && s.contains(sym.value, 0))
                f.emplace(sym.value, std::make_pair(sym.name, false));
        }
        for (const auto& k : co_.kernels) {
            if (k.has_code_symbol && s.contains(k.entry_address, 0))
                f[k.entry_address] = std::make_pair(k.name, true);
        }
        return f;
    }

    // Adds an undecoded item to the last region when it is in the same section and function.
    void note_undecoded(const ElfSection& s,
                        const std::map<uint64_t, std::pair<std::string, bool>>& functions, uint64_t address,
                        uint64_t size) {
        std::string function;
        bool kernel = false;
        if (auto f = functions.upper_bound(address); f != functions.begin()) {
            --f;
            function = f->second.first;
            kernel = f->second.second;
        }
        const size_t words = (size + 3) / 4;
        if (!undecoded_.empty() && undecoded_.back().section == s.name &&
            undecoded_.back().function == function) {
            UndecodedRegion& r = undecoded_.back();
            r.runs += address != r.end;
            r.end = address + size;
            r.words += words;
            return;
        }
        undecoded_.push_back({s.name, function, kernel, address, address + size, words, 1});
    }

    void render_data_section(const ElfSection& s) {
        const ByteView bytes = co_.elf.section_bytes(s);
        const bool nobits = s.type == kShtNobits;
        SectionSymbols ss = collect_symbols(s);
        std::map<uint64_t, const KernelInfo*> descriptors;
        for (const auto& k : co_.kernels) {
            if (k.kd_section == s.index) descriptors[k.kd_address] = &k;
        }
        std::set<uint64_t> boundaries = {s.addr + s.size};
        for (const auto& [addr, syms] : ss.starts) {
            boundaries.insert(addr);
            for (const ElfSymbol* sym : syms) {
                if (sym->size > 0 && sym->value + sym->size <= s.addr + s.size)
                    boundaries.insert(sym->value + sym->size);
            }
        }
        for (const auto& [addr, k] : descriptors) {
            boundaries.insert(addr);
            boundaries.insert(addr + kKernelDescriptorSize);
        }
        const unsigned section_align = log2_floor(std::max<uint64_t>(s.addralign, 1));
        out_.line("");
        out_.line(section_directive(s));
        if (section_align > 0) out_.line(fmt::format("\t.p2align {}", section_align));
        uint64_t a = s.addr;
        while (true) {
            emit_symbol_ends(ss, a);
            auto d = descriptors.find(a);
            const bool block = d != descriptors.end() && blocks_.count(d->second->name) != 0;
            if (block) {
                emit_symbol_starts(ss, a, boundaries);
                render_descriptor_block(*d->second);
                a += kKernelDescriptorSize;
                continue;
            }
            emit_symbol_starts(ss, a, boundaries);
            if (a >= s.addr + s.size) break;
            const uint64_t b = *boundaries.upper_bound(a);
            if (nobits) {
                out_.line(fmt::format("\t.zero {}", b - a));
            } else if (d != descriptors.end() && b - a == kKernelDescriptorSize) {
                render_raw_descriptor(*d->second, bytes.data + (a - s.addr));
            } else {
                emit_bytes(out_, bytes.data + (a - s.addr), b - a);
            }
            a = b;
        }
        for (auto& [addr, lines] : ss.ends) {
            for (const auto& l : lines) out_.line(l);
        }
    }

    void render_descriptor_block(const KernelInfo& k) {
        const LineOwner owner{LineOwner::Kind::Descriptor, 0, 0, k.name};
        const ElfSection* s = co_.elf.section_at(k.kd_section);
        if (k.kd_address != s->addr && (k.kd_address - s->addr) % kKernelDescriptorSize == 0 &&
            s->addralign >= kKernelDescriptorSize) {
            out_.line("\t.p2align 6", owner);
        }
        out_.line("\t.amdhsa_kernel " + asm_symbol(k.name), owner);
        for (const auto& l : blocks_.at(k.name)) out_.line("\t\t" + l, owner);
        out_.line("\t.end_amdhsa_kernel", owner);
        const ElfSymbol* code = find_symbol(k.name);
        if (code != nullptr) {
            const uint8_t declared = kernel_code_visibility(*code);
            const uint8_t after_block = declared == kStvDefault ? kStvProtected : declared;
            if (code->visibility != after_block) emit_visibility(asm_symbol(k.name), code->visibility);
        }
    }

    // The descriptor as one directive per field (AMDGPUUsage "Kernel Descriptor" layout), so it can
    // still be edited; the entry offset stays an expression when the code symbol exists, so the
    // rebuilt descriptor keeps pointing at the kernel.
    void render_raw_descriptor(const KernelInfo& k, const uint8_t* kd) {
        const LineOwner owner{LineOwner::Kind::Descriptor, 0, 0, k.name};
        out_.line(fmt::format("\t// {}: kernel descriptor kept as data ({})", k.kd_symbol,
                              raw_descriptors_[k.name]),
                  owner);
        auto u32 = [kd](unsigned off) { return load_u32(kd + off); };
        auto u16 = [kd](unsigned off) { return static_cast<unsigned>(kd[off] | (kd[off + 1] << 8)); };
        for (unsigned off : {0u, 4u, 8u, 12u}) {
            out_.line(fmt::format("\t.long {:#010x}  // {}", u32(off), kernel_descriptor_field(off)), owner);
        }
        if (k.has_code_symbol) {
            out_.line(fmt::format("\t.quad {}-{}  // KERNEL_CODE_ENTRY_BYTE_OFFSET", asm_symbol(k.name),
                                  asm_symbol(k.kd_symbol)),
                      owner);
        } else {
            out_.line(
                fmt::format("\t.long {:#010x}, {:#010x}  // KERNEL_CODE_ENTRY_BYTE_OFFSET", u32(16), u32(20)),
                owner);
        }
        out_.line(fmt::format("\t.long {:#010x}, {:#010x}, {:#010x}, {:#010x}, {:#010x}  // reserved",
                              u32(24), u32(28), u32(32), u32(36), u32(40)),
                  owner);
        for (unsigned off : {kKdRsrc3, kKdRsrc1, kKdRsrc2}) {
            out_.line(fmt::format("\t.long {:#010x}  // {}", u32(off), kernel_descriptor_field(off)), owner);
        }
        out_.line(fmt::format("\t.short {:#06x}  // KERNEL_CODE_PROPERTIES", u16(56)), owner);
        out_.line(fmt::format("\t.short {:#06x}  // KERNARG_PRELOAD", u16(58)), owner);
        out_.line(fmt::format("\t.long {:#010x}  // reserved", u32(60)), owner);
    }

    const RenderInput& in_;
    const CodeObject& co_;
    const RenderPlan& plan_;
    Emitter out_;
    std::map<std::string, std::vector<std::string>> blocks_;
    std::map<std::string, std::string> raw_descriptors_;
    size_t instructions_ = 0;
    size_t raw_instructions_ = 0;
    std::vector<UndecodedRegion> undecoded_;
    unsigned end_labels_ = 0;
};

}  // namespace

const char* const kUndecodedComment = "not decoded by LLVM 22: raw word, not editable as an instruction";

RenderedAssembly render_assembly(const RenderInput& input, const RenderPlan& plan) {
    return Renderer(input, plan).run();
}

std::string asm_symbol(const std::string& name) {
    auto ident_start = [](char c) {
        return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
    };
    auto ident_char = [&](char c) { return ident_start(c) || std::isdigit(static_cast<unsigned char>(c)); };
    bool plain = !name.empty() && ident_start(name[0]);
    for (char c : name) plain = plain && ident_char(c);
    if (plain) return name;
    std::string q = "\"";
    for (char c : name) {
        if (c == '"' || c == '\\') q += '\\';
        q += c;
    }
    return q + "\"";
}

std::vector<std::string> fix_descriptor_block(const std::vector<std::string>& objdump_lines,
                                              const KernelDescriptorFields& fields,
                                              const AmdgpuTarget& target, std::string* why) {
    bool vcc = false;
    bool flat_scratch = false;
    bool flat_scratch_directive = false;
    unsigned printed_sgprs = 0;
    std::vector<std::string> lines;
    for (const auto& line : objdump_lines) {
        if (line[0] == ';') {
            // A field objdump can only show as a comment: fine while it is zero.
            const auto parts = split_directive("." + trim(line.substr(1)));
            const std::string field = parts ? parts->first.substr(1) : line;
            const std::string value = parts ? parts->second : "";
            if (value == "0") continue;
            if (field == "SHARED_VGPR_COUNT") {
                lines.push_back(".amdhsa_shared_vgpr_count " + value);
                continue;
            }
            *why = fmt::format("descriptor field {} = {} has no assembler directive", field, value);
            return {};
        }
        auto d = split_directive(line);
        if (!d || d->first.compare(0, 8, ".amdhsa_") != 0) {
            *why = fmt::format("objdump printed '{}' inside the descriptor", line);
            return {};
        }
        const auto& [name, value] = *d;
        if (name == ".amdhsa_reserve_xnack_mask" || name == ".amdhsa_user_sgpr_count") continue;
        if (name == ".amdhsa_reserve_vcc") vcc = value != "0";
        if (name == ".amdhsa_reserve_flat_scratch") {
            flat_scratch_directive = true;
            flat_scratch = value != "0";
        }
        if (name == ".amdhsa_next_free_sgpr")
            printed_sgprs = static_cast<unsigned>(std::strtoul(value.c_str(), nullptr, 10));
        lines.push_back(line);
    }
    auto sgprs = fix_next_free_sgpr(target, fields.granulated_wavefront_sgpr_count(), vcc, flat_scratch,
                                    flat_scratch_directive, printed_sgprs);
    if (!sgprs) {
        *why = fmt::format("no .amdhsa_next_free_sgpr reproduces SGPR granule {}",
                           fields.granulated_wavefront_sgpr_count());
        return {};
    }
    bool user_count_done = false;
    std::vector<std::string> fixed;
    for (const auto& line : lines) {
        const auto d = split_directive(line);
        const std::string name = d ? d->first : "";
        if (!user_count_done && name.compare(0, 17, ".amdhsa_user_sgpr") == 0) {
            // objdump leaves the count out; the assembler would derive it from the enabled user
            // SGPRs, which loses a larger count in the descriptor.
            fixed.push_back(fmt::format(".amdhsa_user_sgpr_count {}", fields.user_sgpr_count()));
            user_count_done = true;
        }
        if (name == ".amdhsa_next_free_sgpr") {
            fixed.push_back(fmt::format(".amdhsa_next_free_sgpr {}", sgprs->next_free_sgpr));
        } else if (name == ".amdhsa_reserve_vcc") {
            fixed.push_back(fmt::format(".amdhsa_reserve_vcc {}", sgprs->reserve_vcc ? 1 : 0));
        } else if (name == ".amdhsa_reserve_flat_scratch") {
            fixed.push_back(
                fmt::format(".amdhsa_reserve_flat_scratch {}", sgprs->reserve_flat_scratch ? 1 : 0));
        } else {
            fixed.push_back(line);
        }
    }
    if (!user_count_done)
        fixed.push_back(fmt::format(".amdhsa_user_sgpr_count {}", fields.user_sgpr_count()));
    return fixed;
}

}  // namespace co2asm
