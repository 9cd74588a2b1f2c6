// Verification with asm_f4gemm's metrics and tolerances (rtol 2e-2; atol 2e-4 * max|ref|, or
// 2e-2 * max|ref| for aiter's bf16-atomic split-K), except for NaN and Inf, which the original let
// through: a NaN on exactly one side (output or reference) is a mismatch, NaN against NaN is a
// match (a NaN scale must give NaN in exactly the affected outputs), an Inf matches only the same
// Inf or a finite reference whose bf16 rounding is that Inf. docs/VERIFY.md gives the rationale.
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
    double atol = 0;         // atol_frac * max_ref
    double max_abs_err = 0;  // max |got - ref| over pairs with no NaN (Inf if an Inf is unmatched)
    double max_rel_err = 0;  // the same / max(|ref|, 1e-30), over finite refs with |ref| > atol
    size_t mismatches = 0;   // |got - ref| > atol + rtol * |ref|, and the NaN/Inf rules above
    size_t total = 0;
    size_t nan_outputs = 0;  // NaN outputs, matched or not
    bool has_first = false;
    size_t first_m = 0, first_n = 0;
    float first_got = 0, first_want = 0;
    bool passed() const { return mismatches == 0; }
};

// got: bf16 [m, n] with row stride ld (elements); ref: float32 [m, n] dense. Both functions throw
// Error(InvalidArgument) for null data (m, n > 0), ld < n, or a negative or non-finite tolerance.
VerifyResult verify_bf16(const uint16_t* got, size_t ld, const float* ref, size_t m, size_t n,
                         const Tolerance& tol);
// got already widened to float32 [m, n] dense: bf16 results widened exactly (e.g. read back from
// a float32 .npy), so the bf16 overflow rule above applies here too.
VerifyResult verify_f32(const float* got, const float* ref, size_t m, size_t n, const Tolerance& tol);

}  // namespace f4gemm
