// Scalar codecs of MXFP4 (e2m1 elements, E8M0 scales), bf16, and OCP MX v1.0 quantization of
// float32 to MXFP4. Ported from asm_f4gemm f4gemm_ref.hpp (kFp4Lut, e8m0_to_f32, bf16_to_f32);
// the rounding encoders and the quantizer are new and follow the OCP MX v1.0 spec section 6.3.
#include "f4gemm/formats.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "f4gemm/error.hpp"

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

// Magnitude code 0..7 of |a| (a >= 0, not NaN), round to nearest, ties to the even code.
// The thresholds are the midpoints between neighbouring e2m1 values; a midpoint belongs to the
// neighbour with the even code (0.25 -> 0, 0.75 -> 1.0, 1.25 -> 1.0, 1.75 -> 2, 2.5 -> 2,
// 3.5 -> 4, 5 -> 4), which is IEEE round-half-even on the single mantissa bit.
uint8_t e2m1_magnitude_code(double a) {
    if (a <= 0.25) return 0;
    if (a < 0.75) return 1;
    if (a <= 1.25) return 2;
    if (a < 1.75) return 3;
    if (a <= 2.5) return 4;
    if (a < 3.5) return 5;
    if (a <= 5.0) return 6;
    return 7;  // saturates: everything above 5, Inf included, becomes 6
}

// floor(log2(a)) for a finite a > 0, exact from the bits (subnormals included).
int floor_log2(float a) {
    const uint32_t u = float_bits(a) & 0x7FFFFFFFu;
    const int biased = int(u >> 23);
    if (biased != 0) return biased - 127;
    // Subnormal: a = mant * 2^-149, so floor(log2 a) = -149 + index of mant's top set bit.
    uint32_t mant = u & 0x7FFFFFu;
    int top = -1;
    while (mant) {
        mant >>= 1;
        ++top;
    }
    return -149 + top;
}

}  // namespace

float e2m1_to_float(uint8_t nibble) {
    return kE2m1Lut[nibble & 0xF];
}

uint8_t float_to_e2m1(float x) {
    const uint8_t sign = std::signbit(x) ? 0x8 : 0x0;
    if (std::isnan(x)) return uint8_t(sign | 0x7);
    return uint8_t(sign | e2m1_magnitude_code(std::fabs(double(x))));
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
    const size_t blocks = k / kBlockK;
    for (size_t r = 0; r < rows; ++r) {
        const float* xr = x + r * k;
        uint8_t* pr = packed + r * (k / 2);
        for (size_t blk = 0; blk < blocks; ++blk) {
            const float* xb = xr + blk * kBlockK;
            float amax = 0.0f;
            bool finite = true;
            for (int i = 0; i < kBlockK; ++i) {
                if (!std::isfinite(xb[i]))
                    finite = false;
                else
                    amax = std::fmax(amax, std::fabs(xb[i]));
            }
            uint8_t& scale = scales[r * blocks + blk];
            uint8_t* pb = pr + blk * (kBlockK / 2);
            if (!finite || amax == 0.0f) {
                // OCP: a NaN/Inf input makes the block's scale NaN; an all-zero block has no
                // exponent to share, so the smallest scale and zero elements represent it.
                scale = finite ? 0x00 : 0xFF;
                std::memset(pb, 0, kBlockK / 2);
                continue;
            }
            // Shared exponent: floor(log2(amax)) - emax(e2m1) = floor(log2(amax)) - 2, within
            // E8M0's [-127, 127]. The largest float gives 125, so only the bottom clamp fires.
            int e = floor_log2(amax) - 2;
            e = e < -127 ? -127 : (e > 127 ? 127 : e);
            scale = uint8_t(e + 127);
            // x * 2^-e in double is exact for every float and every e in range, so the only
            // rounding is the single e2m1 one.
            const double inv = std::ldexp(1.0, -e);
            for (int i = 0; i < kBlockK; i += 2) {
                const uint8_t lo = uint8_t((std::signbit(xb[i]) ? 0x8 : 0) |
                                           e2m1_magnitude_code(std::fabs(double(xb[i]) * inv)));
                const uint8_t hi = uint8_t((std::signbit(xb[i + 1]) ? 0x8 : 0) |
                                           e2m1_magnitude_code(std::fabs(double(xb[i + 1]) * inv)));
                pb[i / 2] = uint8_t(lo | (hi << 4));
            }
        }
    }
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
