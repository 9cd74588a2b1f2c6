// The float64 CPU reference: D_ref[m][n] = alpha * sum_k a[m][k] * b[n][k] + beta * C[m][n],
// accumulated in double, threaded over rows (asm_f4gemm reference_gemm). Independent of the
// CPU backend on purpose: the backend is checked against this.
#pragma once

#include <cstddef>
#include <vector>

namespace f4gemm {

// a: [m, k] float32, b: [n, k] float32 (dequantized); c: [m, n] float32 or nullptr.
// Returns float32 [m, n] (the double result rounded once). threads <= 0: hardware concurrency.
std::vector<float> reference_gemm(const float* a, const float* b, size_t m, size_t n, size_t k,
                                  float alpha, float beta, const float* c, int threads = 0);

}  // namespace f4gemm
