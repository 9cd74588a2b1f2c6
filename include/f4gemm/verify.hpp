// Verification with asm_f4gemm's metrics and tolerances (rtol 2e-2; atol 2e-4 * max|ref|, or
// 2e-2 * max|ref| for aiter's bf16-atomic split-K), except that a NaN output, or a NaN where the
// reference is finite, always counts as a mismatch; a NaN reference matches only a NaN output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace f4gemm {

struct Tolerance {
    double rtol = 2e-2;
    double atol_frac = 2e-4;  // atol = atol_frac * max|ref|
};
// aiter kernels with gdz > 1 reduce in bf16 -> 2e-2; our kernels reduce split-K in fp32 -> 2e-4.
Tolerance default_tolerance(bool bf16_split_reduction);

struct VerifyResult {
    double max_ref = 0;      // max |ref| over finite refs
    double atol = 0;
    double max_abs_err = 0;
    double max_rel_err = 0;  // over elements with |ref| > atol
    size_t mismatches = 0;
    size_t total = 0;
    size_t nan_outputs = 0;
    bool has_first = false;
    size_t first_m = 0, first_n = 0;
    float first_got = 0, first_want = 0;
    bool passed() const { return mismatches == 0; }
};

// got: bf16 [m, n] with row stride ld (elements); ref: float32 [m, n] dense.
VerifyResult verify_bf16(const uint16_t* got, size_t ld, const float* ref, size_t m, size_t n,
                         const Tolerance& tol);
// got already widened to float32 [m, n] dense.
VerifyResult verify_f32(const float* got, const float* ref, size_t m, size_t n, const Tolerance& tol);

}  // namespace f4gemm
