// Tuned-table CSV read/write (include/f4gemm/tuned.hpp), parsed by header name like the manifest.
#include "f4gemm/tuned.hpp"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "f4gemm/error.hpp"

namespace f4gemm {

namespace {

std::string trim(const std::string& s) {
    const size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(trim(cell));
    if (!line.empty() && line.back() == ',') cells.push_back("");
    return cells;
}

bool file_exists(const std::string& p) {
    return std::ifstream(p).good();
}

}  // namespace

const TunedEntry* TunedTable::find(int cu_num, int m, int n, int k, Accum accum) const {
    const TunedEntry* hit = nullptr;
    for (const TunedEntry& e : entries)
        if (e.cu_num == cu_num && e.m == m && e.n == n && e.k == k && e.accum == accum) hit = &e;
    return hit;
}

TunedTable parse_tuned(const std::string& text, const std::string& source) {
    TunedTable t;
    t.path = source;
    std::istringstream in(text);
    std::string line;
    std::map<std::string, size_t> col;
    size_t ncols = 0;
    int lineno = 0;
    auto fail = [&](const std::string& what) {
        throw Error(Errc::Manifest, source + ":" + std::to_string(lineno) + ": " + what +
                                        ": fix the row or regenerate the table with f4gemm tune");
    };
    while (std::getline(in, line)) {
        ++lineno;
        if (trim(line).empty()) continue;
        const std::vector<std::string> cells = split_csv(line);
        if (col.empty()) {
            for (size_t i = 0; i < cells.size(); ++i) col[cells[i]] = i;
            ncols = cells.size();
            for (const char* need : {"cu_num", "M", "N", "K", "kernelName", "splitK"})
                if (!col.count(need)) fail(std::string("missing column ") + need);
            continue;
        }
        if (cells.size() != ncols)
            fail("has " + std::to_string(cells.size()) + " cells, the header has " + std::to_string(ncols));
        auto int_at = [&](const char* name) {
            const std::string& v = cells[col[name]];
            char* end = nullptr;
            const long x = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end)
                fail(std::string("column ") + name + " is not an integer (got '" + v + "')");
            return int(x);
        };
        auto num_at = [&](const char* name) {
            if (!col.count(name)) return 0.0;
            return std::strtod(cells[col[name]].c_str(), nullptr);
        };
        TunedEntry e;
        e.cu_num = int_at("cu_num");
        e.m = int_at("M");
        e.n = int_at("N");
        e.k = int_at("K");
        e.log2_k_split = int_at("splitK");
        e.kernel = cells[col["kernelName"]];
        if (e.kernel.empty()) fail("empty kernelName");
        if (col.count("accum")) {  // absent: a table from before the mode, every row exact
            const std::string& a = cells[col["accum"]];
            if (!a.empty()) {
                try {
                    e.accum = parse_accum(a);
                } catch (const Error&) {
                    fail("column accum is not " + std::string(kAccumChoices) + " (got '" + a + "')");
                }
            }
        }
        e.us = num_at("us");
        e.tflops = num_at("tflops");
        t.entries.push_back(e);
    }
    return t;
}

TunedTable load_tuned(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw Error(Errc::NotFound, "cannot open tuned table " + path + ": check --tuned / F4GEMM_TUNED");
    std::stringstream ss;
    ss << f.rdbuf();
    return parse_tuned(ss.str(), path);
}

TunedTable load_tuned_for(const std::string& co_dir, const std::string& flag) {
    if (!flag.empty()) return load_tuned(flag);
    if (const char* e = std::getenv("F4GEMM_TUNED"); e && *e) return load_tuned(e);
    const std::string beside = co_dir + "/" + kTunedFile;
    if (!co_dir.empty() && file_exists(beside)) return load_tuned(beside);
    return {};
}

std::string format_tuned(const TunedTable& t) {
    std::ostringstream s;
    s << kTunedHeader << "\n";
    for (const TunedEntry& e : t.entries)
        s << e.cu_num << "," << e.m << "," << e.n << "," << e.k << "," << accum_name(e.accum) << ","
          << e.kernel << "," << e.log2_k_split << "," << e.us << "," << e.tflops << "\n";
    return s.str();
}

}  // namespace f4gemm
