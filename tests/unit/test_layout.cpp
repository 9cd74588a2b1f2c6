// Tests of layout.hpp: each aiter map against a generic view/permute (torch's
// x.view(dims).permute(perm).contiguous(), written independently here), bijection and inverse,
// index cases computed by hand from the formulas, scale padding content, and device images; the
// bit-plane word and the frag16 shuffle (against a lane-by-lane construction and the view/permute).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"
#include "f4gemm/layout.hpp"

using namespace f4gemm;

namespace {

// x.view(dims).permute(perm).contiguous() on a row-major byte array.
std::vector<uint8_t> view_permute(const std::vector<uint8_t>& x, const std::vector<size_t>& dims,
                                  const std::vector<size_t>& perm) {
    const size_t rank = dims.size();
    std::vector<size_t> stride(rank, 1);
    for (size_t i = rank - 1; i > 0; --i) stride[i - 1] = stride[i] * dims[i];
    std::vector<size_t> idx(rank, 0);  // multi-index in the permuted (destination) order
    std::vector<uint8_t> out(x.size());
    for (size_t o = 0; o < out.size(); ++o) {
        size_t s = 0;
        for (size_t i = 0; i < rank; ++i) s += idx[i] * stride[perm[i]];
        out[o] = x[s];
        for (size_t i = rank; i-- > 0;) {
            if (++idx[i] < dims[perm[i]]) break;
            idx[i] = 0;
        }
    }
    return out;
}

std::vector<uint8_t> pattern(size_t n, uint32_t salt) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = uint8_t((i * 2654435761u + salt) >> 13);
    return v;
}

template <class F>
void expect_error(F&& f, Errc code, const std::string& needle) {
    try {
        f();
        ADD_FAILURE() << "no throw, expected one naming '" << needle << "'";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), code) << e.what();
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

struct NK {
    size_t n, k;
};
const NK kShapes[] = {{16, 64}, {32, 256}, {48, 512}, {256, 1024}, {272, 192}, {512, 2048}};

}  // namespace

// ---- aiter B preshuffle -------------------------------------------------------------------------

TEST(AiterB, MatchesViewPermute) {
    for (const NK& s : kShapes) {
        const size_t kp = s.k / 2;
        const auto src = pattern(s.n * kp, uint32_t(s.n));
        std::vector<uint8_t> dst(src.size());
        aiter_b_shuffle(src.data(), dst.data(), s.n, s.k);
        EXPECT_EQ(dst, view_permute(src, {s.n / 16, 16, kp / 32, 2, 16}, {0, 2, 3, 1, 4}))
            << "n=" << s.n << " k=" << s.k;
    }
}

TEST(AiterB, IndexIsABijectionAndUnshuffleInverts) {
    for (const NK& s : kShapes) {
        const size_t kp = s.k / 2;
        std::vector<int> hits(s.n * kp, 0);
        for (size_t n = 0; n < s.n; ++n)
            for (size_t kb = 0; kb < kp; ++kb) {
                const size_t d = aiter_b_index(n, kb, s.k);
                ASSERT_LT(d, hits.size());
                ++hits[d];
            }
        for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << "dst " << i;

        const auto src = pattern(s.n * kp, 3);
        std::vector<uint8_t> shuffled(src.size()), back(src.size());
        aiter_b_shuffle(src.data(), shuffled.data(), s.n, s.k);
        aiter_b_unshuffle(shuffled.data(), back.data(), s.n, s.k);
        EXPECT_EQ(back, src);
        for (size_t n = 0; n < s.n; n += 7)
            for (size_t kb = 0; kb < kp; kb += 5)
                ASSERT_EQ(shuffled[aiter_b_index(n, kb, s.k)], src[n * kp + kb]);
    }
}

TEST(AiterB, HandComputedIndices) {
    // dst = (((n0*Kp/32 + k0)*2 + k1)*16 + n1)*16 + k2 with n = n0*16 + n1, kbyte = k0*32 + k1*16 + k2.
    // (n=17, kbyte=33, k=256): Kp/32 = 4; n0=1 n1=1; k0=1 k1=0 k2=1
    //   -> (((1*4 + 1)*2 + 0)*16 + 1)*16 + 1 = (10*16 + 1)*16 + 1 = 2577
    EXPECT_EQ(aiter_b_index(17, 33, 256), 2577u);
    // (n=0, kbyte=16, k=64): Kp/32 = 1; k0=0 k1=1 k2=0 -> ((0*2 + 1)*16 + 0)*16 + 0 = 256
    EXPECT_EQ(aiter_b_index(0, 16, 64), 256u);
    // (n=15, kbyte=47, k=128): Kp/32 = 2; n0=0 n1=15; k0=1 k1=0 k2=15
    //   -> (((0 + 1)*2 + 0)*16 + 15)*16 + 15 = 47*16 + 15 = 767
    EXPECT_EQ(aiter_b_index(15, 47, 128), 767u);
    // (n=31, kbyte=63, k=128): the last byte of a 32x64 array; n0=1 n1=15 k0=1 k1=1 k2=15
    //   -> (((1*2 + 1)*2 + 1)*16 + 15)*16 + 15 = 127*16 + 15 = 2047 = 32*64 - 1
    EXPECT_EQ(aiter_b_index(31, 63, 128), 2047u);
    // (n=1, kbyte=0, k=256): n1 steps by 16 bytes inside a 16x16 tile -> 16
    EXPECT_EQ(aiter_b_index(1, 0, 256), 16u);
    // (n=16, kbyte=0, k=256): the next 16-row group starts after 16 rows * 128 bytes -> 2048
    EXPECT_EQ(aiter_b_index(16, 0, 256), 2048u);
}

TEST(AiterB, RejectsBadShapes) {
    std::vector<uint8_t> buf(64 * 128);
    expect_error([&] { aiter_b_shuffle(buf.data(), buf.data(), 17, 256); }, Errc::InvalidArgument, "got 17");
    expect_error([&] { aiter_b_unshuffle(buf.data(), buf.data(), 8, 256); }, Errc::InvalidArgument, "got 8");
    expect_error([&] { aiter_b_shuffle(buf.data(), buf.data(), 16, 32); }, Errc::InvalidArgument, "got 32");
    expect_error([&] { aiter_b_shuffle(buf.data(), buf.data(), 16, 96); }, Errc::InvalidArgument, "got 96");
}

// ---- aiter scales -------------------------------------------------------------------------------

TEST(AiterScale, Shape) {
    EXPECT_EQ(aiter_scale_shape(1, 256).rows, 256u);
    EXPECT_EQ(aiter_scale_shape(1, 256).cols, 8u);
    EXPECT_EQ(aiter_scale_shape(300, 8192).rows, 512u);
    EXPECT_EQ(aiter_scale_shape(300, 8192).cols, 256u);
    EXPECT_EQ(aiter_scale_shape(256, 2048).rows, 256u);
    EXPECT_EQ(aiter_scale_shape(17, 320).cols, 16u);  // 10 scale columns pad to 16
    expect_error([] { aiter_scale_shape(16, 48); }, Errc::InvalidArgument, "48");
}

TEST(AiterScale, MatchesViewPermuteAndAiterQuantOffset) {
    for (size_t sm : {32u, 256u, 512u})
        for (size_t sn : {8u, 16u, 64u}) {
            const auto padded = pattern(sm * sn, uint32_t(sm + sn));
            std::vector<uint8_t> dst(padded.size());
            aiter_scale_shuffle(padded.data(), dst.data(), sm, sn);
            EXPECT_EQ(dst, view_permute(padded, {sm / 32, 2, 16, sn / 8, 2, 4}, {0, 3, 5, 2, 4, 1}))
                << sm << "x" << sn;
            // aiter fp4_utils' SHUFFLE branch writes the same cell at
            // d1 + 2*d4 + 4*d2 + 64*d5 + 256*d3 + 32*sn*d0.
            for (size_t r = 0; r < sm; ++r)
                for (size_t c = 0; c < sn; ++c) {
                    const size_t d0 = r / 32, d1 = (r / 16) % 2, d2 = r % 16;
                    const size_t d3 = c / 8, d4 = (c / 4) % 2, d5 = c % 4;
                    ASSERT_EQ(aiter_scale_index(r, c, sn),
                              d1 + 2 * d4 + 4 * d2 + 64 * d5 + 256 * d3 + 32 * sn * d0);
                }
        }
}

TEST(AiterScale, BijectionAndInverse) {
    for (size_t sm : {32u, 256u, 768u})
        for (size_t sn : {8u, 24u, 256u}) {
            std::vector<int> hits(sm * sn, 0);
            for (size_t r = 0; r < sm; ++r)
                for (size_t c = 0; c < sn; ++c) ++hits[aiter_scale_index(r, c, sn)];
            for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << "dst " << i;
            const auto padded = pattern(sm * sn, 11);
            std::vector<uint8_t> dst(padded.size()), back(padded.size());
            aiter_scale_shuffle(padded.data(), dst.data(), sm, sn);
            aiter_scale_unshuffle(dst.data(), back.data(), sm, sn);
            EXPECT_EQ(back, padded);
        }
}

TEST(AiterScale, HandComputedIndices) {
    // dst = ((((d0*sn/8 + d3)*4 + d5)*16 + d2)*2 + d4)*2 + d1,
    // r = d0*32 + d1*16 + d2, c = d3*8 + d4*4 + d5.
    // (r=17, c=5, sn=8): d0=0 d1=1 d2=1; d3=0 d4=1 d5=1 -> (((1*16 + 1)*2 + 1)*2 + 1 = 71
    EXPECT_EQ(aiter_scale_index(17, 5, 8), 71u);
    // (r=33, c=9, sn=16): d0=1 d1=0 d2=1; d3=1 d4=0 d5=1; sn/8 = 2
    //   -> ((((1*2 + 1)*4 + 1)*16 + 1)*2 + 0)*2 + 0 = (13*16 + 1)*4 = 836
    EXPECT_EQ(aiter_scale_index(33, 9, 16), 836u);
    // (r=255, c=7, sn=8): d0=7 d1=1 d2=15; d3=0 d4=1 d5=3
    //   -> ((((7*1 + 0)*4 + 3)*16 + 15)*2 + 1)*2 + 1 = ((31*16 + 15)*2 + 1)*2 + 1 = 2047, the last cell
    EXPECT_EQ(aiter_scale_index(255, 7, 8), 2047u);
    // (r=16, c=0): d1=1 only -> 1: rows 16 apart interleave in adjacent bytes
    EXPECT_EQ(aiter_scale_index(16, 0, 8), 1u);
    // (r=0, c=4): d4=1 only -> 2; (r=0, c=1): d5=1 -> 64; (r=1, c=0): d2=1 -> 4
    EXPECT_EQ(aiter_scale_index(0, 4, 8), 2u);
    EXPECT_EQ(aiter_scale_index(0, 1, 8), 64u);
    EXPECT_EQ(aiter_scale_index(1, 0, 8), 4u);
}

TEST(AiterScale, PackPadsWith7FAndUnpacks) {
    const size_t rows = 3, k = 64;  // 2 scale columns -> padded (256, 8)
    const std::vector<uint8_t> plain = {120, 121, 122, 123, 124, 125};
    const auto packed = aiter_scale_pack(plain.data(), rows, k);
    ASSERT_EQ(packed.size(), 256u * 8u);
    std::vector<uint8_t> padded(packed.size());
    aiter_scale_unshuffle(packed.data(), padded.data(), 256, 8);
    for (size_t r = 0; r < 256; ++r)
        for (size_t c = 0; c < 8; ++c) {
            const uint8_t want = (r < rows && c < 2) ? plain[r * 2 + c] : kScalePadByte;
            ASSERT_EQ(padded[r * 8 + c], want) << r << "," << c;
        }
    // The first 4 destination bytes: (r0,c0), (r16,c0), (r0,c4), (r16,c4) -> only r0,c0 is real.
    EXPECT_EQ(packed[0], 120);
    EXPECT_EQ(packed[1], 0x7F);
    EXPECT_EQ(packed[64], 121);  // (r0, c1)
    EXPECT_EQ(packed[4], 122);   // (r1, c0)

    const auto zero_pad = aiter_scale_pack(plain.data(), rows, k, 0x00);
    EXPECT_EQ(std::count(zero_pad.begin(), zero_pad.end(), 0), long(256 * 8 - 6));
}

TEST(AiterScale, RejectsUnpaddedShapes) {
    std::vector<uint8_t> buf(64 * 16);
    expect_error([&] { aiter_scale_shuffle(buf.data(), buf.data(), 16, 8); }, Errc::InvalidArgument, "16x8");
    expect_error([&] { aiter_scale_unshuffle(buf.data(), buf.data(), 32, 12); }, Errc::InvalidArgument,
                 "32x12");
    std::vector<uint8_t> plain(10);
    expect_error([&] { aiter_scale_pack(plain.data(), 1, 40); }, Errc::InvalidArgument, "40");
}

// ---- names --------------------------------------------------------------------------------------

TEST(LayoutNames, ParseAndPrint) {
    for (BLayout l :
         {BLayout::Plain, BLayout::Aiter16x16, BLayout::Bitplane, BLayout::Frag16, BLayout::Frag16S})
        EXPECT_EQ(parse_b_layout(to_string(l)), l);
    for (ScaleLayout l : {ScaleLayout::Plain, ScaleLayout::AiterShuffled})
        EXPECT_EQ(parse_scale_layout(to_string(l)), l);
    EXPECT_STREQ(to_string(BLayout::Aiter16x16), "aiter16x16");
    EXPECT_STREQ(to_string(ScaleLayout::AiterShuffled), "aiter");
    expect_error([] { parse_b_layout("aiter"); }, Errc::InvalidArgument, "'aiter'");
    expect_error([] { parse_b_layout("frag"); }, Errc::InvalidArgument,
                 "use plain, aiter16x16, bitplane, frag16 or frag16s");
    expect_error([] { parse_scale_layout("Plain"); }, Errc::InvalidArgument, "'Plain'");
}

// ---- device images ------------------------------------------------------------------------------

TEST(Images, APlainPadsRowsAndScales) {
    const size_t m = 17, k = 320;  // 160 bytes and 10 scales per row
    const auto packed = pattern(m * k / 2, 1), scales = pattern(m * k / 32, 2);
    const OperandImage img = make_a_image(packed.data(), scales.data(), m, k, ScaleLayout::Plain);
    ASSERT_EQ(img.data.size(), 256u * 160u);
    EXPECT_TRUE(std::equal(packed.begin(), packed.end(), img.data.begin()));
    EXPECT_TRUE(std::all_of(img.data.begin() + long(packed.size()), img.data.end(),
                            [](uint8_t b) { return b == 0; }));
    EXPECT_EQ(img.scale_stride, 10u);
    ASSERT_EQ(img.scales.size(), 256u * 10u);
    EXPECT_TRUE(std::equal(scales.begin(), scales.end(), img.scales.begin()));
    EXPECT_TRUE(std::all_of(img.scales.begin() + long(scales.size()), img.scales.end(),
                            [](uint8_t b) { return b == kScalePadByte; }));
}

TEST(Images, AAiterScalesArePacked) {
    const size_t m = 300, k = 320;  // 512 rows, 10 -> 16 scale columns
    const auto packed = pattern(m * k / 2, 4), scales = pattern(m * k / 32, 5);
    const OperandImage img = make_a_image(packed.data(), scales.data(), m, k, ScaleLayout::AiterShuffled);
    EXPECT_EQ(img.data.size(), 512u * 160u);
    EXPECT_EQ(img.scale_stride, 16u);
    EXPECT_EQ(img.scales, aiter_scale_pack(scales.data(), m, k));
    EXPECT_EQ(img.scales.size(), 512u * 16u);
}

TEST(Images, BAiterShufflesRealRowsAndZeroPads) {
    const size_t n = 48, k = 256;
    const auto packed = pattern(n * k / 2, 6), scales = pattern(n * k / 32, 7);
    const OperandImage img =
        make_b_image(packed.data(), scales.data(), n, k, BLayout::Aiter16x16, ScaleLayout::AiterShuffled);
    ASSERT_EQ(img.data.size(), 256u * 128u);
    std::vector<uint8_t> want(n * k / 2);
    aiter_b_shuffle(packed.data(), want.data(), n, k);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), img.data.begin()));
    EXPECT_TRUE(
        std::all_of(img.data.begin() + long(want.size()), img.data.end(), [](uint8_t b) { return b == 0; }));
    // Shuffling all 256 rows (the zero rows included) gives the same image.
    std::vector<uint8_t> full(256 * 128, 0), full_dst(256 * 128);
    std::copy(packed.begin(), packed.end(), full.begin());
    aiter_b_shuffle(full.data(), full_dst.data(), 256, k);
    EXPECT_EQ(img.data, full_dst);
    EXPECT_EQ(img.scale_stride, 8u);
    EXPECT_EQ(img.scales.size(), 256u * 8u);
}

TEST(Images, BPlainAcceptsAnyNButAiterNeedsMultipleOf16) {
    const size_t n = 17, k = 256;
    const auto packed = pattern(n * k / 2, 8), scales = pattern(n * k / 32, 9);
    const OperandImage img =
        make_b_image(packed.data(), scales.data(), n, k, BLayout::Plain, ScaleLayout::Plain);
    EXPECT_EQ(img.data.size(), 256u * 128u);
    EXPECT_TRUE(std::equal(packed.begin(), packed.end(), img.data.begin()));
    EXPECT_EQ(img.scale_stride, 8u);
    expect_error(
        [&] { make_b_image(packed.data(), scales.data(), n, k, BLayout::Aiter16x16, ScaleLayout::Plain); },
        Errc::InvalidArgument, "17");
    expect_error([&] { make_a_image(packed.data(), scales.data(), 1, 100, ScaleLayout::Plain); },
                 Errc::InvalidArgument, "100");
}

// --- bit-plane B (sm_90a decode kernels) ------------------------------------------------------

namespace {
// e5m2 byte -> value (sign, 5-bit exponent with bias 15, 2-bit mantissa; subnormals at exponent 0).
double e5m2_value(uint32_t byte) {
    const int s = (byte >> 7) & 1, e = (byte >> 2) & 31, m = byte & 3;
    const double mag = e == 0 ? std::ldexp(m / 4.0, -14) : std::ldexp(1.0 + m / 4.0, e - 15);
    return s ? -mag : mag;
}
}  // namespace

TEST(Bitplane, WordRoundTripsAndIsABijectionOnSampledWords) {
    uint32_t x = 0x12345678u;
    for (int i = 0; i < 200000; ++i) {
        x = x * 1664525u + 1013904223u;  // LCG: every bit pattern class is hit
        EXPECT_EQ(f4gemm::bitplane_word_inverse(f4gemm::bitplane_word(x)), x);
        EXPECT_EQ(f4gemm::bitplane_word(f4gemm::bitplane_word_inverse(x)), x);
    }
    EXPECT_EQ(f4gemm::bitplane_word(0u), 0u);
    // e0 = -6 (nibble 0xF) only: byte 0 = sign bit 7 | magnitude 7 in bits 3..1 = 0x8E.
    EXPECT_EQ(f4gemm::bitplane_word(0x0000000Fu), 0x0000008Eu);
    // e4 = -6 only: byte 0 = magnitude 7 in bits 6..4 | sign in bit 0 = 0x71.
    EXPECT_EQ(f4gemm::bitplane_word(0x000F0000u), 0x00000071u);
}

// The kernels' two decode expressions (bitplane.h, used by sm90_mxfp4_gemm_ws.cu with R_BITPLANE and by
// sm90_mxfp4_gemm_dec.cu) give, for every pair of
// nibbles in every byte position, the e5m2 bytes of e2m1 * 2^-14 exactly (subnormals included).
TEST(Bitplane, KernelDecodeGivesE2m1TimesTwoToMinus14) {
    for (uint32_t lo = 0; lo < 16; ++lo)
        for (uint32_t hi = 0; hi < 16; ++hi)
            for (int b = 0; b < 4; ++b) {
                const uint32_t plain = (lo << (4 * b)) | (hi << (4 * (b + 4)));
                const uint32_t w = f4gemm::bitplane_word(plain);
                const uint32_t out_lo = f4gemm::bitplane_lo_e5m2(w);
                const uint32_t out_hi = f4gemm::bitplane_hi_e5m2(w);
                for (int q = 0; q < 4; ++q) {
                    const uint32_t nl = q == b ? lo : 0u, nh = q == b ? hi : 0u;
                    EXPECT_EQ(e5m2_value((out_lo >> (8 * q)) & 0xFF),
                              std::ldexp(double(f4gemm::e2m1_to_float(uint8_t(nl))), -14))
                        << lo << " " << hi << " " << b << " " << q;
                    EXPECT_EQ(e5m2_value((out_hi >> (8 * q)) & 0xFF),
                              std::ldexp(double(f4gemm::e2m1_to_float(uint8_t(nh))), -14))
                        << lo << " " << hi << " " << b << " " << q;
                }
            }
}

// f16 value of a half-precision bit pattern (exact in double).
static double f16_value(uint32_t h) {
    const int s = (h >> 15) & 1, e = (h >> 10) & 31, m = h & 1023;
    const double mag = e == 0 ? std::ldexp(m / 1024.0, -14) : std::ldexp(1.0 + m / 1024.0, e - 15);
    return s ? -mag : mag;
}

// The dec kernels' f16 path: PRMT with F4GEMM_F16X2_{LO,HI}_SEL and a zero second operand turns e5m2 bytes
// 0, 1 / 2, 3 into an f16x2 of the same values, for every byte value that is not Inf/NaN; and the whole
// chain bit-plane word -> e5m2 -> f16 gives e2m1 * 2^-14 for every nibble pair in every position.
TEST(Bitplane, DecF16PathGivesTheSameValues) {
    for (uint32_t b0 = 0; b0 < 256; ++b0)
        for (uint32_t b1 = 0; b1 < 256; b1 += 3) {
            if (((b0 >> 2) & 31) == 31 || ((b1 >> 2) & 31) == 31) continue;  // e5m2 Inf/NaN: never produced
            const uint32_t x = b0 | (b1 << 8) | (b1 << 16) | (b0 << 24);
            const uint32_t lo = f4gemm::prmt_reference(x, 0u, F4GEMM_F16X2_LO_SEL);
            const uint32_t hi = f4gemm::prmt_reference(x, 0u, F4GEMM_F16X2_HI_SEL);
            EXPECT_EQ(f16_value(lo & 0xFFFF), e5m2_value(b0)) << b0 << " " << b1;
            EXPECT_EQ(f16_value(lo >> 16), e5m2_value(b1)) << b0 << " " << b1;
            EXPECT_EQ(f16_value(hi & 0xFFFF), e5m2_value(b1)) << b0 << " " << b1;
            EXPECT_EQ(f16_value(hi >> 16), e5m2_value(b0)) << b0 << " " << b1;
        }
    for (uint32_t plain_lo = 0; plain_lo < 65536; plain_lo += 7) {
        const uint32_t plain = plain_lo | ((plain_lo * 2654435761u) & 0xFFFF0000u);
        const uint32_t w = f4gemm::bitplane_word(plain);
        const uint32_t e[2] = {f4gemm::bitplane_lo_e5m2(w), f4gemm::bitplane_hi_e5m2(w)};
        for (int part = 0; part < 2; ++part)
            for (int half = 0; half < 2; ++half) {
                const uint32_t f =
                    f4gemm::prmt_reference(e[part], 0u, half ? F4GEMM_F16X2_HI_SEL : F4GEMM_F16X2_LO_SEL);
                for (int q = 0; q < 2; ++q) {
                    const int elem = 4 * part + 2 * half + q;  // element of the word in this f16
                    const uint32_t nib = (plain >> (4 * elem)) & 15u;
                    EXPECT_EQ(f16_value((f >> (16 * q)) & 0xFFFF),
                              std::ldexp(double(f4gemm::e2m1_to_float(uint8_t(nib))), -14))
                        << std::hex << plain << " " << elem;
                }
            }
    }
}

// The dec kernels' per-block B factors: one integer add gives e - ref + 127 in every byte of a scale word
// (no carries) for every exponent within 100 binades below the CTA's largest, and the byte's bits placed
// at 23..30 are exactly 2^(e - ref) as fp32. Exhaustive over the largest exponent and the offsets.
TEST(Bitplane, DecScaleFactorsAreExactPowersOfTwo) {
    for (int emax = 0; emax <= 254; ++emax) {
        const int ref = emax - 13;  // the kernel's reference: kWindow below the CTA's largest exponent
        const uint32_t bias = f4gemm::dec_scale_bias(ref);
        for (int d0 = 0; d0 <= 100; ++d0) {
            // four blocks with different offsets below emax, clamped to valid exponents
            int e[4];
            for (int j = 0; j < 4; ++j) e[j] = std::max(0, emax - (d0 + 37 * j) % 101);
            const uint32_t word =
                uint32_t(e[0]) | uint32_t(e[1]) << 8 | uint32_t(e[2]) << 16 | uint32_t(e[3]) << 24;
            const uint32_t t = word + bias;
            for (int j = 0; j < 4; ++j) {
                ASSERT_EQ(int((t >> (8 * j)) & 0xFF), e[j] - ref + 127) << emax << " " << d0 << " " << j;
                float f;
                const uint32_t bits = f4gemm::pow2_bits_of_byte(t, j);
                std::memcpy(&f, &bits, 4);
                ASSERT_EQ(double(f), std::ldexp(1.0, e[j] - ref)) << emax << " " << d0 << " " << j;
            }
        }
    }
}

TEST(Bitplane, ImageKeepsRowsAndPaddingAndPacksWords) {
    const size_t n = 3, k = 64;
    std::vector<uint8_t> plain(n * k / 2), scales(n * k / 32, 127);
    for (size_t i = 0; i < plain.size(); ++i) plain[i] = uint8_t(i * 37 + 11);
    const f4gemm::OperandImage img = f4gemm::make_b_image(
        plain.data(), scales.data(), n, k, f4gemm::BLayout::Bitplane, f4gemm::ScaleLayout::Plain);
    ASSERT_EQ(img.data.size(), 256 * k / 2);  // rows padded to 256 as for plain
    std::vector<uint8_t> back(img.data.size());
    f4gemm::bitplane_unpack(img.data.data(), back.data(), back.size());
    EXPECT_TRUE(std::equal(plain.begin(), plain.end(), back.begin()));
    EXPECT_TRUE(std::all_of(back.begin() + long(plain.size()), back.end(), [](uint8_t v) { return v == 0; }));
    EXPECT_EQ(f4gemm::parse_b_layout("bitplane"), f4gemm::BLayout::Bitplane);
    EXPECT_STREQ(f4gemm::to_string(f4gemm::BLayout::Bitplane), "bitplane");
    EXPECT_THROW(f4gemm::bitplane_pack(plain.data(), back.data(), 6), f4gemm::Error);
}

// --- frag16 B (sm_90a mma.sync decode kernels) --------------------------------------------------

namespace {
const NK kFrag16Shapes[] = {{16, 128}, {32, 256}, {48, 384}, {256, 1024}, {272, 640}, {64, 2048}};

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
    std::vector<uint8_t> v(n);
    uint32_t x = seed * 2654435761u + 1;
    for (auto& b : v) {
        x = x * 1664525u + 1013904223u;
        b = uint8_t(x >> 24);
    }
    return v;
}

uint32_t word_at(const std::vector<uint8_t>& v, size_t i) {
    uint32_t w;
    std::memcpy(&w, v.data() + 4 * i, 4);
    return w;
}

// The layout built the way a kernel reads it, independently of frag16_word_index: walk the chunks
// (G, c), then the row half h, the four blocks j of the chunk and, for each, the 32 lanes (g, t) in
// memory order (the words one warp-wide 4-byte shared-memory load reads), and append word t of block
// 4c+j of row 16G+8h+g, bit-plane packed.
std::vector<uint8_t> frag16_by_lanes(const std::vector<uint8_t>& plain, size_t n, size_t k) {
    std::vector<uint8_t> out;
    const size_t row_words = k / 8;
    for (size_t G = 0; G < n / 16; ++G)
        for (size_t c = 0; c < k / 128; ++c)
            for (size_t h = 0; h < 2; ++h)
                for (size_t j = 0; j < 4; ++j)
                    for (size_t lane = 0; lane < 32; ++lane) {
                        const size_t g = lane / 4, t = lane % 4, row = 16 * G + 8 * h + g, block = 4 * c + j;
                        const uint32_t w = bitplane_word(word_at(plain, row * row_words + block * 4 + t));
                        const uint8_t* b = reinterpret_cast<const uint8_t*>(&w);
                        out.insert(out.end(), b, b + 4);
                    }
    return out;
}
}  // namespace

TEST(Frag16, PackUnpackRoundTrip) {
    for (const NK& s : kFrag16Shapes) {
        const auto plain = random_bytes(s.n * s.k / 2, uint32_t(s.n * 7 + s.k));
        std::vector<uint8_t> packed(plain.size()), back(plain.size());
        frag16_pack(plain.data(), packed.data(), s.n, s.k);
        frag16_unpack(packed.data(), back.data(), s.n, s.k);
        EXPECT_EQ(back, plain) << s.n << "x" << s.k;
        EXPECT_NE(packed, plain) << s.n << "x" << s.k;
    }
}

TEST(Frag16, MatchesLaneByLaneConstructionAndViewPermute) {
    for (const NK& s : kFrag16Shapes) {
        const auto plain = random_bytes(s.n * s.k / 2, uint32_t(s.n + s.k * 3));
        std::vector<uint8_t> packed(plain.size()), bp(plain.size());
        frag16_pack(plain.data(), packed.data(), s.n, s.k);
        EXPECT_EQ(packed, frag16_by_lanes(plain, s.n, s.k)) << s.n << "x" << s.k;
        // bench.py's form: bit-plane words viewed as [G, h, g, c, j, t] (+ 4 bytes), permuted to
        // (G, c, h, j, g, t).
        bitplane_pack(plain.data(), bp.data(), bp.size());
        EXPECT_EQ(packed, view_permute(bp, {s.n / 16, 2, 8, s.k / 128, 4, 4, 4}, {0, 3, 1, 4, 2, 5, 6}))
            << s.n << "x" << s.k;
    }
}

TEST(Frag16, IndexIsABijection) {
    for (const NK& s : kFrag16Shapes) {
        const size_t words = s.n * s.k / 8;
        std::vector<int> hit(words, 0);
        for (size_t row = 0; row < s.n; ++row)
            for (size_t w = 0; w < s.k / 8; ++w) {
                const size_t d = frag16_word_index(row, w, s.k);
                ASSERT_LT(d, words);
                ++hit[d];
            }
        EXPECT_TRUE(std::all_of(hit.begin(), hit.end(), [](int h) { return h == 1; })) << s.n << "x" << s.k;
    }
}

// dst_word = (G*(k/128) + c)*256 + h*128 + j*32 + (g*4 + t), by hand.
TEST(Frag16, HandComputedIndices) {
    EXPECT_EQ(frag16_word_index(0, 0, 128), 0u);
    EXPECT_EQ(frag16_word_index(0, 1, 128), 1u);      // next word of a block: the next lane (t = 1)
    EXPECT_EQ(frag16_word_index(1, 0, 128), 4u);      // next row: lane 4 (g = 1)
    EXPECT_EQ(frag16_word_index(7, 3, 128), 31u);     // lane 31 (g 7, t 3): the last word of block 0
    EXPECT_EQ(frag16_word_index(0, 4, 128), 32u);     // next scale block: j = 1, the next 128 bytes
    EXPECT_EQ(frag16_word_index(0, 12, 128), 96u);    // block 3 (j = 3) of the chunk
    EXPECT_EQ(frag16_word_index(8, 0, 128), 128u);    // row 8: second half of the chunk (h = 1)
    EXPECT_EQ(frag16_word_index(0, 16, 256), 256u);   // next 128-K chunk (c = 1)
    EXPECT_EQ(frag16_word_index(16, 0, 256), 512u);   // next 16-row group: after k/128 = 2 chunks
    EXPECT_EQ(frag16_word_index(15, 15, 128), 255u);  // g 7, h 1, t 3, j 3: the last word of a chunk
    // n 17, w 21, k 256: G 1, g 1, h 0, kb 5 (c 1, j 1), t 1 -> (1*2 + 1)*256 + 1*32 + (4 + 1) = 805.
    EXPECT_EQ(frag16_word_index(17, 21, 256), 805u);
    // Word values are bit-plane words: plain e0 = -6 in row 1, word 0 -> 0x8E in word 4.
    std::vector<uint8_t> plain(16 * 64, 0), packed(plain.size());
    plain[64] = 0x0F;
    frag16_pack(plain.data(), packed.data(), 16, 128);
    EXPECT_EQ(word_at(packed, 4), 0x0000008Eu);
    EXPECT_EQ(std::count(packed.begin(), packed.end(), 0), long(packed.size() - 1));
}

TEST(Frag16, ImageKeepsRealRowsAndZeroPads) {
    for (const NK& s : {NK{3, 256}, NK{40, 128}, NK{256, 384}, NK{300, 512}}) {
        const auto plain = random_bytes(s.n * s.k / 2, uint32_t(s.n));
        const auto scales = pattern(s.n * s.k / 32, 3);
        const OperandImage img =
            make_b_image(plain.data(), scales.data(), s.n, s.k, BLayout::Frag16, ScaleLayout::Plain);
        const size_t rows = round_up(s.n, kOperandRowPad);
        ASSERT_EQ(img.data.size(), rows * s.k / 2);  // size unchanged: rows padded to 256 as for plain
        std::vector<uint8_t> back(img.data.size());
        frag16_unpack(img.data.data(), back.data(), rows, s.k);
        EXPECT_TRUE(std::equal(plain.begin(), plain.end(), back.begin())) << s.n << "x" << s.k;
        EXPECT_TRUE(
            std::all_of(back.begin() + long(plain.size()), back.end(), [](uint8_t v) { return v == 0; }))
            << s.n << "x" << s.k;
        // Scales as for plain B.
        EXPECT_EQ(img.scale_stride, s.k / 32);
        EXPECT_TRUE(std::equal(scales.begin(), scales.end(), img.scales.begin()));
    }
}

// ---- frag16s: frag16 chunks with the group's scales after each ------------------------------------

TEST(Frag16s, PackUnpackRoundTripAndSize) {
    for (const NK& s : kFrag16Shapes) {
        const auto plain = random_bytes(s.n * s.k / 2, uint32_t(s.n * 5 + s.k));
        const auto scales = random_bytes(s.n * s.k / 32, uint32_t(s.n + 11));
        ASSERT_EQ(frag16s_bytes(s.n, s.k), s.n * (s.k / 2 + s.k / 32 + 4));  // data, scales, a word per row
        std::vector<uint8_t> img(frag16s_bytes(s.n, s.k)), back(plain.size()), sback(scales.size());
        frag16s_pack(plain.data(), scales.data(), img.data(), s.n, s.k);
        frag16s_unpack(img.data(), back.data(), sback.data(), s.n, s.k);
        EXPECT_EQ(back, plain) << s.n << "x" << s.k;
        EXPECT_EQ(sback, scales) << s.n << "x" << s.k;
    }
}

TEST(Frag16s, HeaderThenFrag16ChunksEachFollowedByTheGroupsScales) {
    for (const NK& s : kFrag16Shapes) {
        const auto plain = random_bytes(s.n * s.k / 2, uint32_t(s.n + s.k));
        const auto scales = random_bytes(s.n * s.k / 32, uint32_t(s.k));
        std::vector<uint8_t> f(plain.size()), img(frag16s_bytes(s.n, s.k));
        frag16_pack(plain.data(), f.data(), s.n, s.k);
        frag16s_pack(plain.data(), scales.data(), img.data(), s.n, s.k);
        const size_t chunks_per_group = s.k / 128, blocks = s.k / 32, group = 64 + chunks_per_group * 1088;
        ASSERT_EQ(frag16s_group_bytes(s.k), group);
        for (size_t G = 0; G < s.n / 16; ++G) {
            for (size_t r = 0; r < 16; ++r)
                ASSERT_EQ(word_at(img, G * group / 4 + r),
                          frag16s_row_word(scales.data() + (16 * G + r) * blocks, blocks))
                    << "group " << G << " row " << r;
            for (size_t c = 0; c < chunks_per_group; ++c) {
                const size_t i = G * chunks_per_group + c, at = G * group + 64 + c * kFrag16sChunk;
                ASSERT_TRUE(std::equal(f.begin() + long(i * 1024), f.begin() + long(i * 1024 + 1024),
                                       img.begin() + long(at)))
                    << "chunk " << i;
                for (size_t r = 0; r < 16; ++r)
                    for (size_t j = 0; j < 4; ++j)
                        ASSERT_EQ(img[at + 1024 + 4 * r + j], scales[(16 * G + r) * blocks + 4 * c + j])
                            << "group " << G << " chunk " << c << " row " << r << " block " << j;
            }
        }
    }
}

TEST(Frag16s, RowWordSummarisesExponentsAndNaN) {
    const uint8_t mixed[] = {120, 0xFF, 7, 200, 131};
    EXPECT_EQ(frag16s_row_word(mixed, 5), 200u | (7u << 8) | F4GEMM_FRAG16S_NAN | F4GEMM_FRAG16S_ANY);
    const uint8_t plain[] = {127, 127, 126};
    EXPECT_EQ(frag16s_row_word(plain, 3), 127u | (126u << 8) | F4GEMM_FRAG16S_ANY);
    const uint8_t all_nan[] = {0xFF, 0xFF};
    EXPECT_EQ(frag16s_row_word(all_nan, 2), 0u | (0xFFu << 8) | F4GEMM_FRAG16S_NAN);  // no exponent at all
    const uint8_t extremes[] = {0, 254};
    EXPECT_EQ(frag16s_row_word(extremes, 2), 254u | (0u << 8) | F4GEMM_FRAG16S_ANY);
}

// The kernels' reading of a summary word (frag16s_row_ref) agrees with the per-row scan rule of the other
// kernels (finish_row in kernels/sm90a/sm90_ptx.cuh), restated here from the scales themselves: reference
// = largest non-NaN exponent - 13 (127 without one), NaN when some block is 0xFF, wide when the non-NaN
// exponents span more than 26 binades and there is no NaN block.
TEST(Frag16s, RowRefFollowsTheScanRule) {
    constexpr int kWindow = 13;
    uint32_t state = 12345u;
    const auto next = [&] { return state = state * 1664525u + 1013904223u; };
    for (int trial = 0; trial < 20000; ++trial) {
        const size_t blocks = 1 + next() % 40;
        std::vector<uint8_t> sc(blocks);
        const int base = int(next() % 256), span = int(next() % 40);
        for (auto& e : sc) {
            const uint32_t r = next();
            e = r % 23 == 0 ? 0xFF : uint8_t(std::min(254, base + int((r >> 8) % uint32_t(span + 1))));
        }
        int emax = -1, emin = 256;
        bool nan = false;
        for (uint8_t e : sc) {
            if (e == 0xFF) {
                nan = true;
                continue;
            }
            emax = std::max(emax, int(e));
            emin = std::min(emin, int(e));
        }
        const Frag16sRowRef r = frag16s_row_ref(frag16s_row_word(sc.data(), blocks), kWindow);
        EXPECT_EQ(r.nan, nan) << trial;
        EXPECT_EQ(r.ref, emax >= 0 ? emax - kWindow : 127) << trial;
        EXPECT_EQ(r.wide, emax >= 0 && !nan && emax - emin > 2 * kWindow) << trial;
    }
    const Frag16sRowRef absent = frag16s_row_ref(0u, kWindow);  // rows past N: no word read
    EXPECT_EQ(absent.ref, 127);
    EXPECT_FALSE(absent.nan);
    EXPECT_FALSE(absent.wide);
}

TEST(Frag16s, ImageIsTheWeightBodyWithPaddedRowsAndK) {
    for (const NK& s : {NK{3, 256}, NK{40, 128}, NK{300, 512}, NK{20, 96}}) {
        const auto plain = random_bytes(s.n * s.k / 2, uint32_t(s.n));
        const auto scales = pattern(s.n * s.k / 32, 5);
        const OperandImage img =
            make_b_image(plain.data(), scales.data(), s.n, s.k, BLayout::Frag16S, ScaleLayout::Plain);
        const size_t rows = round_up(s.n, kOperandRowPad), kp = w_k_pad(s.k);
        ASSERT_EQ(img.data.size(), frag16s_bytes(rows, kp));
        EXPECT_EQ(img.data, pack_weight_body(plain.data(), scales.data(), s.n, s.k));
        std::vector<uint8_t> back(rows * kp / 2), sback(rows * kp / 32);
        frag16s_unpack(img.data.data(), back.data(), sback.data(), rows, kp);
        for (size_t r = 0; r < rows; ++r)
            for (size_t c = 0; c < kp / 2; ++c)
                ASSERT_EQ(back[r * kp / 2 + c], r < s.n && c < s.k / 2 ? plain[r * s.k / 2 + c] : 0)
                    << r << " " << c;
        for (size_t r = s.n; r < rows; ++r)
            for (size_t b = 0; b < kp / 32; ++b) ASSERT_EQ(sback[r * kp / 32 + b], kScalePadByte);
        for (size_t r = 0; r < s.n; ++r)
            for (size_t b = 0; b < s.k / 32; ++b) ASSERT_EQ(sback[r * kp / 32 + b], scales[r * s.k / 32 + b]);
        // W carries B's scales: no plain scales travel.
        EXPECT_TRUE(img.scales.empty());
    }
    EXPECT_EQ(parse_b_layout("frag16s"), BLayout::Frag16S);
    EXPECT_STREQ(to_string(BLayout::Frag16S), "frag16s");
}

TEST(Frag16s, RejectsBadShapes) {
    std::vector<uint8_t> buf(64 * 1152), sc(64 * 64), out(buf.size());
    expect_error([&] { frag16s_pack(buf.data(), sc.data(), out.data(), 24, 128); }, Errc::InvalidArgument,
                 "N (got 24) must be a multiple of 16");
    expect_error([&] { frag16s_unpack(buf.data(), out.data(), sc.data(), 16, 192); }, Errc::InvalidArgument,
                 "K (got 192) must be a multiple of 128");
}

TEST(Frag16, RejectsBadShapes) {
    std::vector<uint8_t> buf(64 * 1024), out(buf.size());
    expect_error([&] { frag16_pack(buf.data(), out.data(), 24, 128); }, Errc::InvalidArgument,
                 "N (got 24) must be a multiple of 16");
    expect_error([&] { frag16_unpack(buf.data(), out.data(), 8, 128); }, Errc::InvalidArgument, "N (got 8)");
    expect_error([&] { frag16_pack(buf.data(), out.data(), 16, 192); }, Errc::InvalidArgument,
                 "K (got 192) must be a multiple of 128");
    expect_error([&] { frag16_unpack(buf.data(), out.data(), 16, 64); }, Errc::InvalidArgument, "pad K");
    const auto scales = pattern(16 * 192 / 32, 1);
    expect_error(
        [&] { make_b_image(buf.data(), scales.data(), 16, 192, BLayout::Frag16, ScaleLayout::Plain); },
        Errc::InvalidArgument, "192");
    try {  // one line
        frag16_pack(buf.data(), out.data(), 16, 192);
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
}
