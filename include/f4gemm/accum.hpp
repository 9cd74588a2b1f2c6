// The accumulation mode of a GEMM: the arithmetic contract a request asks for and a kernel implements
// (the manifest's `accum` column; docs/VERIFY.md, docs/HEURISTIC.md).
//   exact     (the default) every result is the nearest bf16 of the exact alpha * A B^T + beta * C: each
//             32-element scale block's product is exact and is added in fp32 (the bf16 output rounding is
//             the only visible error).
//   promoted  (opt-in) FP8 tensor-core partial sums over 128 K are promoted into fp32 once per chunk: faster,
//             with a bounded error (promoted_cw below).
// An exact kernel meets the promoted bound (its contract is stricter), so a promoted request may run one; an
// exact request never runs a promoted kernel.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

namespace f4gemm {

enum class Accum { Exact, Promoted };

constexpr const char* kAccumChoices = "exact or promoted";

// "exact" / "promoted".
const char* accum_name(Accum a);
// "exact" | "promoted"; anything else throws Error(InvalidArgument): "accum 'fast': unknown mode: pass exact
// or promoted".
Accum parse_accum(const std::string& s);
// Whether a kernel of mode `kernel` may serve a request of mode `request`: an exact kernel serves both, a
// promoted kernel only promoted requests.
inline bool accum_allows(Accum request, Accum kernel) {
    return kernel == Accum::Exact || request == Accum::Promoted;
}

// The promoted mode's bound constant c_w for a launch of K = k_launch (the K the kernel sees: round_up(K,
// 256) for the packed weight). Worst-case error of the promoted mode, per output:
//   |d - ref| <= 2^-8 |ref| + c_w * |alpha| * sum_k |a_k b_k|      (scales applied; ref = alpha A B^T + beta
//   C)
// c_w = 133 * 2^-13 (the FP8 accumulator's truncation over the four k32 steps of one 128-K chunk, 131.8, and
//       the bf16 rounding of that error, x (1 + 1/257))
//     + ceil(k_launch / 128) * 2^-24 (the fp32 promotion adds). The derivation lives in docs/VERIFY.md,
// "Promoted mode: the bound".
inline double promoted_cw(size_t k_launch) {
    return 133.0 * std::ldexp(1.0, -13) + double((k_launch + 127) / 128) * std::ldexp(1.0, -24);
}

}  // namespace f4gemm
