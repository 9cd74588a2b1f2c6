// Tests of verification (src/core/verify.cpp) on crafted arrays, one per rule: the original's
// metrics and tolerance, the first mismatch, the NaN and Inf rules that replace its NaN gap,
// relative error only above atol, and bf16 widening with a row stride.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"
#include "f4gemm/verify.hpp"

namespace f4gemm {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
const Tolerance kTol = default_tolerance(false);

TEST(Verify, DefaultTolerances) {
    EXPECT_EQ(default_tolerance(false).rtol, 2e-2);
    EXPECT_EQ(default_tolerance(false).atol_frac, 2e-4);
    EXPECT_EQ(default_tolerance(true).rtol, 2e-2);
    EXPECT_EQ(default_tolerance(true).atol_frac, 2e-2);
}

TEST(Verify, IdenticalPasses) {
    const std::vector<float> ref = {1.f, -1000.f, 0.f, 3.5f, -2.f, 7.f};
    const auto r = verify_f32(ref.data(), ref.data(), 2, 3, kTol);
    EXPECT_TRUE(r.passed());
    EXPECT_EQ(r.total, 6u);
    EXPECT_EQ(r.max_ref, 1000.0);
    EXPECT_DOUBLE_EQ(r.atol, 0.2);
    EXPECT_EQ(r.max_abs_err, 0.0);
    EXPECT_EQ(r.max_rel_err, 0.0);
    EXPECT_EQ(r.nan_outputs, 0u);
    EXPECT_FALSE(r.has_first);
}

TEST(Verify, JustOverToleranceIsAMismatchAndTheFirstIsReported) {
    // max|ref| = 1000 -> atol = 0.2; at ref = 10 the bound is 0.2 + 0.02 * 10 = 0.4.
    std::vector<float> ref(2 * 4, 10.f), got(2 * 4, 10.f);
    ref[0] = 1000.f;
    got[0] = 1000.f;
    got[1] = 10.3999996f;  // d just under 0.4: passes
    got[6] = 10.4000015f;  // (1, 2): d just over 0.4: the first mismatch
    got[7] = 9.5f;         // (1, 3): a second one
    const auto r = verify_f32(got.data(), ref.data(), 2, 4, kTol);
    EXPECT_FALSE(r.passed());
    EXPECT_EQ(r.mismatches, 2u);
    ASSERT_TRUE(r.has_first);
    EXPECT_EQ(r.first_m, 1u);
    EXPECT_EQ(r.first_n, 2u);
    EXPECT_EQ(r.first_got, 10.4000015f);
    EXPECT_EQ(r.first_want, 10.f);
    EXPECT_DOUBLE_EQ(r.max_abs_err, 0.5);
    EXPECT_DOUBLE_EQ(r.max_rel_err, 0.05);
}

TEST(Verify, SplitToleranceForgivesTwoPercentOfMaxRef) {
    // With the bf16-atomic split tolerance, atol = 0.02 * 1000 = 20.
    const std::vector<float> ref = {1000.f, 5.f}, got = {1000.f, 24.9f};
    EXPECT_TRUE(verify_f32(got.data(), ref.data(), 1, 2, default_tolerance(true)).passed());
    EXPECT_FALSE(verify_f32(got.data(), ref.data(), 1, 2, kTol).passed());
}

TEST(Verify, RelativeErrorOnlyAboveAtol) {
    // atol = 0.2: ref 0.1 (below) is left out of max_rel_err, ref 0.25 (above) is in it.
    const std::vector<float> ref = {1000.f, 0.1f, 0.25f}, got = {1000.f, 0.15f, 0.255f};
    const auto r = verify_f32(got.data(), ref.data(), 1, 3, kTol);
    EXPECT_TRUE(r.passed());
    EXPECT_NEAR(r.max_abs_err, 0.05, 1e-7);
    EXPECT_NEAR(r.max_rel_err, 0.02, 1e-6);
}

TEST(Verify, NanOutputWhereRefIsFiniteIsAMismatch) {
    const std::vector<float> ref = {1.f, 2.f, 3.f}, got = {1.f, kNan, 3.f};
    const auto r = verify_f32(got.data(), ref.data(), 1, 3, kTol);
    EXPECT_EQ(r.mismatches, 1u);
    EXPECT_EQ(r.nan_outputs, 1u);
    ASSERT_TRUE(r.has_first);
    EXPECT_EQ(r.first_n, 1u);
    EXPECT_TRUE(std::isnan(r.first_got));
    EXPECT_EQ(r.max_abs_err, 0.0);  // the NaN is counted as a mismatch, not as an error size
}

TEST(Verify, NanOutputWhereRefIsNanMatches) {
    const std::vector<float> ref = {kNan, 2.f}, got = {kNan, 2.f};
    const auto r = verify_f32(got.data(), ref.data(), 1, 2, kTol);
    EXPECT_TRUE(r.passed());
    EXPECT_EQ(r.nan_outputs, 1u);
    EXPECT_EQ(r.max_ref, 2.0);  // the NaN reference is not part of max|ref|
}

TEST(Verify, FiniteOutputWhereRefIsNanIsAMismatch) {
    const std::vector<float> ref = {1.f, kNan}, got = {1.f, 0.f};
    const auto r = verify_f32(got.data(), ref.data(), 1, 2, kTol);
    EXPECT_EQ(r.mismatches, 1u);
    EXPECT_EQ(r.first_n, 1u);
    EXPECT_EQ(r.nan_outputs, 0u);
}

TEST(Verify, Infinities) {
    // max|ref| is over finite references only: 4, not Inf (an Inf would make atol Inf and pass
    // everything).
    const std::vector<float> ref = {kInf, -kInf, 4.f, kInf, 1.f}, got = {kInf, -kInf, 4.f, -kInf, kInf};
    const auto r = verify_f32(got.data(), ref.data(), 1, 5, kTol);
    EXPECT_EQ(r.max_ref, 4.0);
    EXPECT_EQ(r.mismatches, 2u);  // -Inf vs Inf, Inf vs 1
    EXPECT_EQ(r.first_n, 3u);
    EXPECT_TRUE(std::isinf(r.max_abs_err));
    EXPECT_TRUE(std::isinf(r.max_rel_err));

    const std::vector<float> ref2 = {kInf, 1.f}, got2 = {3e38f, 1.f};
    EXPECT_EQ(verify_f32(got2.data(), ref2.data(), 1, 2, kTol).mismatches, 1u);
}

TEST(Verify, Bf16OverflowOfAFiniteRefMatches) {
    // FLT_MAX rounds to bf16 +Inf (it is above 0x7F7F + half an ulp); 3.38e38 rounds to 0x7F7F.
    const float big = std::numeric_limits<float>::max();
    ASSERT_EQ(float_to_bf16(big), 0x7F80);
    const std::vector<float> ref = {big, -big, 3.38e38f};
    const std::vector<uint16_t> got = {0x7F80, 0xFF80, 0x7F80};
    const auto r = verify_bf16(got.data(), 3, ref.data(), 1, 3, kTol);
    EXPECT_EQ(r.mismatches, 1u);
    EXPECT_EQ(r.first_n, 2u);
}

TEST(Verify, Bf16WidensAndHonoursTheRowStride) {
    // [2, 2] inside rows of 3; the third column holds NaN bits that must never be read.
    const std::vector<uint16_t> got = {0x3F80, 0x4049, 0x7FC0,   // 1.0, 3.140625
                                       0xC100, 0x0000, 0x7FC0};  // -8.0, 0
    const std::vector<float> ref = {1.f, 3.14159265f, -8.f, 0.f};
    const auto r = verify_bf16(got.data(), 3, ref.data(), 2, 2, kTol);
    EXPECT_TRUE(r.passed());
    EXPECT_EQ(r.nan_outputs, 0u);
    EXPECT_EQ(r.max_ref, 8.0);
    EXPECT_DOUBLE_EQ(r.max_abs_err, double(3.14159265f) - 3.140625);
    EXPECT_DOUBLE_EQ(r.max_rel_err, (double(3.14159265f) - 3.140625) / double(3.14159265f));
}

TEST(Verify, Bf16RoundingAloneIsAtMostTwoToTheMinusEight) {
    // The worst case of round-to-nearest-even to 8 significant bits: 1 + 2^-8 is a tie and goes to
    // 1.0, an error of 2^-8 / (1 + 2^-8) = 1/257 = 0.003891, the original's measured max_rel_err.
    const std::vector<float> ref = {1.f + std::ldexp(1.f, -8), 100.f};
    const std::vector<uint16_t> got = {float_to_bf16(ref[0]), float_to_bf16(ref[1])};
    EXPECT_EQ(got[0], 0x3F80);
    const auto r = verify_bf16(got.data(), 2, ref.data(), 1, 2, kTol);
    EXPECT_TRUE(r.passed());
    EXPECT_DOUBLE_EQ(r.max_rel_err, 1.0 / 257.0);
    EXPECT_LE(r.max_rel_err, std::ldexp(1.0, -8));
}

TEST(Verify, F32AndBf16AgreeOnWidenedData) {
    std::vector<uint16_t> got16;
    std::vector<float> got32, ref;
    for (int i = 0; i < 64; ++i) {
        const float x = std::ldexp(float(i * 37 % 101) - 50.f, i % 7) + 0.3f;
        ref.push_back(x);
        got16.push_back(float_to_bf16(x));
        uint32_t u = uint32_t(got16.back()) << 16;
        float f;
        std::memcpy(&f, &u, sizeof f);
        got32.push_back(f);
    }
    const auto a = verify_bf16(got16.data(), 8, ref.data(), 8, 8, kTol);
    const auto b = verify_f32(got32.data(), ref.data(), 8, 8, kTol);
    EXPECT_EQ(a.max_abs_err, b.max_abs_err);
    EXPECT_EQ(a.max_rel_err, b.max_rel_err);
    EXPECT_EQ(a.mismatches, b.mismatches);
    EXPECT_EQ(a.max_ref, b.max_ref);
}

TEST(Verify, RejectsBadArguments) {
    const std::vector<float> ref(4, 1.f);
    const std::vector<uint16_t> got(4, 0x3F80);
    auto expect_invalid = [](auto fn, const char* needle) {
        try {
            fn();
            FAIL() << "expected f4gemm::Error";
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), Errc::InvalidArgument);
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    expect_invalid([&] { verify_bf16(got.data(), 1, ref.data(), 2, 2, kTol); }, "got 1");
    expect_invalid([&] { verify_bf16(nullptr, 2, ref.data(), 2, 2, kTol); }, "null");
    expect_invalid([&] { verify_f32(ref.data(), nullptr, 2, 2, kTol); }, "null");
    expect_invalid([&] { verify_f32(ref.data(), ref.data(), 2, 2, Tolerance{-1.0, 2e-4}); }, "rtol=-1");
    // Empty results are fine and pass.
    EXPECT_TRUE(verify_f32(nullptr, nullptr, 0, 0, kTol).passed());
}

// ---- the promoted mode's judge: |got - ref| <= 2^-8 |ref| + cw |alpha| S ----------------------------------

// cw 2^-4 keeps the arithmetic exact: at ref 256, S 64, alpha -2 the bound is 1 + 8 = 9.
TEST(VerifyPromoted, AtTheBoundPassesAndJustPastItFails) {
    const std::vector<double> ref = {256.0, 256.0, -256.0, 0.0}, s = {64.0, 64.0, 64.0, 64.0};
    std::vector<float> got = {265.f, 247.f, -265.f, 8.f};  // |d - ref| = 9, 9, 9, 8 (ref 0: bound 8)
    VerifyResult r = verify_promoted_f32(got.data(), ref.data(), s.data(), 2, 2, -2.0, 0.0625);
    EXPECT_TRUE(r.promoted);
    EXPECT_TRUE(r.passed()) << r.mismatches;
    EXPECT_EQ(r.cw, 0.0625);
    // c = max((9 - 1) / 128, (8 - 0) / 128) = 2^-4: the bound is met exactly.
    EXPECT_EQ(r.observed_c, 0.0625);
    EXPECT_EQ(std::log2(r.observed_c), -4.0);
    EXPECT_EQ(r.max_abs_err, 9.0);
    EXPECT_EQ(r.max_ref, 256.0);
    // One float ulp past the bound at (0, 1) and (1, 1): mismatches, the first one reported.
    got[1] = std::nextafter(247.f, 0.f);
    got[3] = std::nextafter(8.f, 9.f);
    r = verify_promoted_f32(got.data(), ref.data(), s.data(), 2, 2, -2.0, 0.0625);
    EXPECT_FALSE(r.passed());
    EXPECT_EQ(r.mismatches, 2u);
    ASSERT_TRUE(r.has_first);
    EXPECT_EQ(r.first_m, 0u);
    EXPECT_EQ(r.first_n, 1u);
    EXPECT_EQ(r.first_want, 256.f);
    EXPECT_GT(r.observed_c, 0.0625);
    EXPECT_LT(r.observed_c, 0.0625 * (1 + 1e-5));
    // alpha scales the allowance: at alpha 1 the same results are far outside (bound 1 + 4 = 5).
    got = {265.f, 247.f, -265.f, 8.f};
    r = verify_promoted_f32(got.data(), ref.data(), s.data(), 2, 2, 1.0, 0.0625);
    EXPECT_EQ(r.mismatches, 4u);
    EXPECT_EQ(r.observed_c, 0.125);
}

TEST(VerifyPromoted, BfRoundingAloneIsFreeAndZeroSMustBeWithinIt) {
    // S == 0 (an all-zero row, or alpha 0): only the bf16 rounding is allowed, whatever cw.
    const std::vector<double> ref = {100.0, 100.0}, s = {0.0, 0.0};
    const std::vector<float> ok = {100.390625f, 100.f}, bad = {100.78125f, 100.f};  // 0.39 <= 100/256 < 0.78
    EXPECT_TRUE(verify_promoted_f32(ok.data(), ref.data(), s.data(), 1, 2, 1.0, 1.0).passed());
    const VerifyResult r = verify_promoted_f32(bad.data(), ref.data(), s.data(), 1, 2, 1.0, 1.0);
    EXPECT_EQ(r.mismatches, 1u);
    EXPECT_EQ(r.observed_c, 0.0) << "no output with S > 0";
    // bf16 results: the nearest bf16 of every reference passes with c = 0 (rounding <= |ref| / 257).
    std::vector<double> refs;
    std::vector<uint16_t> bits;
    for (int i = 0; i < 4096; ++i) {
        const double x = std::ldexp(1.0 + i / 4096.0, i % 40 - 20) * (i % 3 ? 1 : -1);
        refs.push_back(x);
        bits.push_back(float_to_bf16(float(x)));
    }
    const std::vector<double> sums(refs.size(), 1.0);
    const VerifyResult b = verify_promoted_bf16(bits.data(), 64, refs.data(), sums.data(), 64, 64, 1.0, 0.0);
    EXPECT_TRUE(b.passed()) << b.mismatches;
    EXPECT_EQ(b.observed_c, 0.0);
}

TEST(VerifyPromoted, NanAndInfAsInTheExactMode) {
    const std::vector<double> ref = {kNan, 1.0, kNan, 1.0, kInf, 3.3e38};
    const std::vector<double> s = {kNan, 1.0, kNan, 1.0, 1.0, 3.3e38};
    const std::vector<float> got = {kNan, kNan, 1.f, 1.f, kInf, kInf};
    const VerifyResult r = verify_promoted_f32(got.data(), ref.data(), s.data(), 2, 3, 1.0, 0.05);
    // NaN/NaN matches, NaN/finite and finite/NaN do not; the same Inf matches; an Inf for a finite ref whose
    // bound reaches bf16's overflow threshold (3.3e38 (1 + 2^-8 + 0.05) > (2 - 2^-8) 2^127) matches.
    EXPECT_EQ(r.mismatches, 2u);
    EXPECT_EQ(r.nan_outputs, 2u);
    ASSERT_TRUE(r.has_first);
    EXPECT_EQ(r.first_n, 1u);
    EXPECT_EQ(r.max_abs_err, 0.0);
    // Without the allowance 3.3e38 stays below the threshold: the Inf is a mismatch.
    const VerifyResult t = verify_promoted_f32(got.data() + 5, ref.data() + 5, s.data() + 5, 1, 1, 1.0, 0.0);
    EXPECT_EQ(t.mismatches, 1u);
    EXPECT_TRUE(std::isinf(t.max_abs_err));
    // A finite output for an infinite reference, and an Inf of the wrong sign, are mismatches.
    const std::vector<double> ref2 = {kInf, -3.3e38};
    const std::vector<double> s2 = {1.0, 3.3e38};
    const std::vector<float> got2 = {1.f, kInf};
    EXPECT_EQ(verify_promoted_f32(got2.data(), ref2.data(), s2.data(), 1, 2, 1.0, 0.05).mismatches, 2u);
}

TEST(VerifyPromoted, RejectsBadArguments) {
    const std::vector<double> ref(4, 1.0), s(4, 1.0);
    const std::vector<uint16_t> got(4, 0x3F80);
    const auto expect_invalid = [](auto fn, const char* needle) {
        try {
            fn();
            FAIL() << "expected f4gemm::Error";
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), Errc::InvalidArgument);
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    expect_invalid([&] { verify_promoted_bf16(got.data(), 1, ref.data(), s.data(), 2, 2, 1.0, 0.1); },
                   "got 1");
    expect_invalid([&] { verify_promoted_bf16(got.data(), 2, ref.data(), nullptr, 2, 2, 1.0, 0.1); },
                   "abs_sum is null");
    expect_invalid([&] { verify_promoted_bf16(got.data(), 2, ref.data(), s.data(), 2, 2, 1.0, -1.0); },
                   "cw=-1");
    expect_invalid([&] { verify_promoted_bf16(got.data(), 2, ref.data(), s.data(), 2, 2, kInf, 0.1); },
                   "alpha finite");
    EXPECT_TRUE(verify_promoted_f32(nullptr, nullptr, nullptr, 0, 0, 1.0, 0.1).passed());
    // The bf16 reading honours the row stride like verify_bf16.
    const std::vector<uint16_t> strided = {0x3F80, 0x4000, 0x7FC0,
                                           0x3F80, 0x4000, 0x7FC0};  // 1, 2, NaN padding
    const std::vector<double> r2 = {1.0, 2.0, 1.0, 2.0};
    EXPECT_TRUE(verify_promoted_bf16(strided.data(), 3, r2.data(), s.data(), 2, 2, 1.0, 0.0).passed());
}

}  // namespace
}  // namespace f4gemm
