// A small, bounds-checked ELF64 little-endian reader: header, section headers, symbol table
// (.symtab, else .dynsym) and notes. Every offset and size read from the file is checked against
// the file before use, so any byte string either parses or throws Co2asmError (fuzzed:
// fuzz/co2asm/). It knows nothing about AMDGPU beyond the constants it names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace co2asm {

constexpr uint16_t kEmAmdgpu = 224;
constexpr uint32_t kShtProgbits = 1;
constexpr uint32_t kShtSymtab = 2;
constexpr uint32_t kShtNote = 7;
constexpr uint32_t kShtNobits = 8;
constexpr uint32_t kShtDynsym = 11;
constexpr uint64_t kShfWrite = 0x1;
constexpr uint64_t kShfAlloc = 0x2;
constexpr uint64_t kShfExecinstr = 0x4;
constexpr uint64_t kShfMerge = 0x10;
constexpr uint64_t kShfStrings = 0x20;
constexpr uint8_t kStbLocal = 0;
constexpr uint8_t kStbGlobal = 1;
constexpr uint8_t kStbWeak = 2;
constexpr uint8_t kSttNotype = 0;
constexpr uint8_t kSttObject = 1;
constexpr uint8_t kSttFunc = 2;
constexpr uint8_t kStvDefault = 0;
constexpr uint8_t kStvInternal = 1;
constexpr uint8_t kStvHidden = 2;
constexpr uint8_t kStvProtected = 3;

// A view into the file's bytes; valid as long as the ElfFile lives.
struct ByteView {
    const uint8_t* data = nullptr;
    size_t size = 0;
};

struct ElfSection {
    uint32_t index = 0;
    std::string name;
    uint32_t type = 0;
    uint64_t flags = 0;
    uint64_t addr = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
    uint32_t link = 0;
    uint32_t info = 0;
    uint64_t addralign = 0;
    uint64_t entsize = 0;

    bool is_alloc() const { return (flags & kShfAlloc) != 0; }
    bool is_exec() const { return (flags & kShfExecinstr) != 0; }
    bool contains(uint64_t address, uint64_t length) const {
        return address >= addr && length <= size && address - addr <= size - length;
    }
};

struct ElfSymbol {
    std::string name;
    uint64_t value = 0;
    uint64_t size = 0;
    uint8_t bind = 0;
    uint8_t type = 0;
    uint8_t visibility = 0;
    uint16_t shndx = 0;
};

struct ElfNote {
    std::string owner;  // without the terminating NUL
    uint32_t type = 0;
    uint32_t section_index = 0;
    uint64_t desc_offset = 0;  // file offset of the descriptor
    uint64_t desc_size = 0;
};

class ElfFile {
public:
    // `label` names the file in error messages (normally its path).
    static ElfFile parse(std::vector<uint8_t> bytes, const std::string& label);
    static ElfFile read(const std::string& path);

    const std::string& label() const { return label_; }
    size_t file_size() const { return bytes_.size(); }
    uint8_t os_abi() const { return bytes_[7]; }
    uint8_t abi_version() const { return bytes_[8]; }
    uint16_t type() const { return type_; }
    uint16_t machine() const { return machine_; }
    uint32_t flags() const { return flags_; }

    const std::vector<ElfSection>& sections() const { return sections_; }
    const ElfSection* find_section(const std::string& name) const;
    const ElfSection* section_at(uint32_t index) const;
    // Contents of a section; empty for SHT_NOBITS.
    ByteView section_bytes(const ElfSection& section) const;
    // Bytes at a virtual address inside one allocated, file-backed section, or nullopt.
    std::optional<ByteView> bytes_at_address(uint64_t address, uint64_t length) const;

    // From .symtab when the file has one, else from .dynsym (stripped files).
    const std::vector<ElfSymbol>& symbols() const { return symbols_; }
    bool symbols_from_dynsym() const { return symbols_from_dynsym_; }
    const std::vector<ElfNote>& notes() const { return notes_; }
    ByteView note_desc(const ElfNote& note) const;

private:
    ElfFile() = default;
    void parse_sections();
    void parse_symbols();
    void parse_notes();
    [[noreturn]] void fail(const std::string& what, const std::string& fix) const;
    [[noreturn]] void truncated(const std::string& what) const;
    std::string name_at(ByteView table, uint64_t offset, const std::string& what);

    std::string label_;
    std::vector<uint8_t> bytes_;
    uint16_t type_ = 0;
    uint16_t machine_ = 0;
    uint32_t flags_ = 0;
    std::vector<ElfSection> sections_;
    std::vector<ElfSymbol> symbols_;
    bool symbols_from_dynsym_ = false;
    std::vector<ElfNote> notes_;
    uint64_t name_budget_ = 0;  // bytes of names still allowed to be copied out
};

// True when [offset, offset + length) lies inside a buffer of `total` bytes (overflow-safe).
inline bool range_fits(uint64_t offset, uint64_t length, uint64_t total) {
    return offset <= total && length <= total - offset;
}

}  // namespace co2asm
