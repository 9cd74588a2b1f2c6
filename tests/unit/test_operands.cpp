// Tests of operands.hpp: the seed generator pinned byte for byte (values cross-checked with an
// independent Python replica of mt19937 + libstdc++'s uniform_int_distribution, see
// docs/LAYOUTS.md), its structure and per-row interleaving, and each stress kind's promise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"
#include "f4gemm/operands.hpp"

using namespace f4gemm;

TEST(SeedOperand, PinnedFirstBytesAndScales) {
    // make_operand(2, 256, 1234): row 0 = bytes 0..127 then scales 0..7, row 1 after it.
    const MxOperand a = make_operand(2, 256, kSeedA);
    ASSERT_EQ(a.packed.size(), 256u);
    ASSERT_EQ(a.scales.size(), 16u);
    const std::vector<uint8_t> row0 = {0x73, 0xD9, 0x97, 0xCC, 0xDC, 0x24, 0x34, 0xDC};
    const std::vector<uint8_t> row1 = {0x9D, 0x74, 0xF2, 0xC2, 0x0F, 0x32, 0x15, 0x29};
    EXPECT_EQ(std::vector<uint8_t>(a.packed.begin(), a.packed.begin() + 8), row0);
    EXPECT_EQ(std::vector<uint8_t>(a.packed.begin() + 128, a.packed.begin() + 136), row1);
    EXPECT_EQ(a.scales, (std::vector<uint8_t>{124, 128, 124, 126, 126, 128, 128, 125,  //
                                              128, 130, 128, 128, 125, 124, 129, 127}));
    const MxOperand b = make_operand(2, 256, kSeedB);
    EXPECT_EQ(std::vector<uint8_t>(b.packed.begin(), b.packed.begin() + 8),
              (std::vector<uint8_t>{0x87, 0xA0, 0x85, 0x78, 0xD9, 0xE6, 0xB2, 0x04}));
    EXPECT_EQ(b.scales, (std::vector<uint8_t>{124, 126, 130, 127, 127, 129, 128, 130,  //
                                              127, 126, 130, 130, 125, 124, 126, 127}));
}

TEST(SeedOperand, SameStreamAsTheOriginalLoop) {
    // asm_f4gemm's make_operand, restated: one engine, per row the bytes (low nibble drawn
    // first) and then that row's scales.
    const size_t rows = 5, k = 96;
    std::mt19937 rng(42);
    std::uniform_int_distribution<int> nib(0, 15), ex(124, 130);
    std::vector<uint8_t> packed, scales;
    for (size_t r = 0; r < rows; ++r) {
        for (size_t b = 0; b < k / 2; ++b) {
            const int lo = nib(rng);
            const int hi = nib(rng);
            packed.push_back(uint8_t((hi << 4) | lo));
        }
        for (size_t s = 0; s < k / 32; ++s) scales.push_back(uint8_t(ex(rng)));
    }
    const MxOperand op = make_operand(rows, k, 42);
    EXPECT_EQ(op.rows, rows);
    EXPECT_EQ(op.k, k);
    EXPECT_EQ(op.packed, packed);
    EXPECT_EQ(op.scales, scales);
}

TEST(SeedOperand, StructureAndDeterminism) {
    const size_t rows = 64, k = 1024;
    const MxOperand a = make_operand(rows, k, kSeedA);
    std::vector<int> hist(16, 0);
    for (size_t i = 0; i < rows * k; ++i) ++hist[unpack_nibble(a.packed.data(), i)];
    const double expect = double(rows * k) / 16;  // 4096; one sigma is ~62
    for (int n = 0; n < 16; ++n) EXPECT_NEAR(hist[size_t(n)], expect, 0.08 * expect) << "nibble " << n;
    std::set<int> seen;
    for (uint8_t s : a.scales) {
        ASSERT_GE(s, 124);
        ASSERT_LE(s, 130);
        seen.insert(s);
    }
    EXPECT_EQ(seen.size(), 7u);

    const MxOperand again = make_operand(rows, k, kSeedA);
    EXPECT_EQ(again.packed, a.packed);
    EXPECT_EQ(again.scales, a.scales);
    const MxOperand other = make_operand(rows, k, kSeedB);
    EXPECT_NE(other.packed, a.packed);
    EXPECT_NE(other.scales, a.scales);
    // Rows are generated in order from one engine: a shorter operand is a prefix.
    const MxOperand prefix = make_operand(3, k, kSeedA);
    EXPECT_TRUE(std::equal(prefix.packed.begin(), prefix.packed.end(), a.packed.begin()));
    EXPECT_TRUE(std::equal(prefix.scales.begin(), prefix.scales.end(), a.scales.begin()));
}

TEST(SeedOperand, DequantizeIsExact) {
    const MxOperand a = make_operand(4, 256, kSeedA);
    const std::vector<float> x = dequantize(a);
    ASSERT_EQ(x.size(), 4u * 256u);
    for (size_t r = 0; r < 4; ++r)
        for (size_t i = 0; i < 256; ++i) {
            const double want = double(e2m1_to_float(unpack_nibble(&a.packed[r * 128], i))) *
                                std::ldexp(1.0, int(a.scales[r * 8 + i / 32]) - 127);
            ASSERT_EQ(double(x[r * 256 + i]), want);
        }
}

TEST(WideScale, RowsSpanMoreThan30Binades) {
    const size_t rows = 32, k = 512;
    const MxOperand w = make_operand(rows, k, 7, DataKind::WideScale);
    for (size_t r = 0; r < rows; ++r) {
        const auto first = w.scales.begin() + long(r * 16), last = first + 16;
        const int lo = *std::min_element(first, last), hi = *std::max_element(first, last);
        EXPECT_GE(hi - lo, 48) << "row " << r;
        EXPECT_GE(lo, 97);
        EXPECT_LE(hi, 157);
    }
    // Both orders of the two extreme blocks occur, so A and B rows meet crossed.
    int low_first = 0;
    for (size_t r = 0; r < rows; ++r) low_first += w.scales[r * 16] < w.scales[r * 16 + 1];
    EXPECT_GT(low_first, 0);
    EXPECT_LT(low_first, int(rows));
    const MxOperand again = make_operand(rows, k, 7, DataKind::WideScale);
    EXPECT_EQ(again.scales, w.scales);
    EXPECT_EQ(again.packed, w.packed);
}

TEST(NanScale, FewNanScalesAtDeterministicPositions) {
    const size_t rows = 64, k = 512;  // 1024 scales -> flat indices 17, 78, ..., 17 + 61*16
    const MxOperand seed = make_operand(rows, k, kSeedA);
    const MxOperand nan = make_operand(rows, k, kSeedA, DataKind::NanScale);
    EXPECT_EQ(nan.packed, seed.packed);
    size_t count = 0;
    for (size_t j = 0; j < nan.scales.size(); ++j) {
        if (j % 61 == 17) {
            EXPECT_EQ(nan.scales[j], 0xFF) << j;
            ++count;
        } else {
            EXPECT_EQ(nan.scales[j], seed.scales[j]) << j;
        }
    }
    EXPECT_EQ(count, 17u);
    const std::vector<float> x = dequantize(nan);
    EXPECT_TRUE(std::isnan(x[17 * 32]));
    EXPECT_TRUE(std::isnan(x[17 * 32 + 31]));
    EXPECT_FALSE(std::isnan(x[16 * 32]));
    // A tiny operand still gets one NaN scale.
    const MxOperand tiny = make_operand(1, 64, 3, DataKind::NanScale);
    EXPECT_EQ(std::count(tiny.scales.begin(), tiny.scales.end(), 0xFF), 1);
}

TEST(ZeroBlocks, AboutAQuarterOfBlocksZeroedRestIsSeedData) {
    const size_t rows = 32, k = 512, ks = k / 32;
    const MxOperand seed = make_operand(rows, k, kSeedB);
    const MxOperand z = make_operand(rows, k, kSeedB, DataKind::ZeroBlocks);
    EXPECT_EQ(z.scales, seed.scales);
    size_t zeroed = 0;
    for (size_t blk = 0; blk < rows * ks; ++blk) {
        const auto zb = z.packed.begin() + long(blk * 16), sb = seed.packed.begin() + long(blk * 16);
        if (std::all_of(zb, zb + 16, [](uint8_t b) { return b == 0; }))
            ++zeroed;
        else
            EXPECT_TRUE(std::equal(zb, zb + 16, sb)) << "block " << blk;
    }
    const double frac = double(zeroed) / double(rows * ks);
    EXPECT_GT(frac, 0.18);
    EXPECT_LT(frac, 0.32);
}

TEST(Gaussian, DequantizesCloseToTheSource) {
    const size_t rows = 16, k = 1024;
    const uint32_t seed = 11;
    std::mt19937 rng(seed);  // the documented source: N(0,1) float32, row-major
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> src(rows * k);
    for (float& v : src) v = normal(rng);
    const MxOperand g = make_operand(rows, k, seed, DataKind::Gaussian);
    const std::vector<float> x = dequantize(g);
    for (size_t blk = 0; blk < rows * k / 32; ++blk) {
        double amax = 0;
        for (size_t i = blk * 32; i < blk * 32 + 32; ++i) amax = std::max(amax, std::fabs(double(src[i])));
        int e2;
        std::frexp(amax, &e2);  // amax = m * 2^e2, m in [0.5, 1): floor(log2 amax) = e2 - 1
        ASSERT_EQ(int(g.scales[blk]), e2 - 1 - 2 + 127) << "block " << blk;
        const double scale = std::ldexp(1.0, e2 - 3);
        // Half an e2m1 step is at most 1 * scale; saturation of (6, 8) * scale to 6 * scale
        // costs less than 2 * scale; both are below amax / 4 since amax >= 4 * scale.
        for (size_t i = blk * 32; i < blk * 32 + 32; ++i) {
            const double err = std::fabs(double(x[i]) - double(src[i]));
            ASSERT_LE(err, amax / 4) << i;
            ASSERT_LE(err, 2 * scale) << i;
            if (std::fabs(double(src[i])) <= 6 * scale) {
                ASSERT_LE(err, scale) << i;
            }
        }
    }
}

TEST(DataKinds, ParseAndPrint) {
    for (DataKind d :
         {DataKind::Seed, DataKind::WideScale, DataKind::Gaussian, DataKind::ZeroBlocks, DataKind::NanScale})
        EXPECT_EQ(parse_data_kind(to_string(d)), d);
    try {
        parse_data_kind("uniform");
        FAIL() << "no throw";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find("'uniform'"), std::string::npos) << e.what();
    }
}

TEST(DataKinds, RejectBadK) {
    for (size_t k : {0u, 48u, 100u}) {
        try {
            make_operand(2, k, 1);
            ADD_FAILURE() << "no throw for k=" << k;
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), Errc::InvalidArgument);
            EXPECT_NE(std::string(e.what()).find("got " + std::to_string(k)), std::string::npos) << e.what();
        }
    }
    MxOperand broken = make_operand(2, 64, 1);
    broken.scales.pop_back();
    EXPECT_THROW(dequantize(broken), Error);
}
