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

}  // namespace f4gemm
#endif

#endif /* F4GEMM_BITPLANE_H */
