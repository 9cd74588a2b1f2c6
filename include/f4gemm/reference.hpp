// The float64 CPU reference: D_ref[m][n] = alpha * sum_k a[m][k] * b[n][k] + beta * C[m][n],
// accumulated in double, threaded over rows (asm_f4gemm reference_gemm). Independent of the
// CPU backend on purpose: the backend is checked against this.
#pragma once

#include <cstddef>
#include <vector>

#include "f4gemm/operands.hpp"

namespace f4gemm {

// a: [m, k] float32, b: [n, k] float32 (dequantized); c: [m, n] float32 or nullptr.
// Returns float32 [m, n] (the double result rounded once). threads <= 0: hardware concurrency.
std::vector<float> reference_gemm(const float* a, const float* b, size_t m, size_t n, size_t k, float alpha,
                                  float beta, const float* c, int threads = 0);

// The same GEMM over plain MXFP4 operands (m = a.rows, n = b.rows, k = a.k == b.k), for data
// whose scales leave the seed's range (DataKind::WideScale): values are dequantized to float64
// (exact for every E8M0 scale, where float32 overflows to Inf from 2^128 = 4 * 2^126 up and the
// float reference then makes Inf * 0 and Inf - Inf into NaN), and each output's k products are
// summed exactly (exact 32-block sums, then an error-free expansion) and rounded once to double,
// so even blocks that cancel across 500 binades give the true result. Equal to reference_gemm on
// the dequantized operands wherever that one's double sum is exact (all seed-range data). Throws
// Error(InvalidArgument) when the k differ, k % 32 != 0, or a buffer does not match its shape.
std::vector<float> reference_gemm_mx(const MxOperand& a, const MxOperand& b, float alpha, float beta,
                                     const float* c, int threads = 0);

// The promoted mode's reference (docs/VERIFY.md, "Promoted mode: the bound"), per output [m, n]:
// ref = alpha * sum_k a_k b_k + beta * C kept in float64 (reference_gemm_mx's exact sum, before its rounding
// to float32), and abs_sum = S = sum_k |a_k| |b_k| with the block scales applied, summed exactly the same way
// and rounded once (NaN where a NaN scale meets the output, as ref). Same arguments and errors as
// reference_gemm_mx.
struct MxReferenceAbs {
    std::vector<double> ref, abs_sum;
};
MxReferenceAbs reference_gemm_mx_abs(const MxOperand& a, const MxOperand& b, float alpha, float beta,
                                     const float* c, int threads = 0);

}  // namespace f4gemm
