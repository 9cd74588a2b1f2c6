// Tests of the CPU backend (src/runtime/cpu/cpu_gemm.cpp) against the float64 reference through
// dequantize + verify: the seed's job at 512x1024x2048, edge shapes, split-K (including crafted
// blocks that pin its fp32 chunk semantics), alpha/beta/C, NaN scales, wide scales, zero blocks,
// Gaussian data, thread invariance, the row stride, and argument validation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "f4gemm/cpu_backend.hpp"
#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"
#include "f4gemm/operands.hpp"
#include "f4gemm/reference.hpp"
#include "f4gemm/verify.hpp"
#include "test_util.hpp"

namespace f4gemm {
namespace {

// Non-split results carry only the bf16 output rounding: at most 2^-8 relative (docs/VERIFY.md).
const double kBf16Bound = std::ldexp(1.0, -8);

size_t round_up(size_t x, size_t to) {
    return (x + to - 1) / to * to;
}

float widen(uint16_t bits) {
    const uint32_t u = uint32_t(bits) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

using test::make_mx;

struct Options {
    float alpha = 1.f, beta = 0.f;
    const std::vector<uint16_t>* c = nullptr;
    int splits = 1, k_per_split = 0, threads = 0;
};

std::vector<uint16_t> run_cpu(const MxOperand& a, const MxOperand& b, const Options& o = {}) {
    CpuGemmArgs args;
    args.a = &a;
    args.b = &b;
    args.m = a.rows;
    args.n = b.rows;
    args.k = a.k;
    args.alpha = o.alpha;
    args.beta = o.beta;
    args.c = o.c ? o.c->data() : nullptr;
    args.splits = o.splits;
    args.k_per_split = o.k_per_split;
    args.threads = o.threads;
    std::vector<uint16_t> d(a.rows * b.rows, 0xDEAD);
    cpu_gemm(args, d.data(), b.rows);
    return d;
}

// The seed's check: float64 reference over the dequantized operands (exact for seed-range data),
// then the original's metrics. wide_ref: the exact MXFP4 reference, for scales beyond float32.
VerifyResult check(const MxOperand& a, const MxOperand& b, const Options& o = {}, bool wide_ref = false,
                   const char* label = nullptr) {
    const size_t m = a.rows, n = b.rows;
    std::vector<float> c32;
    if (o.c)
        for (uint16_t v : *o.c) c32.push_back(widen(v));
    const float* c = o.c ? c32.data() : nullptr;
    std::vector<float> ref;
    if (wide_ref) {
        ref = reference_gemm_mx(a, b, o.alpha, o.beta, c);
    } else {
        const auto a32 = dequantize(a), b32 = dequantize(b);
        ref = reference_gemm(a32.data(), b32.data(), m, n, a.k, o.alpha, o.beta, c);
    }
    const auto d = run_cpu(a, b, o);
    const auto r = verify_bf16(d.data(), n, ref.data(), m, n, default_tolerance(false));
    if (label)
        std::cout << "[ measured ] " << label << ": max|ref|=" << r.max_ref
                  << " max_abs_err=" << r.max_abs_err << " max_rel_err=" << r.max_rel_err
                  << " mismatches=" << r.mismatches << "/" << r.total << "\n";
    return r;
}

void expect_bf16_exact(const VerifyResult& r) {
    EXPECT_EQ(r.mismatches, 0u) << "first (" << r.first_m << "," << r.first_n << ") got " << r.first_got
                                << " want " << r.first_want;
    EXPECT_EQ(r.nan_outputs, 0u);
    EXPECT_LE(r.max_rel_err, kBf16Bound);
}

// ---- the seed's job -----------------------------------------------------------------------------

TEST(CpuBackend, SeedJob512x1024x2048) {
    const MxOperand a = make_operand(512, 2048, kSeedA), b = make_operand(1024, 2048, kSeedB);
    const auto r = check(a, b, {}, false, "seed 512x1024x2048");
    expect_bf16_exact(r);
    EXPECT_GT(r.max_rel_err, 0.0);  // the outputs really are rounded to bf16
}

// ---- edge shapes ----------------------------------------------------------------------------------

TEST(CpuBackend, EdgeShapes) {
    struct Shape {
        size_t m, n, k;
    };
    for (const Shape s : {Shape{1, 256, 1024}, Shape{17, 256, 1024}, Shape{128, 16, 1024},
                          Shape{100, 80, 256}, Shape{1, 16, 256}, Shape{65, 129, 512}}) {
        SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k));
        expect_bf16_exact(check(make_operand(s.m, s.k, kSeedA), make_operand(s.n, s.k, kSeedB)));
    }
}

// ---- split-K --------------------------------------------------------------------------------------

TEST(CpuBackend, SplitKOnSeedData) {
    const size_t k = 4096;
    const MxOperand a = make_operand(128, k, kSeedA), b = make_operand(256, k, kSeedB);
    for (int splits : {2, 3, 4}) {
        Options o;
        o.splits = splits;
        o.k_per_split = int(round_up(k / splits, 256));
        SCOPED_TRACE("splits=" + std::to_string(splits));
        const std::string label = "seed 128x256x4096 splits=" + std::to_string(splits);
        expect_bf16_exact(check(a, b, o, false, label.c_str()));
    }
}

TEST(CpuBackend, SplitKWithAnEmptyLastChunkEqualsNoSplit) {
    const MxOperand a = make_operand(64, 1024, kSeedA), b = make_operand(64, 1024, kSeedB);
    Options o;
    o.splits = 3;
    o.k_per_split = 512;  // chunks [0, 512), [512, 1024), [1024, 1024)
    Options two;
    two.splits = 2;
    two.k_per_split = 512;
    EXPECT_EQ(run_cpu(a, b, o), run_cpu(a, b, two));
}

// Four 32-blocks whose values are 2^24, 1, 1, -2^24 (exact sum 2): fp32 order decides the result.
//   no split:            ((2^24 + 1) + 1) - 2^24             = 0  (each +1 is a tie to even)
//   2 chunks of 64:      (2^24 + 1) + (1 - 2^24) = 2^24 - (2^24 - 1) = 1
//   4 chunks of 32:      same order as no split              = 0
TEST(CpuBackend, SplitKAddsChunkSumsInFp32InChunkOrder) {
    // A blocks: nibble 1.0 at 2^19, 1.0 at 2^-5, 1.0 at 2^-5, -1.0 at 2^19; B: 1.0 at 2^0.
    // A 32-block of 1.0 * 1.0 sums to 32 = 2^5.
    const MxOperand a = make_mx(
        1, 128, [](size_t, size_t i) -> uint8_t { return i < 96 ? 0x2 : 0xA; },
        [](size_t, size_t blk) -> uint8_t { return (blk == 0 || blk == 3) ? 146 : 122; });
    const MxOperand b = make_mx(
        1, 128, [](size_t, size_t) -> uint8_t { return 0x2; }, [](size_t, size_t) -> uint8_t { return 127; });
    EXPECT_EQ(widen(run_cpu(a, b)[0]), 0.f);
    Options two;
    two.splits = 2;
    two.k_per_split = 64;
    EXPECT_EQ(widen(run_cpu(a, b, two)[0]), 1.f);
    Options four;
    four.splits = 4;
    four.k_per_split = 32;
    EXPECT_EQ(widen(run_cpu(a, b, four)[0]), 0.f);
    // The exact sum is 2: this case is built to expose fp32 order, not to pass verification.
    EXPECT_EQ(reference_gemm_mx(a, b, 1.f, 0.f, nullptr)[0], 2.f);
}

// ---- epilogue: alpha, beta * C ----------------------------------------------------------------------

TEST(CpuBackend, AlphaBetaAndC) {
    const size_t m = 96, n = 160, k = 1024;
    const MxOperand a = make_operand(m, k, kSeedA), b = make_operand(n, k, kSeedB);
    std::vector<uint16_t> c(m * n);
    for (size_t i = 0; i < c.size(); ++i) c[i] = float_to_bf16(float(int(i % 97) - 48) * 31.25f);
    struct Case {
        float alpha, beta;
        bool with_c;
        int splits;
    };
    for (const Case cs : {Case{0.5f, 0.f, false, 1}, Case{1.7f, 0.f, false, 1}, Case{1.f, 0.75f, true, 1},
                          Case{1.7f, -1.3f, true, 1}, Case{-2.f, 1.f, true, 3}}) {
        SCOPED_TRACE("alpha=" + std::to_string(cs.alpha) + " beta=" + std::to_string(cs.beta));
        Options o;
        o.alpha = cs.alpha;
        o.beta = cs.beta;
        o.c = cs.with_c ? &c : nullptr;
        o.splits = cs.splits;
        o.k_per_split = cs.splits > 1 ? int(round_up(k / cs.splits, 256)) : 0;
        expect_bf16_exact(check(a, b, o));
    }
}

TEST(CpuBackend, BetaZeroIgnoresC) {
    const MxOperand a = make_operand(8, 256, kSeedA), b = make_operand(16, 256, kSeedB);
    const std::vector<uint16_t> c(8 * 16, 0x7FC0);  // NaN everywhere
    Options o;
    o.c = &c;
    EXPECT_EQ(run_cpu(a, b, o), run_cpu(a, b));
}

// ---- special data ---------------------------------------------------------------------------------

// Exactly the rows of A and the columns (rows of B) with any 0xFF scale are NaN.
void expect_nan_exactly_where_scales_are(const MxOperand& a, const MxOperand& b,
                                         const std::vector<uint16_t>& d) {
    const size_t kb = a.k / kBlockK;
    std::vector<bool> row_nan(a.rows), col_nan(b.rows);
    for (size_t i = 0; i < a.rows * kb; ++i) row_nan[i / kb] = row_nan[i / kb] || a.scales[i] == 0xFF;
    for (size_t i = 0; i < b.rows * kb; ++i) col_nan[i / kb] = col_nan[i / kb] || b.scales[i] == 0xFF;
    size_t wrong = 0;
    for (size_t i = 0; i < a.rows; ++i)
        for (size_t j = 0; j < b.rows; ++j)
            wrong += std::isnan(widen(d[i * b.rows + j])) != (row_nan[i] || col_nan[j]);
    EXPECT_EQ(wrong, 0u);
}

TEST(CpuBackend, NanScalesGiveNanInExactlyTheAffectedOutputs) {
    MxOperand a = make_operand(70, 512, kSeedA), b = make_operand(90, 512, kSeedB);
    a.scales[3 * 16 + 5] = 0xFF;   // A row 3, block 5
    a.scales[69 * 16 + 0] = 0xFF;  // A row 69 (second row tile), block 0
    b.scales[7 * 16 + 15] = 0xFF;  // B row 7, last block
    // A zero block under a NaN scale is still NaN (0 * NaN), as in the reference.
    for (size_t i = 0; i < 16; ++i) b.packed[7 * 256 + 15 * 16 + i] = 0;
    for (int splits : {1, 2}) {
        Options o;
        o.splits = splits;
        o.k_per_split = splits > 1 ? 256 : 0;
        const auto d = run_cpu(a, b, o);
        expect_nan_exactly_where_scales_are(a, b, d);
        size_t nans = 0;
        for (uint16_t v : d) nans += std::isnan(widen(v));
        EXPECT_EQ(nans, 2u * 90 + 1 * 70 - 2);
    }
    // And verify agrees: the reference has NaN in the same places, and NaN matches NaN.
    const auto r = check(a, b);
    EXPECT_TRUE(r.passed());
    EXPECT_EQ(r.nan_outputs, 2u * 90 + 70 - 2);
}

TEST(CpuBackend, NanScaleDataKind) {
    const MxOperand a = make_operand(128, 1024, kSeedA, DataKind::NanScale);
    const MxOperand b = make_operand(128, 1024, kSeedB, DataKind::NanScale);
    const auto d = run_cpu(a, b);
    expect_nan_exactly_where_scales_are(a, b, d);
    const auto r = check(a, b);
    EXPECT_TRUE(r.passed());
    EXPECT_LE(r.max_rel_err, kBf16Bound);
}

TEST(CpuBackend, ZeroBlocks) {
    expect_bf16_exact(check(make_operand(128, 1024, kSeedA, DataKind::ZeroBlocks),
                            make_operand(192, 1024, kSeedB, DataKind::ZeroBlocks), {}, false, "zero blocks"));
    // All-zero operands give +0 everywhere, whatever the scales.
    const MxOperand z = make_mx(
        3, 64, [](size_t, size_t) -> uint8_t { return 0; },
        [](size_t, size_t blk) -> uint8_t { return blk ? 254 : 1; });
    for (uint16_t v : run_cpu(z, make_operand(5, 64, kSeedB))) EXPECT_EQ(v, 0x0000);
}

TEST(CpuBackend, GaussianData) {
    const MxOperand a = make_operand(128, 2048, kSeedA, DataKind::Gaussian);
    const MxOperand b = make_operand(256, 2048, kSeedB, DataKind::Gaussian);
    expect_bf16_exact(check(a, b, {}, false, "gaussian 128x256x2048"));
    Options o;
    o.splits = 4;
    o.k_per_split = 512;
    expect_bf16_exact(check(a, b, o, false, "gaussian 128x256x2048 splits=4"));
}

// Scales spanning more than float32's range: the accumulator's exponent is unbounded, so block
// values past 2^128 neither overflow to Inf in the middle of a sum nor meet as Inf - Inf = NaN.
TEST(CpuBackend, WideScalesBeyondFloatRangeInTheMiddleOfASum) {
    // Blocks of A: 3 * 2^125, -3 * 2^125, 1.0; of B: 2^4, 2^4, 1.0. The first two block values are
    // +-32 * 3 * 2^129 = +-1.5 * 2^135 (past float32), the third 32. A plain fp32 accumulator
    // gives Inf - Inf = NaN; the exact result is 32.
    const MxOperand a = make_mx(
        1, 96, [](size_t, size_t i) -> uint8_t { return i < 32 ? 0x5 : (i < 64 ? 0xD : 0x2); },
        [](size_t, size_t blk) -> uint8_t { return blk < 2 ? 252 : 127; });
    const MxOperand b = make_mx(
        1, 96, [](size_t, size_t) -> uint8_t { return 0x2; },
        [](size_t, size_t blk) -> uint8_t { return blk < 2 ? 131 : 127; });
    EXPECT_EQ(widen(run_cpu(a, b)[0]), 32.f);
    EXPECT_EQ(reference_gemm_mx(a, b, 1.f, 0.f, nullptr)[0], 32.f);

    // A small block first (32 * 2^-100), then one 200 binades larger (32 * 2^100): the
    // accumulator must move to the larger exponent, not scale the new block by 2^200 (Inf).
    const MxOperand a2 = make_mx(
        1, 64, [](size_t, size_t) -> uint8_t { return 0x2; },
        [](size_t, size_t blk) -> uint8_t { return blk == 0 ? 27 : 227; });
    const MxOperand b2 = make_mx(
        1, 64, [](size_t, size_t) -> uint8_t { return 0x2; }, [](size_t, size_t) -> uint8_t { return 127; });
    EXPECT_EQ(widen(run_cpu(a2, b2)[0]), std::ldexp(1.f, 105));
}

TEST(CpuBackend, WideScalesBelowFloatRangeScaledBackByAlpha) {
    // Every product is 2^-200 (flushed to 0 by a plain fp32 accumulator); alpha = 2^100 brings the
    // sum, 64 * 2^-200, back to 2^-94.
    const MxOperand a = make_mx(
        2, 64, [](size_t, size_t) -> uint8_t { return 0x2; }, [](size_t, size_t) -> uint8_t { return 27; });
    const MxOperand b = make_mx(
        3, 64, [](size_t, size_t) -> uint8_t { return 0x2; }, [](size_t, size_t) -> uint8_t { return 27; });
    Options o;
    o.alpha = std::ldexp(1.f, 100);
    for (uint16_t v : run_cpu(a, b, o)) EXPECT_EQ(widen(v), std::ldexp(1.f, -94));
}

// Wide scales, against the exact MXFP4 reference (an in-order double sum is not exact once
// products span more than 53 bits). fp32 accumulation is exact within a block, not across blocks:
// where an output's largest blocks cancel exactly, what fp32 rounded away from the smaller ones is
// lost, as in any fp32 accumulator (SplitKAddsChunkSumsInFp32InChunkOrder shows one). On these
// data sets no output comes near that, so the bf16 bound holds; docs/VERIFY.md has the numbers.
TEST(CpuBackend, WideScaleData) {
    // DataKind::WideScale: exponents 2^-30..2^30, each row spanning at least 48 binades.
    MxOperand a = make_operand(256, 1024, kSeedA, DataKind::WideScale);
    MxOperand b = make_operand(256, 1024, kSeedB, DataKind::WideScale);
    const auto check_wide = [&](const char* label) {
        const auto ref = reference_gemm_mx(a, b, 1.f, 0.f, nullptr);
        const auto d = run_cpu(a, b);
        const auto r = verify_bf16(d.data(), b.rows, ref.data(), a.rows, b.rows, default_tolerance(false));
        std::cout << "[ measured ] " << label << ": max|ref|=" << r.max_ref
                  << " max_abs_err=" << r.max_abs_err << " max_rel_err=" << r.max_rel_err
                  << " mismatches=" << r.mismatches << "/" << r.total << "\n";
        expect_bf16_exact(r);
        size_t finite = 0;
        for (float w : ref) finite += std::isfinite(w);
        EXPECT_EQ(finite, ref.size());
    };
    check_wide("wide 256x256x1024");
    // The whole E8M0 range: A's exponents stretched to 1..254, B's to 1..85, so block values run
    // from 2^-252 (far below float32's 2^-149) to 2^85 * 1152 and outputs stay finite: most
    // outputs mix blocks below float32's range with blocks 200+ binades above them.
    for (uint8_t& e : a.scales) e = uint8_t(1 + (e - 97) * 253 / 60);
    for (uint8_t& e : b.scales) e = uint8_t(1 + (e - 97) * 84 / 60);
    check_wide("wide 256x256x1024, A exponents 1..254, B 1..85");
}

// ---- mechanics ------------------------------------------------------------------------------------

TEST(CpuBackend, ThreadCountDoesNotChangeTheResult) {
    const MxOperand a = make_operand(130, 512, kSeedA), b = make_operand(70, 512, kSeedB);
    Options one;
    one.threads = 1;
    const auto want = run_cpu(a, b, one);
    for (int threads : {0, 2, 3, 16}) {
        Options o;
        o.threads = threads;
        EXPECT_EQ(run_cpu(a, b, o), want) << "threads=" << threads;
    }
}

TEST(CpuBackend, WritesOnlyTheMByNRegionWithRowStride) {
    const size_t m = 5, n = 20, k = 64, ld = 33, rows_alloc = 7;
    const MxOperand a = make_operand(m, k, kSeedA), b = make_operand(n, k, kSeedB);
    const auto dense = run_cpu(a, b);
    std::vector<uint16_t> d(rows_alloc * ld, 0xBEEF);
    CpuGemmArgs args;
    args.a = &a;
    args.b = &b;
    args.m = m;
    args.n = n;
    args.k = k;
    cpu_gemm(args, d.data(), ld);
    for (size_t i = 0; i < rows_alloc; ++i)
        for (size_t j = 0; j < ld; ++j) {
            if (i < m && j < n)
                EXPECT_EQ(d[i * ld + j], dense[i * n + j]) << i << "," << j;
            else
                EXPECT_EQ(d[i * ld + j], 0xBEEF) << i << "," << j;
        }
}

TEST(CpuBackend, RejectsBadArguments) {
    const MxOperand a = make_operand(4, 64, kSeedA), b = make_operand(8, 64, kSeedB);
    const MxOperand b96 = make_operand(8, 96, kSeedB);
    std::vector<uint16_t> d(64);
    auto base = [&] {
        CpuGemmArgs g;
        g.a = &a;
        g.b = &b;
        g.m = 4;
        g.n = 8;
        g.k = 64;
        return g;
    };
    auto expect_invalid = [&](CpuGemmArgs g, size_t ld, const char* needle, uint16_t* out) {
        try {
            cpu_gemm(g, out, ld);
            ADD_FAILURE() << "expected f4gemm::Error containing '" << needle << "'";
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), Errc::InvalidArgument);
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    CpuGemmArgs g = base();
    g.a = nullptr;
    expect_invalid(g, 8, "operand A is null", d.data());
    g = base();
    g.b = &b96;
    expect_invalid(g, 8, "got 96", d.data());
    g = base();
    g.k = 48;
    expect_invalid(g, 8, "got 48", d.data());
    g = base();
    g.m = 5;
    expect_invalid(g, 8, "m = 5", d.data());
    g = base();
    g.n = 9;
    expect_invalid(g, 9, "n = 9", d.data());
    g = base();
    g.m = 0;
    expect_invalid(g, 8, "m=0", d.data());
    g = base();
    expect_invalid(g, 7, "got 7", d.data());
    g = base();
    expect_invalid(g, 8, "D is null", nullptr);
    g = base();
    g.splits = 0;
    expect_invalid(g, 8, "splits (got 0)", d.data());
    g = base();
    g.splits = 2;
    g.k_per_split = 16;
    expect_invalid(g, 8, "k_per_split (got 16)", d.data());
    g = base();
    g.splits = 2;
    g.k_per_split = 0;
    expect_invalid(g, 8, "k_per_split (got 0)", d.data());
    g = base();
    g.splits = 1;
    g.k_per_split = 32;
    expect_invalid(g, 8, "32 * 1 = 32", d.data());
    MxOperand broken = a;
    broken.scales.pop_back();
    g = base();
    g.a = &broken;
    expect_invalid(g, 8, "buffers do not match", d.data());
}

}  // namespace
}  // namespace f4gemm
