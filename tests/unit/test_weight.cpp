// The packed weight W (include/f4gemm/weight.h, docs/LAYOUTS_SM90.md "The packed weight W"): sizes,
// hand-computed word positions with padded K and N, the bijection between the plain weight and the
// body's data and scale bytes, the padding rules (zero data, row-max scale, row words unchanged), the
// equality with frag16s of the padded image, the header's checks, and the A operand's K padding.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "f4gemm/error.hpp"
#include "f4gemm/layout.hpp"
#include "f4gemm/operands.hpp"

using namespace f4gemm;

namespace {

uint32_t word_at(const std::vector<uint8_t>& v, size_t byte) {
    uint32_t x;
    std::memcpy(&x, v.data() + byte, 4);
    return x;
}

// Body byte offset of plain word w (bytes 4w..4w+3) of row n, from the formula in docs/LAYOUTS_SM90.md.
size_t data_offset(size_t n, size_t w, size_t k) {
    const size_t kp = w_k_pad(k), G = n / 16, r = n % 16, g = r % 8, h = r / 8, kb = w / 4, t = w % 4;
    return G * frag16s_group_bytes(kp) + 64 + (kb / 4) * 1088 + h * 512 + (kb % 4) * 128 + (g * 4 + t) * 4;
}
size_t scale_offset(size_t n, size_t kb, size_t k) {
    const size_t kp = w_k_pad(k), G = n / 16, r = n % 16;
    return G * frag16s_group_bytes(kp) + 64 + (kb / 4) * 1088 + 1024 + 4 * r + kb % 4;
}

}  // namespace

TEST(Weight, SizesAndPadding) {
    // gpt-oss's 2880 x 2880: Np = 3072, Kp = 3072, 192 groups of 64 + 24 * 1088 bytes, + the header.
    const WeightInfo w = weight_info(2880, 2880);
    EXPECT_EQ(w.n_pad, 3072u);
    EXPECT_EQ(w.k_pad, 3072u);
    EXPECT_EQ(w.bytes, 256u + 192u * (64u + 24u * 1088u));
    EXPECT_EQ(weight_info(1, 32).bytes, 256u + 16u * (64u + 2u * 1088u));
    EXPECT_EQ(weight_info(201088, 2880).n_pad, 201216u);
    EXPECT_EQ(w_bytes(16384, 16384), 256u + 1024u * (64u + 128u * 1088u));
    EXPECT_THROW(weight_info(0, 256), Error);
    EXPECT_THROW(weight_info(16, 100), Error);
    try {
        weight_info(16, 100);
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("multiple of 32 (got 100)"), std::string::npos) << e.what();
    }
}

TEST(Weight, HandComputedWordPositions) {
    // (n, w, K) -> body byte, computed by hand from G, h, g, t, kb, c, j.
    EXPECT_EQ(data_offset(0, 0, 256), 64u);           // first data word after the header
    EXPECT_EQ(data_offset(1, 0, 256), 64u + 16u);     // next row: lane 4
    EXPECT_EQ(data_offset(8, 0, 256), 64u + 512u);    // rows 8..15: second half
    EXPECT_EQ(data_offset(0, 4, 256), 64u + 128u);    // next block: next 128 bytes
    EXPECT_EQ(data_offset(0, 16, 256), 64u + 1088u);  // block 4: the next chunk, after 64 scales
    EXPECT_EQ(data_offset(16, 0, 2880),
              64u + 24u * 1088u + 64u);  // K = 2880 pads to 3072 = 24 chunks a group
    EXPECT_EQ(scale_offset(17, 6, 256), 2240u + 64u + 1088u + 1024u + 4u + 2u);  // docs/LAYOUTS_SM90.md
    // Packed from a weight with a single non-zero word, the body holds it exactly there.
    for (const auto& c :
         std::vector<std::array<size_t, 3>>{{1, 0, 256}, {17, 21, 2880}, {999, 359, 2880}, {2879, 5, 96}}) {
        const size_t n = std::max<size_t>(c[0] + 1, 20), w = c[1], k = c[2];
        std::vector<uint8_t> b(n * k / 2, 0), s(n * k / 32, 127);
        const uint32_t plain = 0x000F0000u;  // e4 = -6 -> bit-plane 0x00000071
        std::memcpy(b.data() + c[0] * (k / 2) + 4 * w, &plain, 4);
        const std::vector<uint8_t> W = pack_weight(b.data(), s.data(), n, k);
        const std::vector<uint8_t> body(W.begin() + 256, W.end());
        EXPECT_EQ(word_at(body, data_offset(c[0], w, k)), 0x00000071u) << c[0] << " " << w << " " << k;
        size_t nonzero = 0;
        for (size_t i = 0; i + 4 <= body.size(); i += 4) {
            const size_t G = i / frag16s_group_bytes(w_k_pad(k)), o = i % frag16s_group_bytes(w_k_pad(k));
            (void)G;
            if (o < 64 || (o - 64) % 1088 >= 1024) continue;  // header and scale words
            nonzero += word_at(body, i) != 0;
        }
        EXPECT_EQ(nonzero, 1u);
    }
}

TEST(Weight, RoundTripAndBijection) {
    std::mt19937 rng(7);
    for (const auto& sh :
         std::vector<std::array<size_t, 2>>{{16, 256}, {1000, 2880}, {2880, 2880}, {1, 32}, {257, 96}}) {
        const size_t n = sh[0], k = sh[1];
        const MxOperand op = make_operand(n, k, uint32_t(rng()), DataKind::WideScale);
        const std::vector<uint8_t> W = pack_weight(op.packed.data(), op.scales.data(), n, k);
        ASSERT_EQ(W.size(), w_bytes(n, k));
        std::vector<uint8_t> b, s;
        WeightInfo info;
        unpack_weight(W.data(), W.size(), b, s, &info);
        EXPECT_EQ(info.n, n);
        EXPECT_EQ(info.k, k);
        EXPECT_EQ(b, op.packed) << n << "x" << k;
        EXPECT_EQ(s, op.scales) << n << "x" << k;
        // Every plain data word and scale byte lands at a distinct body position (injective), and
        // the formula positions hold them.
        std::set<size_t> seen;
        for (size_t r = 0; r < n; r += std::max<size_t>(1, n / 37)) {
            for (size_t w = 0; w < k / 8; ++w) {
                const size_t off = data_offset(r, w, k);
                EXPECT_TRUE(seen.insert(off).second);
                uint32_t pw;
                std::memcpy(&pw, op.packed.data() + r * (k / 2) + 4 * w, 4);
                ASSERT_EQ(word_at(W, 256 + off), bitplane_word(pw)) << r << " " << w;
            }
            for (size_t kb = 0; kb < k / 32; ++kb) {
                const size_t off = scale_offset(r, kb, k);
                EXPECT_TRUE(seen.insert(off).second);
                ASSERT_EQ(W[256 + off], op.scales[r * (k / 32) + kb]);
            }
        }
    }
}

TEST(Weight, PaddingIsZeroDataWithTheRowsLargestScale) {
    const size_t n = 20, k = 96;  // Kp = 256: blocks 3..7 are padding; rows 20..255 are padding
    MxOperand op = make_operand(n, k, 3, DataKind::Seed);
    op.scales[0 * 3 + 0] = 140;                                                 // row 0's largest
    op.scales[1 * 3 + 0] = op.scales[1 * 3 + 1] = op.scales[1 * 3 + 2] = 0xFF;  // row 1: all NaN
    op.scales[2 * 3 + 1] = 0xFF;                                                // row 2: one NaN block
    const std::vector<uint8_t> W = pack_weight(op.packed.data(), op.scales.data(), n, k);
    for (size_t r = 0; r < 32; ++r) {
        for (size_t w = k / 8; w < 256 / 8; ++w) EXPECT_EQ(word_at(W, 256 + data_offset(r, w, k)), 0u);
        if (r >= n) {
            for (size_t w = 0; w < k / 8; ++w) EXPECT_EQ(word_at(W, 256 + data_offset(r, w, k)), 0u);
            for (size_t kb = 0; kb < 8; ++kb) EXPECT_EQ(W[256 + scale_offset(r, kb, k)], 0x7F);
            continue;
        }
        const uint8_t* rs = op.scales.data() + r * 3;
        const uint32_t want = w_pad_block_scale(rs, 3);
        for (size_t kb = 3; kb < 8; ++kb) EXPECT_EQ(W[256 + scale_offset(r, kb, k)], want) << r;
        // The header's row word over the real blocks equals the word over the padded row.
        std::vector<uint8_t> padded(rs, rs + 3);
        padded.resize(8, uint8_t(want));
        const size_t head = (r / 16) * frag16s_group_bytes(256) + 4 * (r % 16);
        EXPECT_EQ(word_at(W, 256 + head), frag16s_row_word(rs, 3));
        EXPECT_EQ(frag16s_row_word(padded.data(), 8), frag16s_row_word(rs, 3)) << r;
    }
    EXPECT_EQ(W[256 + scale_offset(0, 5, k)], 140);
    EXPECT_EQ(W[256 + scale_offset(1, 5, k)], 0xFF);  // every block NaN: the padding too
    EXPECT_NE(W[256 + scale_offset(2, 5, k)], 0xFF);  // one NaN block: the row's largest real scale
}

TEST(Weight, BodyIsFrag16sOfThePaddedImage) {
    const size_t n = 256, k = 512;
    const MxOperand op = make_operand(n, k, 5, DataKind::NanScale);
    const std::vector<uint8_t> W = pack_weight(op.packed.data(), op.scales.data(), n, k);
    std::vector<uint8_t> f(frag16s_bytes(n, k));
    frag16s_pack(op.packed.data(), op.scales.data(), f.data(), n, k);
    EXPECT_TRUE(std::equal(f.begin(), f.end(), W.begin() + 256));
    // The driver's device image of B for the packed-weight kernels is the body.
    const OperandImage img =
        make_b_image(op.packed.data(), op.scales.data(), n, k, BLayout::Frag16S, ScaleLayout::Plain);
    EXPECT_TRUE(std::equal(img.data.begin(), img.data.end(), W.begin() + 256));
    EXPECT_TRUE(img.scales.empty());
}

TEST(Weight, HeaderChecksNameTheFix) {
    const MxOperand op = make_operand(64, 256, 9, DataKind::Seed);
    std::vector<uint8_t> W = pack_weight(op.packed.data(), op.scales.data(), 64, 256);
    EXPECT_EQ(read_weight_header(W.data(), W.size(), "w").n, 64u);
    auto expect_error = [&](std::vector<uint8_t> v, size_t len, const std::string& part) {
        try {
            read_weight_header(v.data(), len, "--in w.npy");
            ADD_FAILURE() << "no error for " << part;
        } catch (const Error& e) {
            const std::string m = e.what();
            EXPECT_NE(m.find(part), std::string::npos) << m;
            EXPECT_NE(m.find("--in w.npy"), std::string::npos) << m;
            EXPECT_EQ(m.find('\n'), std::string::npos) << m;
        }
    };
    expect_error(W, W.size() - 1, "truncated");
    expect_error(W, 100, "less than the 256-byte header");
    std::vector<uint8_t> bad = W;
    bad[0] ^= 1;
    expect_error(bad, bad.size(), "not a packed weight");
    bad = W;
    bad[4] = 9;
    expect_error(bad, bad.size(), "version 9");
    bad = W;
    bad[17] ^= 0x10;  // n_pad 256 -> 4352
    expect_error(bad, bad.size(), "inconsistent");
}

TEST(Weight, AOperandPaddedToTheWeightsK) {
    const size_t m = 3, k = 96, kp = 256;
    MxOperand op = make_operand(m, k, 21, DataKind::Seed);
    op.scales[1 * 3 + 2] = 150;
    const OperandImage a = make_a_image(op.packed.data(), op.scales.data(), m, k, ScaleLayout::Plain, kp);
    ASSERT_EQ(a.data.size(), 256u * kp / 2);
    ASSERT_EQ(a.scales.size(), 256u * kp / 32);
    EXPECT_EQ(a.scale_stride, kp / 32);
    for (size_t r = 0; r < 256; ++r) {
        for (size_t c = 0; c < kp / 2; ++c) {
            const uint8_t want = r < m && c < k / 2 ? op.packed[r * (k / 2) + c] : 0;
            ASSERT_EQ(a.data[r * (kp / 2) + c], want) << r << " " << c;
        }
        for (size_t kb = 0; kb < kp / 32; ++kb) {
            const uint8_t want = r >= m   ? 0x7F
                                 : kb < 3 ? op.scales[r * 3 + kb]
                                          : uint8_t(w_pad_block_scale(op.scales.data() + r * 3, 3));
            ASSERT_EQ(a.scales[r * (kp / 32) + kb], want) << r << " " << kb;
        }
    }
    EXPECT_EQ(a.scales[1 * 8 + 5], 150);
    // kp == k: the plain image, as before.
    const OperandImage same = make_a_image(op.packed.data(), op.scales.data(), m, k, ScaleLayout::Plain, k);
    EXPECT_EQ(same.data.size(), 256u * k / 2);
}
