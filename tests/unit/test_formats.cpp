// Tests of formats.hpp: exhaustive e2m1 / E8M0 / bf16 codecs against independent brute-force
// references, hand-computed OCP MX quantization blocks, and the round-trip property that data
// already on the MXFP4 grid survives quantize(dequantize(.)) unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"

using namespace f4gemm;

namespace {

uint32_t bits(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
}
float from_bits(uint32_t u) {
    float x;
    std::memcpy(&x, &u, 4);
    return x;
}

const float kMagnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

// Brute force: the nearest e2m1 magnitude, ties to the even code, anything past 6 -> 6.
uint8_t brute_e2m1(float x) {
    const double a = std::fabs(double(x));
    int best = 0;
    for (int c = 1; c < 8; ++c) {
        const double d = std::fabs(a - kMagnitudes[c]), db = std::fabs(a - kMagnitudes[best]);
        if (d < db || (d == db && c % 2 == 0)) best = c;
    }
    return uint8_t((std::signbit(x) ? 8 : 0) | best);
}

// Independent bf16 RNE: pick the nearer of the two neighbouring bf16 values in double.
uint16_t brute_bf16(float x) {
    const uint32_t u = bits(x);
    const uint16_t lo = uint16_t(u >> 16), hi = uint16_t(lo + 1);
    const double dl = std::fabs(double(x) - double(from_bits(uint32_t(lo) << 16)));
    // hi may be the Inf pattern: use the value the exponent would have if it continued (2^128).
    const double vhi = (hi & 0x7FFF) == 0x7F80 ? std::copysign(std::ldexp(1.0, 128), double(x))
                                               : double(from_bits(uint32_t(hi) << 16));
    const double dh = std::fabs(double(x) - vhi);
    if (dl < dh) return lo;
    if (dh < dl) return hi;
    return (lo & 1) ? hi : lo;
}

uint8_t nibble(const std::vector<uint8_t>& packed, size_t i) {
    return unpack_nibble(packed.data(), i);
}

}  // namespace

// ---- e2m1 ---------------------------------------------------------------------------------------

TEST(E2m1, AllSixteenNibblesBothWays) {
    const float want[16] = {0, .5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -.5f, -1, -1.5f, -2, -3, -4, -6};
    for (int n = 0; n < 16; ++n) {
        const float v = e2m1_to_float(uint8_t(n));
        EXPECT_EQ(bits(v), bits(want[n])) << "nibble " << n;
        EXPECT_EQ(float_to_e2m1(v), n) << "nibble " << n;
        EXPECT_EQ(e2m1_to_float(uint8_t(n | 0xF0)), v) << "only the low 4 bits count";
    }
    EXPECT_TRUE(std::signbit(e2m1_to_float(8)));
}

TEST(E2m1, TiePointsRoundToEvenCode) {
    struct Case {
        float x;
        uint8_t code;
    };
    const Case cases[] = {
        {0.25f, 0x0},  {0.75f, 0x2},  {1.25f, 0x2},  {1.75f, 0x4},  {2.5f, 0x4},   {3.5f, 0x6},
        {5.0f, 0x6},   {-0.25f, 0x8}, {-0.75f, 0xA}, {-1.25f, 0xA}, {-1.75f, 0xC}, {-2.5f, 0xC},
        {-3.5f, 0xE},  {-5.0f, 0xE},  {6.0f, 0x7},   {6.5f, 0x7},   {7.0f, 0x7},   {1e30f, 0x7},
        {-1e30f, 0xF}, {0.0f, 0x0},   {-0.0f, 0x8},  {-0.1f, 0x8},  {0.26f, 0x1},  {0.74f, 0x1},
        {5.01f, 0x7},  {4.99f, 0x6},  {2.49f, 0x4},  {2.51f, 0x5},  {3.49f, 0x5},  {1e-40f, 0x0},
    };
    for (const Case& c : cases) EXPECT_EQ(float_to_e2m1(c.x), c.code) << "x = " << c.x;
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_EQ(float_to_e2m1(inf), 0x7);
    EXPECT_EQ(float_to_e2m1(-inf), 0xF);
    EXPECT_EQ(float_to_e2m1(std::numeric_limits<float>::quiet_NaN()), 0x7);
    EXPECT_EQ(float_to_e2m1(-std::numeric_limits<float>::quiet_NaN()), 0xF);
}

TEST(E2m1, DenseSweepMatchesBruteForce) {
    // Every multiple of 2^-12 in [-8, 8] (all tie points are multiples of 2^-2), plus their
    // float neighbours, so each threshold is tested from both sides.
    for (int i = -8 * 4096; i <= 8 * 4096; ++i) {
        const float x = float(i) / 4096.0f;
        for (float y : {x, std::nextafter(x, -100.0f), std::nextafter(x, 100.0f)})
            ASSERT_EQ(float_to_e2m1(y), brute_e2m1(y)) << "x = " << y;
    }
}

// ---- E8M0 ---------------------------------------------------------------------------------------

TEST(E8m0, All256Values) {
    for (int e = 0; e < 256; ++e) {
        if (e == 0xFF) {
            EXPECT_TRUE(std::isnan(e8m0_to_float(uint8_t(e))));
            EXPECT_TRUE(std::isnan(e8m0_to_double(uint8_t(e))));
            continue;
        }
        const double want = std::ldexp(1.0, e - 127);
        EXPECT_EQ(e8m0_to_double(uint8_t(e)), want) << "e = " << e;
        EXPECT_EQ(double(e8m0_to_float(uint8_t(e))), want) << "e = " << e;
    }
    // The original's bit patterns: e = 0 is the subnormal 2^-127 (not 2^-126), 127 is 1.0.
    EXPECT_EQ(bits(e8m0_to_float(0)), 0x00400000u);
    EXPECT_EQ(bits(e8m0_to_float(0xFF)), 0x7F800001u);
    EXPECT_EQ(e8m0_to_float(127), 1.0f);
    EXPECT_EQ(e8m0_to_float(254), std::ldexp(1.0f, 127));
}

// ---- bf16 ---------------------------------------------------------------------------------------

TEST(Bf16, AllPatternsRoundTrip) {
    for (uint32_t b = 0; b < 65536; ++b) {
        const float f = bf16_to_float(uint16_t(b));
        ASSERT_EQ(bits(f), b << 16);
        const uint16_t back = float_to_bf16(f);
        if (std::isnan(f)) {
            // NaN stays NaN, quiet, with its sign: the quiet bit is bit 6 of bf16.
            ASSERT_TRUE(std::isnan(bf16_to_float(back))) << std::hex << b;
            ASSERT_EQ(back & 0x8040u, (b & 0x8000u) | 0x0040u) << std::hex << b;
        } else {
            ASSERT_EQ(back, b) << std::hex << b;
        }
    }
}

TEST(Bf16, RoundToNearestEven) {
    struct Case {
        uint32_t f;
        uint16_t b;
    };
    const Case cases[] = {
        {0x3F808000u, 0x3F80},                                                // tie, even kept
        {0x3F818000u, 0x3F82},                                                // tie, odd rounds up to even
        {0x3F808001u, 0x3F81},                                                // just above the tie
        {0x3F807FFFu, 0x3F80},                                                // just below the tie
        {0xBF808000u, 0xBF80},                                                // negative tie
        {0xBF818000u, 0xBF82}, {0x3F80FFFFu, 0x3F81}, {0x3FFFFFFFu, 0x4000},  // carry into the exponent
        {0x00008000u, 0x0000},                                                // subnormal tie to even (zero)
        {0x00018000u, 0x0002},                                                // subnormal tie to even (up)
        {0x007FFFFFu, 0x0080},                         // largest subnormal rounds up to the smallest normal
        {0x7F800000u, 0x7F80},                         // +Inf
        {0xFF800000u, 0xFF80},                         // -Inf
        {0x7F7FFFFFu, 0x7F80},                         // FLT_MAX overflows to Inf, as IEEE RNE does
        {0xFF7FFFFFu, 0xFF80}, {0x7F7F8000u, 0x7F80},  // tie at the top, odd -> rounds to Inf
        {0x7F7F7FFFu, 0x7F7F},                         // largest value that stays finite
        {0x7F7E8000u, 0x7F7E},                         // tie, even kept
        {0x80000000u, 0x8000},                         // -0 keeps its sign
        {0x7F800001u, 0x7FC0},                         // signalling NaN made quiet, not turned into Inf
        {0xFF800001u, 0xFFC0}, {0x7FC00000u, 0x7FC0}, {0x7FFFFFFFu, 0x7FFF},
    };
    for (const Case& c : cases) EXPECT_EQ(float_to_bf16(from_bits(c.f)), c.b) << std::hex << c.f;
}

TEST(Bf16, RandomFloatsMatchBruteForce) {
    std::mt19937 rng(7);
    for (int i = 0; i < 1000000; ++i) {
        const uint32_t u = rng();
        const float x = from_bits(u);
        if (std::isnan(x)) continue;
        ASSERT_EQ(float_to_bf16(x), brute_bf16(x)) << std::hex << u;
    }
}

// ---- OCP MX quantization ------------------------------------------------------------------------

TEST(Quantize, HandComputedBlocks) {
    // One row, eight blocks of 32. Expected scales and codes worked out by hand:
    //  block 0: amax 6      -> floor(log2 6) = 2, exp 0,  E8M0 127; elements 6,-3,0.5 exact
    //  block 1: amax 1      -> exp -2, E8M0 125; 1 -> 4 (0x6), 0.375 -> 1.5 (0x3), -0.25 -> -1
    //  block 2: all zeros   -> E8M0 0, zero nibbles (also for -0.0)
    //  block 3: amax 7.5    -> exp 0, 7.5 saturates to 6 (0x7), 5 ties to 4 (0x6), 2.5 -> 2
    //  block 4: amax 2^-125 -> exp -127, E8M0 0; 2^-125 * 2^127 = 4 (0x6)
    //  block 5: amax = largest subnormal (2^-126 - 2^-149): floor(log2) = -127 from the bits,
    //           exp -129 clamps to -127 (E8M0 0); element 1.99999976 rounds to 2 (0x4)
    //  block 6: amax FLT_MAX -> floor(log2) 127, exp 125, E8M0 252; FLT_MAX * 2^-125 ~ 8 -> 6
    //  block 7: amax 1.99999988 (0x3FFFFFFF): floor(log2) 0, exp -2 (E8M0 125), where a
    //           rounded log2f would give 1; the element * 4 = 7.9999995 saturates to 6
    std::vector<float> x(8 * 32, 0.0f);
    x[0] = 6.0f, x[1] = -3.0f, x[2] = 0.5f;
    x[32] = 1.0f, x[33] = 0.375f, x[34] = -0.25f;
    x[64 + 5] = -0.0f;
    x[96] = 7.5f, x[97] = 5.0f, x[98] = 2.5f;
    x[128] = std::ldexp(1.0f, -125);
    x[160] = from_bits(0x007FFFFFu);
    x[192] = std::numeric_limits<float>::max();
    x[224] = from_bits(0x3FFFFFFFu);
    std::vector<uint8_t> packed(128, 0xEE), scales(8, 0xEE);
    quantize_mxfp4(x.data(), 1, 256, packed.data(), scales.data());
    EXPECT_EQ(scales, (std::vector<uint8_t>{127, 125, 0, 127, 0, 0, 252, 125}));
    EXPECT_EQ(nibble(packed, 0), 0x7);
    EXPECT_EQ(nibble(packed, 1), 0xD);
    EXPECT_EQ(nibble(packed, 2), 0x1);
    EXPECT_EQ(nibble(packed, 3), 0x0);
    EXPECT_EQ(nibble(packed, 32), 0x6);
    EXPECT_EQ(nibble(packed, 33), 0x3);
    EXPECT_EQ(nibble(packed, 34), 0xA);
    for (int i = 64; i < 96; ++i) EXPECT_EQ(nibble(packed, size_t(i)), 0) << i;
    EXPECT_EQ(nibble(packed, 96), 0x7);
    EXPECT_EQ(nibble(packed, 97), 0x6);
    EXPECT_EQ(nibble(packed, 98), 0x4);
    EXPECT_EQ(nibble(packed, 128), 0x6);
    EXPECT_EQ(nibble(packed, 160), 0x4);
    EXPECT_EQ(nibble(packed, 192), 0x7);
    EXPECT_EQ(nibble(packed, 224), 0x7);
}

TEST(Quantize, SubnormalAndTinyBlocksClampToSmallestScale) {
    // Smallest subnormal: 2^-149 * 2^127 = 2^-22 rounds to 0. 2^-124: exp -126, E8M0 1.
    std::vector<float> x(64, 0.0f);
    x[0] = from_bits(1);
    x[32] = std::ldexp(1.0f, -124), x[33] = std::ldexp(1.0f, -127);
    std::vector<uint8_t> packed(32), scales(2);
    quantize_mxfp4(x.data(), 1, 64, packed.data(), scales.data());
    EXPECT_EQ(scales[0], 0);
    EXPECT_EQ(nibble(packed, 0), 0);
    EXPECT_EQ(scales[1], 1);
    EXPECT_EQ(nibble(packed, 32), 0x6);  // 2^-124 / 2^-126 = 4
    EXPECT_EQ(nibble(packed, 33), 0x1);  // 2^-127 / 2^-126 = 0.5
}

TEST(Quantize, NanOrInfBlockGetsNanScaleAndZeroElements) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> x(2 * 96, 1.0f);  // 2 rows x 3 blocks
    x[5] = nan;
    x[96 + 40] = inf;
    x[96 + 64 + 31] = -inf;
    std::vector<uint8_t> packed(2 * 48, 0xEE), scales(6, 0xEE);
    quantize_mxfp4(x.data(), 2, 96, packed.data(), scales.data());
    EXPECT_EQ(scales, (std::vector<uint8_t>{0xFF, 125, 125, 125, 0xFF, 0xFF}));
    for (int i = 0; i < 16; ++i) EXPECT_EQ(packed[size_t(i)], 0);
    for (int i = 16; i < 48; ++i) EXPECT_EQ(packed[size_t(i)], 0x66);  // 1.0 * 4 = 4 -> 0x6
    for (int i = 48 + 16; i < 96; ++i) EXPECT_EQ(packed[size_t(i)], 0);
    std::vector<float> out(96);
    dequantize_mxfp4_row(packed.data(), scales.data(), 96, out.data());
    for (int i = 0; i < 32; ++i) EXPECT_TRUE(std::isnan(out[size_t(i)]));
    for (int i = 32; i < 96; ++i) EXPECT_EQ(out[size_t(i)], 1.0f);
}

TEST(Quantize, GridDataRoundTripsExactly) {
    // x = e2m1 * 2^(e-127) with e in 0..252 (253 and 254 overflow float32 for large elements).
    // Re-quantizing picks exp' <= e and every v * 2^(e - exp') is again on the e2m1 grid, so the
    // values must come back exactly, although the codes may differ.
    std::mt19937 rng(99);
    std::uniform_int_distribution<int> nib(0, 15), ex(0, 252);
    const size_t rows = 64, k = 512;
    std::vector<uint8_t> packed(rows * k / 2), scales(rows * k / 32);
    for (auto& b : packed) b = uint8_t(nib(rng) | (nib(rng) << 4));
    for (auto& s : scales) s = uint8_t(ex(rng));
    std::vector<float> x(rows * k), y(rows * k);
    for (size_t r = 0; r < rows; ++r)
        dequantize_mxfp4_row(&packed[r * k / 2], &scales[r * k / 32], k, &x[r * k]);
    std::vector<uint8_t> packed2(packed.size()), scales2(scales.size());
    quantize_mxfp4(x.data(), rows, k, packed2.data(), scales2.data());
    for (size_t r = 0; r < rows; ++r)
        dequantize_mxfp4_row(&packed2[r * k / 2], &scales2[r * k / 32], k, &y[r * k]);
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(x[i], y[i]) << "element " << i;
    for (size_t j = 0; j < scales.size(); ++j) ASSERT_LE(scales2[j], scales[j]) << "block " << j;
}

TEST(Quantize, DequantizeUsesLowNibbleFirst) {
    const uint8_t packed[16] = {0x71, 0xF8};  // elements 0.5, 6, -0, -6, then zeros
    const uint8_t scale[1] = {128};           // 2
    float out[32];
    dequantize_mxfp4_row(packed, scale, 32, out);
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(out[1], 12.0f);
    EXPECT_EQ(bits(out[2]), 0x80000000u);
    EXPECT_EQ(out[3], -12.0f);
    EXPECT_EQ(out[4], 0.0f);
}

TEST(Quantize, RejectsKNotMultipleOf32) {
    std::vector<float> x(48);
    std::vector<uint8_t> packed(24), scales(2);
    try {
        quantize_mxfp4(x.data(), 1, 48, packed.data(), scales.data());
        FAIL() << "no throw";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find("48"), std::string::npos) << e.what();
    }
    EXPECT_THROW(dequantize_mxfp4_row(packed.data(), scales.data(), 48, x.data()), Error);
}
