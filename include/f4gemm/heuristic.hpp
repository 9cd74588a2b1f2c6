// Tile selection: an exact port of aiter's get_heuristic_kernel (csrc/py_itfs_cu/
// asm_gemm_a4w4.cu) as asm_f4gemm iterates it -- manifest order, float compute-to-memory ratio,
// the 128x512 N % 512 rule, split candidates {2,4,8,16} for --splitk -1 -- on a given CU count.
// A pure function; `explain` records why each candidate won or lost.
#pragma once

#include <string>
#include <vector>

#include "f4gemm/manifest.hpp"

namespace f4gemm {

struct HeuristicQuery {
    int m = 0, n = 0, k = 0;
    int num_cu = 0;        // CUs / SMs of the device
    int log2_k_split = 0;  // CLI --splitk: -1 = try 2/4/8/16 on split-capable kernels
    int bpreshuffle = 1;   // filter: kernels with this bpreshuffle value
};

struct HeuristicStep {
    int index = -1;  // manifest index; -1 in a Selection's steps: a note of the policy about no one kernel
    int split = 1;   // candidate split count (0 when the kernel was filtered out)
    bool accepted = false;
    std::string reason;  // one line: the filter or comparison that decided
};

struct HeuristicResult {
    int index = -1;                    // chosen manifest index, -1 = none
    int log2_k_split = 0;              // log2 of the chosen split
    std::vector<HeuristicStep> steps;  // filled only when explain == true
};

HeuristicResult select_kernel(const Manifest& m, const HeuristicQuery& q, bool explain = false);

}  // namespace f4gemm
