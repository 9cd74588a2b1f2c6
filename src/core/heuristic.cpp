// Tile selection: aiter's get_heuristic_kernel (csrc/py_itfs_cu/asm_gemm_a4w4.cu) exactly as
// asm_f4gemm's select_kernel (f4gemm.hpp) ports it: manifest order, uint32 round/idle-CU
// arithmetic, float compute-to-memory ratio, the non-transitive OR tie rule, the 128x512 N % 512
// rule and split candidates {2,4,8,16} for --splitk -1. docs/HEURISTIC.md lists the quirks.
#include "f4gemm/heuristic.hpp"

#include <cstdint>
#include <cstdio>

#include "f4gemm/error.hpp"

namespace f4gemm {

namespace {

std::string fmt_eff(float e) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(e));
    return buf;
}

}  // namespace

HeuristicResult select_kernel(const Manifest& m, const HeuristicQuery& q, bool explain) {
    if (q.m <= 0 || q.n <= 0)
        throw Error(Errc::InvalidArgument, "heuristic shape (got M=" + std::to_string(q.m) +
                                               " N=" + std::to_string(q.n) + "): M and N must be positive");
    if (q.num_cu <= 0)
        throw Error(Errc::InvalidArgument,
                    "CU count (got " + std::to_string(q.num_cu) + "): pass a positive --num-cu");
    if (q.log2_k_split > 30)
        throw Error(Errc::InvalidArgument, "--splitk (got " + std::to_string(q.log2_k_split) +
                                               "): log2 of the K split must be at most 30");

    // The original's state, with its types: uint32 rounds and idle CUs, float efficiency.
    const uint32_t num_cu = static_cast<uint32_t>(q.num_cu);
    uint32_t empty_cu = num_cu;
    uint32_t round = 0xffffffffu;
    float compute2mem_effi = 1.0f;
    const int log2_k_split_en = q.log2_k_split > 0 ? 1 : 0;  // aiter: (L >= 0 && L != 0)
    const int bpreshuffle_en = q.bpreshuffle == 0 ? 0 : 1;
    int selected = -1;
    int selected_split = 1;

    HeuristicResult r;
    auto record = [&](int index, int split, bool accepted, std::string reason) {
        if (explain) r.steps.push_back(HeuristicStep{index, split, accepted, std::move(reason)});
    };

    for (size_t i = 0; i < m.kernels.size(); ++i) {
        const KernelConfig& c = m.kernels[i];
        const int idx = static_cast<int>(i);
        if (c.bpreshuffle != bpreshuffle_en) {
            record(idx, 0, false,
                   "skip: bpreshuffle " + std::to_string(c.bpreshuffle) +
                       " != " + std::to_string(bpreshuffle_en));
            continue;
        }
        if (c.split_k < log2_k_split_en) {
            record(idx, 0, false,
                   "skip: splitK " + std::to_string(c.split_k) +
                       " < 1 (--splitk > 0 needs a split-capable kernel)");
            continue;
        }
        // aiter: "tile128x512 may not support N % tile_N != 0".
        if (c.tile_m == 128 && c.tile_n == 512 && q.n % c.tile_n != 0) {
            record(idx, 0, false, "skip: 128x512 needs N % 512 == 0");
            continue;
        }

        // --splitk -1 never offers split 1 to a split-capable kernel (an aiter quirk kept as is).
        std::vector<int> splits;
        if (q.log2_k_split >= 0 && c.split_k)
            splits = {1 << q.log2_k_split};
        else if (c.split_k)
            splits = {2, 4, 8, 16};
        else
            splits = {1};

        for (int split : splits) {
            // Tile counts, product wrapped to uint32 as the original's cast of its int product.
            const uint32_t tg_m = static_cast<uint32_t>((int64_t{q.m} + c.tile_m - 1) / c.tile_m);
            const uint32_t tg_n = static_cast<uint32_t>((int64_t{q.n} + c.tile_n - 1) / c.tile_n);
            const uint32_t tg_num = tg_m * tg_n * static_cast<uint32_t>(split);
            const uint32_t local_round = (tg_num + num_cu - 1) / num_cu;
            const uint32_t local_empty = local_round * num_cu - tg_num;
            const float local_effi =
                static_cast<float>(c.tile_m) * c.tile_n / static_cast<float>(c.tile_m + c.tile_n);

            const bool earlier = local_round < round;
            const bool same = local_round == round;
            const bool fewer_idle = empty_cu > local_empty;
            const bool better = local_effi > compute2mem_effi;
            const bool accept = earlier || (same && (fewer_idle || better));

            if (explain) {
                const std::string rounds = std::to_string(local_round);
                std::string why;
                if (earlier && round == 0xffffffffu)
                    why = "accept: first candidate, rounds " + rounds + ", idle CUs " +
                          std::to_string(local_empty) + ", eff " + fmt_eff(local_effi);
                else if (earlier)
                    why = "accept: rounds " + rounds + " < " + std::to_string(round);
                else if (!same)
                    why = "reject: rounds " + rounds + " > " + std::to_string(round);
                else if (fewer_idle)
                    why = "accept: tie on rounds " + rounds + ", idle CUs " + std::to_string(local_empty) +
                          " < " + std::to_string(empty_cu);
                else if (better)
                    why = "accept: tie on rounds " + rounds + ", eff " + fmt_eff(local_effi) + " > " +
                          fmt_eff(compute2mem_effi) + " (idle CUs " + std::to_string(local_empty) +
                          " >= " + std::to_string(empty_cu) + ")";
                else
                    why = "reject: tie on rounds " + rounds + ", idle CUs " + std::to_string(local_empty) +
                          " >= " + std::to_string(empty_cu) + " and eff " + fmt_eff(local_effi) +
                          " <= " + fmt_eff(compute2mem_effi);
                record(idx, split, accept, why);
            }

            if (accept) {
                round = local_round;
                empty_cu = local_empty;
                compute2mem_effi = local_effi;
                selected = idx;
                selected_split = split;
            }
        }
    }

    int log2_result = 0;
    while (selected_split >>= 1) ++log2_result;
    r.index = selected;
    r.log2_k_split = log2_result;
    return r;
}

}  // namespace f4gemm
