// The CPU backend: computes the operation itself (blocked, threaded, float32 accumulation of
// exact per-32-block partial sums), so the main job runs on a machine with no GPU. It is not the
// reference: reference.hpp (float64, naive) checks it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "f4gemm/operands.hpp"

namespace f4gemm {

struct CpuGemmArgs {
    const MxOperand* a = nullptr;  // plain [m, k/2] + [m, k/32]
    const MxOperand* b = nullptr;  // plain [n, k/2] + [n, k/32]
    size_t m = 0, n = 0, k = 0;
    float alpha = 1.f, beta = 0.f;
    const uint16_t* c = nullptr;  // bf16 [m, n] dense, or nullptr
    int splits = 1;               // K chunks (gdz): each chunk's sum in fp32, then added in
    int k_per_split = 0;          // chunk order in fp32 (our kernels' split-K semantics)
    int threads = 0;              // <= 0: hardware concurrency
};

// Writes bf16 [m, n] with row stride ld (elements); nothing outside rows < m, columns < n. Each
// 32-block's partial sum is exact in fp32 and is scaled by 2^(ea+eb-254) into an fp32 accumulator
// whose exponent is unbounded (bit-identical to a plain fp32 accumulator while that one neither
// overflows nor underflows; no Inf - Inf = NaN mid-sum for wide scales). Epilogue in fp32:
// alpha * acc + beta * C (C only when non-null and beta != 0), rounded to bf16 RNE. A NaN scale
// makes its whole row of A (or column of D for B) NaN. Throws Error(InvalidArgument) for a null
// operand or D, m/n/k not positive, k % 32, operand shapes that do not hold [m or n, k], ld < n,
// splits < 1, k_per_split not a positive multiple of 32 (when splits > 1 or it is set) or
// k_per_split * splits < k. Empty trailing chunks are allowed and add nothing.
void cpu_gemm(const CpuGemmArgs& args, uint16_t* d, size_t ld);

}  // namespace f4gemm
