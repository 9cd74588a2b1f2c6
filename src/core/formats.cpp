// Scalar codecs of MXFP4 (e2m1 elements, E8M0 scales), bf16, and OCP MX v1.0 quantization of
// float32 to MXFP4. Ported from asm_f4gemm f4gemm_ref.hpp (kFp4Lut, e8m0_to_f32, bf16_to_f32);
// the rounding encoders and the quantizer are new and follow the OCP MX v1.0 spec section 6.3.
#include "f4gemm/formats.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "f4gemm/error.hpp"
#include "f4gemm/mx_quantize.h"

namespace f4gemm {

namespace {

constexpr float kE2m1Lut[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

void check_k(size_t k, const char* fn) {
    if (k % kBlockK != 0)
        throw Error(Errc::InvalidArgument, std::string(fn) + ": k (got " + std::to_string(k) +
                                               ") must be a multiple of 32, one E8M0 scale per 32 elements");
}

uint32_t float_bits(float x) {
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}

float bits_float(uint32_t u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

}  // namespace

float e2m1_to_float(uint8_t nibble) {
    return kE2m1Lut[nibble & 0xF];
}

uint8_t float_to_e2m1(float x) {
    // mx_e2m1_code saturates NaN to 6 as it does Inf, so NaN -> 0x7 with its sign.
    const uint8_t sign = std::signbit(x) ? 0x8 : 0x0;
    return uint8_t(sign | mx_e2m1_code(std::fabs(x)));
}

double e8m0_to_double(uint8_t e) {
    if (e == 0xFF) return std::numeric_limits<double>::quiet_NaN();
    return std::ldexp(1.0, int(e) - 127);
}

float e8m0_to_float(uint8_t e) {
    // asm_f4gemm's bit patterns: e = 0 is the subnormal 0x00400000 = 2^-127 (its comment's
    // "2^-126" is wrong), 0xFF is 0x7F800001 (a NaN), everything else is e << 23.
    if (e == 0) return bits_float(0x00400000u);
    if (e == 0xFF) return bits_float(0x7F800001u);
    return bits_float(uint32_t(e) << 23);
}

uint16_t float_to_bf16(float x) {
    const uint32_t u = float_bits(x);
    // NaN: keep sign and top payload bits, force the quiet bit so truncation cannot make an Inf.
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((u >> 16) | 0x0040u);
    // Round to nearest even on the low 16 bits. A carry out of the mantissa bumps the
    // exponent, which is exactly IEEE behaviour, including overflow of the largest finite
    // values to Inf; Inf itself has zero low bits and stays Inf.
    const uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
    return uint16_t((u + rounding) >> 16);
}

float bf16_to_float(uint16_t b) {
    return bits_float(uint32_t(b) << 16);
}

void quantize_mxfp4(const float* x, size_t rows, size_t k, uint8_t* packed, uint8_t* scales) {
    check_k(k, "quantize_mxfp4");
    // The per-block rule (shared exponent, NaN/Inf and all-zero blocks, e2m1 rounding) is
    // include/f4gemm/mx_quantize.h, the one definition the CUDA quantizer (sm90_util.cu) uses too.
    const size_t blocks = k / kBlockK;
    for (size_t r = 0; r < rows; ++r)
        for (size_t blk = 0; blk < blocks; ++blk)
            scales[r * blocks + blk] = uint8_t(
                mx_quantize_block(x + r * k + blk * kBlockK, packed + r * (k / 2) + blk * (kBlockK / 2)));
}

void dequantize_mxfp4_row(const uint8_t* packed_row, const uint8_t* scale_row, size_t k, float* out) {
    check_k(k, "dequantize_mxfp4_row");
    for (size_t blk = 0; blk < k / kBlockK; ++blk) {
        const float s = e8m0_to_float(scale_row[blk]);
        for (size_t i = blk * kBlockK; i < (blk + 1) * kBlockK; ++i)
            out[i] = e2m1_to_float(unpack_nibble(packed_row, i)) * s;
    }
}

}  // namespace f4gemm
