// Tests of the float64 references (src/core/reference.cpp): hand-computed GEMMs with alpha, beta
// and C, double accumulation, NaN propagation, thread-count invariance, and reference_gemm_mx's
// exact sums where the float32 path overflows or cancels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"
#include "f4gemm/operands.hpp"
#include "f4gemm/reference.hpp"
#include "test_util.hpp"

namespace f4gemm {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

using test::make_mx;

// The 2x2x32 case by hand. A row 0: 32 x 1.0 at scale 2 -> 2.0 each. A row 1: 16 x 0.5 then
// 16 x -6 at scale 0.5 -> 0.25, -3. B row 0: 32 x 1.5 at scale 1 -> 1.5. B row 1: 4, -2
// alternating at scale 4 -> 16, -8.
//   D[0][0] = 32 * 2 * 1.5                   =   96
//   D[0][1] = 2 * (16 * 16 - 16 * 8)         =  256
//   D[1][0] = 16 * 0.25 * 1.5 - 16 * 3 * 1.5 =  -66
//   D[1][1] = 0.25 * (8*16 - 8*8) - 3 * 64   = -176
std::vector<float> hand_a() {
    std::vector<float> a(2 * 32);
    for (int t = 0; t < 32; ++t) {
        a[t] = 2.0f;
        a[32 + t] = t < 16 ? 0.25f : -3.0f;
    }
    return a;
}
std::vector<float> hand_b() {
    std::vector<float> b(2 * 32);
    for (int t = 0; t < 32; ++t) {
        b[t] = 1.5f;
        b[32 + t] = (t % 2 == 0) ? 16.0f : -8.0f;
    }
    return b;
}

TEST(Reference, HandComputed2x2x32) {
    const auto a = hand_a(), b = hand_b();
    const auto d = reference_gemm(a.data(), b.data(), 2, 2, 32, 1.f, 0.f, nullptr);
    ASSERT_EQ(d.size(), 4u);
    EXPECT_EQ(d[0], 96.f);
    EXPECT_EQ(d[1], 256.f);
    EXPECT_EQ(d[2], -66.f);
    EXPECT_EQ(d[3], -176.f);
}

TEST(Reference, HandComputedAlphaBetaC) {
    const auto a = hand_a(), b = hand_b();
    const std::vector<float> c = {1.f, 2.f, 3.f, 4.f};
    const auto d = reference_gemm(a.data(), b.data(), 2, 2, 32, 0.5f, 2.f, c.data());
    EXPECT_EQ(d[0], 0.5f * 96 + 2 * 1);
    EXPECT_EQ(d[1], 0.5f * 256 + 2 * 2);
    EXPECT_EQ(d[2], 0.5f * -66 + 2 * 3);
    EXPECT_EQ(d[3], 0.5f * -176 + 2 * 4);
}

TEST(Reference, BetaZeroIgnoresC) {
    const auto a = hand_a(), b = hand_b();
    const std::vector<float> c = {kNan, kInf, kNan, -kInf};
    const auto d = reference_gemm(a.data(), b.data(), 2, 2, 32, 1.f, 0.f, c.data());
    EXPECT_EQ(d[0], 96.f);
    EXPECT_EQ(d[3], -176.f);
}

TEST(Reference, EpilogueRoundsOnceFromDouble) {
    // acc = 2^24 + 1 (exact in double, not in float). alpha * acc + beta * c = 2^24 + 1 - 1 = 2^24
    // only if the sum stays in double; rounding acc to float first would give 2^24 - 1.
    const std::vector<float> a = {16777216.f, 1.f}, b = {1.f, 1.f}, c = {-1.f};
    const auto d = reference_gemm(a.data(), b.data(), 1, 1, 2, 1.f, 1.f, c.data());
    EXPECT_EQ(d[0], 16777216.f);
}

TEST(Reference, AccumulatesInDouble) {
    // 2^24 + 1 - 2^24: a float accumulator loses the 1, the double one keeps it.
    const std::vector<float> a = {16777216.f, 1.f, -16777216.f}, b = {1.f, 1.f, 1.f};
    const auto d = reference_gemm(a.data(), b.data(), 1, 1, 3, 1.f, 0.f, nullptr);
    EXPECT_EQ(d[0], 1.f);
}

TEST(Reference, NanPropagatesToTheAffectedOutputsOnly) {
    const size_t m = 3, n = 5, k = 64;
    std::vector<float> a(m * k, 1.f), b(n * k, 0.5f);
    a[1 * k + 7] = kNan;   // row 1 of A
    b[3 * k + 40] = kNan;  // row 3 of B = column 3 of D
    const auto d = reference_gemm(a.data(), b.data(), m, n, k, 1.f, 0.f, nullptr);
    for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < n; ++j) {
            if (i == 1 || j == 3)
                EXPECT_TRUE(std::isnan(d[i * n + j])) << i << "," << j;
            else
                EXPECT_EQ(d[i * n + j], 32.f) << i << "," << j;
        }
}

TEST(Reference, ThreadCountDoesNotChangeTheResult) {
    // Odd sizes cover the four-column passes and their remainder, and row chunks of unequal size.
    const size_t m = 37, n = 19, k = 96;
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.f, 3.f);
    std::vector<float> a(m * k), b(n * k), c(m * n);
    for (auto& v : a) v = nd(rng);
    for (auto& v : b) v = nd(rng);
    for (auto& v : c) v = nd(rng);
    const auto one = reference_gemm(a.data(), b.data(), m, n, k, 1.25f, -0.5f, c.data(), 1);
    for (int threads : {0, 2, 3, 8, 64}) {
        const auto many = reference_gemm(a.data(), b.data(), m, n, k, 1.25f, -0.5f, c.data(), threads);
        ASSERT_EQ(many.size(), one.size());
        for (size_t i = 0; i < one.size(); ++i)
            ASSERT_EQ(many[i], one[i]) << "threads=" << threads << " i=" << i;
    }
    // And each element is the plain in-order double sum.
    for (size_t i = 0; i < m; i += 9)
        for (size_t j = 0; j < n; ++j) {
            double acc = 0;
            for (size_t kk = 0; kk < k; ++kk) acc += double(a[i * k + kk]) * double(b[j * k + kk]);
            EXPECT_EQ(one[i * n + j], float(1.25 * acc + -0.5 * double(c[i * n + j])));
        }
}

TEST(Reference, EmptyAndNullArguments) {
    EXPECT_TRUE(reference_gemm(nullptr, nullptr, 0, 4, 32, 1.f, 0.f, nullptr).empty());
    const std::vector<float> a(32, 1.f);
    try {
        reference_gemm(a.data(), nullptr, 1, 1, 32, 1.f, 0.f, nullptr);
        FAIL() << "expected f4gemm::Error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find("operand B"), std::string::npos) << e.what();
    }
}

// ---- reference_gemm_mx --------------------------------------------------------------------------

TEST(ReferenceMx, HandComputedFromNibbles) {
    // The 2x2x32 case again, now as MXFP4: nibble 2 = 1.0, 1 = 0.5, 0xF = -6, 3 = 1.5, 6 = 4,
    // 0xC = -2; scales 128 = 2, 126 = 0.5, 127 = 1, 129 = 4.
    const MxOperand a = make_mx(
        2, 32, [](size_t r, size_t i) -> uint8_t { return r == 0 ? 0x2 : (i < 16 ? 0x1 : 0xF); },
        [](size_t r, size_t) -> uint8_t { return r == 0 ? 128 : 126; });
    const MxOperand b = make_mx(
        2, 32, [](size_t r, size_t i) -> uint8_t { return r == 0 ? 0x3 : (i % 2 ? 0xC : 0x6); },
        [](size_t r, size_t) -> uint8_t { return r == 0 ? 127 : 129; });
    const std::vector<float> c = {1.f, 2.f, 3.f, 4.f};
    const auto d = reference_gemm_mx(a, b, 0.5f, 2.f, c.data());
    ASSERT_EQ(d.size(), 4u);
    EXPECT_EQ(d[0], 50.f);
    EXPECT_EQ(d[1], 132.f);
    EXPECT_EQ(d[2], -27.f);
    EXPECT_EQ(d[3], -80.f);
}

TEST(ReferenceMx, EqualsTheFloatReferenceOnSeedData) {
    const size_t m = 24, n = 39, k = 512;  // n % 4 != 0: the column remainder too
    const MxOperand a = make_operand(m, k, kSeedA), b = make_operand(n, k, kSeedB);
    const auto a32 = dequantize(a), b32 = dequantize(b);
    const auto want = reference_gemm(a32.data(), b32.data(), m, n, k, 1.f, 0.f, nullptr);
    const auto got = reference_gemm_mx(a, b, 1.f, 0.f, nullptr, 3);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << i;
}

TEST(ReferenceMx, ExactWhereFloatDequantizationOverflows) {
    // A: 6 * 2^127 (E8M0 254) does not fit float32; B: 0.5 * 2^-126 (E8M0 1). Each product is
    // 6 * 0.5 * 2 = 6, the sum 32 * 6 = 192. The float path sees Inf.
    const MxOperand a = make_mx(
        1, 32, [](size_t, size_t) -> uint8_t { return 0x7; }, [](size_t, size_t) -> uint8_t { return 254; });
    const MxOperand b = make_mx(
        1, 32, [](size_t, size_t) -> uint8_t { return 0x1; }, [](size_t, size_t) -> uint8_t { return 1; });
    EXPECT_EQ(reference_gemm_mx(a, b, 1.f, 0.f, nullptr)[0], 192.f);
    const auto a32 = dequantize(a), b32 = dequantize(b);
    EXPECT_TRUE(std::isinf(reference_gemm(a32.data(), b32.data(), 1, 1, 32, 1.f, 0.f, nullptr)[0]));
}

TEST(ReferenceMx, ExactAcrossCancellingBlocks) {
    // Blocks of A: +1 * 2^127, +1 * 2^-126, -1 * 2^127; B all 1.0. The exact sum is 32 * 2^-126;
    // an in-order double sum loses the middle block to the first and returns 0.
    const MxOperand a = make_mx(
        1, 96, [](size_t, size_t i) -> uint8_t { return i < 64 ? 0x2 : 0xA; },
        [](size_t, size_t blk) -> uint8_t { return blk == 1 ? 1 : 254; });
    const MxOperand b = make_mx(
        1, 96, [](size_t, size_t) -> uint8_t { return 0x2; }, [](size_t, size_t) -> uint8_t { return 127; });
    EXPECT_EQ(reference_gemm_mx(a, b, 1.f, 0.f, nullptr)[0], std::ldexp(1.f, -121));
    const auto a32 = dequantize(a), b32 = dequantize(b);
    EXPECT_EQ(reference_gemm(a32.data(), b32.data(), 1, 1, 96, 1.f, 0.f, nullptr)[0], 0.f);
}

TEST(ReferenceMx, NanScaleGivesNanInTheAffectedOutputs) {
    MxOperand a = make_operand(4, 64, kSeedA), b = make_operand(3, 64, kSeedB);
    a.scales[2 * 2 + 1] = 0xFF;  // row 2, block 1
    const auto d = reference_gemm_mx(a, b, 1.f, 0.f, nullptr);
    for (size_t i = 0; i < 4; ++i)
        for (size_t j = 0; j < 3; ++j) EXPECT_EQ(std::isnan(d[i * 3 + j]), i == 2) << i << "," << j;
}

TEST(ReferenceMx, RejectsMismatchedOperands) {
    const MxOperand a = make_operand(2, 64, kSeedA), b = make_operand(2, 96, kSeedB);
    try {
        reference_gemm_mx(a, b, 1.f, 0.f, nullptr);
        FAIL() << "expected f4gemm::Error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find("got 96"), std::string::npos) << e.what();
    }
}

// ---- reference_gemm_mx_abs: the promoted mode's reference and S = sum_k |a_k b_k| ----------------------

TEST(ReferenceMxAbs, HandComputedMagnitudes) {
    // The 2x2x32 case: S[0][0] = 96, S[0][1] = 32 * 2 * 12 = 768, S[1][0] = 16 * 0.375 + 16 * 4.5 = 78,
    // S[1][1] = 16 * 0.25 * 12 + 16 * 3 * 12 = 624 (|b| = 16 and 8 alternate: 12 on average).
    const MxOperand a = make_mx(
        2, 32, [](size_t r, size_t i) -> uint8_t { return r == 0 ? 0x2 : (i < 16 ? 0x1 : 0xF); },
        [](size_t r, size_t) -> uint8_t { return r == 0 ? 128 : 126; });
    const MxOperand b = make_mx(
        2, 32, [](size_t r, size_t i) -> uint8_t { return r == 0 ? 0x3 : (i % 2 ? 0xC : 0x6); },
        [](size_t r, size_t) -> uint8_t { return r == 0 ? 127 : 129; });
    const std::vector<float> c = {1.f, 2.f, 3.f, 4.f};
    const MxReferenceAbs r = reference_gemm_mx_abs(a, b, 0.5f, 2.f, c.data());
    ASSERT_EQ(r.ref.size(), 4u);
    ASSERT_EQ(r.abs_sum.size(), 4u);
    EXPECT_EQ(r.ref[0], 50.0);
    EXPECT_EQ(r.ref[1], 132.0);
    EXPECT_EQ(r.ref[2], -27.0);
    EXPECT_EQ(r.ref[3], -80.0);
    EXPECT_EQ(r.abs_sum[0], 96.0);  // S has neither alpha nor C
    EXPECT_EQ(r.abs_sum[1], 768.0);
    EXPECT_EQ(r.abs_sum[2], 78.0);
    EXPECT_EQ(r.abs_sum[3], 624.0);
}

TEST(ReferenceMxAbs, AgreesWithTheFloatReferenceAndADirectSum) {
    const size_t m = 7, n = 13, k = 1024;
    for (DataKind kind : {DataKind::Seed, DataKind::Gaussian, DataKind::WideScale}) {
        const MxOperand a = make_operand(m, k, kSeedA, kind), b = make_operand(n, k, kSeedB, kind);
        const auto want = reference_gemm_mx(a, b, -1.25f, 0.f, nullptr);
        const MxReferenceAbs r = reference_gemm_mx_abs(a, b, -1.25f, 0.f, nullptr, 2);
        for (size_t i = 0; i < m; ++i)
            for (size_t j = 0; j < n; ++j) {
                ASSERT_EQ(float(r.ref[i * n + j]), want[i * n + j])
                    << to_string(kind) << " " << i << "," << j;
                // S in double by a plain loop (within a few double roundings of the exact sum), and >= |AB|.
                double s = 0;
                for (size_t t = 0; t < k; ++t) {
                    const double x = double(e2m1_to_float(unpack_nibble(a.packed.data() + i * k / 2, t))) *
                                     e8m0_to_double(a.scales[i * k / 32 + t / 32]);
                    const double y = double(e2m1_to_float(unpack_nibble(b.packed.data() + j * k / 2, t))) *
                                     e8m0_to_double(b.scales[j * k / 32 + t / 32]);
                    s += std::fabs(x * y);
                }
                EXPECT_NEAR(r.abs_sum[i * n + j], s, 1e-12 * s) << to_string(kind);
                EXPECT_GE(1.25 * r.abs_sum[i * n + j], std::fabs(r.ref[i * n + j]));
            }
    }
}

TEST(ReferenceMxAbs, NanScaleGivesNanInBoth) {
    MxOperand a = make_operand(4, 64, kSeedA), b = make_operand(3, 64, kSeedB);
    b.scales[1 * 2 + 0] = 0xFF;  // column 1, block 0
    const MxReferenceAbs r = reference_gemm_mx_abs(a, b, 1.f, 0.f, nullptr);
    for (size_t i = 0; i < 4; ++i)
        for (size_t j = 0; j < 3; ++j) {
            EXPECT_EQ(std::isnan(r.ref[i * 3 + j]), j == 1) << i << "," << j;
            EXPECT_EQ(std::isnan(r.abs_sum[i * 3 + j]), j == 1) << i << "," << j;
        }
}

}  // namespace
}  // namespace f4gemm
