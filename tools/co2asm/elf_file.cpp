// Bounds-checked ELF64 reader (see elf_file.hpp). Error texts name the file and the structure
// that does not fit, because the usual cause is a truncated copy or a file that is not a code
// object at all.
#include "elf_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "co2asm_error.hpp"

namespace co2asm {
namespace {

constexpr size_t kEhdrSize = 64;
constexpr size_t kShdrSize = 64;
constexpr size_t kSymSize = 24;
// Far more than any code object has; bounds the work a hostile header can ask for.
constexpr uint64_t kMaxSections = 1u << 16;
constexpr uint64_t kMaxNotesPerSection = 1u << 16;
// Many symbols may point at one long name; copying names costs at most this factor of the file
// size (real string tables are shared only by suffix merging, far below it), so a small hostile
// file cannot make the reader allocate gigabytes (docs/CO2ASM.md, "Fuzzing").
constexpr uint64_t kNameBudgetFactor = 16;
constexpr uint64_t kNameBudgetSlack = 1u << 20;

uint16_t load_u16(const uint8_t* p) {
    return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
uint32_t load_u32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
           (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
uint64_t load_u64(const uint8_t* p) {
    return static_cast<uint64_t>(load_u32(p)) | (static_cast<uint64_t>(load_u32(p + 4)) << 32);
}

uint64_t align_up(uint64_t value, uint64_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
}

// NUL-terminated string at `offset` inside `table`; nullopt when it runs off the table.
std::optional<std::string> string_in(ByteView table, uint64_t offset) {
    if (offset >= table.size) return std::nullopt;
    const auto* begin = table.data + offset;
    const auto* end = static_cast<const uint8_t*>(std::memchr(begin, 0, table.size - offset));
    if (end == nullptr) return std::nullopt;
    return std::string(reinterpret_cast<const char*>(begin), static_cast<size_t>(end - begin));
}

}  // namespace

void ElfFile::fail(const std::string& what, const std::string& fix) const {
    throw Co2asmError(fmt::format("{}: {}", label_, what), fix);
}

void ElfFile::truncated(const std::string& what) const {
    fail(fmt::format("truncated or corrupt ELF: {} (file is {} bytes)", what, bytes_.size()),
         "the file is incomplete or damaged; copy the code object again");
}

ElfFile ElfFile::read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw Co2asmError(fmt::format("cannot open {}: {}", path, std::strerror(errno)),
                          "check the path and that the file is readable");
    }
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) {
        throw Co2asmError(fmt::format("cannot read {}", path), "check that the file is readable");
    }
    return parse(std::move(bytes), path);
}

ElfFile ElfFile::parse(std::vector<uint8_t> bytes, const std::string& label) {
    ElfFile elf;
    elf.label_ = label;
    elf.bytes_ = std::move(bytes);
    const auto& b = elf.bytes_;
    static const uint8_t kMagic[4] = {0x7f, 'E', 'L', 'F'};
    if (b.size() < 4 || std::memcmp(b.data(), kMagic, 4) != 0) {
        elf.fail("not an ELF file (no \\x7fELF magic)", "pass an AMDGPU code object (.co/.hsaco)");
    }
    if (b.size() < kEhdrSize) elf.truncated("the 64-byte ELF header is incomplete");
    if (b[4] != 2 || b[5] != 1) {
        elf.fail(fmt::format("not a 64-bit little-endian ELF (class {}, data {})", b[4], b[5]),
                 "AMDGPU code objects are ELF64 little-endian; pass an AMDGPU code object");
    }
    elf.name_budget_ = b.size() * kNameBudgetFactor + kNameBudgetSlack;
    elf.type_ = load_u16(&b[16]);
    elf.machine_ = load_u16(&b[18]);
    elf.flags_ = load_u32(&b[48]);
    elf.parse_sections();
    elf.parse_symbols();
    elf.parse_notes();
    return elf;
}

void ElfFile::parse_sections() {
    const auto& b = bytes_;
    const uint64_t shoff = load_u64(&b[40]);
    const uint16_t shentsize = load_u16(&b[58]);
    uint64_t shnum = load_u16(&b[60]);
    uint32_t shstrndx = load_u16(&b[62]);
    if (shoff == 0) {
        fail("the ELF file has no section headers", "co2asm needs the section headers of a code object");
    }
    if (shentsize != kShdrSize) {
        truncated(fmt::format("section header entry size is {} (expected 64)", shentsize));
    }
    if (!range_fits(shoff, kShdrSize, b.size())) {
        truncated(fmt::format("section header table at offset {:#x} lies past the end", shoff));
    }
    // Extended numbering: the real count and string-table index live in section header 0.
    if (shnum == 0) shnum = load_u64(&b[shoff + 32]);
    if (shstrndx == 0xffff) shstrndx = load_u32(&b[shoff + 40]);
    if (shnum > kMaxSections) truncated(fmt::format("implausible section count {}", shnum));
    if (!range_fits(shoff, shnum * kShdrSize, b.size())) {
        truncated(
            fmt::format("section header table ({} x 64 bytes at {:#x}) runs past the end", shnum, shoff));
    }
    sections_.reserve(shnum);
    std::vector<uint32_t> name_offsets;
    for (uint64_t i = 0; i < shnum; ++i) {
        const uint8_t* p = &b[shoff + i * kShdrSize];
        ElfSection s;
        s.index = static_cast<uint32_t>(i);
        s.type = load_u32(p + 4);
        s.flags = load_u64(p + 8);
        s.addr = load_u64(p + 16);
        s.offset = load_u64(p + 24);
        s.size = load_u64(p + 32);
        s.link = load_u32(p + 40);
        s.info = load_u32(p + 44);
        s.addralign = load_u64(p + 48);
        s.entsize = load_u64(p + 56);
        name_offsets.push_back(load_u32(p));
        if (s.type != kShtNobits && s.type != 0 && !range_fits(s.offset, s.size, b.size())) {
            truncated(fmt::format("section {} ({} bytes at {:#x}) runs past the end", i, s.size, s.offset));
        }
        sections_.push_back(s);
    }
    if (shstrndx >= sections_.size()) {
        truncated(fmt::format("section-name table index {} is out of range", shstrndx));
    }
    const ByteView names = section_bytes(sections_[shstrndx]);
    for (auto& s : sections_) {
        s.name = name_at(names, name_offsets[s.index], fmt::format("name of section {}", s.index));
    }
}

std::string ElfFile::name_at(ByteView table, uint64_t offset, const std::string& what) {
    auto name = string_in(table, offset);
    if (!name) truncated(what + " lies outside its string table");
    if (name->size() > name_budget_) truncated("symbol and section names add up to an implausible size");
    name_budget_ -= name->size();
    return std::move(*name);
}

void ElfFile::parse_symbols() {
    const ElfSection* table = nullptr;
    for (const auto& s : sections_) {
        if (s.type == kShtSymtab) {
            table = &s;
            break;
        }
    }
    if (table == nullptr) {
        for (const auto& s : sections_) {
            if (s.type == kShtDynsym) {
                table = &s;
                symbols_from_dynsym_ = true;
                break;
            }
        }
    }
    if (table == nullptr) return;
    if (table->entsize != kSymSize) {
        truncated(
            fmt::format("symbol table {} has entry size {} (expected 24)", table->name, table->entsize));
    }
    if (table->link >= sections_.size()) {
        truncated(fmt::format("symbol table {} links to missing string table {}", table->name, table->link));
    }
    const ByteView syms = section_bytes(*table);
    const ByteView strings = section_bytes(sections_[table->link]);
    const size_t count = syms.size / kSymSize;
    symbols_.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        const uint8_t* p = syms.data + i * kSymSize;
        ElfSymbol sym;
        const uint32_t name_offset = load_u32(p);
        sym.bind = p[4] >> 4;
        sym.type = p[4] & 0xf;
        sym.visibility = p[5] & 0x3;
        sym.shndx = load_u16(p + 6);
        sym.value = load_u64(p + 8);
        sym.size = load_u64(p + 16);
        sym.name = name_at(strings, name_offset, fmt::format("name of symbol {}", i));
        symbols_.push_back(std::move(sym));
    }
}

void ElfFile::parse_notes() {
    for (const auto& s : sections_) {
        if (s.type != kShtNote) continue;
        const ByteView view = section_bytes(s);
        // Notes are padded to the section's alignment: 4 for AMDGPU, 8 is allowed by gABI.
        const uint64_t pad = s.addralign == 8 ? 8 : 4;
        uint64_t pos = 0;
        for (uint64_t n = 0; pos < view.size; ++n) {
            if (n >= kMaxNotesPerSection) truncated(fmt::format("implausibly many notes in {}", s.name));
            if (!range_fits(pos, 12, view.size))
                truncated(fmt::format("note header in {} is cut off", s.name));
            const uint32_t namesz = load_u32(view.data + pos);
            const uint32_t descsz = load_u32(view.data + pos + 4);
            ElfNote note;
            note.type = load_u32(view.data + pos + 8);
            note.section_index = s.index;
            const uint64_t name_pos = pos + 12;
            if (!range_fits(name_pos, namesz, view.size)) {
                truncated(fmt::format("note name in {} runs past the section", s.name));
            }
            uint64_t name_len = namesz;
            while (name_len > 0 && view.data[name_pos + name_len - 1] == 0) --name_len;
            note.owner.assign(reinterpret_cast<const char*>(view.data + name_pos), name_len);
            const uint64_t desc_pos = align_up(name_pos + namesz, pad);
            if (!range_fits(desc_pos, descsz, view.size)) {
                truncated(fmt::format("note descriptor in {} runs past the section", s.name));
            }
            note.desc_offset = s.offset + desc_pos;
            note.desc_size = descsz;
            notes_.push_back(std::move(note));
            pos = align_up(desc_pos + descsz, pad);
        }
    }
}

const ElfSection* ElfFile::find_section(const std::string& name) const {
    for (const auto& s : sections_) {
        if (s.name == name) return &s;
    }
    return nullptr;
}

const ElfSection* ElfFile::section_at(uint32_t index) const {
    return index < sections_.size() ? &sections_[index] : nullptr;
}

ByteView ElfFile::section_bytes(const ElfSection& section) const {
    if (section.type == kShtNobits || section.type == 0) return {};
    // parse_sections() checked the range of every file-backed section.
    return {bytes_.data() + section.offset, static_cast<size_t>(section.size)};
}

std::optional<ByteView> ElfFile::bytes_at_address(uint64_t address, uint64_t length) const {
    for (const auto& s : sections_) {
        if (!s.is_alloc() || s.type == kShtNobits || s.type == 0) continue;
        if (!s.contains(address, length)) continue;
        return ByteView{bytes_.data() + s.offset + (address - s.addr), static_cast<size_t>(length)};
    }
    return std::nullopt;
}

ByteView ElfFile::note_desc(const ElfNote& note) const {
    return {bytes_.data() + note.desc_offset, static_cast<size_t>(note.desc_size)};
}

}  // namespace co2asm
