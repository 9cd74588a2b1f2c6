// The kernel manifest: aiter's f4gemm_bf16_per1x32Fp4.csv parsed by header name, plus our extra
// columns (arch, threads, smem_bytes, abi, b_layout, scale_layout, max_m, min_m, priority, accum, promote_k,
// reg_ctas). Ported from asm_f4gemm's load_configs (f4gemm.hpp); unlike it, a malformed row is an error
// naming <file>:<line> instead of being skipped silently, and integers must parse fully (atoi accepted
// "12abc" as 12).
#include "f4gemm/manifest.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "f4gemm/error.hpp"

namespace f4gemm {

namespace {

const char* const kRequired[] = {"tile_M", "tile_N", "splitK", "bpreshuffle", "knl_name", "co_name"};

// asm_f4gemm's trim set: space, tab, CR, LF.
std::string trim(const std::string& s) {
    size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    size_t e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

std::vector<std::string> split_cells(const std::string& line) {
    std::vector<std::string> cells;
    size_t start = 0;
    while (true) {
        size_t comma = line.find(',', start);
        cells.push_back(
            trim(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return cells;
}

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
    return s;
}

[[noreturn]] void fail(const std::string& source, int line, const std::string& what) {
    throw Error(Errc::Manifest, source + ":" + std::to_string(line) + ": " + what);
}

struct IntRule {
    long min;
    long max;
    const char* fix;
};

int parse_int(const std::string& cell, const std::string& column, const IntRule& rule,
              const std::string& source, int line) {
    const char* s = cell.c_str();
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(s, &end, 10);
    if (cell.empty() || end == s || *end != '\0' || errno == ERANGE || v < rule.min || v > rule.max)
        fail(source, line, "bad " + column + " (got '" + cell + "'): " + rule.fix);
    return static_cast<int>(v);
}

// A finite number, >= 0 (or > 0 where `positive`); the message names the column, the cell and `fix`.
double parse_number(const std::string& cell, const std::string& column, bool positive, const char* fix,
                    const std::string& source, int line) {
    char* end = nullptr;
    const double x = std::strtod(cell.c_str(), &end);
    if (cell.empty() || *end || !(positive ? x > 0 : x >= 0) || !std::isfinite(x))
        fail(source, line, "bad " + column + " (got '" + cell + "'): " + fix);
    return x;
}

std::string dirname_of(const std::string& path) {
    size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

}  // namespace

const char* to_string(KernelAbi a) {
    switch (a) {
        case KernelAbi::Aiter:
            return "aiter";
        case KernelAbi::Sm90v1:
            return "sm90v1";
        case KernelAbi::Sm90pp1:
            return "sm90pp1";
        case KernelAbi::Sm90pa1:
            return "sm90pa1";
        case KernelAbi::Sm90pp2:
            return "sm90pp2";
    }
    return "?";
}

Manifest parse_manifest(const std::string& text, const std::string& source) {
    Manifest m;
    m.path = source;
    m.dir = dirname_of(source);

    std::istringstream in(text);
    std::string raw;
    int line_no = 0;
    int header_line = 0;
    std::map<std::string, size_t> col;  // column name -> position

    while (std::getline(in, raw)) {
        ++line_no;
        if (line_no == 1 && raw.compare(0, 3, "\xEF\xBB\xBF") == 0) raw.erase(0, 3);  // UTF-8 BOM
        if (trim(raw).empty()) continue;
        std::vector<std::string> cells = split_cells(raw);

        if (!header_line) {
            header_line = line_no;
            for (size_t i = 0; i < cells.size(); ++i) {
                if (cells[i].empty())
                    fail(source, line_no,
                         "empty column name in the header (got '" + trim(raw) + "'): name every column");
                if (!col.emplace(cells[i], i).second)
                    fail(source, line_no,
                         "duplicate column " + cells[i] + " in the header (got '" + trim(raw) +
                             "'): name each column once");
            }
            for (const char* req : kRequired)
                if (!col.count(req))
                    fail(source, line_no,
                         std::string("missing column ") + req + " (got '" + trim(raw) +
                             "'): the header must name tile_M,tile_N,"
                             "splitK,bpreshuffle,knl_name,co_name");
            m.columns = cells;
            continue;
        }

        if (cells.size() != m.columns.size())
            fail(source, line_no,
                 "row has " + std::to_string(cells.size()) + " cells, the header has " +
                     std::to_string(m.columns.size()) + " (got '" + trim(raw) +
                     "'): give every column a value (an empty cell for an optional one)");

        const IntRule tile{1, 65536, "must be a positive integer"};
        const IntRule flag{0, 1, "must be 0 or 1"};
        KernelConfig kc;
        kc.line = line_no;
        kc.tile_m = parse_int(cells[col["tile_M"]], "tile_M", tile, source, line_no);
        kc.tile_n = parse_int(cells[col["tile_N"]], "tile_N", tile, source, line_no);
        kc.split_k = parse_int(cells[col["splitK"]], "splitK", flag, source, line_no);
        kc.bpreshuffle = parse_int(cells[col["bpreshuffle"]], "bpreshuffle", flag, source, line_no);
        kc.knl_name = cells[col["knl_name"]];
        kc.co_name = cells[col["co_name"]];
        if (kc.knl_name.empty())
            fail(source, line_no, "empty knl_name (got '" + trim(raw) + "'): name the kernel symbol");
        if (kc.co_name.empty())
            fail(source, line_no, "empty co_name (got '" + trim(raw) + "'): name the code-object file");
        kc.b_layout = kc.bpreshuffle ? BLayout::Aiter16x16 : BLayout::Plain;

        // Optional columns: an empty cell keeps the default (aiter's gfx950 kernels).
        for (size_t i = 0; i < m.columns.size(); ++i) {
            const std::string& name = m.columns[i];
            const std::string& v = cells[i];
            bool required = false;
            for (const char* req : kRequired) required = required || name == req;
            if (required) continue;
            if (name == "arch") {
                if (!v.empty()) kc.arch = v;
            } else if (name == "threads") {
                if (!v.empty())
                    kc.threads = parse_int(v, name, {1, 1024, "must be 1..1024"}, source, line_no);
            } else if (name == "smem_bytes") {
                if (!v.empty())
                    kc.smem_bytes =
                        parse_int(v, name, {0, INT_MAX, "must be a non-negative integer"}, source, line_no);
            } else if (name == "abi") {
                if (v == "aiter")
                    kc.abi = KernelAbi::Aiter;
                else if (v == "sm90v1")
                    kc.abi = KernelAbi::Sm90v1;
                else if (v == "sm90pp1")
                    kc.abi = KernelAbi::Sm90pp1;
                else if (v == "sm90pa1")
                    kc.abi = KernelAbi::Sm90pa1;
                else if (v == "sm90pp2")
                    kc.abi = KernelAbi::Sm90pp2;
                else if (!v.empty())
                    fail(source, line_no, "bad abi (got '" + v + "'): use " + std::string(kAbiChoices));
            } else if (name == "max_m") {
                if (!v.empty())
                    kc.max_m = parse_int(v, name, {0, INT_MAX, "must be a non-negative integer (0: any M)"},
                                         source, line_no);
            } else if (name == "min_m") {
                if (!v.empty())
                    kc.min_m = parse_int(v, name, {0, INT_MAX, "must be a non-negative integer (0: any M)"},
                                         source, line_no);
            } else if (name == "cost_wave_k" || name == "cost_prepass" || name == "cost_wave_us" ||
                       name == "decode_round") {
                if (v.empty()) continue;
                (name == "cost_wave_k"    ? kc.cost_wave_k
                 : name == "cost_prepass" ? kc.cost_prepass
                 : name == "cost_wave_us" ? kc.cost_wave_us
                                          : kc.decode_round) =
                    parse_number(v, name, false, "must be a non-negative number (0 or empty: none)", source,
                                 line_no);
            } else if (name == "decode_speed") {
                if (!v.empty())
                    kc.decode_speed =
                        parse_number(v, name, true, "must be a positive number (empty: 1)", source, line_no);
            } else if (name == "decode_warps") {
                if (!v.empty())
                    kc.decode_warps = parse_int(
                        v, name, {0, INT_MAX, "must be a non-negative integer (0: none)"}, source, line_no);
            } else if (name == "priority") {
                if (!v.empty())
                    kc.priority =
                        parse_int(v, name, {0, INT_MAX, "must be a non-negative integer (lower = preferred)"},
                                  source, line_no);
            } else if (name == "reg_ctas") {
                if (!v.empty())
                    kc.reg_ctas = parse_int(
                        v, name,
                        {0, 64, "must be 0..64 (CTAs per SM the registers allow; empty or 0: not pinned)"},
                        source, line_no);
            } else if (name == "promote_k") {
                if (v.empty()) continue;
                static constexpr const char* kFix =
                    "must be a multiple of 32 (the K of an FP8 chain; empty or 0: 128 for a promoted kernel)";
                kc.promote_k = parse_int(v, name, {0, 1 << 20, kFix}, source, line_no);
                if (kc.promote_k % 32) fail(source, line_no, "bad promote_k (got '" + v + "'): " + kFix);
            } else if (name == "accum") {
                if (v.empty()) continue;
                try {
                    kc.accum = parse_accum(v);
                } catch (const Error&) {
                    fail(source, line_no, "bad accum (got '" + v + "'): use " + std::string(kAccumChoices));
                }
            } else if (name == "b_layout") {
                if (v.empty()) continue;
                try {
                    kc.b_layout = parse_b_layout(v);
                } catch (const Error&) {
                    fail(source, line_no,
                         "bad b_layout (got '" + v + "'): use " + std::string(kBLayoutChoices));
                }
            } else if (name == "scale_layout") {
                if (v.empty()) continue;
                try {
                    kc.scale_layout = parse_scale_layout(v);
                } catch (const Error&) {
                    fail(source, line_no,
                         "bad scale_layout (got '" + v + "'): use " + std::string(kScaleLayoutChoices));
                }
            } else {
                kc.extra[name] = v;
            }
        }
        m.kernels.push_back(std::move(kc));
    }

    if (!header_line)
        fail(source, line_no ? line_no : 1,
             "empty manifest (got no header row): the first line must be tile_M,tile_N,splitK,"
             "bpreshuffle,knl_name,co_name");
    if (m.kernels.empty())
        fail(source, line_no,
             "empty manifest (got a header '" + join(m.columns) +
                 "' and no kernel rows): list at least one kernel");
    return m;
}

Manifest load_manifest(const std::string& dir) {
    std::string path = dir.empty() || dir.back() == '/' ? dir + kManifestFile : dir + "/" + kManifestFile;
    struct stat st {};
    std::ifstream f;
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) f.open(path, std::ios::binary);
    if (!f.is_open())
        throw Error(Errc::Manifest,
                    "cannot open manifest " + path + ": pass --co-dir or set AITER_ASM_DIR/AITER_F4GEMM_DIR");
    std::ostringstream text;
    text << f.rdbuf();
    if (f.bad()) throw Error(Errc::Manifest, "cannot read manifest " + path + ": check the file");
    Manifest m = parse_manifest(text.str(), path);
    m.dir = dir.empty() ? "." : dir;
    return m;
}

int find_kernel(const Manifest& m, const std::string& name) {
    int found = -1;
    for (size_t i = 0; i < m.kernels.size(); ++i)
        if (m.kernels[i].knl_name == name || m.kernels[i].co_name == name) found = static_cast<int>(i);
    return found;
}

}  // namespace f4gemm
