// Tuned kernel table, like aiter's tuned a4w4 CSVs: per (CU count, M, N, K, accumulation mode) the kernel and
// split that `f4gemm tune` measured fastest. The driver prefers it over the heuristic for those shapes.
#pragma once

#include <string>
#include <vector>

#include "f4gemm/accum.hpp"

namespace f4gemm {

constexpr const char* kTunedFile = "f4gemm_bf16_per1x32Fp4_tuned.csv";
// What format_tuned writes. Tables written before the accumulation mode have no `accum` column: every row of
// such a table is an exact row.
constexpr const char* kTunedHeader = "cu_num,M,N,K,accum,kernelName,splitK,us,tflops";

struct TunedEntry {
    int cu_num = 0, m = 0, n = 0, k = 0;
    Accum accum = Accum::Exact;  // "accum" column: the mode the row was tuned for (absent: exact)
    std::string kernel;          // co_name (or knl_name) in the manifest
    int log2_k_split = 0;        // "splitK" column: log2 of the split
    double us = 0, tflops = 0;
};

struct TunedTable {
    std::string path;  // "" when none was loaded
    std::vector<TunedEntry> entries;
    // The row for (cu_num, M, N, K) tuned for `accum`; the last match wins; nullptr when none.
    const TunedEntry* find(int cu_num, int m, int n, int k, Accum accum) const;
};

// Parses by header name (the columns above; `accum`, `us` and `tflops` optional, extra columns allowed);
// errors name source:line.
TunedTable parse_tuned(const std::string& text, const std::string& source);
TunedTable load_tuned(const std::string& path);  // missing file -> Errc::NotFound
// --tuned FILE, else $F4GEMM_TUNED, else <co_dir>/f4gemm_bf16_per1x32Fp4_tuned.csv when present;
// an empty table when none applies.
TunedTable load_tuned_for(const std::string& co_dir, const std::string& flag);
std::string format_tuned(const TunedTable& t);  // kTunedHeader, then one row per entry

}  // namespace f4gemm
