/* The packed weight format W: the one layout in which every shipped sm_90a kernel reads B, whatever M
 * (docs/LAYOUTS_SM90.md, "The packed weight W"). One buffer per weight: a 256-byte header (magic, version,
 * N, K, the padded sizes), then the frag16s image (frag16s.h) of B padded to Np = round_up(N, 256) rows
 * and Kp = round_up(K, 256) columns. Padding rows are zero with scale 0x7F; padding K blocks of a real row
 * are zero with the row's largest non-NaN block scale (0xFF when it has none), so a padded block adds
 * exactly 0 and leaves the row's summary word, reference exponent and wide/NaN flags as they were.
 *
 * This header is the one definition of the format: the host packer (src/core/layout.cpp) and the CUDA
 * packer (kernels/sm90a/sm90_util.cu) both compute every body word with f4gemm_w_body_word(), so they are
 * bit-identical by construction. C-compatible, no dependencies, usable from .cu and .cpp. */
#ifndef F4GEMM_WEIGHT_H
#define F4GEMM_WEIGHT_H

#include <stddef.h>
#include <stdint.h>

#include "f4gemm/bitplane.h"
#include "f4gemm/frag16s.h"

#define F4GEMM_W_MAGIC 0x57473446u /* "F4GW" little-endian */
#define F4GEMM_W_VERSION 1u
#define F4GEMM_W_HEADER 256u /* bytes before the body; keeps the body 256-byte aligned */
#define F4GEMM_W_ROW_PAD                                                                                    \
    256u /* N padding: the wgmma kernels' tiles divide it; the dec kernels of 80 and 112 rows copy only the \
            groups inside it */
#define F4GEMM_W_K_PAD 256u /* K padding: the deepest pipeline stage (ws_swap_*_fs) is 256 K */
#define F4GEMM_W_ROW_PAD_SCALE 0x7Fu

/* The header, little-endian, at byte 0 of W. */
typedef struct F4gemmWeightHeader {
    uint32_t magic;      /* F4GEMM_W_MAGIC */
    uint32_t version;    /* F4GEMM_W_VERSION */
    uint32_t n, k;       /* the weight's shape: B is [n, k] */
    uint32_t n_pad;      /* round_up(n, 256) */
    uint32_t k_pad;      /* round_up(k, 256) */
    uint64_t body_bytes; /* n_pad / 16 * frag16s_group_bytes(k_pad) */
    uint8_t reserved[F4GEMM_W_HEADER - 32];
} F4gemmWeightHeader;

#ifdef __cplusplus
static_assert(sizeof(F4gemmWeightHeader) == F4GEMM_W_HEADER, "W header size");

namespace f4gemm {

F4GEMM_FRAG16S_HD inline size_t w_n_pad(size_t n) {
    return (n + F4GEMM_W_ROW_PAD - 1) / F4GEMM_W_ROW_PAD * F4GEMM_W_ROW_PAD;
}
F4GEMM_FRAG16S_HD inline size_t w_k_pad(size_t k) {
    return (k + F4GEMM_W_K_PAD - 1) / F4GEMM_W_K_PAD * F4GEMM_W_K_PAD;
}
/* Bytes of the body (what the kernels read) and of the whole W (header + body). */
F4GEMM_FRAG16S_HD inline size_t w_body_bytes(size_t n, size_t k) {
    return w_n_pad(n) / 16 * frag16s_group_bytes(w_k_pad(k));
}
F4GEMM_FRAG16S_HD inline size_t w_bytes(size_t n, size_t k) {
    return F4GEMM_W_HEADER + w_body_bytes(n, k);
}

/* The plain source of a weight: packed e2m1 [n, k/2] (row pitch ldb bytes, a multiple of 4) and E8M0
 * scales [n, k/32] (row pitch lds bytes). k % 32 == 0. */
struct WSource {
    const uint8_t* b;
    const uint8_t* scales;
    size_t n, k;
    size_t ldb, lds;
};

/* The scale of padding blocks of a row (and of the A operand's padding blocks, which follow the same
 * rule): the row's largest non-NaN exponent, or 0xFF when every block is NaN. */
F4GEMM_FRAG16S_HD inline uint32_t w_pad_block_scale(const uint8_t* row_scales, size_t blocks) {
    const uint32_t w = frag16s_row_word(row_scales, blocks);
    return (w & F4GEMM_FRAG16S_ANY) ? (w & 0xFFu) : 0xFFu;
}

/* Scale byte of (row, block) of the padded weight. */
F4GEMM_FRAG16S_HD inline uint32_t w_scale(const WSource& s, size_t row, size_t block) {
    if (row >= s.n) return F4GEMM_W_ROW_PAD_SCALE;
    const uint8_t* rs = s.scales + row * s.lds;
    if (block < s.k / 32) return rs[block];
    return w_pad_block_scale(rs, s.k / 32);
}

/* The padded A operand of the GEMM kernels (what f4gemm_sm90a_pad_a and f4gemm_sm90a_quantize write): data
 * [a_m_pad(m), w_k_pad(k)/2] and scales [a_m_pad(m), w_k_pad(k)/32], contiguous rows, padded by W's rule:
 * padding K blocks of a real row are zero with w_pad_block_scale(row's scales), padding rows are zero with
 * scale 0x7F. Its plain source: packed e2m1 [m, k/2] (row pitch lda bytes) and scales [m, k/32] (pitch
 * lds bytes); k % 32 == 0. */
struct ASource {
    const uint8_t* a;
    const uint8_t* scales;
    size_t m, k;
    size_t lda, lds;
};

F4GEMM_FRAG16S_HD inline size_t a_m_pad(size_t m) {
    return w_n_pad(m);
}

/* Scale byte of (row, block) of the padded A, from what the caller holds: `own` = the row's scale of `block`
 * (used for a real block of a real row), `row_pad` = w_pad_block_scale of the row's k/32 scales (used for a
 * padding block of a real row). The device quantizer calls this form: it holds the scales it just computed
 * and reduces the row's pad scale across its threads instead of reading them back. */
F4GEMM_FRAG16S_HD inline uint32_t a_pad_scale(size_t m, size_t k, size_t row, size_t block, uint32_t own,
                                              uint32_t row_pad) {
    if (row >= m) return F4GEMM_W_ROW_PAD_SCALE;
    return block < k / 32 ? own : row_pad;
}

/* The same from the plain source (the host's form, and f4gemm_sm90a_pad_a's): a padding block scans its
 * row's scales. */
F4GEMM_FRAG16S_HD inline uint32_t a_pad_scale(const ASource& s, size_t row, size_t block) {
    if (row >= s.m) return a_pad_scale(s.m, s.k, row, block, 0u, 0u);
    const uint8_t* rs = s.scales + row * s.lds;
    const size_t blocks = s.k / 32;
    return block < blocks ? a_pad_scale(s.m, s.k, row, block, rs[block], 0u)
                          : a_pad_scale(s.m, s.k, row, block, 0u, w_pad_block_scale(rs, blocks));
}

/* 32-bit word `d` of the body (little-endian words from the start of the body). Per 16-row group G, G
 * outer, frag16s_group_bytes(Kp) / 4 words: 16 header words (row summaries), then per 128-K chunk c 256
 * frag16 data words and 16 scale words (row r: blocks 4c..4c+3 in bytes 0..3). */
F4GEMM_FRAG16S_HD inline uint32_t w_body_word(const WSource& s, size_t d) {
    const size_t kp = w_k_pad(s.k);
    const size_t chunk_words = F4GEMM_FRAG16S_CHUNK / 4, head_words = F4GEMM_FRAG16S_HEAD / 4;
    const size_t group_words = frag16s_group_bytes(kp) / 4;
    const size_t G = d / group_words, o = d % group_words;
    if (o < head_words) {  // summary word of row 16G + o over the real blocks (padding does not change it)
        const size_t row = 16 * G + o;
        if (row >= s.n) {
            const uint8_t pad = F4GEMM_W_ROW_PAD_SCALE;
            return frag16s_row_word(&pad, 1);
        }
        return frag16s_row_word(s.scales + row * s.lds, s.k / 32);
    }
    const size_t c = (o - head_words) / chunk_words, q = (o - head_words) % chunk_words;
    if (q < 256) {  // frag16 word: row half h, block j of the chunk, lane g * 4 + t
        const size_t h = q / 128, j = (q / 32) % 4, g = (q / 4) % 8, t = q % 4;
        const size_t row = 16 * G + 8 * h + g, w = (4 * c + j) * 4 + t;
        if (row >= s.n || w >= s.k / 8) return 0u;
        const uint8_t* p = s.b + row * s.ldb + 4 * w;
        const uint32_t plain =
            (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
        return bitplane_word(plain);
    }
    const size_t row = 16 * G + (q - 256);  // scale word of row r = q - 256: blocks 4c .. 4c + 3
    uint32_t v = 0;
    for (int j = 0; j < 4; ++j) v |= w_scale(s, row, 4 * c + (size_t)j) << (8 * j);
    return v;
}

/* Fills a header for (n, k). */
F4GEMM_FRAG16S_HD inline F4gemmWeightHeader w_header(size_t n, size_t k) {
    F4gemmWeightHeader h;
    for (size_t i = 0; i < sizeof(h.reserved); ++i) h.reserved[i] = 0;
    h.magic = F4GEMM_W_MAGIC;
    h.version = F4GEMM_W_VERSION;
    h.n = (uint32_t)n;
    h.k = (uint32_t)k;
    h.n_pad = (uint32_t)w_n_pad(n);
    h.k_pad = (uint32_t)w_k_pad(k);
    h.body_bytes = (uint64_t)w_body_bytes(n, k);
    return h;
}

}  // namespace f4gemm
#endif

#endif /* F4GEMM_WEIGHT_H */
