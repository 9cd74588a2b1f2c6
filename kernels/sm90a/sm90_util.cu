// Device-side data preparation for the sm_90a GEMM kernels, one cubin (f4gemm_sm90a_util.cubin): packing a
// plain MXFP4 weight into W (include/f4gemm/weight.h), padding a plain MXFP4 A operand, and quantizing bf16
// or fp32 activations straight into the padded A. Every byte they write comes from the headers' shared rules
// (w_body_word, w_header, a_pad_scale, mx_quantize.h), the same functions the host packer and quantizer call,
// so host and device agree bit for bit by construction. Argument blocks and launch geometry:
// include/f4gemm/util_args.h.
#include "f4gemm/mx_quantize.h"
#include "f4gemm/util_args.h"
#include "f4gemm/weight.h"
#include "sm90_common.cuh"

namespace {

using namespace f4gemm;

constexpr uint32_t kThreads = F4GEMM_UTIL_THREADS;
constexpr uint32_t kWarps = kThreads / 32;
static_assert(kThreads % 32 == 0 && kWarps == 8, "util_quantize_warps_per_row assumes CTAs of 8 warps");
static_assert(F4GEMM_W_K_PAD % 256 == 0, "a row's padding blocks (< 8) lie in its last warp-step");
static_assert(F4GEMM_W_HEADER % 16 == 0, "the W header is written as 16-byte pieces");

// The kernels take their contract on trust from the host (util_args.h), which checks it; a block that breaks
// it would index out of bounds, so it stops the launch instead.
__device__ __forceinline__ void trap_unless(bool ok) {
    if (!ok) asm volatile("trap;");
}

// ---------------------------------------------------------------------------------------------------------
// Quantizer. A lane owns 64 bytes of x per warp-step, 16 words: bf16, one whole 32-block (kLanes = 1); fp32,
// half a block (kLanes = 2, the two halves agree on the scale through one shuffle). Owning a block (or half)
// amortises the per-block work (amax, scale, predicates, scale byte) over 32 (16) elements, and the lane's
// data bytes are one 16-byte (8-byte) store, coalesced across the warp; the loads are four 16-byte loads per
// lane at a 64-byte lane stride (every sector used). Measured on the H200 (event-timed medians against
// cuMemcpyDtoD's 3.9 TB/s): bf16 16384x8192 at 3.55 TB/s, fp32 8192^2 at 3.8-4.0; with the conversion
// replaced by an xor the same loads and stores reach 3.77 on bf16, so the conversion costs ~6%. Dropped:
// four lanes per block with unit-stride loads and two shuffles (bf16 2.3 TB/s: the per-block work, repeated
// in every lane, dominated), and prefetching the next item before converting the current one (73 registers,
// no faster at any grid).
// ---------------------------------------------------------------------------------------------------------
template <bool kBf16>
struct QuantTraits {
    static constexpr uint32_t kLanes = kBf16 ? 1 : 2;     // lanes per 32-block
    static constexpr uint32_t kElems = 32 / kLanes;       // elements per lane
    static constexpr uint32_t kStepBlocks = 32 / kLanes;  // blocks per warp-step
    static constexpr uint32_t kWords = kElems / 8;        // output words per lane
    static constexpr size_t kEsize = kBf16 ? 2 : 4;
    static_assert(kElems * kEsize == 64, "64 bytes of x per lane");
};

// raw: bf16, word w holds elements (2w, 2w+1) in its (low, high) halves; fp32, word w holds element w.
template <bool kBf16>
__device__ __forceinline__ void load_lane(const uint8_t* gmem_p, bool vec, uint32_t (&raw)[16]) {
    if (vec) {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const uint4 v = __ldg(reinterpret_cast<const uint4*>(gmem_p) + q);
            raw[4 * q] = v.x, raw[4 * q + 1] = v.y, raw[4 * q + 2] = v.z, raw[4 * q + 3] = v.w;
        }
    } else if (kBf16) {
        const uint16_t* e = reinterpret_cast<const uint16_t*>(gmem_p);
#pragma unroll
        for (int w = 0; w < 16; ++w)
            raw[w] = (uint32_t)__ldg(e + 2 * w) | ((uint32_t)__ldg(e + 2 * w + 1) << 16);
    } else {
        const uint32_t* e = reinterpret_cast<const uint32_t*>(gmem_p);
#pragma unroll
        for (int w = 0; w < 16; ++w) raw[w] = __ldg(e + w);
    }
}

// The lane's largest |x| as fp32 bits (mx_scale_of_amax's input). bf16 (given |x|, the words masked): the
// max of the 16-bit |x| patterns (they order as the values) shifted up, which is the fp32 pattern of the same
// value; two elements per instruction (VIMNMX3 on packed halves, native on sm_90). fp32: given the raw words.
__device__ __forceinline__ uint32_t lane_amax_abs_bf16(const uint32_t (&m)[16]) {
    const uint32_t a = __vimax3_u16x2(m[0], m[1], m[2]), b = __vimax3_u16x2(m[3], m[4], m[5]);
    const uint32_t c = __vimax3_u16x2(m[6], m[7], m[8]), d = __vimax3_u16x2(m[9], m[10], m[11]);
    const uint32_t e = __vimax3_u16x2(m[12], m[13], m[14]);
    const uint32_t h = __vimax3_u16x2(__vimax3_u16x2(a, b, c), __vimax3_u16x2(d, e, m[15]), 0u);
    return max(h & 0xFFFFu, h >> 16) << 16;
}
__device__ __forceinline__ uint32_t lane_amax_f32(const uint32_t (&raw)[16]) {
    uint32_t m[16];
#pragma unroll
    for (int w = 0; w < 16; ++w) m[w] = raw[w] & 0x7FFFFFFFu;
    const uint32_t a = __vimax3_u32(m[0], m[1], m[2]), b = __vimax3_u32(m[3], m[4], m[5]);
    const uint32_t c = __vimax3_u32(m[6], m[7], m[8]), d = __vimax3_u32(m[9], m[10], m[11]);
    const uint32_t e = __vimax3_u32(m[12], m[13], m[14]);
    return __vimax3_u32(__vimax3_u32(a, b, c), __vimax3_u32(d, e, m[15]), 0u);
}

__device__ __forceinline__ uint32_t bf16x2_fma(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t d;
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}
__device__ __forceinline__ uint32_t bf16x2_mul(uint32_t a, uint32_t b) {
    uint32_t d;
    asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}

// bf16 output word w, two elements per instruction: mx_e2m1_word's lattice (three fused multiply-adds and a
// minimum) run in bf16x2. It gives the same codes: |x| * 2^e is exact in bf16 as in fp32 (same exponent
// range; the tiny-scale path pre-multiplies by 2^64 as mx_e2m1_word does), and a fused bf16 FMA rounds the
// exact a * 2^j + C once, to nearest even, onto the integers when C is in [128, 256) (ulp 1; C = 128 rather
// than 1.5 * 2^23, since a >= 0 and a * 2 + C < 256 for a < 8); code j is then the low byte of the
// 16-bit result (bits(128) = 0x4300). The saturation (code 8 -> 7) is a minimum and byte permutes gather
// the codes of elements 8w .. 8w+7 in order. The signs come from sgn (below): bit 3 of each element's byte,
// so each nibble carries its sign when the bytes pair up. kGeneral takes the blocks the common path does
// not: scale 0 (a tiny block, taken times 2^64 first, or an all-zero one) and 0xFF (NaN or Inf, whose data
// bytes are zero, mx_block_zero); the common path leaves out that pre-multiply and the zero mask, 20 of its
// ~190 instructions per lane-step. Bit-identity with the host rule: tests/capi/test_capi_gpu.cpp.
// Measured at bf16 4096 x 4096 on the H200: PERF.md entries 26 and 30.
template <bool kGeneral>
__device__ __forceinline__ uint32_t lane_word_bf16x2(const uint32_t (&ax)[16], const uint32_t (&sgn)[8],
                                                     int w, uint32_t scale, bool zero) {
    const bool tiny = kGeneral && scale == 0u;
    const uint32_t b = tiny ? 127u + 63u : 254u - scale;  // biased exponent of m1, as in mx_e2m1_word
    const uint32_t m2 = ((b + 1u) << 7) * 0x10001u, m1 = (b << 7) * 0x10001u, mh = ((b - 1u) << 7) * 0x10001u;
    uint32_t c[4];  // c[j]: elements 8w + 2j (low half) and 8w + 2j + 1 (high half) as 0x43 : code
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        uint32_t a = ax[4 * w + j];
        if (tiny) a = bf16x2_mul(a, 0x5F805F80u);  // 2^64 in both halves
        const uint32_t k0 = bf16x2_fma(a, m2, 0x43004300u), k1 = bf16x2_fma(a, m1, 0x43024302u),
                       k2 = bf16x2_fma(a, mh, 0x43044304u);  // + 128, 130, 132
        c[j] = __vminu2(__vimin3_u16x2(k0, k1, k2), 0x43074307u);
    }
    // l: the codes of elements 8w + 4h .. 8w + 4h + 3 as bytes, bit 3 the sign; then the odd bytes' nibbles
    // move up into the even bytes (the bytes are < 16, so + is |) and the even bytes are the word.
    const uint32_t l01 = __byte_perm(c[0], c[1], 0x6420) | (sgn[2 * w] & 0x08080808u),
                   l23 = __byte_perm(c[2], c[3], 0x6420) | (sgn[2 * w + 1] & 0x08080808u);
    const uint32_t word = __byte_perm(l01 + (l01 >> 4), l23 + (l23 >> 4), 0x6420);
    return kGeneral && zero ? 0u : word;
}

// fp32 output word w of the lane (its elements 8w .. 8w+7) by the shared rule, mx_e2m1_word.
__device__ __forceinline__ uint32_t lane_word_f32(const uint32_t (&raw)[16], int w, uint32_t scale) {
    uint32_t x_bits[8];  // fp32 patterns
#pragma unroll
    for (int i = 0; i < 8; ++i) x_bits[i] = raw[8 * w + i];
    return mx_e2m1_word(x_bits, scale);
}

// The sign of each of the bf16 elements 4i .. 4i+3 (words 2i, 2i+1) as a byte, 0xFF or 0: prmt's
// sign-replicate selectors (bit 3 of a selector nibble) on the bytes holding the sign bits.
__device__ __forceinline__ uint32_t bf16x4_signs(uint32_t lo, uint32_t hi) {
    uint32_t d;
    asm("prmt.b32 %0, %1, %2, 0xFDB9;" : "=r"(d) : "r"(lo), "r"(hi));
    return d;
}

// Rows of the padded A, one team of util_quantize_warps_per_row(k) warps per row: warp w of a team takes the
// row's warp-steps w, w + team, ... The scale of a padding K block is the row's largest non-NaN scale
// (a_pad_scale), known only once the whole row is quantized: the team reduces it after its last step.
template <bool kBf16>
__device__ __forceinline__ void quantize_rows(const F4gemmQuantizeArgs& args) {
    using T = QuantTraits<kBf16>;
    __shared__ uint32_t
        smem_key[kWarps];  // per warp: max over its real non-NaN blocks of scale + 1, 0 if none

    const uint32_t m = args.m, k = args.k, kp = (uint32_t)w_k_pad(k), mp = (uint32_t)a_m_pad(m);
    // team is a power of two (1..8): shifts and masks, not the division subroutine (~25 instructions a warp,
    // which at K = 4096 does only one warp-step)
    const uint32_t team = util_quantize_warps_per_row(k), team_log = __ffs(team) - 1,
                   rows_per_cta = kWarps >> team_log;
    const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const uint32_t team_row = warp >> team_log, team_warp = warp & (team - 1u);
    const uint32_t blocks = kp / 32, real_blocks = k / 32;
    const uint32_t steps = (blocks + T::kStepBlocks - 1) / T::kStepBlocks,
                   last_warp = (steps - 1) & (team - 1u);
    const uint32_t lane_block = lane / T::kLanes, lane_elem = lane % T::kLanes * T::kElems;
    const bool vec = ((args.x | ((uint64_t)args.ldx * T::kEsize)) & 15u) == 0u;
    const uint8_t* gmem_x = reinterpret_cast<const uint8_t*>(args.x);  // (m, ldx) bf16 / fp32, row-major
    uint8_t* gmem_a = reinterpret_cast<uint8_t*>(args.a_out);          // (mp, kp/2) fp4x2, contiguous
    uint8_t* gmem_sa = reinterpret_cast<uint8_t*>(args.a_scale_out);   // (mp, kp/32) e8m0, contiguous

    for (uint32_t row0 = blockIdx.x * rows_per_cta; row0 < mp; row0 += gridDim.x * rows_per_cta) {
        const uint32_t row = row0 + team_row;  // < mp: mp is a multiple of 256, rows_per_cta divides it
        const bool real_row = row < m;
        const uint8_t* gmem_x_row = gmem_x + (size_t)row * args.ldx * T::kEsize;
        uint8_t* gmem_a_row = gmem_a + (size_t)row * (kp / 2);
        uint8_t* gmem_sa_row = gmem_sa + (size_t)row * blocks;
        uint32_t key = 0u;

        for (uint32_t st = team_warp; st < steps; st += team) {
            const uint32_t block = st * T::kStepBlocks + lane_block;
            const bool real = real_row && block < real_blocks;
            uint32_t reg_raw[16];  // (64 bytes) bf16 / fp32, the lane's elements
            if (real) {
                load_lane<kBf16>(gmem_x_row + ((size_t)block * 32 + lane_elem) * T::kEsize, vec, reg_raw);
            } else {
#pragma unroll
                for (int w = 0; w < 16; ++w) reg_raw[w] = 0u;
            }
            uint32_t word[T::kWords];
            uint32_t scale;
            if constexpr (kBf16) {
                // |x| once for the amax and the lattice, the signs gathered once (reg_raw is dead after)
                uint32_t ax[16], sgn[8];
#pragma unroll
                for (int w = 0; w < 16; ++w) ax[w] = reg_raw[w] & 0x7FFF7FFFu;
#pragma unroll
                for (int i = 0; i < 8; ++i) sgn[i] = bf16x4_signs(reg_raw[2 * i], reg_raw[2 * i + 1]);
                const uint32_t amax = lane_amax_abs_bf16(ax);  // 0 for a padding block: zeros
                scale = mx_scale_of_amax(amax);
                const bool zero = mx_block_zero(amax);
                if (__any_sync(0xFFFFFFFFu, scale - 1u >= 252u)) {  // scale 0 or 0xFF in the warp: rare
#pragma unroll
                    for (uint32_t w = 0; w < T::kWords; ++w)
                        word[w] = lane_word_bf16x2<true>(ax, sgn, w, scale, zero);
                } else {
#pragma unroll
                    for (uint32_t w = 0; w < T::kWords; ++w)
                        word[w] = lane_word_bf16x2<false>(ax, sgn, w, scale, zero);
                }
            } else {
                uint32_t amax = real ? lane_amax_f32(reg_raw) : 0u;
                amax = max(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 1));
                scale = mx_scale_of_amax(amax);
                const bool zero = mx_block_zero(amax);
#pragma unroll
                for (uint32_t w = 0; w < T::kWords; ++w)
                    word[w] = lane_word_f32(reg_raw, w, scale) & (zero ? 0u : ~0u);
            }
            if (block < blocks) {
                uint8_t* p = gmem_a_row + (size_t)block * 16 + lane_elem / 2;
                if constexpr (T::kWords == 4)
                    *reinterpret_cast<uint4*>(p) = make_uint4(word[0], word[1], word[2], word[3]);
                else
                    *reinterpret_cast<uint2*>(p) = make_uint2(word[0], word[1]);
                if (lane_elem == 0 && (!real_row || real))  // padding blocks of real rows: below
                    gmem_sa_row[block] = (uint8_t)a_pad_scale(m, k, row, block, scale, 0u);
            }
            if (real && scale != F4GEMM_MX_NAN_SCALE) key = max(key, scale + 1u);
        }

        if (kp != k) {  // launch-uniform: the row's last warp-step holds its padding K blocks
            key = __reduce_max_sync(0xFFFFFFFFu, key);
            if (lane == 0) smem_key[warp] = key;
            __syncthreads();
            if (real_row && team_warp == last_warp) {
                uint32_t row_key = 0u;
                for (uint32_t w = 0; w < team; ++w) row_key = max(row_key, smem_key[team_row * team + w]);
                const uint32_t row_pad =
                    row_key == 0u ? F4GEMM_MX_NAN_SCALE : row_key - 1u;  // w_pad_block_scale
                const uint32_t block = (steps - 1) * T::kStepBlocks + lane_block;
                if (lane_elem == 0 && block >= real_blocks && block < blocks)
                    gmem_sa_row[block] = (uint8_t)a_pad_scale(m, k, row, block, 0u, row_pad);
            }
            __syncthreads();  // smem_key is rewritten by the next row group
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// A padding: one (row, 32-block) of the padded A per item, item i = row * (kp/32) + block, whose 16 data
// bytes are at 16 i and scale byte at i of the contiguous outputs.
// ---------------------------------------------------------------------------------------------------------
template <typename Index>
__device__ __forceinline__ void pad_a_items(const F4gemmPadAArgs& args, Index items) {
    ASource s;
    s.a = reinterpret_cast<const uint8_t*>(args.a);             // (m, lda) fp4x2
    s.scales = reinterpret_cast<const uint8_t*>(args.a_scale);  // (m, lds) e8m0
    s.m = args.m;
    s.k = args.k;
    s.lda = args.lda;
    s.lds = args.lds;
    uint4* gmem_a = reinterpret_cast<uint4*>(args.a_out);             // (mp, kp/2) fp4x2, one uint4 per block
    uint8_t* gmem_sa = reinterpret_cast<uint8_t*>(args.a_scale_out);  // (mp, kp/32) e8m0
    const Index blocks_per_row = (Index)(w_k_pad(args.k) / 32), real_blocks = (Index)(args.k / 32);
    const bool vec = ((args.a | (uint64_t)args.lda) & 15u) == 0u;
    for (Index i = (Index)blockIdx.x * kThreads + threadIdx.x; i < items; i += (Index)gridDim.x * kThreads) {
        const Index row = i / blocks_per_row, block = i % blocks_per_row;
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (row < (Index)args.m && block < real_blocks) {
            const uint8_t* p = s.a + (size_t)row * s.lda + (size_t)block * 16;
            if (vec) {
                v = __ldg(reinterpret_cast<const uint4*>(p));
            } else {
                uint32_t w[4];
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    w[j] = (uint32_t)p[4 * j] | ((uint32_t)p[4 * j + 1] << 8) |
                           ((uint32_t)p[4 * j + 2] << 16) | ((uint32_t)p[4 * j + 3] << 24);
                v = make_uint4(w[0], w[1], w[2], w[3]);
            }
        }
        gmem_a[i] = v;
        gmem_sa[i] = (uint8_t)a_pad_scale(s, row, block);
    }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// Entry points (names: util_args.h). Block F4GEMM_UTIL_THREADS, grid util_*_grid(), no dynamic shared memory.
// ---------------------------------------------------------------------------------------------------------

// W = w_header(n, k), then body word d = w_body_word(s, d): each thread writes 16 body bytes (4 words) per
// item. Header words scan their row's k/32 scales (once per row); that is the format's definition, not
// repeated here.
extern "C" __global__ void __launch_bounds__(kThreads)
    f4gemm_sm90a_pack_weight(const __grid_constant__ F4gemmPackWeightArgs args) {
#if F4GEMM_SM90A_ENABLED
    trap_unless(args.n > 0 && args.k > 0 && args.k % 32 == 0 && args.ldb >= args.k / 2 &&
                args.lds >= args.k / 32);
    WSource s;
    s.b = reinterpret_cast<const uint8_t*>(args.b);             // (n, ldb) fp4x2
    s.scales = reinterpret_cast<const uint8_t*>(args.b_scale);  // (n, lds) e8m0
    s.n = args.n;
    s.k = args.k;
    s.ldb = args.ldb;
    s.lds = args.lds;
    uint8_t* gmem_w = reinterpret_cast<uint8_t*>(args.w);  // header (256 B) + body, 16-byte aligned

    if (blockIdx.x == 0 && threadIdx.x == 0) {  // constant offsets only: the header stays in registers
        const F4gemmWeightHeader h = w_header(s.n, s.k);
#pragma unroll
        for (uint32_t j = 0; j < F4GEMM_W_HEADER / 16; ++j) {
            uint4 v;
            memcpy(&v, reinterpret_cast<const uint8_t*>(&h) + 16 * j, 16);
            reinterpret_cast<uint4*>(gmem_w)[j] = v;
        }
    }
    uint4* gmem_body = reinterpret_cast<uint4*>(gmem_w + F4GEMM_W_HEADER);  // w_body_bytes / 16 pieces
    const size_t pieces = w_body_bytes(s.n, s.k) / 16;
    for (size_t i = (size_t)blockIdx.x * kThreads + threadIdx.x; i < pieces;
         i += (size_t)gridDim.x * kThreads) {
        uint4 v;
        v.x = w_body_word(s, 4 * i);
        v.y = w_body_word(s, 4 * i + 1);
        v.z = w_body_word(s, 4 * i + 2);
        v.w = w_body_word(s, 4 * i + 3);
        gmem_body[i] = v;
    }
#else
    F4GEMM_TRAP_WRONG_ARCH();
#endif
}

// Padded A from plain A: data copied 16 bytes at a time (zero in padding), scales by a_pad_scale.
extern "C" __global__ void __launch_bounds__(kThreads)
    f4gemm_sm90a_pad_a(const __grid_constant__ F4gemmPadAArgs args) {
#if F4GEMM_SM90A_ENABLED
    trap_unless(args.k > 0 && args.k % 32 == 0 && args.lda >= args.k / 2 && args.lds >= args.k / 32);
    const uint64_t items = (uint64_t)a_m_pad(args.m) * (w_k_pad(args.k) / 32);
    if (items + (uint64_t)gridDim.x * kThreads <= 0xFFFFFFFFull)
        pad_a_items<uint32_t>(args, (uint32_t)items);  // 32-bit index math wherever it fits (all real shapes)
    else
        pad_a_items<uint64_t>(args, items);
#else
    F4GEMM_TRAP_WRONG_ARCH();
#endif
}

// Padded A quantized from bf16 / fp32 rows, bit-identical to the host's quantize_mxfp4 then pad. Five CTAs
// per SM (46 registers, no spills): bf16 4096 x 4096 measured 12.3 us (lab, graphs of 40 calls) against 12.9
// at four CTAs and 12.6 at six (40 registers, 12 bytes spilled); CTAs of 4 warps at 10 per SM 12.27 at 4096 x
// 4096 and 22.2 against 22.0 at 4096 x 8192, not kept (PERF.md entries 26, 30).
extern "C" __global__ void __launch_bounds__(kThreads, 5)
    f4gemm_sm90a_quantize(const __grid_constant__ F4gemmQuantizeArgs args) {
#if F4GEMM_SM90A_ENABLED
    trap_unless(args.k > 0 && args.k % 32 == 0 && args.ldx >= args.k && args.m < 0x80000000u &&
                args.k < 0x80000000u &&
                (args.dtype == F4GEMM_UTIL_DTYPE_FP32 || args.dtype == F4GEMM_UTIL_DTYPE_BF16));
    if (args.dtype == F4GEMM_UTIL_DTYPE_BF16)
        quantize_rows<true>(args);
    else
        quantize_rows<false>(args);
#else
    F4GEMM_TRAP_WRONG_ARCH();
#endif
}
