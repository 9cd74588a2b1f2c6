// Data layouts between the plain OCP boundary and what each kernel family consumes. Every map
// is an index formula with its inverse (see docs/LAYOUTS.md); ports of aiter's
// shuffle_weight(layout=(16,16)) and shuffle_scale (non-guinterleave), seed spec section 6.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "f4gemm/bitplane.h"
#include "f4gemm/frag16s.h"
#include "f4gemm/weight.h"

namespace f4gemm {

inline size_t round_up(size_t x, size_t m) {
    return (x + m - 1) / m * m;
}
inline size_t ceil_div(size_t x, size_t m) {
    return (x + m - 1) / m;
}

// Row over-allocation of A/B (so an edge tile never touches unmapped memory) and D.
constexpr size_t kOperandRowPad = 256;
constexpr size_t kOutputRowPad = 32;
constexpr uint8_t kScalePadByte = 0x7F;  // 2^0: an edge tile can never pick up a NaN scale

// --- aiter B preshuffle, on packed bytes [n, k/2] (n % 16 == 0, (k/2) % 32 == 0) ---------------
// view(N/16, 16, Kp/32, 2, 16).permute(0, 2, 3, 1, 4), Kp = k/2:
//   src[n0*16 + n1][k0*32 + k1*16 + k2] -> dst[(((n0*Kp/32 + k0)*2 + k1)*16 + n1)*16 + k2]
size_t aiter_b_index(size_t n, size_t kbyte, size_t k);  // dst offset of src (n, kbyte)
void aiter_b_shuffle(const uint8_t* src, uint8_t* dst, size_t n, size_t k);
void aiter_b_unshuffle(const uint8_t* src, uint8_t* dst, size_t n, size_t k);

// Bit-plane B (our sm_90a decode kernels, b_layout "bitplane"): a bit permutation inside every 32-bit
// word (4 bytes = 8 elements e0..e7, plain: e_i in nibble i, nibble = sign(bit 3) | magnitude(bits 2..0)).
// Byte b (0..3) of the word holds e_b and e_{b+4}: bit 7 = sign(e_b), bits 3..1 = magnitude(e_b),
// bits 6..4 = magnitude(e_{b+4}), bit 0 = sign(e_{b+4}). Then `word & 0x8E8E8E8E` is e0..e3 and
// `((word >> 3) & 0x0E0E0E0E) | ((word & 0x01010101) << 7)` is e4..e7, each as the e5m2 byte of
// e2m1 * 2^-14: four instructions per 8 elements instead of nine (docs/LAYOUTS_SM90.md).
// Words stay in place, so rows, padding and sizes are those of the plain layout. `bytes` % 4 == 0.
// bitplane_word / bitplane_word_inverse: include/f4gemm/bitplane.h (shared with the kernels).
void bitplane_pack(const uint8_t* src, uint8_t* dst, size_t bytes);
void bitplane_unpack(const uint8_t* src, uint8_t* dst, size_t bytes);

// frag16 B (our sm_90a mma.sync decode kernels, b_layout "frag16"): the bit-plane words above, shuffled
// so that a warp gets its mma.sync m16n8k32 fragments from a shared-memory copy of one 1024-byte chunk
// (one 1D bulk copy per chunk) with one conflict-free 4-byte load per lane per scale block. The weight
// rows sit on the mma's M side (B is the A operand: a 16-row group is one m16 fragment), so lane (g, t)
// of a warp (g = lane/4 row, t = lane%4) needs, for rows g and g+8 of the group, word t (elements
// 8t..8t+7, two registers after the bit-plane decode) of each 32-element scale block; within each row
// half the 32 lanes' words of one block are adjacent in lane order, so lane g*4+t reads word t of block
// j at byte j*128 + (g*4+t)*4 of its half: 128 contiguous bytes per block, 32 distinct banks.
// Plain source word w (bytes 4w..4w+3) of row n, with kb = w/4, t = w%4, G = n/16, r = n%16, g = r%8,
// h = r/8, c = kb/4, j = kb%4:
//   dst_word = (G*(k/128) + c)*256 + h*128 + j*32 + (g*4 + t),   value bitplane_word(source word)
// i.e. 1024-byte chunks, one per (16-row group G, 128-K chunk c), G outer; in a chunk rows 0..7 of the
// group (h = 0) fill the first 512 bytes and rows 8..15 the next; in each half block j (block 4c+j of
// the row) takes bytes j*128 .. j*128+127, one word per lane g*4+t. Same total size as plain (n*k/2
// bytes). make_b_image pads the rows to kOperandRowPad (a multiple of 16) first and shuffles the whole
// padded image; pad words stay zero (bitplane_word(0) == 0). Requires n % 16 == 0 and k % 128 == 0
// (InvalidArgument otherwise).
// docs/LAYOUTS_SM90.md, "frag16 B".
size_t frag16_word_index(size_t n, size_t w, size_t k);  // dst word index of plain word w of row n
void frag16_pack(const uint8_t* src, uint8_t* dst, size_t n, size_t k);    // plain [n, k/2] -> frag16
void frag16_unpack(const uint8_t* src, uint8_t* dst, size_t n, size_t k);  // frag16 -> plain [n, k/2]

// frag16s B (the dec kernels, b_layout "frag16s"; include/f4gemm/frag16s.h): frag16 with each group's
// block scales carried inside the chunks, so one 1D bulk copy brings a chunk's data and scales, and a
// per-group header of row summaries, so the kernel need not scan the weights' scales. Per 16-row group G
// (G outer), frag16s_group_bytes(k) = 64 + (k/128)*1088 bytes: the header (row r's frag16s_row_word at
// 4r), then per 128-K chunk c 1088 bytes: the 1024 bytes of frag16 chunk (G, c), then the 16 rows' scale
// bytes of blocks 4c..4c+3, row r of the group at byte 1024 + 4r + (block % 4). Total n*(k/2 + k/32 + 4)
// bytes. The plain scales (sB) are still passed to the kernel (its exact path reads them). Requires
// n % 16 == 0 and k % 128 == 0. docs/LAYOUTS_SM90.md, "frag16s B".
constexpr size_t kFrag16sChunk = F4GEMM_FRAG16S_CHUNK;  // the kernels' constants (frag16s.h)
constexpr size_t kFrag16sHead = F4GEMM_FRAG16S_HEAD;
size_t frag16s_bytes(size_t n, size_t k);  // n/16 * frag16s_group_bytes(k)
// plain [n, k/2] + plain scales [n, k/32] -> frag16s; and back
void frag16s_pack(const uint8_t* src, const uint8_t* scales, uint8_t* dst, size_t n, size_t k);
void frag16s_unpack(const uint8_t* src, uint8_t* dst, uint8_t* scales, size_t n, size_t k);

// --- the packed weight W (include/f4gemm/weight.h; docs/LAYOUTS_SM90.md "The packed weight W") ----------
// The one B format of every shipped sm_90a kernel: a 256-byte header, then the frag16s image of B padded
// to round_up(n, 256) rows and round_up(k, 256) columns. Any n >= 1 and k % 32 == 0. The body words come
// from w_body_word(), the definition the CUDA packer (kernels/sm90a/sm90_util.cu) shares.
struct WeightInfo {
    size_t n = 0, k = 0;  // the weight's shape
    size_t n_pad = 0, k_pad = 0;
    size_t bytes = 0;  // header + body
};
WeightInfo weight_info(size_t n, size_t k);  // throws InvalidArgument naming a bad n or k
// Host packer: plain B [n, k/2] + plain scales [n, k/32] (contiguous rows) -> W (header + body).
std::vector<uint8_t> pack_weight(const uint8_t* b, const uint8_t* scales, size_t n, size_t k);
// The body alone (what the kernels read), for a device image.
std::vector<uint8_t> pack_weight_body(const uint8_t* b, const uint8_t* scales, size_t n, size_t k);
// Reads and checks a W header: magic, version, the sizes it implies and `len` (the buffer's bytes).
// `what` names the buffer in the error ("--in W.npy", "weight"); throws BadInput with the fix.
WeightInfo read_weight_header(const uint8_t* w, size_t len, const std::string& what);
// Inverse: W -> plain B [n, k/2] + scales [n, k/32] (padding dropped); n, k from the header.
void unpack_weight(const uint8_t* w, size_t len, std::vector<uint8_t>& b, std::vector<uint8_t>& scales,
                   WeightInfo* info = nullptr);

// --- aiter scales: pad [rows, k/32] to [round_up(rows,256), round_up(k/32,8)] then shuffle -----
struct ScaleShape {
    size_t rows;  // sm = round_up(rows, 256)
    size_t cols;  // sn = round_up(k/32, 8)
};
ScaleShape aiter_scale_shape(size_t rows, size_t k);
// view(sm/32, 2, 16, sn/8, 2, 4).permute(0, 3, 5, 2, 4, 1):
//   padded[d0*32 + d1*16 + d2][d3*8 + d4*4 + d5] -> dst[((((d0*sn/8 + d3)*4 + d5)*16 + d2)*2 + d4)*2 + d1]
size_t aiter_scale_index(size_t r, size_t c, size_t sn);
// Pads (with pad_byte) and shuffles plain [rows, k/32] into a [sm, sn] buffer.
std::vector<uint8_t> aiter_scale_pack(const uint8_t* plain, size_t rows, size_t k,
                                      uint8_t pad_byte = kScalePadByte);
// Inverse on the whole padded array: shuffled [sm, sn] -> padded plain [sm, sn].
void aiter_scale_shuffle(const uint8_t* padded, uint8_t* dst, size_t sm, size_t sn);
void aiter_scale_unshuffle(const uint8_t* src, uint8_t* padded, size_t sm, size_t sn);

// --- per-kernel layout names, as the manifest's b_layout / scale_layout columns spell them ----
enum class BLayout { Plain, Aiter16x16, Bitplane, Frag16, Frag16S };
enum class ScaleLayout { Plain, AiterShuffled };
// The accepted names, as the fix in an error message (parse_* and the manifest reader).
constexpr const char* kBLayoutChoices = "plain, aiter16x16, bitplane, frag16 or frag16s";
constexpr const char* kScaleLayoutChoices = "plain or aiter";
BLayout parse_b_layout(const std::string& s);          // one of kBLayoutChoices; throws
ScaleLayout parse_scale_layout(const std::string& s);  // one of kScaleLayoutChoices; throws
const char* to_string(BLayout l);
const char* to_string(ScaleLayout l);

// Device images of one operand in a kernel's layout (Frag16S: the W body, padded to w_k_pad(k)), with the row
// over-allocation applied: packed data rows padded to kOperandRowPad and zero-filled (then bit-plane packed
// or frag16 shuffled whole for those B layouts); plain scales padded to the same rows with kScalePadByte;
// aiter scales as aiter_scale_pack.
struct OperandImage {
    std::vector<uint8_t> data;    // packed e2m1
    std::vector<uint8_t> scales;  // e8m0
    size_t scale_stride = 0;      // bytes between scale rows (stride_Scale*0)
};
// With kp > k (the W kernels' padded K, w_k_pad(k)) the A rows are padded to kp: zero data, and the
// padding blocks' scale follows W's rule (w_pad_block_scale: the row's largest non-NaN exponent), so they
// add exactly 0 and change no row's reference exponent or flags.
OperandImage make_a_image(const uint8_t* packed, const uint8_t* scales, size_t m, size_t k, ScaleLayout sl,
                          size_t kp = 0);
OperandImage make_b_image(const uint8_t* packed, const uint8_t* scales, size_t n, size_t k, BLayout bl,
                          ScaleLayout sl);

}  // namespace f4gemm
