// Tuned kernel table, like aiter's tuned a4w4 CSVs: per (CU count, M, N, K) the kernel and split
// that `f4gemm tune` measured fastest. The driver prefers it over the heuristic for those shapes.
#pragma once

#include <string>
#include <vector>

namespace f4gemm {

constexpr const char* kTunedFile = "f4gemm_bf16_per1x32Fp4_tuned.csv";
constexpr const char* kTunedHeader = "cu_num,M,N,K,kernelName,splitK,us,tflops";

struct TunedEntry {
    int cu_num = 0, m = 0, n = 0, k = 0;
    std::string kernel;    // co_name (or knl_name) in the manifest
    int log2_k_split = 0;  // "splitK" column: log2 of the split
    double us = 0, tflops = 0;
};

struct TunedTable {
    std::string path;  // "" when none was loaded
    std::vector<TunedEntry> entries;
    const TunedEntry* find(int cu_num, int m, int n, int k) const;  // last match wins
};

// Parses by header name (the columns above; extra columns allowed); errors name source:line.
TunedTable parse_tuned(const std::string& text, const std::string& source);
TunedTable load_tuned(const std::string& path);  // missing file -> Errc::NotFound
// --tuned FILE, else $F4GEMM_TUNED, else <co_dir>/f4gemm_bf16_per1x32Fp4_tuned.csv when present;
// an empty table when none applies.
TunedTable load_tuned_for(const std::string& co_dir, const std::string& flag);
std::string format_tuned(const TunedTable& t);

}  // namespace f4gemm
