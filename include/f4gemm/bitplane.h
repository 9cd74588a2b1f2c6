/* The bit-plane B layout of our sm_90a decode kernels (docs/LAYOUTS_SM90.md), shared by the host (packing,
 * tests) and the kernels (the exact fallback converts words back): a bit permutation inside one
 * little-endian 32-bit word of 8 e2m1 elements e0..e7 (plain: e_i in nibble i, sign in bit 3). Byte q of
 * the bit-plane word holds sign(e_q) in bit 7, magnitude(e_q) in bits 3..1, magnitude(e_{q+4}) in bits
 * 6..4 and sign(e_{q+4}) in bit 0. C-compatible header: no dependencies, usable from .cu and .cpp. */
#ifndef F4GEMM_BITPLANE_H
#define F4GEMM_BITPLANE_H

#include <stdint.h>

#if defined(__CUDACC__)
#define F4GEMM_HOST_DEVICE __host__ __device__
#else
#define F4GEMM_HOST_DEVICE
#endif

#ifdef __cplusplus
namespace f4gemm {

F4GEMM_HOST_DEVICE inline uint32_t bitplane_word(uint32_t plain) {
    uint32_t out = 0;
    for (int q = 0; q < 4; ++q) {
        const uint32_t lo = (plain >> (4 * q)) & 15u, hi = (plain >> (4 * (q + 4))) & 15u;
        out |= (((lo & 8u) << 4) | ((lo & 7u) << 1) | ((hi & 7u) << 4) | ((hi & 8u) >> 3)) << (8 * q);
    }
    return out;
}

F4GEMM_HOST_DEVICE inline uint32_t bitplane_word_inverse(uint32_t bp) {
    uint32_t out = 0;
    for (int q = 0; q < 4; ++q) {
        const uint32_t byte = (bp >> (8 * q)) & 0xFFu;
        const uint32_t lo = ((byte >> 4) & 8u) | ((byte >> 1) & 7u);
        const uint32_t hi = ((byte << 3) & 8u) | ((byte >> 4) & 7u);
        out |= (lo << (4 * q)) | (hi << (4 * (q + 4)));
    }
    return out;
}

// The decode kernels' word-level decoding of a bit-plane word x (sm90_mxfp4_gemm_ws.cu with R_BITPLANE,
// sm90_mxfp4_gemm_dec.cu): the e5m2 bytes of e2m1 * 2^-14 of elements e0..e3 (lo) and e4..e7 (hi), byte q
// of the result holding element q (lo) or q + 4 (hi).
F4GEMM_HOST_DEVICE inline uint32_t bitplane_lo_e5m2(uint32_t x) {
    return x & 0x8E8E8E8Eu;
}
F4GEMM_HOST_DEVICE inline uint32_t bitplane_hi_e5m2(uint32_t x) {
    return ((x >> 3) & 0x0E0E0E0Eu) | ((x & 0x01010101u) << 7);
}

// PRMT selectors that turn e5m2 bytes 0, 1 (lo) or 2, 3 (hi) of a word into an f16x2: an e5m2 byte is the
// high byte of the f16 of the same value, the low byte is zero (source byte 4 of a zero second operand).
#define F4GEMM_F16X2_LO_SEL 0x1404u
#define F4GEMM_F16X2_HI_SEL 0x3424u

// prmt.b32 (default mode) on the host, for tests: byte i of the result is byte sel[4i+2:4i] of {b, a}, or
// that byte's sign bit replicated when sel bit 4i+3 is set.
F4GEMM_HOST_DEVICE inline uint32_t prmt_reference(uint32_t a, uint32_t b, uint32_t sel) {
    const uint64_t src = ((uint64_t)b << 32) | a;
    uint32_t out = 0;
    for (int i = 0; i < 4; ++i) {
        const uint32_t nib = (sel >> (4 * i)) & 15u;
        uint32_t byte = (uint32_t)(src >> (8 * (nib & 7u))) & 0xFFu;
        if (nib & 8u) byte = (byte & 0x80u) ? 0xFFu : 0u;
        out |= byte << (8 * i);
    }
    return out;
}

// Per-block B scale factors of the dec kernels, four blocks per scale word: with one reference exponent
// `ref` per CTA, `word + dec_scale_bias(ref)` holds e - ref + 127 in every byte, without carries between
// bytes while every e lies in [ref + 13 - 100, ref + 13] (results 40..140); `pow2_bits_of_byte` then gives
// the fp32 bits of 2^(e - ref) for byte j.
F4GEMM_HOST_DEVICE inline uint32_t dec_scale_bias(int ref) {
    return (uint32_t)(127 - ref) * 0x01010101u;  // unsigned: wraps for ref > 127 (a subtraction per byte)
}
F4GEMM_HOST_DEVICE inline uint32_t pow2_bits_of_byte(uint32_t t, int j) {
    const uint32_t v = j == 0 ? t << 23 : j == 1 ? t << 15 : j == 2 ? t << 7 : t >> 1;
    return v & 0x7F800000u;
}

}  // namespace f4gemm
#endif

#endif /* F4GEMM_BITPLANE_H */
