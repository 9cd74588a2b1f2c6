// Layout maps between plain OCP operands and the kernels' device images: aiter's B 16x16
// preshuffle and scale pad+shuffle (ports of asm_f4gemm f4gemm_ref.hpp shuffle_weight_16x16 /
// shuffle_scale, themselves ports of aiter.ops.shuffle), the bit-plane and frag16 B layouts of our
// sm_90a decode kernels, their inverses, the layout names of the manifest, and the row
// over-allocation of A/B images. docs/LAYOUTS.md and docs/LAYOUTS_SM90.md derive every formula.
#include "f4gemm/layout.hpp"

#include <cstdio>
#include <cstring>

#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"

namespace f4gemm {

namespace {

std::string num(size_t v) {
    return std::to_string(v);
}

void check_scale_k(size_t k, const char* fn) {
    if (k == 0 || k % kBlockK != 0)
        throw Error(Errc::InvalidArgument, std::string(fn) + ": K (got " + num(k) +
                                               ") must be a positive multiple of 32 (one E8M0 scale "
                                               "per 32 elements)");
}

void check_b_shape(size_t n, size_t k, const char* fn) {
    if (n % 16 != 0)
        throw Error(Errc::InvalidArgument, std::string(fn) + ": N (got " + num(n) +
                                               ") must be a multiple of 16 for aiter's 16x16 B "
                                               "preshuffle; use the plain B layout or pad N");
    if (k % 2 != 0 || (k / 2) % 32 != 0)
        throw Error(Errc::InvalidArgument, std::string(fn) + ": K (got " + num(k) +
                                               ") must be a multiple of 64 (K/2 packed bytes a "
                                               "multiple of 32) for aiter's 16x16 B preshuffle");
}

void check_scale_padded(size_t sm, size_t sn, const char* fn) {
    if (sm % 32 != 0 || sn % 8 != 0)
        throw Error(Errc::InvalidArgument, std::string(fn) + ": padded scale shape (got " + num(sm) + "x" +
                                               num(sn) +
                                               ") must have rows % 32 == 0 and cols % 8 == 0; pad "
                                               "with aiter_scale_shape first");
}

}  // namespace

// --- aiter B preshuffle -------------------------------------------------------------------------

size_t aiter_b_index(size_t n, size_t kbyte, size_t k) {
    const size_t kp32 = k / 2 / 32;  // 32-byte groups per row
    const size_t n0 = n / 16, n1 = n % 16;
    const size_t k0 = kbyte / 32, k1 = (kbyte / 16) % 2, k2 = kbyte % 16;
    return (((n0 * kp32 + k0) * 2 + k1) * 16 + n1) * 16 + k2;
}

// Both directions move whole 16-byte runs: k2 is innermost on both sides, so each (n, k0, k1)
// is one memcpy of the 16 bytes src[n][k0*32 + k1*16 .. +16).
void aiter_b_shuffle(const uint8_t* src, uint8_t* dst, size_t n, size_t k) {
    check_b_shape(n, k, "aiter_b_shuffle");
    const size_t kp = k / 2;
    for (size_t row = 0; row < n; ++row)
        for (size_t kb = 0; kb < kp; kb += 16)
            std::memcpy(dst + aiter_b_index(row, kb, k), src + row * kp + kb, 16);
}

void aiter_b_unshuffle(const uint8_t* src, uint8_t* dst, size_t n, size_t k) {
    check_b_shape(n, k, "aiter_b_unshuffle");
    const size_t kp = k / 2;
    for (size_t row = 0; row < n; ++row)
        for (size_t kb = 0; kb < kp; kb += 16)
            std::memcpy(dst + row * kp + kb, src + aiter_b_index(row, kb, k), 16);
}

// --- aiter scales -------------------------------------------------------------------------------

ScaleShape aiter_scale_shape(size_t rows, size_t k) {
    check_scale_k(k, "aiter_scale_shape");
    return {round_up(rows, kOperandRowPad), round_up(k / kBlockK, 8)};
}

size_t aiter_scale_index(size_t r, size_t c, size_t sn) {
    const size_t d0 = r / 32, d1 = (r / 16) % 2, d2 = r % 16;
    const size_t d3 = c / 8, d4 = (c / 4) % 2, d5 = c % 4;
    return ((((d0 * (sn / 8) + d3) * 4 + d5) * 16 + d2) * 2 + d4) * 2 + d1;
}

std::vector<uint8_t> aiter_scale_pack(const uint8_t* plain, size_t rows, size_t k, uint8_t pad_byte) {
    const ScaleShape s = aiter_scale_shape(rows, k);
    const size_t cols = k / kBlockK;
    std::vector<uint8_t> padded(s.rows * s.cols, pad_byte);  // (sm, sn) e8m0, row-major
    for (size_t r = 0; r < rows; ++r) std::memcpy(&padded[r * s.cols], plain + r * cols, cols);
    std::vector<uint8_t> dst(s.rows * s.cols);  // (sm, sn) e8m0, aiter shuffled
    aiter_scale_shuffle(padded.data(), dst.data(), s.rows, s.cols);
    return dst;
}

void aiter_scale_shuffle(const uint8_t* padded, uint8_t* dst, size_t sm, size_t sn) {
    check_scale_padded(sm, sn, "aiter_scale_shuffle");
    for (size_t r = 0; r < sm; ++r)
        for (size_t c = 0; c < sn; ++c) dst[aiter_scale_index(r, c, sn)] = padded[r * sn + c];
}

void aiter_scale_unshuffle(const uint8_t* src, uint8_t* padded, size_t sm, size_t sn) {
    check_scale_padded(sm, sn, "aiter_scale_unshuffle");
    for (size_t r = 0; r < sm; ++r)
        for (size_t c = 0; c < sn; ++c) padded[r * sn + c] = src[aiter_scale_index(r, c, sn)];
}

// --- bit-plane B ----------------------------------------------------------------------------------

namespace {
void bitplane_apply(const uint8_t* src, uint8_t* dst, size_t bytes, uint32_t (*f)(uint32_t),
                    const char* who) {
    if (bytes % 4 != 0)
        throw Error(Errc::InvalidArgument, std::string(who) + " (got " + std::to_string(bytes) +
                                               " bytes): the bit-plane layout permutes whole 4-byte words");
    for (size_t i = 0; i < bytes; i += 4) {
        uint32_t w;
        std::memcpy(&w, src + i, 4);
        w = f(w);
        std::memcpy(dst + i, &w, 4);
    }
}
}  // namespace

void bitplane_pack(const uint8_t* src, uint8_t* dst, size_t bytes) {
    bitplane_apply(src, dst, bytes, bitplane_word, "bitplane_pack");
}
void bitplane_unpack(const uint8_t* src, uint8_t* dst, size_t bytes) {
    bitplane_apply(src, dst, bytes, bitplane_word_inverse, "bitplane_unpack");
}

// --- frag16 B -------------------------------------------------------------------------------------

namespace {
void check_frag16_shape(size_t n, size_t k, const char* fn) {
    if (n % 16 != 0)
        throw Error(Errc::InvalidArgument, std::string(fn) + ": N (got " + num(n) +
                                               ") must be a multiple of 16 for the frag16 B layout (one "
                                               "16-row mma fragment per group); pad N");
    if (k % 128 != 0)
        throw Error(Errc::InvalidArgument, std::string(fn) + ": K (got " + num(k) +
                                               ") must be a multiple of 128 for the frag16 B layout (four "
                                               "32-element scale blocks per 1024-byte chunk); pad K");
}
}  // namespace

size_t frag16_word_index(size_t n, size_t w, size_t k) {
    const size_t kb = w / 4, t = w % 4;
    const size_t G = n / 16, r = n % 16, g = r % 8, h = r / 8;
    const size_t c = kb / 4, j = kb % 4;
    return (G * (k / 128) + c) * 256 + h * 128 + j * 32 + (g * 4 + t);
}

namespace {
// Word by word: every word goes through bitplane_word anyway (the runs common to both sides are only
// the 4 words t = 0..3 of one block of one row, 16 bytes). `pack` picks the direction.
void frag16_move(const uint8_t* src, uint8_t* dst, size_t n, size_t k, bool pack) {
    const size_t words = k / 8;  // per row
    for (size_t row = 0; row < n; ++row)
        for (size_t w = 0; w < words; ++w) {
            const size_t plain = (row * words + w) * 4, shuffled = frag16_word_index(row, w, k) * 4;
            uint32_t x;
            std::memcpy(&x, src + (pack ? plain : shuffled), 4);
            x = pack ? bitplane_word(x) : bitplane_word_inverse(x);
            std::memcpy(dst + (pack ? shuffled : plain), &x, 4);
        }
}
}  // namespace

void frag16_pack(const uint8_t* src, uint8_t* dst, size_t n, size_t k) {
    check_frag16_shape(n, k, "frag16_pack");
    frag16_move(src, dst, n, k, true);
}

void frag16_unpack(const uint8_t* src, uint8_t* dst, size_t n, size_t k) {
    check_frag16_shape(n, k, "frag16_unpack");
    frag16_move(src, dst, n, k, false);
}

// --- frag16s B: a header of row summaries per 16-row group, then frag16 chunks of 1024 bytes spread to
// 1088 with the group's scales in the last 64 ------------------------------------------------------

size_t frag16s_bytes(size_t n, size_t k) {
    return n / 16 * frag16s_group_bytes(k);
}

namespace {
// Frag16 chunk c of group G (1024 bytes) <-> bytes [chunk_offset, + 1024) of the frag16s image, and scale
// byte (row, block) <-> 1024 + 4*(row % 16) + block % 4 of the chunk of (row/16, block/4).
size_t frag16s_chunk_offset(size_t G, size_t c, size_t k) {
    return G * frag16s_group_bytes(k) + kFrag16sHead + c * kFrag16sChunk;
}
size_t frag16s_scale_offset(size_t row, size_t block, size_t k) {
    return frag16s_chunk_offset(row / 16, block / 4, k) + 1024 + 4 * (row % 16) + block % 4;
}
}  // namespace

void frag16s_pack(const uint8_t* src, const uint8_t* scales, uint8_t* dst, size_t n, size_t k) {
    check_frag16_shape(n, k, "frag16s_pack");
    std::vector<uint8_t> f(n * k / 2);
    frag16_pack(src, f.data(), n, k);
    const size_t per_group = k / 128, blocks = k / kBlockK;
    for (size_t G = 0; G < n / 16; ++G)
        for (size_t c = 0; c < per_group; ++c)
            std::memcpy(dst + frag16s_chunk_offset(G, c, k), f.data() + (G * per_group + c) * 1024, 1024);
    for (size_t row = 0; row < n; ++row) {
        const uint32_t w = frag16s_row_word(scales + row * blocks, blocks);
        std::memcpy(dst + (row / 16) * frag16s_group_bytes(k) + 4 * (row % 16), &w, 4);  // little-endian
        for (size_t b = 0; b < blocks; ++b) dst[frag16s_scale_offset(row, b, k)] = scales[row * blocks + b];
    }
}

void frag16s_unpack(const uint8_t* src, uint8_t* dst, uint8_t* scales, size_t n, size_t k) {
    check_frag16_shape(n, k, "frag16s_unpack");
    std::vector<uint8_t> f(n * k / 2);
    const size_t per_group = k / 128;
    for (size_t G = 0; G < n / 16; ++G)
        for (size_t c = 0; c < per_group; ++c)
            std::memcpy(f.data() + (G * per_group + c) * 1024, src + frag16s_chunk_offset(G, c, k), 1024);
    frag16_unpack(f.data(), dst, n, k);
    const size_t blocks = k / kBlockK;
    for (size_t row = 0; row < n; ++row)
        for (size_t b = 0; b < blocks; ++b) scales[row * blocks + b] = src[frag16s_scale_offset(row, b, k)];
}

// --- layout names -------------------------------------------------------------------------------

BLayout parse_b_layout(const std::string& s) {
    if (s == "plain") return BLayout::Plain;
    if (s == "aiter16x16") return BLayout::Aiter16x16;
    if (s == "bitplane") return BLayout::Bitplane;
    if (s == "frag16") return BLayout::Frag16;
    if (s == "frag16s") return BLayout::Frag16S;
    throw Error(Errc::InvalidArgument, "unknown B layout (got '" + s + "'): use " + kBLayoutChoices);
}

ScaleLayout parse_scale_layout(const std::string& s) {
    if (s == "plain") return ScaleLayout::Plain;
    if (s == "aiter") return ScaleLayout::AiterShuffled;
    throw Error(Errc::InvalidArgument, "unknown scale layout (got '" + s + "'): use " + kScaleLayoutChoices);
}

const char* to_string(BLayout l) {
    switch (l) {
        case BLayout::Plain:
            return "plain";
        case BLayout::Aiter16x16:
            return "aiter16x16";
        case BLayout::Bitplane:
            return "bitplane";
        case BLayout::Frag16:
            return "frag16";
        case BLayout::Frag16S:
            return "frag16s";
    }
    return "?";
}
const char* to_string(ScaleLayout l) {
    return l == ScaleLayout::Plain ? "plain" : "aiter";
}

// --- device images ------------------------------------------------------------------------------

namespace {

// Packed rows copied into a zero-filled (round_up(rows, 256), k/2) buffer.
std::vector<uint8_t> padded_rows(const uint8_t* packed, size_t rows, size_t k) {
    std::vector<uint8_t> data(round_up(rows, kOperandRowPad) * (k / 2), 0);
    if (rows) std::memcpy(data.data(), packed, rows * (k / 2));
    return data;
}

// Plain scales copied into a (round_up(rows, 256), k/32) buffer whose pad rows hold kScalePadByte.
std::vector<uint8_t> padded_scales(const uint8_t* scales, size_t rows, size_t k) {
    const size_t cols = k / kBlockK;
    std::vector<uint8_t> sc(round_up(rows, kOperandRowPad) * cols, kScalePadByte);
    if (rows) std::memcpy(sc.data(), scales, rows * cols);
    return sc;
}

void fill_scales(OperandImage& img, const uint8_t* scales, size_t rows, size_t k, ScaleLayout sl) {
    if (sl == ScaleLayout::AiterShuffled) {
        img.scales = aiter_scale_pack(scales, rows, k);
        img.scale_stride = aiter_scale_shape(rows, k).cols;
        return;
    }
    img.scales = padded_scales(scales, rows, k);
    img.scale_stride = k / kBlockK;
}

}  // namespace

OperandImage make_a_image(const uint8_t* packed, const uint8_t* scales, size_t m, size_t k, ScaleLayout sl,
                          size_t kp) {
    check_scale_k(k, "make_a_image");
    if (kp == 0 || kp == k) {
        OperandImage img;
        img.data = padded_rows(packed, m, k);  // (round_up(m,256), k/2) fp4x2, K-major, plain
        fill_scales(img, scales, m, k, sl);
        return img;
    }
    if (kp < k || kp % kBlockK || sl != ScaleLayout::Plain)
        throw Error(Errc::InvalidArgument, "make_a_image: padded K " + std::to_string(kp) + " for K " +
                                               std::to_string(k) +
                                               " must be a larger multiple of 32 with plain scales");
    // (round_up(m,256), kp/2) fp4x2 and (round_up(m,256), kp/32) e8m0: real rows copied, K padded with
    // zero blocks scaled by the row's largest non-NaN exponent (weight.h's rule), padding rows as before.
    const size_t rows = round_up(m, kOperandRowPad), kb = k / kBlockK, kpb = kp / kBlockK;
    OperandImage img;
    img.data.assign(rows * (kp / 2), 0);
    img.scales.assign(rows * kpb, kScalePadByte);
    img.scale_stride = kpb;
    for (size_t r = 0; r < m; ++r) {
        std::memcpy(img.data.data() + r * (kp / 2), packed + r * (k / 2), k / 2);
        const uint8_t* rs = scales + r * kb;
        uint8_t* ds = img.scales.data() + r * kpb;
        std::memcpy(ds, rs, kb);
        const uint8_t pad = uint8_t(w_pad_block_scale(rs, kb));
        for (size_t j = kb; j < kpb; ++j) ds[j] = pad;
    }
    return img;
}

WeightInfo weight_info(size_t n, size_t k) {
    if (n == 0)
        throw Error(Errc::InvalidArgument, "weight N must be positive (got 0): pass the weight's row count");
    if (k == 0 || k % kBlockK)
        throw Error(Errc::InvalidArgument,
                    "weight K must be a positive multiple of 32 (got " + std::to_string(k) +
                        "): MXFP4 has one scale per 32 elements; pad K with zero blocks to a multiple of 32");
    if (n > (size_t(1) << 30) || k > (size_t(1) << 30))
        throw Error(Errc::InvalidArgument, "weight " + std::to_string(n) + " x " + std::to_string(k) +
                                               " is too large for 32-bit kernel arguments: split it");
    WeightInfo w;
    w.n = n;
    w.k = k;
    w.n_pad = w_n_pad(n);
    w.k_pad = w_k_pad(k);
    w.bytes = w_bytes(n, k);
    return w;
}

std::vector<uint8_t> pack_weight_body(const uint8_t* b, const uint8_t* scales, size_t n, size_t k) {
    const WeightInfo info = weight_info(n, k);
    const WSource src{b, scales, n, k, k / 2, k / kBlockK};
    const size_t words = (info.bytes - F4GEMM_W_HEADER) / 4;
    std::vector<uint8_t> body(words * 4);
    for (size_t d = 0; d < words; ++d) {
        const uint32_t v = w_body_word(src, d);
        std::memcpy(body.data() + 4 * d, &v, 4);  // little-endian host, as the device
    }
    return body;
}

std::vector<uint8_t> pack_weight(const uint8_t* b, const uint8_t* scales, size_t n, size_t k) {
    const std::vector<uint8_t> body = pack_weight_body(b, scales, n, k);
    const F4gemmWeightHeader h = w_header(n, k);
    std::vector<uint8_t> w(F4GEMM_W_HEADER + body.size());
    std::memcpy(w.data(), &h, sizeof h);
    std::memcpy(w.data() + F4GEMM_W_HEADER, body.data(), body.size());
    return w;
}

WeightInfo read_weight_header(const uint8_t* w, size_t len, const std::string& what) {
    if (len < F4GEMM_W_HEADER)
        throw Error(Errc::BadInput,
                    what + " has " + std::to_string(len) + " bytes, less than the " +
                        std::to_string(F4GEMM_W_HEADER) +
                        "-byte header of a packed weight: pack it with f4gemm pack --layout weight");
    F4gemmWeightHeader h;
    std::memcpy(&h, w, sizeof h);
    if (h.magic != F4GEMM_W_MAGIC)
        throw Error(
            Errc::BadInput, what + " is not a packed weight (magic 0x" + [&] {
                char buf[16];
                std::snprintf(buf, sizeof buf, "%08x", h.magic);
                return std::string(buf);
            }() + ", want 0x57473446 \"F4GW\"): pack it with f4gemm pack --layout weight");
    if (h.version != F4GEMM_W_VERSION)
        throw Error(Errc::BadInput, what + " is a packed weight of version " + std::to_string(h.version) +
                                        ", this f4gemm reads version " + std::to_string(F4GEMM_W_VERSION) +
                                        ": pack it again from the plain weight");
    const WeightInfo info = weight_info(h.n, h.k);
    if (h.n_pad != info.n_pad || h.k_pad != info.k_pad || h.body_bytes != info.bytes - F4GEMM_W_HEADER)
        throw Error(Errc::BadInput,
                    what + ": header of a " + std::to_string(h.n) + " x " + std::to_string(h.k) +
                        " weight has inconsistent padded sizes: the file is damaged; pack it again");
    if (len != info.bytes)
        throw Error(Errc::BadInput, what + " has " + std::to_string(len) + " bytes, but a packed " +
                                        std::to_string(h.n) + " x " + std::to_string(h.k) + " weight has " +
                                        std::to_string(info.bytes) +
                                        ": the buffer is truncated or padded; pack it again");
    return info;
}

void unpack_weight(const uint8_t* w, size_t len, std::vector<uint8_t>& b, std::vector<uint8_t>& scales,
                   WeightInfo* out_info) {
    const WeightInfo info = read_weight_header(w, len, "weight");
    const size_t n = info.n, k = info.k, kp = info.k_pad;
    const uint8_t* body = w + F4GEMM_W_HEADER;
    const size_t group = frag16s_group_bytes(kp);
    b.assign(n * (k / 2), 0);
    scales.assign(n * (k / kBlockK), 0);
    for (size_t row = 0; row < n; ++row) {
        const size_t G = row / 16, r = row % 16, g = r % 8, h = r / 8;
        const uint8_t* grp = body + G * group + kFrag16sHead;
        for (size_t kb = 0; kb < k / kBlockK; ++kb) {
            const size_t c = kb / 4, j = kb % 4;
            const uint8_t* chunk = grp + c * kFrag16sChunk;
            scales[row * (k / kBlockK) + kb] = chunk[1024 + 4 * r + j];
            for (size_t t = 0; t < 4; ++t) {
                uint32_t x;
                std::memcpy(&x, chunk + h * 512 + j * 128 + (g * 4 + t) * 4, 4);
                x = bitplane_word_inverse(x);
                std::memcpy(b.data() + row * (k / 2) + (kb * 4 + t) * 4, &x, 4);
            }
        }
    }
    if (out_info) *out_info = info;
}

OperandImage make_b_image(const uint8_t* packed, const uint8_t* scales, size_t n, size_t k, BLayout bl,
                          ScaleLayout sl) {
    check_scale_k(k, "make_b_image");
    OperandImage img;
    if (bl == BLayout::Aiter16x16) {
        check_b_shape(n, k, "make_b_image");
        // n0 is the outermost index of the shuffle, so the n real rows land in the first
        // n*k/2 bytes and the zero rows past n are the same in either layout.
        img.data.assign(round_up(n, kOperandRowPad) * (k / 2), 0);
        aiter_b_shuffle(packed, img.data.data(), n, k);  // (round_up(n,256), k/2), 16x16 preshuffle
    } else if (bl == BLayout::Frag16) {
        check_frag16_shape(round_up(n, kOperandRowPad), k, "make_b_image");  // K; padded rows are % 16
        // Pad first, then shuffle the whole padded image (the shuffle moves words between rows, so
        // it cannot run in place): real rows of a partial 16-row group share chunks with zero rows.
        const std::vector<uint8_t> plain = padded_rows(packed, n, k);
        img.data.resize(plain.size());  // (round_up(n,256), k/2) bytes, frag16
        frag16_pack(plain.data(), img.data.data(), round_up(n, kOperandRowPad), k);
    } else if (bl == BLayout::Frag16S) {
        // The W body: frag16s of B padded to round_up(n,256) rows and round_up(k,256) columns, scales
        // inside; the kernels read no separate B scales.
        img.data = pack_weight_body(packed, scales, n, k);
        return img;
    } else {
        img.data = padded_rows(packed, n, k);  // (round_up(n,256), k/2) fp4x2, K-major, plain
        if (bl == BLayout::Bitplane) bitplane_pack(img.data.data(), img.data.data(), img.data.size());
    }
    fill_scales(img, scales, n, k, sl);
    return img;
}

}  // namespace f4gemm
