/* OCP MX v1.0 quantization of float32 to MXFP4 (spec section 6.3), the one definition shared by the host
 * quantizer (src/core/formats.cpp: quantize_mxfp4, float_to_e2m1) and the CUDA quantizer
 * (kernels/sm90a/sm90_util.cu: f4gemm_sm90a_quantize), so the two are bit-identical by construction.
 * The rule is split into the pieces a kernel spreads over lanes: the block's largest |x| (as fp32 bits), its
 * E8M0 scale, whether its data are all zero bytes, and the e2m1 nibbles of eight elements as one word
 * (mx_quantize_block strings them together for one block on one thread). C-compatible header: no
 * dependencies, usable from .cu and .cpp. */
#ifndef F4GEMM_MX_QUANTIZE_H
#define F4GEMM_MX_QUANTIZE_H

#include <stdint.h>
#if !defined(__CUDA_ARCH__)
#include <math.h>   /* fabsf */
#include <string.h> /* memcpy */
#endif

#if defined(__CUDACC__)
#define F4GEMM_MX_HD __host__ __device__
#else
#define F4GEMM_MX_HD
#endif

#define F4GEMM_MX_BLOCK 32u           /* elements per E8M0 scale */
#define F4GEMM_MX_NAN_SCALE 0xFFu     /* E8M0 NaN: the scale of a block holding a NaN or an Inf */
#define F4GEMM_MX_ABS_INF 0x7F800000u /* fp32 bits of +Inf: |x| bits at or above it are Inf or NaN */

#ifdef __cplusplus
namespace f4gemm {

F4GEMM_MX_HD inline uint32_t mx_float_bits(float x) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}
F4GEMM_MX_HD inline float mx_bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

/* The block's E8M0 scale from amax_bits = the largest (bits(x) & 0x7FFFFFFF) over its 32 elements (for
 * non-negative floats the bit patterns order as the values, and every NaN or Inf lies at or above +Inf's).
 * OCP: shared exponent floor(log2(amax)) - 2 (emax of e2m1), clamped to E8M0's [-127, 127], stored + 127.
 * For a normal amax with biased exponent b that is b - 2; a subnormal or zero amax (b = 0), and b = 1 or 2,
 * fall under the clamp at -127, so the stored byte is max(b - 2, 0): at most 252, 0 for an all-zero block.
 * A NaN or an Inf anywhere makes the block's scale NaN. */
F4GEMM_MX_HD inline uint32_t mx_scale_of_amax(uint32_t amax_bits) {
    if (amax_bits >= F4GEMM_MX_ABS_INF) return F4GEMM_MX_NAN_SCALE;
    const uint32_t b = amax_bits >> 23;
    return b > 2u ? b - 2u : 0u;
}

/* True when the block's 16 data bytes are all zero: a NaN or Inf block (its scale carries the NaN) and an
 * all-zero block (no exponent to share: scale 0, zero elements; a -0.0 there is stored as +0). */
F4GEMM_MX_HD inline bool mx_block_zero(uint32_t amax_bits) {
    return amax_bits == 0u || amax_bits >= F4GEMM_MX_ABS_INF;
}

/* 2^-(scale - 127) as a float, exact, for every scale mx_scale_of_amax gives for a finite block (0..252:
 * 2^127 .. 2^-125, all normal); 0 for 254 and 0xFF, which no finite block has. */
F4GEMM_MX_HD inline float mx_inv_scale(uint32_t scale) {
    return scale < 254u ? mx_bits_float((254u - scale) << 23) : 0.0f;
}

/* The e2m1 lattice, for 0 <= a < 8: bits(M) + the magnitude code of the e2m1 value nearest a, rounding to
 * nearest with ties to the even code, where "code" 8 (a > 7, or a = 7) means past 6 and saturates to 7 in
 * the callers. The midpoints 0.25 -> 0, 0.75 -> 1.0, 1.25 -> 1.0, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4 are
 * IEEE round-half-even on e2m1's one mantissa bit. How, without branches or a table: on [0, 2] the code is
 * rint(2a) (spacing 0.5), on [2, 4] rint(a) + 2, on [4, 8) rint(a / 2) + 4, and since rint is monotone each
 * of the three is the smallest of them on its own range (2a <= a + 2 <= a/2 + 4 for a <= 2, and so on), so
 * code = min of the three. Each rint is one float add of M = 1.5 * 2^23, which puts the sum in [2^23, 2^24)
 * where floats are the integers, so the hardware's round-half-even does the rounding and bits(sum) -
 * bits(M) is the integer (M is even, so the parity of a tie is kept). a * 2 and a * 0.5 are exact (a
 * subnormal a may lose its last bit when halved, but then every candidate rounds to code 0 anyway), so
 * fused or not the result is the same, and the host (any IEEE float unit, contraction allowed) and the GPU
 * agree bit for bit. Checked against the former double threshold chain on every float (throwaway exhaustive
 * test, 2^31 values, through mx_e2m1_code). */
#define F4GEMM_MX_CODE_BIAS 0x4B400000u /* bits(M) */
F4GEMM_MX_HD inline uint32_t mx_e2m1_lattice(float a) {
    const float m = 12582912.0f; /* M = 1.5 * 2^23 */
    const uint32_t k0 = mx_float_bits(a * 2.0f + m);
    const uint32_t k1 = mx_float_bits(a + (m + 2.0f));
    const uint32_t k2 = mx_float_bits(a * 0.5f + (m + 4.0f));
    const uint32_t k01 = k0 < k1 ? k0 : k1;
    return k01 < k2 ? k01 : k2;
}
/* The same of a = ax * 2^-e with the power-of-two multipliers m2 = 2^(1-e), m1 = 2^-e, mh = 2^(-1-e) folded
 * into the three adds (one fused multiply-add each, where the GPU would otherwise spend a multiply on a):
 * each product is exact or below 2^-126 (then every candidate is M + its offset anyway), so fused or not it
 * is the lattice of a. */
F4GEMM_MX_HD inline uint32_t mx_e2m1_lattice(float ax, float m2, float m1, float mh) {
    const float m = 12582912.0f;
    const uint32_t k0 = mx_float_bits(ax * m2 + m);
    const uint32_t k1 = mx_float_bits(ax * m1 + (m + 2.0f));
    const uint32_t k2 = mx_float_bits(ax * mh + (m + 4.0f));
    const uint32_t k01 = k0 < k1 ? k0 : k1;
    return k01 < k2 ? k01 : k2;
}

/* Magnitude code 0..7 of the e2m1 value nearest a, for any a >= 0 or NaN, saturating at 6: `a < 6 ? a : 6`
 * sends Inf and every NaN (signalling ones too, where fminf would keep one on the host and not on the GPU)
 * to 6, then the lattice. */
F4GEMM_MX_HD inline uint32_t mx_e2m1_code(float a) {
    return mx_e2m1_lattice(a < 6.0f ? a : 6.0f) - F4GEMM_MX_CODE_BIAS;
}

/* The e2m1 nibble (sign in bit 3) of element x of a block whose scale is not NaN, with inv =
 * mx_inv_scale(scale): the code of |x| * 2^-e (exact: a power-of-two product that is normal is exact, and
 * one that is not is below 2^-126, code 0 whichever way it rounds). The sign is kept, so -0.1 at scale 127
 * gives 0x8. */
F4GEMM_MX_HD inline uint32_t mx_e2m1_nibble(float x, float inv) {
    return ((mx_float_bits(x) >> 31) << 3) | mx_e2m1_code(fabsf(x) * inv);
}

/* Eight consecutive elements of a block whose scale is not NaN (scale <= 252, as mx_scale_of_amax gives),
 * given as fp32 bit patterns, packed into one little-endian word: element i's mx_e2m1_nibble in nibble i
 * (bytes in element order, element 2j in the low nibble of byte j). The form both quantizers call, cheaper
 * than eight nibbles: inside a finite block |x| * 2^-e < 8 (|x| <= amax < 2^(e+3), and < 4 where e is clamped
 * to -127), so the lattice needs no clamp, and 2^-e goes into the lattice's multiply-adds; its biased codes
 * 0..8 are summed at their nibble positions and the bias removed once (the sum wraps mod 2^32 like the bias
 * term; a code <= 8 never carries), then the nibbles that hold 8 (the only ones with bit 3 set) become 7, and
 * the signs go into bit 3. Scale 0 (e = -127) would need m2 = 2^128, not a float: that block's |x| are all
 * below 2^-124, so they are taken times 2^64 first (exact: the products are normal) with multipliers 2^64
 * smaller. */
F4GEMM_MX_HD inline uint32_t mx_e2m1_word(const uint32_t* x_bits, uint32_t scale) {
    const bool tiny = scale == 0u;
    const uint32_t b = tiny ? 127u + 63u : 254u - scale; /* biased exponent of m1: 2^-e, or 2^(127-64) */
    const float m2 = mx_bits_float((b + 1u) << 23), m1 = mx_bits_float(b << 23),
                mh = mx_bits_float((b - 1u) << 23);
    uint32_t acc = 0u;
    if (tiny) {
        for (uint32_t i = 0; i < 8u; ++i)
            acc += mx_e2m1_lattice(fabsf(mx_bits_float(x_bits[i])) * 18446744073709551616.0f, m2, m1, mh)
                   << (4u * i);
    } else {
        for (uint32_t i = 0; i < 8u; ++i)
            acc += mx_e2m1_lattice(fabsf(mx_bits_float(x_bits[i])), m2, m1, mh) << (4u * i);
    }
    /* The signs as whole bytes: the top byte of every even element (sign in its bit 7) into `even`, of every
     * odd one into `odd`, byte j for elements 2j and 2j + 1 (byte permutes on the GPU); the odd signs are
     * then in place (bit 8j + 7) and the even ones four bits up. */
    const uint32_t even =
        (x_bits[0] >> 24) | ((x_bits[2] >> 24) << 8) | ((x_bits[4] >> 24) << 16) | (x_bits[6] & 0xFF000000u);
    const uint32_t odd =
        (x_bits[1] >> 24) | ((x_bits[3] >> 24) << 8) | ((x_bits[5] >> 24) << 16) | (x_bits[7] & 0xFF000000u);
    const uint32_t signs = ((even >> 4) & 0x08080808u) | (odd & 0x80808080u);
    acc -= F4GEMM_MX_CODE_BIAS * 0x11111111u;
    acc -= (acc & 0x88888888u) >> 3;
    return acc | signs;
}

/* One whole block on one thread (the host's form): 32 elements -> 16 bytes, element 2i in the low nibble
 * of byte i; returns the E8M0 scale. */
F4GEMM_MX_HD inline uint32_t mx_quantize_block(const float* x, uint8_t* packed) {
    uint32_t x_bits[F4GEMM_MX_BLOCK];
    uint32_t amax = 0u;
    for (uint32_t i = 0; i < F4GEMM_MX_BLOCK; ++i) {
        x_bits[i] = mx_float_bits(x[i]);
        const uint32_t a = x_bits[i] & 0x7FFFFFFFu;
        amax = a > amax ? a : amax;
    }
    const uint32_t scale = mx_scale_of_amax(amax);
    const bool zero = mx_block_zero(amax);
    for (uint32_t w = 0; w < F4GEMM_MX_BLOCK / 8; ++w) {
        const uint32_t word = zero ? 0u : mx_e2m1_word(x_bits + 8 * w, scale);
        for (uint32_t j = 0; j < 4u; ++j) packed[4 * w + j] = (uint8_t)(word >> (8 * j));
    }
    return scale;
}

}  // namespace f4gemm
#endif

#endif /* F4GEMM_MX_QUANTIZE_H */
