/* The frag16s B layout of our sm_90a dec kernels (docs/LAYOUTS_SM90.md, "frag16s B"), the parts shared by
 * the host (packing, tests) and the kernels: per 16-row group, a 64-byte header of per-row scale summaries,
 * then one 1088-byte chunk per 128 K (1024 bytes of frag16 words, the 16 rows' 4 scale bytes). The header
 * lets a kernel learn a weight row's exponent range and NaN presence from one word instead of scanning
 * the row's K/32 scales. C-compatible: no dependencies, usable from .cu and .cpp. */
#ifndef F4GEMM_FRAG16S_H
#define F4GEMM_FRAG16S_H

#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define F4GEMM_FRAG16S_HD __host__ __device__
#else
#define F4GEMM_FRAG16S_HD
#endif

#define F4GEMM_FRAG16S_HEAD 64u       /* bytes of a group's header: row r's summary word at 4r */
#define F4GEMM_FRAG16S_CHUNK 1088u    /* bytes per (group, 128-K chunk): 1024 data + 16 rows x 4 scales */
#define F4GEMM_FRAG16S_NAN (1u << 16) /* some block scale of the row is 0xFF */
#define F4GEMM_FRAG16S_ANY (1u << 17) /* some block scale of the row is not 0xFF */

#ifdef __cplusplus
namespace f4gemm {

/* Bytes of one 16-row group: the header and k/128 chunks. */
F4GEMM_FRAG16S_HD inline size_t frag16s_group_bytes(size_t k) {
    return F4GEMM_FRAG16S_HEAD + k / 128 * F4GEMM_FRAG16S_CHUNK;
}

/* The summary word of a row of `blocks` scale bytes: bits 0..7 the largest non-NaN exponent (0 when
 * none), bits 8..15 the smallest (0xFF when none), F4GEMM_FRAG16S_NAN, F4GEMM_FRAG16S_ANY. */
F4GEMM_FRAG16S_HD inline uint32_t frag16s_row_word(const uint8_t* scales, size_t blocks) {
    uint32_t emax = 0, emin = 0xFF, flags = 0;
    for (size_t b = 0; b < blocks; ++b) {
        const uint32_t e = scales[b];
        if (e == 0xFF) {
            flags |= F4GEMM_FRAG16S_NAN;
            continue;
        }
        flags |= F4GEMM_FRAG16S_ANY;
        emax = e > emax ? e : emax;
        emin = e < emin ? e : emin;
    }
    return emax | (emin << 8) | flags;
}

}  // namespace f4gemm
#endif

#endif /* F4GEMM_FRAG16S_H */
