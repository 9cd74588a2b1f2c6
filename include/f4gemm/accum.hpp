// The accumulation mode of a GEMM: the arithmetic contract a request asks for and a kernel implements
// (the manifest's `accum` column; docs/VERIFY.md, docs/HEURISTIC.md).
//   exact     (the default) every result is the nearest bf16 of the exact alpha * A B^T + beta * C: each
//             32-element scale block's product is exact and is added in fp32 (the bf16 output rounding is
//             the only visible error).
//   promoted  (opt-in) FP8 tensor-core partial sums over a chain of 128 or 256 K (the kernel's promote_k) are
//             promoted into fp32 once per chain: faster, with a bounded error (promoted_cw below).
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
// 256) for the packed weight) by a kernel whose FP8 chains span chain_k (its promote_k: 128 for every shipped
// promoted kernel, 256 for the dev ladder's pp_128x128_p2; a multiple of 32). Worst-case error of the
// promoted mode, per output:
//   |d - ref| <= 2^-8 |ref| + c_w * |alpha| * sum_k |a_k b_k|      (scales applied; ref = alpha A B^T + beta
//   C)
// c_w = C(n) * 2^-13 + ceil(k_launch / chain_k) * 2^-24, n = chain_k / 32 k32 steps per chain:
//   C(n) = ceil(((1 + 32u)(1 + 33u)^(n-1) - 1) / u * (1 + 1/257) + 1/2), u = 2^-13: the FP8 accumulator's
//   truncation over the chain's n steps (step 1 32 addends, then 33 each, every addend at most the chain's
//   sum of magnitudes times 1 + the relative error so far), the bf16 rounding of that error, and half a u
//   of slack for the fp32 adds' growth; C(4) = 133 (128-K chains), C(8) = 269 (256-K chains);
// plus one 2^-24 per fp32 promotion add. The derivation lives in docs/VERIFY.md, "Promoted mode: the bound".
inline double promoted_cw(size_t k_launch, size_t chain_k = 128) {
    chain_k = chain_k < 32 ? 128 : chain_k / 32 * 32;  // 0 (a manifest's empty promote_k) means 128
    const double u = std::ldexp(1.0, -13);
    const double steps = double(chain_k / 32);
    const double eps = (1 + 32 * u) * std::pow(1 + 33 * u, steps - 1) - 1;  // the chain's relative truncation
    const double chain = std::ceil(eps / u * (1 + 1.0 / 257) + 0.5);
    return chain * u + double((k_launch + chain_k - 1) / chain_k) * std::ldexp(1.0, -24);
}

}  // namespace f4gemm
