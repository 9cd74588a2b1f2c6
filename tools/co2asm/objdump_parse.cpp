// Parsers for llvm-objdump-22 / llvm-readelf-22 text (see objdump_parse.hpp). Formats observed
// with Debian's LLVM 22: an instruction line is `\t<text><spaces>// <12+ hex digits>: <words>`
// with an optional ` <sym+0x..>` branch note; long instructions (v_mfma_scale) leave no blank
// before `//`; undecodable words print as `.long 0x...`.
#include "objdump_parse.hpp"

#include <cctype>

namespace co2asm {
namespace {

bool is_hex(char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

// Finds the `// ADDR:` comment of an instruction line; returns the position of `//` and the address.
std::optional<std::pair<size_t, uint64_t>> find_address_comment(const std::string& line) {
    size_t pos = line.rfind("//");
    while (pos != std::string::npos) {
        size_t p = pos + 2;
        while (p < line.size() && line[p] == ' ') ++p;
        const size_t hex_begin = p;
        while (p < line.size() && is_hex(line[p])) ++p;
        if (p - hex_begin >= 8 && p - hex_begin <= 16 && p < line.size() && line[p] == ':') {
            return std::make_pair(pos, std::stoull(line.substr(hex_begin, p - hex_begin), nullptr, 16));
        }
        if (pos == 0) break;
        pos = line.rfind("//", pos - 1);
    }
    return std::nullopt;
}

// `0000000000001600 <kern_a>:` -> "kern_a"
std::optional<std::string> label_name(const std::string& line) {
    size_t p = 0;
    while (p < line.size() && is_hex(line[p])) ++p;
    if (p < 8 || p + 3 > line.size() || line[p] != ' ' || line[p + 1] != '<') return std::nullopt;
    if (line.size() < 2 || line.compare(line.size() - 2, 2, ">:") != 0) return std::nullopt;
    return line.substr(p + 2, line.size() - p - 4);
}

const std::string kSectionBanner = "Disassembly of section ";

}  // namespace

std::string trim(const std::string& s) {
    const size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    const size_t e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

std::vector<std::string> split_lines(const std::string& s) {
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < s.size()) {
        size_t end = s.find('\n', start);
        if (end == std::string::npos) end = s.size();
        lines.push_back(s.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

std::vector<DisasmSection> parse_disassembly(const std::string& objdump_output) {
    std::vector<DisasmSection> sections;
    for (const auto& line : split_lines(objdump_output)) {
        if (line.compare(0, kSectionBanner.size(), kSectionBanner) == 0) {
            DisasmSection s;
            s.name = line.substr(kSectionBanner.size());
            if (!s.name.empty() && s.name.back() == ':') s.name.pop_back();
            sections.push_back(std::move(s));
            continue;
        }
        if (sections.empty() || line.empty() || line[0] != '\t') continue;
        auto comment = find_address_comment(line);
        if (!comment) continue;
        DisasmInstruction insn;
        insn.address = comment->second;
        insn.text = trim(line.substr(0, comment->first));
        if (insn.text.empty()) continue;
        // Encoding words follow `ADDR: ` as groups of 8 hex digits.
        size_t p = line.find(':', comment->first) + 1;
        while (p + 9 <= line.size() && line[p] == ' ') {
            size_t q = p + 1;
            while (q < line.size() && is_hex(line[q])) ++q;
            if (q - p - 1 != 8) break;
            insn.size += 4;
            p = q;
        }
        sections.back().instructions.push_back(std::move(insn));
    }
    return sections;
}

std::map<std::string, std::vector<std::string>> parse_kernel_descriptor_blocks(
    const std::string& objdump_output) {
    std::map<std::string, std::vector<std::string>> blocks;
    std::vector<std::string>* current = nullptr;
    for (const auto& raw : split_lines(objdump_output)) {
        const std::string line = trim(raw);
        if (line.compare(0, 15, ".amdhsa_kernel ") == 0) {
            current = &blocks[trim(line.substr(15))];
            current->clear();
        } else if (line == ".end_amdhsa_kernel") {
            current = nullptr;
        } else if (current != nullptr && !line.empty()) {
            current->push_back(line);
        }
    }
    return blocks;
}

std::optional<std::string> extract_metadata_yaml(const std::string& readelf_notes_output) {
    const auto lines = split_lines(readelf_notes_output);
    bool in_metadata_note = false;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].find("NT_AMDGPU_METADATA") != std::string::npos) in_metadata_note = true;
        if (!in_metadata_note || trim(lines[i]) != "---") continue;
        std::string yaml = "---\n";
        for (size_t j = i + 1; j < lines.size(); ++j) {
            yaml += lines[j] + "\n";
            if (lines[j] == "...") return yaml;
        }
        return std::nullopt;  // unterminated document
    }
    return std::nullopt;
}

std::vector<std::string> normalize_disassembly(const std::string& objdump_output) {
    std::vector<std::string> out;
    bool started = false;
    for (const auto& line : split_lines(objdump_output)) {
        if (line.compare(0, kSectionBanner.size(), kSectionBanner) == 0) {
            started = true;
            out.push_back(line);
            continue;
        }
        if (!started || trim(line).empty()) continue;
        if (auto name = label_name(line)) {
            out.push_back("<" + *name + ">:");
        } else if (auto comment = find_address_comment(line)) {
            out.push_back("\t" + trim(line.substr(0, comment->first)));
        } else {
            out.push_back(trim(line));
        }
    }
    return out;
}

std::optional<std::pair<std::string, std::string>> split_directive(const std::string& line) {
    if (line.empty() || line[0] != '.') return std::nullopt;
    const size_t space = line.find_first_of(" \t");
    if (space == std::string::npos) return std::make_pair(line, std::string());
    return std::make_pair(line.substr(0, space), trim(line.substr(space)));
}

}  // namespace co2asm
