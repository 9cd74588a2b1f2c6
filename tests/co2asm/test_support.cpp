// Test helpers (see test_support.hpp).
#include "test_support.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "elf_file.hpp"

namespace co2asm_test {

namespace {

bool executable(const std::string& path) {
    return ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<std::string> find_clang() {
    if (const char* env = std::getenv("CO2ASM_TEST_CLANG"); env != nullptr && *env != '\0') {
        return executable(env) ? std::optional<std::string>(env) : std::nullopt;
    }
    if (const char* path = std::getenv("PATH")) {
        std::stringstream dirs(path);
        std::string dir;
        while (std::getline(dirs, dir, ':')) {
            if (!dir.empty() && executable(dir + "/clang-22")) return dir + "/clang-22";
        }
    }
    if (executable("/usr/lib/llvm-22/bin/clang")) return std::string("/usr/lib/llvm-22/bin/clang");
    return std::nullopt;
}

std::string fixture_dir() {
    return CO2ASM_FIXTURE_DIR;
}

std::vector<FixtureVariant> load_fixture_variants() {
    std::vector<FixtureVariant> out;
    for (const auto& name : list_dir(fixture_dir())) {
        if (name.size() < 3 || name.compare(name.size() - 2, 2, ".s") != 0) continue;
        std::istringstream in(read_text(fixture_dir() + "/" + name));
        std::string line;
        const std::string tag = "// co2asm-variant:";
        while (std::getline(in, line)) {
            if (line.compare(0, tag.size(), tag) != 0) continue;
            std::istringstream fields(line.substr(tag.size()));
            FixtureVariant v;
            v.file = name;
            fields >> v.target_id >> v.code_object_version;
            if (!v.target_id.empty() && v.code_object_version != 0) out.push_back(v);
        }
    }
    return out;
}

void PrintTo(const FixtureVariant& v, std::ostream* os) {
    *os << v.file << " -mcpu=" << v.target_id << " -mcode-object-version=" << v.code_object_version;
}

std::string variant_name(const FixtureVariant& v) {
    std::string n = v.file.substr(0, v.file.size() - 2) + "_" + v.target_id + "_v" +
                    std::to_string(v.code_object_version);
    for (char& c : n) {
        if (c == ':')
            c = '_';
        else if (c == '+')
            c = 'P';
        else if (c == '-')
            c = 'M';
        else if (c == '.')
            c = '_';
    }
    return n;
}

co2asm::ProcessResult assemble(const std::string& source, const std::string& target_id, int cov,
                               const std::string& object) {
    return co2asm::run_process({*find_clang(), "-x", "assembler", "-target", "amdgcn-amd-amdhsa",
                                "-mcpu=" + target_id, "-mcode-object-version=" + std::to_string(cov), source,
                                "-o", object});
}

co2asm::ProcessResult run_co2asm(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {CO2ASM_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return co2asm::run_process(argv);
}

co2asm::ProcessResult run_shell(const std::string& command, const std::string& cwd) {
    return co2asm::run_process({"/bin/sh", "-c", "cd " + co2asm::shell_quote(cwd) + " && " + command});
}

std::string printed_reassemble_command(const std::string& out) {
    const auto lines = lines_of(out);
    for (size_t i = 0; i + 1 < lines.size(); ++i) {
        if (lines[i] == "[co2asm] reassemble with:") return lines[i + 1];
    }
    return "";
}

std::vector<uint8_t> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path);
}

std::string read_text(const std::string& path) {
    const auto b = read_bytes(path);
    return std::string(b.begin(), b.end());
}

void write_text(const std::string& path, const std::string& text) {
    write_bytes(path, std::vector<uint8_t>(text.begin(), text.end()));
}

bool file_exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

std::vector<std::string> list_dir(const std::string& dir) {
    std::vector<std::string> names;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return names;
    while (dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
}

uint64_t file_offset_of(const std::string& path, uint64_t address) {
    const auto elf = co2asm::ElfFile::read(path);
    for (const auto& s : elf.sections()) {
        if (s.is_alloc() && s.type != co2asm::kShtNobits && s.contains(address, 1))
            return s.offset + (address - s.addr);
    }
    throw std::runtime_error("address not in a section");
}

uint64_t symbol_address(const std::string& path, const std::string& name) {
    const auto elf = co2asm::ElfFile::read(path);
    for (const auto& sym : elf.symbols()) {
        if (sym.name == name) return sym.value;
    }
    throw std::runtime_error("no symbol " + name + " in " + path);
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
    return lines;
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

}  // namespace co2asm_test
