// Number formats of OCP MX v1.0 MXFP4 and bf16: e2m1 elements, E8M0 block scales, bf16 output,
// and the OCP quantization of float32 to MXFP4. Pure functions, no state.
#pragma once

#include <cstddef>
#include <cstdint>

namespace f4gemm {

constexpr int kBlockK = 32;  // elements per E8M0 scale

// e2m1 nibble (low 4 bits used) -> value. LUT 0,.5,1,1.5,2,3,4,6, sign in bit 3 (8 -> -0.0).
float e2m1_to_float(uint8_t nibble);
// Nearest e2m1 value, ties to even code, saturated to +-6; sign kept (so -0.1 -> 0x8).
// NaN -> 0x7 with sign (documented: callers handle NaN blocks through the scale).
uint8_t float_to_e2m1(float x);

// E8M0: 2^(e-127) for e in 0..254 (e = 0 is 2^-127), NaN for 0xFF.
double e8m0_to_double(uint8_t e);
float e8m0_to_float(uint8_t e);

// bf16 <-> float32. float_to_bf16 rounds to nearest even; NaN stays NaN (quiet), Inf stays Inf.
uint16_t float_to_bf16(float x);
float bf16_to_float(uint16_t b);

// Packing: element 2i in the low nibble of byte i, 2i+1 in the high nibble.
inline uint8_t unpack_nibble(const uint8_t* packed_row, size_t i) {
    return (i & 1) ? uint8_t(packed_row[i >> 1] >> 4) : uint8_t(packed_row[i >> 1] & 0xF);
}
inline void pack_nibble(uint8_t* packed_row, size_t i, uint8_t nibble) {
    uint8_t& b = packed_row[i >> 1];
    b = (i & 1) ? uint8_t((b & 0x0F) | (nibble << 4)) : uint8_t((b & 0xF0) | (nibble & 0xF));
}

// OCP MX v1.0 quantization of a row-major float32 [rows, k] (k % 32 == 0) to MXFP4:
// per 32-block shared exponent floor(log2(amax)) - 2 (emax of e2m1), clamped to [-127, 127],
// stored as E8M0 (exp + 127); elements x / 2^exp rounded to nearest even and saturated to +-6.
// amax == 0 gives E8M0 0 and zero elements; a NaN or Inf in a block gives scale 0xFF and zero
// elements. packed: [rows, k/2], scales: [rows, k/32].
void quantize_mxfp4(const float* x, size_t rows, size_t k, uint8_t* packed, uint8_t* scales);

// Dequantize one packed row of k elements with its k/32 scales into float32 (NaN where the
// block scale is 0xFF). Every product is exact in float32 except |value| >= 2^128, which only
// scales 2^126 and 2^127 reach and which becomes +-Inf (use e8m0_to_double for such data).
void dequantize_mxfp4_row(const uint8_t* packed_row, const uint8_t* scale_row, size_t k, float* out);

}  // namespace f4gemm
