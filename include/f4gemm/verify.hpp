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
    // The promoted mode's judge only (verify_promoted_*): the constant c_w the outputs were judged with, and
    // the observed one, c = max over outputs with |alpha| S > 0 of max(0, |got - ref| - 2^-8 |ref|) /
    // (|alpha| S) (pairs with a NaN or an Inf take no part; 0 when no output has S > 0).
    bool promoted = false;
    double cw = 0;
    double observed_c = 0;
    bool passed() const { return mismatches == 0; }
};

// got: bf16 [m, n] with row stride ld (elements); ref: float32 [m, n] dense. Both functions throw
// Error(InvalidArgument) for null data (m, n > 0), ld < n, or a negative or non-finite tolerance.
VerifyResult verify_bf16(const uint16_t* got, size_t ld, const float* ref, size_t m, size_t n,
                         const Tolerance& tol);
// got already widened to float32 [m, n] dense: bf16 results widened exactly (e.g. read back from
// a float32 .npy), so the bf16 overflow rule above applies here too.
VerifyResult verify_f32(const float* got, const float* ref, size_t m, size_t n, const Tolerance& tol);

// The promoted mode's judge (docs/VERIFY.md, "Promoted mode: the bound"): output (i, j) passes when
//   |got - ref| <= 2^-8 |ref| + cw * |alpha| * S          (cw = promoted_cw(K the kernel saw))
// with ref and S = abs_sum (float64 [m, n] dense) from reference_gemm_mx_abs; an output with S == 0 must be
// within 2^-8 |ref|. NaN as in the exact mode (NaN on exactly one side is a mismatch, NaN against NaN a
// match); an Inf matches the same Inf, or a finite ref of its sign whose bound reaches bf16's overflow
// threshold (2 - 2^-8) * 2^127. max_ref, max_abs_err, max_rel_err (over |ref| > 2e-4 max|ref|, as the exact
// mode's default atol) and the first mismatch as above; observed_c and cw as in VerifyResult. Throws
// Error(InvalidArgument) for null data (m, n > 0), ld < n, or a negative or non-finite cw or alpha.
VerifyResult verify_promoted_bf16(const uint16_t* got, size_t ld, const double* ref, const double* abs_sum,
                                  size_t m, size_t n, double alpha, double cw);
// got already widened to float32 [m, n] dense.
VerifyResult verify_promoted_f32(const float* got, const double* ref, const double* abs_sum, size_t m,
                                 size_t n, double alpha, double cw);

}  // namespace f4gemm
