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

/* What a kernel needs to know about a weight row, from its summary word: the same rule as the per-row
 * scale scan of the other kernels (sm90_ptx.cuh finish_row) over the row's whole K. `window` is the
 * kernels' kWindow (13): the reference exponent is emax - window (127 for a row without a non-NaN block,
 * e.g. a padding or absent row, w = 0); the row is wide (not foldable into e5m2, exact path) when its
 * exponents span more than 2 * window binades and it has no NaN block. */
struct Frag16sRowRef {
    int ref;
    bool nan;
    bool wide;
};
F4GEMM_FRAG16S_HD inline Frag16sRowRef frag16s_row_ref(uint32_t w, int window) {
    const int emax = (int)(w & 0xFFu), emin = (int)((w >> 8) & 0xFFu);
    const bool any = (w & F4GEMM_FRAG16S_ANY) != 0u;
    Frag16sRowRef r;
    r.nan = (w & F4GEMM_FRAG16S_NAN) != 0u;
    r.ref = any ? emax - window : 127;
    r.wide = any && !r.nan && emax - emin > 2 * window;
    return r;
}

}  // namespace f4gemm
#endif

#endif /* F4GEMM_FRAG16S_H */
