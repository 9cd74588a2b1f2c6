// Decode sm_90a MXFP4 x MXFP4 -> bf16 GEMM for small M (the `dec` family). The weight rows (N) are the
// M side of mma.sync.m16n8k16 (f16 in, fp32 accumulate), the activation rows (up to 16 per CTA row) the
// N side; the CTA's warps split K.
//   - B is the packed weight W (include/f4gemm/weight.h), frag16s (include/f4gemm/layout.hpp): per (16-row
//     group, 128-K chunk) 1024 bytes of bit-plane words, block-major inside each half, then the group's 64
//     scale bytes of the chunk. Each warp keeps a ring of STAGES chunk slots in shared memory, filled by one
//     lane with 1D bulk copies (1088 bytes per 16-row group, mbarrier transaction count): STAGES - 1 chunks
//     in flight per warp without holding registers. Each group's header of row summaries replaces a scan of
//     the weights' scales; no path reads plain B scales (p.sB), the exact one included. K is W's padded K
//     (any multiple of 256), N the real N (rows N .. Np-1 of W exist and are never stored). Per scale block a
//     lane reads one conflict-free 4-byte word per row pair; two masks and a shift give the e5m2 bytes of
//     e2m1 * 2^-14, a byte permute the f16 (an e5m2 byte is the high byte of the f16 of its value).
//     sm_90 has no FP8 mma.sync (ptxas lowers it to the same unpacks + HMMA), so the kernel feeds f16.
//   - B's block scale is applied in the promotion: one FFMA per output per block with 2^(e - refB), one
//     reference per CTA (the largest B exponent of its rows - 13); a CTA whose B exponents span more than
//     kBSpan binades takes the exact path (so the factors stay normal fp32 numbers), and so does a CTA
//     with a B row that spans more than 26 binades, like every other kernel (same results).
//   - A: read from the plain layout (small, L1/L2 resident) with plain loads, converted in registers with
//     the LUT of cvt8, its block scale folded relative to a per-row reference, as in every other kernel.
//   - Per (16 weight rows, 8 activation rows, 32-element block): two chained HMMA k16 into a zero
//     accumulator (exact block sum: at most 13 bits), then the FFMA: the exactness argument of
//     docs/KERNELS_SM90.md holds unchanged (exact block sums times a power of two, one fp32 rounding per
//     block and output).
//   - The warps' fp32 partials are summed in shared memory in warp order (deterministic); the epilogue
//     applies 2^(refA + refB), NaN rows and columns, alpha, beta * C.
//   - A rows whose scales span more than the FP8 window send the whole CTA to exact_tile, like B above.
//   - DEC_WG 1 (dec_loop_wg) replaces the mma.sync main loop with register-A FP8 wgmma: the same words as
//     e5m2 fragments without the f16 permutes, the activations as an SW128 e5m2 image in shared memory;
//     the start-up, the exact path, the B scales in the FFMA and the epilogue are the ones above.
// One source, many cubins (configs in kernels/sm90a/kernels.json); docs/KERNELS_SM90.md "dec".
#include "f4gemm/frag16s.h"
#include "f4gemm/weight.h"
#include "sm90_common.cuh"
#include "sm90_ptx.cuh"
#include "sm90_wgmma_e5m2.cuh"

#include <type_traits>

#ifndef F4GEMM_KNL_NAME
#define F4GEMM_KNL_NAME f4gemm_sm90a_dec_16x64
#endif
//   DEC_R       16-row weight groups per CTA (tile_N = 16 * DEC_R)
//   DEC_M       activation rows per CTA (tile_M: 16, or 32, where the converted weight fragments feed four
//               8-row activation tiles instead of two)
//   DEC_WARPS   warps per CTA, splitting K (>= 8: exact_tile needs 256 threads)
//   MIN_BLOCKS  CTAs per SM the register budget is cut for
//   DEC_STAGES  chunk slots per warp in the shared-memory ring (>= 2)
#ifndef F4GEMM_DEC_R
#define F4GEMM_DEC_R 4
#endif
#ifndef F4GEMM_DEC_WARPS
#define F4GEMM_DEC_WARPS 8
#endif
#ifndef F4GEMM_DEC_M
#define F4GEMM_DEC_M 16
#endif
#ifndef F4GEMM_MIN_BLOCKS
#define F4GEMM_MIN_BLOCKS 1
#endif
#ifndef F4GEMM_DEC_STAGES
#define F4GEMM_DEC_STAGES 4
#endif
//   DEC_WG      0: each warp converts all DEC_R groups of its K range to f16 for mma.sync (HMMA).
//               1: the wgmma design (dec_loop_wg): warpgroups split K; in each, warp q owns groups q, q + 4,
//               .. of the tile, turns their bit-plane words into e5m2 with two masks and a shift (the words
//               are already its register-A fragment, as in ws_swap_*_fs), and the warpgroup issues one
//               register-A FP8 wgmma per 64 weight rows and 32-K block on an SW128 e5m2 image of the
//               activations, which its four warps convert in shared memory, a quarter (one block of each row)
//               each. No PRMT per weight element: half the integer-pipe instructions of DEC_WG 0
//               (docs/PERF.md entry 41).
#ifndef F4GEMM_DEC_WG
#define F4GEMM_DEC_WG 0
#endif
//   DEC_CH      DEC_WG 1: 128-K chunks per ring slot (one bulk copy of DEC_CH chunks per group), so that the
//               per-slot costs (the wait, the copies, the image barrier) are paid once per DEC_CH chunks
#ifndef F4GEMM_DEC_CH
#define F4GEMM_DEC_CH 1
#endif
//   DEC_SPLIT   1: split-capable (the manifest's split_k column): with a split, CTA z takes the K chunks
//               [z, z + 1) * k_per_split / 128 and the tile's last CTA sums the splits' fp32 partials in
//               order (splitk_finish, as the ws kernels do). 0: every CTA takes the whole K.
#ifndef F4GEMM_DEC_SPLIT
#define F4GEMM_DEC_SPLIT 0
#endif
//   DEC_SK      1 (with DEC_SPLIT 1): stream-K inside the split launch. With S = num_splits >= 2 the
//               CTAs share the tiles' 128-K chunks in one run each ([c U / G, (c + 1) U / G) of the U = tiles
//               * K / 128 chunks, tile-major, N tiles fastest) over G = min(SMs * CTAs per SM, S * tiles, the
//               most that keeps every tile within S segments) CTAs; the launch's other CTAs leave at once. A
//               tile whose chunks one CTA holds is stored directly; the segments of a shared tile write fp32
//               partials to slabs 0 .. segments - 1 in order and its last CTA sums them (splitk_finish).
//               S = 1: G = the tiles, one CTA per tile stored directly (the same path: a DEC_SK kernel holds
//               only the stream-K copy of the tile, which then runs up to 5.7 us faster than beside the plain
//               copy, PERF.md entry 89). Dev only: slower than the unsplit tile at every decode cell measured
//               (docs/PERF.md entries 88, 89).
#ifndef F4GEMM_DEC_SK
#define F4GEMM_DEC_SK 0
#endif
// Lab knob of DEC_SK 1: 0 the working CTAs are the launch's last G (the others, first, leave at once), 1 its
// first G (the others leave as the SMs free up at the end)
#ifndef F4GEMM_DEC_SK_LAST
#define F4GEMM_DEC_SK_LAST 0
#endif
// Lab knob (DEC_WG 0): 1 fills each warp's ring with 0xFF bytes before its first copies, so that a read of a
// slot before its copies land gives a wrong result (PERF.md entry 90's test of a racecheck report)
#ifndef F4GEMM_DEC_POISON
#define F4GEMM_DEC_POISON 0
#endif
//   DEC_EARLY   1: the start-up's own loads (A's scale words of the whole K up to 32768, B's row summaries)
//               are issued first, then each warp initialises its ring and issues its first DEC_STAGES slots'
//               copies, then the start-up is computed from the loaded words: the first chunks' DRAM latency
//               runs under the start-up, and the start-up's loads do not queue behind the ring's bulk copies
//               (docs/PERF.md entry 47: priming the ring before the start-up's loads cost ~2 us per CTA
//               round; entry 48 measures this order). A CTA that then takes the exact path waits for those
//               copies before exact_tile reuses the ring. 0: the ring starts after the start-up.
#ifndef F4GEMM_DEC_EARLY
#define F4GEMM_DEC_EARLY 0
#endif
//   DEC_UWG     1: DEC_WG 1 takes the warpgroup index through a shuffle, so that the compiler knows it is
//               warp-uniform and builds the wgmma descriptors in uniform registers (PERF.md entries 47, 48)
#ifndef F4GEMM_DEC_UWG
#define F4GEMM_DEC_UWG 0
#endif
// Lab knob, never in kernels.json (wrong results by design): DEC_PROBE_TS 1 makes thread 0 of each CTA take
// %globaltimer at entry and exit and clock64 at five points (the start-up's first barrier, DEC_EARLY 0 only;
// the start-up done; the main loop done; the warps' partials in shared memory; the epilogue done), and write
// them with its SM id over the first 40 outputs of its tile's first row (one byte each, as bf16 integers
// 0..255, so that a D.npy of the run carries them exactly): the phases of a launch per CTA, the start-up
// residue of issue 17 split (docs/PERF.md entry 85; scripts/dec_timeline.py reads them). Unsplit tiles of at
// least 48 columns.
#ifndef F4GEMM_DEC_PROBE_TS
#define F4GEMM_DEC_PROBE_TS 0
#endif

namespace {
using namespace f4gemm::sm90;

constexpr int kR = F4GEMM_DEC_R;
constexpr int kWarps = F4GEMM_DEC_WARPS;
constexpr int kThreads = 32 * kWarps;
constexpr int kStages = F4GEMM_DEC_STAGES;
constexpr int TILE_M = F4GEMM_DEC_M;
constexpr int TILE_N = 16 * kR;
constexpr int kMt8 = TILE_M / 8;  // 8-row activation tiles of a full CTA row
constexpr bool kWG = F4GEMM_DEC_WG != 0;
constexpr int kNWG = kWarps / 4;              // warpgroups (DEC_WG 1)
constexpr int kRw = kWG ? kR / 4 : kR;        // 16-row groups per warp
constexpr int kCh = kWG ? F4GEMM_DEC_CH : 1;  // chunks per ring slot
constexpr bool kSplit = F4GEMM_DEC_SPLIT != 0;
constexpr bool kSK = F4GEMM_DEC_SK != 0;
static_assert(!kSK || kSplit,
              "DEC_SK 1 needs DEC_SPLIT 1 (the split launch's partial slabs and tile counters)");
constexpr bool kEarly = F4GEMM_DEC_EARLY != 0;
constexpr bool kProbeTs = F4GEMM_DEC_PROBE_TS != 0;
static_assert(!kProbeTs || (!kSplit && TILE_N >= 48), "DEC_PROBE_TS: unsplit tiles of 48 columns or more");
// What a call of the main loop does: All (initialise the ring, fill it, run), or the three parts of
// DEC_EARLY 1: Prime (initialise and fill, before the start-up is computed), Run (the loop on the primed
// ring) and Drain (instead of Run, on the exact path: wait for the primed slots' copies).
enum class Part { All, Prime, Run, Drain };
static_assert(!kWG || (kR % 4 == 0 && kWarps % 4 == 0), "DEC_WG 1: whole warpgroups, 64-row multiples");
static_assert(TILE_M == 16 || TILE_M == 32, "DEC_M: 16 or 32 activation rows per CTA");
// The start-up: warps 0 .. TILE_M/4 - 1 scan A's scales and the last TILE_N threads read B's row summaries at
// the same time where the CTA has warps for both (every 16-row config); otherwise the first TILE_N threads
// read the summaries after the scan.
constexpr bool kStartApart = F4GEMM_DEC_WARPS * 32 - TILE_N >= TILE_M / 4 * 32;
// Words in flight per lane in the start-up scan of the A scales. 4 leaves every config free of spills
// (ptxas allocates the 128 registers of the main loop differently around the scan: 1 and 8 spill).
constexpr int kScanUnroll = 4;
// DEC_EARLY 1: A scale words per lane loaded before the ring is primed (8 lanes per row: K <= 256 * 8 * kPre
// in one round; the rest, if any, after the ring's copies)
constexpr int kPre = 16;
constexpr int kBSpan = 100;  // B exponents of a CTA within 100 binades: 2^(e - refB) >= 2^-87
// One ring slot = one 128-K chunk of everything the warp reads: B and its scales (bulk copies), the TILE_M
// activation rows' 64 bytes (pitch 80: the per-lane 4-byte reads hit 32 distinct banks) and their TILE_M
// scale words (cp.async, 16 and 4 bytes). B arrives in the frag16s layout: per (16-row group, 128-K chunk)
// the 1024 bytes of frag16 words, then the 16 rows' 4 scale bytes of that chunk (kChunkB bytes in all), so
// one bulk copy per group brings both; before frag16s the B scales came by 4-byte cp.async, one 32-byte
// sector per row and chunk, and cost 13-19% of the time (docs/PERF.md entry 17).
constexpr int kChunkB = F4GEMM_FRAG16S_CHUNK;
static_assert(kChunkB == 1024 + 16 * 4, "a chunk: 1024 bytes of frag16 words, 16 rows x 4 scale bytes");
// DEC_WG 1: a slot holds kCh chunks of each of the warp's groups (kCh * kChunkB contiguous bytes per group,
// as in W), and only the warp's quarter of the activations (block q of every row and chunk, 16 bytes each).
constexpr int kSlotB = kRw * kCh * kChunkB;
constexpr int kAPitch = kWG ? 16 : 80;
constexpr int kOffA = kSlotB;
constexpr int kOffAs = kOffA + kCh * TILE_M * kAPitch;
constexpr int kStageBytes = kOffAs + kCh * TILE_M * 4;
// DEC_WG 1: per warpgroup two SW128 e5m2 images of the chunk's activations (TILE_M rows x 128 bytes), by
// chunk parity, 1024-byte aligned (the swizzle atom); + 1024 for the alignment of the dynamic shared memory
// base.
constexpr int kImgBytes = TILE_M * 128;  // one chunk; a buffer holds kCh
constexpr int kOffImg = kStages * kWarps * kStageBytes + kStages * kWarps * 8;
constexpr int kRingBytes =
    kOffImg + (kWG ? 1024 + kNWG * 2 * kCh * kImgBytes : 0);  // slots + mbarriers (+ images)
static_assert(kStageBytes % 16 == 0, "slot alignment");
constexpr int kRedPitch = TILE_N + 4;  // floats; = 4 mod 32: the fragment stores hit 32 distinct banks
constexpr int kRedBytes = kWarps * TILE_M * kRedPitch * 4;
constexpr int kUnion0 = kRedBytes > kExactSmemBytes ? kRedBytes : kExactSmemBytes;
constexpr int kUnionBytes = kRingBytes > kUnion0 ? kRingBytes : kUnion0;  // ring, partials, exact path
constexpr int kSmemBytes = kUnionBytes + 8 * (TILE_M + TILE_N) + 32;      // + per-row words + CTA words
static_assert(kWarps >= 8, "exact_tile needs 256 threads");
static_assert(kStages >= 2, "ring depth");
static_assert(kSmemBytes <= 227 * 1024, "sm_90 dynamic shared memory limit");
// DEC_SK 1: the CTAs an SM holds by shared memory and threads (228 KB, 1 KB reserved per CTA, 2048 threads;
// src/core/abi.cpp sm90_ctas_per_sm). The register budget could hold fewer; then the runs take a second
// round, still right.
constexpr int kCtasPerSm = (228 * 1024) / (kSmemBytes + 1024) < 2048 / kThreads
                               ? (228 * 1024) / (kSmemBytes + 1024)
                               : 2048 / kThreads;

// D(16x8, fp32) = A(16x16, f16, row) * B(16x8, f16, col) + C.
[[maybe_unused]] __device__ __forceinline__ void hmma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                                      uint32_t b1, const float (&c)[4]) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%10, %11, %12, %13};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]),
          "f"(c[3]));
}

// f16x2 of e5m2 bytes 0, 1 (lo) or 2, 3 (hi) of x (include/f4gemm/bitplane.h, tested on the host).
[[maybe_unused]] __device__ __forceinline__ uint32_t f16x2_lo(uint32_t x) {
    return prmt(x, 0u, F4GEMM_F16X2_LO_SEL);
}
[[maybe_unused]] __device__ __forceinline__ uint32_t f16x2_hi(uint32_t x) {
    return prmt(x, 0u, F4GEMM_F16X2_HI_SEL);
}

// 2^(byte j of t - 127) as a float (t holds e - ref + 127 per byte; include/f4gemm/bitplane.h).
template <int j>
__device__ __forceinline__ float pow2_of_byte(uint32_t t) {
    return __uint_as_float(f4gemm::pow2_bits_of_byte(t, j));
}

// The CTA's chunks of 128 K, [x, y): all, or (DEC_SPLIT 1 with splits) its split's (k_per_split is a multiple
// of 256, the last split may be shorter).
__device__ __forceinline__ int2 cta_chunks(const Problem& p) {
    if constexpr (kSplit) {
        if (p.splits > 1)
            return make_int2((int)blockIdx.z * (p.k_per_split / 128),
                             min(p.K, ((int)blockIdx.z + 1) * p.k_per_split) / 128);
    }
    return make_int2(0, p.K / 128);
}

// DEC_EARLY 1 on the exact path: the slots primed before the start-up (slot i holds chunks from c0 + i * ch,
// if below c1) complete their first phase once their copies have landed; then the ring may be reused.
__device__ __forceinline__ void drain_ring(int c0, int c1, int ch, int lane, uint64_t* bars) {
#pragma unroll
    for (int i = 0; i < kStages; ++i)
        if (c0 + i * ch < c1) mbar_wait(&bars[i], 0);
    __syncwarp();
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < kStages; ++i) mbar_inval(&bars[i]);
    }
}

// Per-warp main loop over chunks [c0, c1) of 128 K. kNt8: activation 8-row tiles (1 when M - m0 <= 8).
// Every operand byte of a chunk arrives through the warp's ring slot (bulk copies for B and its scales,
// cp.async for A and its scales, all counted on the slot's mbarrier: 1 expect_tx arrival + 32 cp.async
// arrivals), issued kStages - 1 chunks ahead, so the loop itself only waits on shared memory.
template <int kNt8, Part kPart>
__device__ __forceinline__ void dec_loop(const Problem& p, int m0, int n0, int c0, int c1, int lane,
                                         const int (&refA)[kMt8], uint32_t kB, float (&acc)[kRw][kMt8][4],
                                         uint8_t* ring, uint64_t* bars) {
    const int g = lane >> 2, t = lane & 3;
    const long grp = (long)f4gemm::frag16s_group_bytes(p.K);  // bytes per 16-row group of B (frag16s)
    const uint8_t* bgroup = p.B + (long)(n0 / 16) * grp;
    // Groups of this tile inside W (w_tile_groups): the last tile of a TILE_N = 80 or 112 kernel copies only
    // the groups W has (the others' slots hold stale bytes whose outputs lie beyond N and are never stored).
    const int groups = w_tile_groups<TILE_N>(p.N, n0);

    if constexpr (kPart == Part::All || kPart == Part::Prime) {
        if (lane == 0) {
#pragma unroll
            for (int i = 0; i < kStages; ++i) mbar_init(&bars[i], 33);
            fence_barrier_init();
        }
        __syncwarp();
    }
    if constexpr (kPart == Part::Drain) {
        drain_ring(c0, c1, 1, lane, bars);
        return;
    }
    auto issue = [&](int c, int slot) {
        if (c >= c1) return;  // warp-uniform
        uint8_t* dst = ring + slot * kStageBytes;
        if (lane == 0) {
            mbar_arrive_expect_tx(&bars[slot], groups * kChunkB);
#pragma unroll
            for (int rg = 0; rg < kR; ++rg)
                if (rg < groups)
                    bulk_copy_g2s(dst + rg * kChunkB,
                                  bgroup + rg * grp + F4GEMM_FRAG16S_HEAD + (long)c * kChunkB, kChunkB,
                                  &bars[slot]);
        }
        // A: 8 * kNt8 rows x 64 bytes = 4 pieces of 16 bytes per row
#pragma unroll
        for (int q = 0; q < (kNt8 * 32 + 31) / 32; ++q) {
            const int i = lane + 32 * q, row = i / 4, part = i % 4;
            if (row < 8 * kNt8)
                cp_async_16(dst + kOffA + row * kAPitch + part * 16,
                            p.A + (long)(m0 + row) * p.lda + c * 64 + part * 16);
        }
        if (lane < 8 * kNt8) cp_async_4(dst + kOffAs + lane * 4, p.sA + (long)(m0 + lane) * p.ldsa + c * 4);
        cp_async_mbar_arrive(&bars[slot]);
    };

    // Block j of the chunk in ring slot s; asc / bsc: the chunk's scale words of this lane's rows.
    auto block = [&](const uint8_t* s, const uint32_t(&asc)[kMt8], const uint32_t(&bsc)[kR][2], auto jc) {
        constexpr int j = decltype(jc)::value;
        // Activation fragments (mma B operand): e0..e3 of word t feed the first k16 half, e4..e7 the second
        // (the same k order as the weight fragments below; inside a scale block the order is free).
        uint32_t bf[kNt8][4];
#pragma unroll
        for (int h = 0; h < kNt8; ++h) {
            const uint32_t x =
                *reinterpret_cast<const uint32_t*>(s + kOffA + (8 * h + g) * kAPitch + j * 16 + t * 4);
            uint32_t lut_lo, lut_hi, lo, hi;
            make_lut((int)((asc[h] >> (8 * j)) & 0xFF) - refA[h], lut_lo, lut_hi);
            cvt8(x, lut_lo, lut_hi, lo, hi);
            bf[h][0] = f16x2_lo(lo);
            bf[h][1] = f16x2_hi(lo);
            bf[h][2] = f16x2_lo(hi);
            bf[h][3] = f16x2_hi(hi);
        }
#pragma unroll
        for (int rg = 0; rg < kR; ++rg) {
            // word t of block j of rows g (first half) and g + 8 (second half): 128 contiguous bytes per warp
            const uint8_t* q = s + rg * kChunkB + j * 128 + lane * 4;
            const uint32_t x0 = *reinterpret_cast<const uint32_t*>(q);
            const uint32_t x1 = *reinterpret_cast<const uint32_t*>(q + 512);
            // e5m2 bytes of e2m1 * 2^-14 (bit-plane words): e0..e3 and e4..e7 of rows g and g + 8
            const uint32_t lo0 = f4gemm::bitplane_lo_e5m2(x0), lo1 = f4gemm::bitplane_lo_e5m2(x1);
            const uint32_t hi0 = f4gemm::bitplane_hi_e5m2(x0), hi1 = f4gemm::bitplane_hi_e5m2(x1);
            const uint32_t a1[4] = {f16x2_lo(lo0), f16x2_lo(lo1), f16x2_hi(lo0), f16x2_hi(lo1)};
            const uint32_t a2[4] = {f16x2_lo(hi0), f16x2_lo(hi1), f16x2_hi(hi0), f16x2_hi(hi1)};
            // 2^(e - refB): e - refB + 127 in [40, 140] for every byte of a CTA within kBSpan (no carries)
            const float f0 = pow2_of_byte<j>(bsc[rg][0] + kB);
            const float f1 = pow2_of_byte<j>(bsc[rg][1] + kB);
#pragma unroll
            for (int h = 0; h < kNt8; ++h) {
                const float zero[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                float d1[4], d[4];
                hmma(d1, a1, bf[h][0], bf[h][1], zero);
                hmma(d, a2, bf[h][2], bf[h][3], d1);
                acc[rg][h][0] = fmaf(d[0], f0, acc[rg][h][0]);
                acc[rg][h][1] = fmaf(d[1], f0, acc[rg][h][1]);
                acc[rg][h][2] = fmaf(d[2], f1, acc[rg][h][2]);
                acc[rg][h][3] = fmaf(d[3], f1, acc[rg][h][3]);
            }
        }
    };

    if constexpr (kPart == Part::All || kPart == Part::Prime) {
        if constexpr (F4GEMM_DEC_POISON != 0) {  // lab: the slots filled with 0xFF before the copies
            for (int i = lane * 16; i < kStages * kStageBytes; i += 32 * 16)
                *reinterpret_cast<uint4*>(ring + i) = make_uint4(~0u, ~0u, ~0u, ~0u);
            __syncwarp();
            fence_proxy_async();
        }
#pragma unroll
        for (int i = 0; i < kStages; ++i) issue(c0 + i, i);
    }
    if constexpr (kPart == Part::Prime) return;
    int slot = 0;
    uint32_t phase = 0;
    for (int c = c0; c < c1; ++c) {
        mbar_wait(&bars[slot], phase);
        const uint8_t* s = ring + slot * kStageBytes;
        uint32_t asc[kMt8] = {}, bsc[kR][2];
#pragma unroll
        for (int h = 0; h < kNt8; ++h)
            asc[h] = *reinterpret_cast<const uint32_t*>(s + kOffAs + (8 * h + g) * 4);
#pragma unroll
        for (int rg = 0; rg < kR; ++rg)
#pragma unroll
            for (int hh = 0; hh < 2; ++hh)
                bsc[rg][hh] = *reinterpret_cast<const uint32_t*>(s + rg * kChunkB + 1024 + (8 * hh + g) * 4);
        block(s, asc, bsc, std::integral_constant<int, 0>{});
        block(s, asc, bsc, std::integral_constant<int, 1>{});
        block(s, asc, bsc, std::integral_constant<int, 2>{});
        block(s, asc, bsc, std::integral_constant<int, 3>{});
        __syncwarp();  // every lane's reads of this slot are consumed: it may be refilled
        issue(c + kStages, slot);
        if (++slot == kStages) {
            slot = 0;
            phase ^= 1u;
        }
    }
    __syncwarp();
    if (lane == 0) {  // every issued copy was waited for: the slots and barriers may be repurposed
#pragma unroll
        for (int i = 0; i < kStages; ++i) mbar_inval(&bars[i]);
    }
}

// DEC_WG 1: the main loop of warp q of warpgroup wg over chunks [c0, c1) of 128 K, kCh per ring slot. kNt8:
// activation 8-row tiles (wgmma N = 8 * kNt8). Per slot: the warp converts block q of every activation row of
// the slot's chunks into the warpgroup's image (cvt8 per word with the row's folded scale, as every other
// kernel's S side; one word per lane and task), meets the other three warps there, then per chunk loads and
// converts the 4 blocks of its groups' fragments into registers, issues 4 * kRw wgmmas (fresh accumulators)
// and applies B's block scales in the FFMA as dec_loop does; the slot is refilled once all its chunks are
// read.
template <int kNt8, Part kPart>
__device__ __forceinline__ void dec_loop_wg(const Problem& p, int m0, int n0, int2 cr, int c0, int c1,
                                            int lane, int q, int wg, const int* s_ref, uint32_t kB,
                                            float (&acc)[kRw][kMt8][4], uint8_t* ring, uint64_t* bars,
                                            uint8_t* img) {
    constexpr int kN = 8 * kNt8;                                        // wgmma N: activation rows
    constexpr int kJB = kRw * kNt8 >= 6 ? 1 : kRw * kNt8 >= 4 ? 2 : 4;  // blocks per wgmma batch
    using Mma = WgmmaE5m2<kN>;
    const int g = lane >> 2;
    const long grp = (long)f4gemm::frag16s_group_bytes(p.K);
    const uint8_t* bgroup = p.B + (long)(n0 / 16) * grp;
    const int groups = w_tile_groups<TILE_N>(p.N, n0);
    int mine = 0;  // this warp's groups inside W (groups q, q + 4, ..)
#pragma unroll
    for (int r = 0; r < kRw; ++r) mine += (q + 4 * r < groups) ? 1 : 0;

    if constexpr (kPart == Part::All || kPart == Part::Prime) {
        if (lane == 0) {
#pragma unroll
            for (int i = 0; i < kStages; ++i) mbar_init(&bars[i], 33);
            fence_barrier_init();
        }
        __syncwarp();
    }
    if constexpr (kPart == Part::Drain) {
        drain_ring(c0, c1, kCh, lane, bars);
        return;
    }
    // The slot's activations are kCh x kN (chunk u, row) pairs; the warp copies block q of each (16 bytes of
    // fp4 and the row's scale word of the chunk). The lane's pairs i = lane + 32 k, their chunk (pr_u; kCh:
    // none), their index in the slot (pr_slot) and their source pointers less the slot's chunk offset are
    // lane constants, computed once (written per slot, the index arithmetic was ~80 instructions per slot at
    // wgmma N = 32; PERF.md entry 51). Where kN divides 32, a lane's row is the same in every k.
    constexpr int kPairs = kCh * kN;
    constexpr int kCopies = (kPairs + 31) / 32;
    int pr_u[kCopies], pr_slot[kCopies];
    const uint8_t* pr_a[kCopies];
    const uint8_t* pr_s[kCopies];
#pragma unroll
    for (int k = 0; k < kCopies; ++k) {
        const int i = lane + 32 * k, row = (32 % kN == 0) ? lane % kN : i % kN;
        pr_u[k] = i < kPairs ? i / kN : kCh;
        pr_slot[k] = pr_u[k] * TILE_M + row;
        pr_a[k] = p.A + (long)(m0 + row) * p.lda + pr_u[k] * 64 + q * 16;
        pr_s[k] = p.sA + (long)(m0 + row) * p.ldsa + pr_u[k] * 4;
    }
    // Slot i holds chunks c .. c + n - 1 (n = min(kCh, c1 - c)).
    auto issue = [&](int c, int slot) {
        if (c >= c1) return;  // warp-uniform
        const int n = min(kCh, c1 - c);
        uint8_t* dst = ring + slot * kStageBytes;
        if (lane == 0) {
            mbar_arrive_expect_tx(&bars[slot], mine * n * kChunkB);
#pragma unroll
            for (int r = 0; r < kRw; ++r)
                if (q + 4 * r < groups)
                    bulk_copy_g2s(dst + r * kCh * kChunkB,
                                  bgroup + (q + 4 * r) * grp + F4GEMM_FRAG16S_HEAD + (long)c * kChunkB,
                                  n * kChunkB, &bars[slot]);
        }
#pragma unroll
        for (int k = 0; k < kCopies; ++k) {  // block q of the lane's (chunk, row) pairs
            if (pr_u[k] < n) {
                cp_async_16(dst + kOffA + pr_slot[k] * kAPitch, pr_a[k] + (long)c * 64);
                cp_async_4(dst + kOffAs + pr_slot[k] * 4, pr_s[k] + (long)c * 4);
            }
        }
        cp_async_mbar_arrive(&bars[slot]);
    };
    const uint32_t img0 = smem_u32(img);
    // The lane's image tasks: kW of the 4 words of block q of a (chunk, row) pair (all 4 where the slot has
    // at least 24 pairs, so one LUT, two loads and two stores serve 32 elements; 2 or 1 where it has 16 or 8,
    // so that every lane has one), task t = lane + 32 k taking part t % (4 / kW) of pair t / (4 / kW). Its
    // chunk (tk_u; kCh: none), its offsets in the slot (A, A's scales) and in the image (SW128: 16-byte chunk
    // c of row r at c ^ (r % 8); the hi chunk 2q + 1 is the lo chunk's offset ^ 16) and its row's reference
    // are lane constants. With kW = 4 the tasks are the copies' pairs.
    constexpr int kW = kPairs >= 24 ? 4 : kPairs >= 16 ? 2 : 1;
    constexpr int kParts = 4 / kW;
    constexpr int kTasks = kPairs * kParts;
    constexpr int kRounds = (kTasks + 31) / 32;
    int tk_u[kRounds], tk_a[kRounds], tk_s[kRounds], tk_img[kRounds], tk_ref[kRounds];
#pragma unroll
    for (int k = 0; k < kRounds; ++k) {
        const int t = lane + 32 * k, part = t % kParts, pair = t / kParts;
        const int row = (32 % (kN * kParts) == 0) ? (lane / kParts) % kN : pair % kN;
        tk_u[k] = t < kTasks ? pair / kN : kCh;
        const int ps = tk_u[k] * TILE_M + row;
        tk_a[k] = kOffA + ps * kAPitch + 4 * kW * part;
        tk_s[k] = kOffAs + ps * 4;
        tk_img[k] = tk_u[k] * kImgBytes + row * 128 + (((2 * q) ^ (row & 7)) << 4) + 4 * kW * part;
        tk_ref[k] = s_ref[row];
    }

    if constexpr (kPart == Part::All || kPart == Part::Prime) {
#pragma unroll
        for (int i = 0; i < kStages; ++i) issue(c0 + i * kCh, i);
    }
    if constexpr (kPart == Part::Prime) return;
    int slot = 0, buf = 0;
    uint32_t phase = 0;
    for (int c = c0; c < c1; c += kCh) {
        const int n = min(kCh, c1 - c);
        mbar_wait(&bars[slot], phase);
        const uint8_t* s = ring + slot * kStageBytes;
        uint8_t* im = img + buf * kCh * kImgBytes;
        // Activations: the lane's tasks -> e5m2 with the row's folded scale (every offset a lane constant:
        // written with the task index split per slot, the arithmetic ran in every slot; PERF.md entry 50)
#pragma unroll
        for (int k = 0; k < kRounds; ++k) {
            if (tk_u[k] < n) {
                const uint32_t sw = *reinterpret_cast<const uint32_t*>(s + tk_s[k]);
                uint32_t lut_lo, lut_hi;
                make_lut((int)((sw >> (8 * q)) & 0xFFu) - tk_ref[k], lut_lo, lut_hi);
                if constexpr (kW == 4) {
                    const uint4 x = *reinterpret_cast<const uint4*>(s + tk_a[k]);
                    uint4 lo, hi;
                    cvt32(x, lut_lo, lut_hi, lo, hi);
                    *reinterpret_cast<uint4*>(im + tk_img[k]) = lo;
                    *reinterpret_cast<uint4*>(im + (tk_img[k] ^ 16)) = hi;
                } else if constexpr (kW == 2) {
                    const uint2 x = *reinterpret_cast<const uint2*>(s + tk_a[k]);
                    uint2 lo, hi;
                    cvt8(x.x, lut_lo, lut_hi, lo.x, hi.x);
                    cvt8(x.y, lut_lo, lut_hi, lo.y, hi.y);
                    *reinterpret_cast<uint2*>(im + tk_img[k]) = lo;
                    *reinterpret_cast<uint2*>(im + (tk_img[k] ^ 16)) = hi;
                } else {
                    const uint32_t x = *reinterpret_cast<const uint32_t*>(s + tk_a[k]);
                    uint32_t lo, hi;
                    cvt8(x, lut_lo, lut_hi, lo, hi);
                    *reinterpret_cast<uint32_t*>(im + tk_img[k]) = lo;
                    *reinterpret_cast<uint32_t*>(im + (tk_img[k] ^ 16)) = hi;
                }
            }
        }
        fence_proxy_async();         // the image is read by wgmma (async proxy)
        named_barrier(1 + wg, 128);  // the warpgroup's four quarters of the image are written
#pragma unroll
        for (int u = 0; u < kCh; ++u) {
            if (u >= n) break;  // warpgroup-uniform
            uint32_t bsc[kRw][2];
            uint32_t a[4][kRw][4];
#pragma unroll
            for (int r = 0; r < kRw; ++r) {
                const uint8_t* gs = s + (r * kCh + u) * kChunkB;
                bsc[r][0] = *reinterpret_cast<const uint32_t*>(gs + 1024 + g * 4);
                bsc[r][1] = *reinterpret_cast<const uint32_t*>(gs + 1024 + (8 + g) * 4);
#pragma unroll
                for (int j = 0; j < 4; ++j) {  // word t of block j of rows g and g + 8: the wgmma A fragment
                    const uint32_t x0 = *reinterpret_cast<const uint32_t*>(gs + j * 128 + lane * 4);
                    const uint32_t x1 = *reinterpret_cast<const uint32_t*>(gs + j * 128 + lane * 4 + 512);
                    a[j][r][0] = f4gemm::bitplane_lo_e5m2(x0);
                    a[j][r][1] = f4gemm::bitplane_lo_e5m2(x1);
                    a[j][r][2] = f4gemm::bitplane_hi_e5m2(x0);
                    a[j][r][3] = f4gemm::bitplane_hi_e5m2(x1);
                }
            }
            if (u == n - 1) {  // every lane's reads of this slot are done: it may be refilled
                __syncwarp();
                issue(c + kStages * kCh, slot);
            }
            const uint64_t desc = make_desc_sw128(img0 + (buf * kCh + u) * kImgBytes);
            // The chunk's wgmmas in batches of kJB blocks: all 4, or fewer where the fresh accumulators of
            // 4 would not fit the register budget beside the fragments (two groups per warp: 2 at N = 16,
            // 1 at N = 24 and 32)
            const auto batch = [&](auto jc) {
                constexpr int j0 = decltype(jc)::value;
                float f[kJB][kRw][Mma::kRegs];
                wgmma_fence();
#pragma unroll
                for (int jj = 0; jj < kJB; ++jj)
#pragma unroll
                    for (int r = 0; r < kRw; ++r)
                        Mma::mma(f[jj][r], a[j0 + jj][r], desc + (uint64_t)((32 * (j0 + jj)) >> 4));
                wgmma_commit();
                wgmma_wait<0>();
#pragma unroll
                for (int jj = 0; jj < kJB; ++jj)
#pragma unroll
                    for (int r = 0; r < kRw; ++r) {
#pragma unroll
                        for (int i = 0; i < 4; ++i)
                            fence_reg(a[j0 + jj][r][i]);  // live until read by the wgmma
#pragma unroll
                        for (int i = 0; i < Mma::kRegs; ++i) fence_reg(f[jj][r][i]);
                    }
#pragma unroll
                for (int jj = 0; jj < kJB; ++jj) {
#pragma unroll
                    for (int r = 0; r < kRw; ++r) {
                        const int j = j0 + jj;
                        const uint32_t t0 = bsc[r][0] + kB, t1 = bsc[r][1] + kB;
                        const float f0 = __uint_as_float(f4gemm::pow2_bits_of_byte(t0, j));
                        const float f1 = __uint_as_float(f4gemm::pow2_bits_of_byte(t1, j));
#pragma unroll
                        for (int h = 0; h < kNt8; ++h) {
                            acc[r][h][0] = fmaf(f[jj][r][4 * h + 0], f0, acc[r][h][0]);
                            acc[r][h][1] = fmaf(f[jj][r][4 * h + 1], f0, acc[r][h][1]);
                            acc[r][h][2] = fmaf(f[jj][r][4 * h + 2], f1, acc[r][h][2]);
                            acc[r][h][3] = fmaf(f[jj][r][4 * h + 3], f1, acc[r][h][3]);
                        }
                    }
                }
            };
            batch(std::integral_constant<int, 0>{});
            if constexpr (kJB == 1) batch(std::integral_constant<int, 1>{});
            if constexpr (kJB <= 2) batch(std::integral_constant<int, 2>{});
            if constexpr (kJB == 1) batch(std::integral_constant<int, 3>{});
        }
        buf ^= 1;
        if (++slot == kStages) {
            slot = 0;
            phase ^= 1u;
        }
    }
    // Every warpgroup leaves having passed its image barrier as often as the one with the most slots
    // (the CTA's nch chunks over kNWG warpgroups in slots of kCh: the counts differ by one at most). Not
    // needed for the result; compute-sanitizer racecheck reported hazards between the epilogue's partial
    // stores and the sum over them (two __syncthreads apart) wherever the counts differed, and none with them
    // equal (docs/PERF.md entry 41).
    {
        const int nch = cr.y - cr.x;
        int most = 0;
#pragma unroll
        for (int w = 0; w < kNWG; ++w)
            most = max(most, ((w + 1) * nch / kNWG - w * nch / kNWG + kCh - 1) / kCh);
        for (int i = (c1 - c0 + kCh - 1) / kCh; i < most; ++i) named_barrier(1 + wg, 128);
    }
    __syncwarp();
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < kStages; ++i) mbar_inval(&bars[i]);
    }
}

// The main loop of one warp: dec_loop (DEC_WG 0) or dec_loop_wg (DEC_WG 1) over its share of the CTA's chunks
// cr of its tile, with the 8-row activation tiles the CTA's rows need. A template so that only the chosen
// design is instantiated.
template <bool W, Part kPart>
__device__ __forceinline__ void main_loops(const Problem& p, int m0, int n0, int2 cr, int warp, int lane,
                                           const int (&refA)[kMt8], const int* s_ref, uint32_t kB,
                                           float (&acc)[kRw][kMt8][4], uint8_t* smem) {
    uint8_t* ring = smem + warp * kStages * kStageBytes;
    uint64_t* bars = reinterpret_cast<uint64_t*>(smem + kStages * kWarps * kStageBytes) + warp * kStages;
    // The CTA's chunks of 128 K: [cb, cb + nch). Without stream-K cr is cta_chunks(p): computed here, where
    // the shipped kernels always computed it, their SASS stays as it was (passed from the start, it moved
    // ptxas's allocation).
    const int2 crr = kSK ? cr : cta_chunks(p);
    const int cb = crr.x, nch = crr.y - crr.x;
    if constexpr (W) {
        const int wg = F4GEMM_DEC_UWG ? __shfl_sync(0xffffffffu, warp / 4, 0) : warp / 4;
        const int c0 = cb + wg * nch / kNWG, c1 = cb + (wg + 1) * nch / kNWG;
        const uint32_t base = smem_u32(smem);
        uint8_t* img = smem + ((base + kOffImg + 1023u) & ~1023u) - base + wg * 2 * kCh * kImgBytes;
        if (kMt8 == 4 && p.M - m0 > 24) {  // wgmma N: the CTA's real rows in 8-row tiles
            dec_loop_wg<kMt8 == 4 ? 4 : 1, kPart>(p, m0, n0, cr, c0, c1, lane, warp % 4, wg, s_ref, kB, acc,
                                                  ring, bars, img);
        } else if (kMt8 == 4 && p.M - m0 > 16) {
            dec_loop_wg<kMt8 == 4 ? 3 : 1, kPart>(p, m0, n0, cr, c0, c1, lane, warp % 4, wg, s_ref, kB, acc,
                                                  ring, bars, img);
        } else if (p.M - m0 > 8) {
            dec_loop_wg<2, kPart>(p, m0, n0, cr, c0, c1, lane, warp % 4, wg, s_ref, kB, acc, ring, bars, img);
        } else {
            dec_loop_wg<1, kPart>(p, m0, n0, cr, c0, c1, lane, warp % 4, wg, s_ref, kB, acc, ring, bars, img);
        }
    } else {
        const int c0 = cb + warp * nch / kWarps, c1 = cb + (warp + 1) * nch / kWarps;
        if constexpr (kMt8 == 2) {
            if (p.M - m0 > 8) {
                dec_loop<2, kPart>(p, m0, n0, c0, c1, lane, refA, kB, acc, ring, bars);
            } else {
                dec_loop<1, kPart>(p, m0, n0, c0, c1, lane, refA, kB, acc, ring, bars);
            }
        } else {  // the CTA's real rows in 8-row tiles: 17..32 rows are the case this config is for
            if (p.M - m0 > 24) {
                dec_loop<4, kPart>(p, m0, n0, c0, c1, lane, refA, kB, acc, ring, bars);
            } else if (p.M - m0 > 16) {
                dec_loop<3, kPart>(p, m0, n0, c0, c1, lane, refA, kB, acc, ring, bars);
            } else if (p.M - m0 > 8) {
                dec_loop<2, kPart>(p, m0, n0, c0, c1, lane, refA, kB, acc, ring, bars);
            } else {
                dec_loop<1, kPart>(p, m0, n0, c0, c1, lane, refA, kB, acc, ring, bars);
            }
        }
    }
}

// DEC_EARLY 1: a ring-only part of the main loops (Prime or Drain), which read no references, scales or
// accumulators: placeholders for those arguments.
template <Part kPart>
__device__ __forceinline__ void ring_part(const Problem& p, int m0, int n0, int2 cr, int warp, int lane,
                                          const int* s_ref, uint8_t* smem) {
    static_assert(kPart == Part::Prime || kPart == Part::Drain, "a part that touches only the ring");
    const int zero_ref[kMt8] = {};
    float no_acc[kRw][kMt8][4];
    main_loops<kWG, kPart>(p, m0, n0, cr, warp, lane, zero_ref, s_ref, 0u, no_acc, smem);
}

// The CTA's start-up words before any row adds to them: s_cta[0] wide (none yet), s_cta[1] the largest and
// s_cta[2] the smallest B exponent (none yet).
__device__ __forceinline__ void init_cta_words(int tid, int* s_cta) {
    if (tid == 0) {
        s_cta[0] = 0;
        s_cta[1] = 0;
        s_cta[2] = 255;
    }
}

// B row i of the tile from its group-header summary word w (frag16s): nan says whether it holds a NaN; a row
// spanning more than 26 binades (wide) sends the CTA to the exact path (finish_row's rule), and a row with
// any non-zero scale adds to the CTA's B exponent range (one reference per CTA: s_cta[1] the largest,
// s_cta[2] the smallest).
__device__ __forceinline__ void b_row_rule(uint32_t w, int* s_cta, bool& nan) {
    const f4gemm::Frag16sRowRef rr = f4gemm::frag16s_row_ref(w, kWindow);
    nan = rr.nan;
    if (rr.wide) s_cta[0] = 1;
    if (w & F4GEMM_FRAG16S_ANY) {
        atomicMax(&s_cta[1], (int)(w & 0xFFu));
        atomicMin(&s_cta[2], (int)((w >> 8) & 0xFFu));
    }
}

// A row r of the tile from its scale scan (mx, mn, nan: the 8 lanes of its part group, which all call this):
// the row's reference and NaN flag (written by its lane part 0); a row spanning more than 26 binades (wide)
// sends the CTA to the exact path. Both start-ups use it.
__device__ __forceinline__ void a_row_rule(uint32_t mx, uint32_t mn, uint32_t nan, bool valid, int part,
                                           int r, int* s_ref, int* s_nan, int* s_cta) {
    const RowRef rr = finish_row(mx, mn, nan, 8, valid);
    if (part == 0) {
        s_ref[r] = rr.ref;
        s_nan[r] = rr.nan;
        if (rr.wide) s_cta[0] = 1;
    }
}

// DEC_EARLY 1: the start-up with its loads first. Warps 0 .. TILE_M/4 - 1 load the A scale words of their
// rows (8 lanes per row, up to kPre words each) and the B-row threads their group-header summary words; then
// every warp primes its ring (main_loops' Prime part); then the loaded words are scanned as in the kernel's
// own start-up (same rule, same results: s_ref, s_nan, s_cta) and the CTA meets at a barrier.
__device__ __forceinline__ void early_startup(const Problem& p, int m0, int n0, int2 cr, int warp, int lane,
                                              int tid, int* s_ref, int* s_nan, int* s_cta, uint8_t* smem) {
    const bool scan = warp < TILE_M / 4;  // warp-uniform: 4 A rows per warp
    const int sub = lane / 8, part = lane % 8, r = warp * 4 + sub;
    const bool valid = scan && m0 + r < p.M;
    const uint2* src = reinterpret_cast<const uint2*>(valid ? p.sA + (long)(m0 + r) * p.ldsa : p.sA);
    const int nwords = p.K / 256;  // u64 scale words per row
    uint2 pre[kPre];
    if (scan) {
#pragma unroll
        for (int i = 0; i < kPre; ++i) {
            const int w = part + 8 * i;
            pre[i] = (valid && w < nwords) ? __ldg(src + w) : make_uint2(0u, 0u);
        }
    }
    // B rows: thread tid reads row bi's summary word (the last TILE_N threads, or the first TILE_N)
    const int bi = kStartApart ? tid - (kThreads - TILE_N) : tid;
    const bool brow = bi >= 0 && bi < TILE_N && n0 + bi < p.N;
    uint32_t hw = 0u;
    if (brow)
        hw = __ldg(reinterpret_cast<const uint32_t*>(
            p.B + (long)(n0 / 16 + bi / 16) * (long)f4gemm::frag16s_group_bytes(p.K) + 4 * (bi % 16)));
    init_cta_words(tid, s_cta);
    ring_part<Part::Prime>(p, m0, n0, cr, warp, lane, s_ref, smem);
    __syncthreads();  // s_cta's initial values
    if (scan) {
        uint32_t mx = 0u, mn = 0xFFFFFFFFu, nan = 0u;
#pragma unroll
        for (int i = 0; i < kPre; ++i)
            if (valid && part + 8 * i < nwords) scan_word(pre[i], mx, mn, nan);
        if (valid) {
            for (int w = part + 8 * kPre; w < nwords; w += 8) scan_word(__ldg(src + w), mx, mn, nan);
        }
        a_row_rule(mx, mn, nan, valid, part, r, s_ref, s_nan, s_cta);
    }
    if (bi >= 0 && bi < TILE_N) {
        bool nan = false;
        if (brow) b_row_rule(hw, s_cta, nan);
        s_nan[TILE_M + bi] = nan;
    }
    __syncthreads();
}

// One tile (tm, tn) over the CTA's chunks cr of its K: the start-up, the exact path or the main loops, the
// warps' partials summed, and the stores: to D, or (p.splits > 1) to the partial slab store_value picks in
// p.ws, the tile's last CTA summing p.splits slabs (splitk_finish). probe_*: DEC_PROBE_TS's entry timestamps.
__device__ __forceinline__ void dec_tile(const F4gemmSm90Args& args, const Problem& p,
                                         const SplitGeometry& geo, unsigned tm, unsigned tn, int2 cr,
                                         uint8_t* smem, uint64_t probe_g0, uint64_t probe_c0) {
    uint64_t probe_c[5] = {0, 0, 0, 0, 0};                    // DEC_PROBE_TS
    float* red = reinterpret_cast<float*>(smem);              // [kWarps][TILE_M][kRedPitch] fp32 partials
    int* s_ref = reinterpret_cast<int*>(smem + kUnionBytes);  // [TILE_M] A rows ([TILE_N] B rows: unused)
    int* s_nan = s_ref + TILE_M + TILE_N;
    int* s_cta = s_nan + TILE_M + TILE_N;  // [0] wide, [1] max B exponent, [2] min B exponent, [3] last split

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int m0 = tm * TILE_M, n0 = tn * TILE_N;
    const auto finish_split = [&]() {  // DEC_SPLIT 1: the tile's last CTA sums the splits' partials in order
        if constexpr (kSplit) {
            if (p.splits > 1)
                splitk_finish<TILE_M, TILE_N, kThreads, false, kSK>(
                    args, tm, tn, tid, &s_cta[3], [] { __syncthreads(); }, kSK ? p.splits : 0);
        }
    };

    if constexpr (kEarly) {
        early_startup(p, m0, n0, cr, warp, lane, tid, s_ref, s_nan, s_cta, smem);
    } else {
        init_cta_words(tid, s_cta);
        __syncthreads();
        if (kProbeTs && threadIdx.x == 0) probe_c[0] = clock64();  // the start-up's first barrier
        // A rows: scale scan over the whole K (8 lanes per row, loads unrolled so that a few memory latencies
        // cover it), a reference each. B rows: one summary word each from their group's frag16s header
        // (largest and smallest exponent, NaN presence), no scan (docs/PERF.md entry 17). B rows add to the
        // CTA's exponent range; a row of either spanning more than 26 binades (wide) sends the CTA to the
        // exact path. Rows past M / N are padding and never stored: skipped. B rows: one thread each, row i
        // (the last TILE_N threads beside the scan, else the first TILE_N after it)
        const auto b_row = [&](const int i) {
            bool nan = false;
            if (n0 + i < p.N) {
                const uint32_t w = *reinterpret_cast<const uint32_t*>(
                    p.B + (long)(n0 / 16 + i / 16) * (long)f4gemm::frag16s_group_bytes(p.K) + 4 * (i % 16));
                b_row_rule(w, s_cta, nan);
            }
            s_nan[TILE_M + i] = nan;
        };
        if (warp < TILE_M / 4) {  // warp-uniform: 4 A rows per warp
            const int sub = lane / 8, part = lane % 8, r = warp * 4 + sub;
            const bool valid = m0 + r < p.M;
            const uint2* src = reinterpret_cast<const uint2*>(valid ? p.sA + (long)(m0 + r) * p.ldsa : p.sA);
            uint32_t mx = 0u, mn = 0xFFFFFFFFu, nan = 0u;
            const int nwords = p.K / 256;  // u64 scale words per row
            if (valid) {
#pragma unroll kScanUnroll
                for (int w = part; w < nwords; w += 8) scan_word(__ldg(src + w), mx, mn, nan);
            }
            a_row_rule(mx, mn, nan, valid, part, r, s_ref, s_nan, s_cta);
        } else if (kStartApart && tid >= kThreads - TILE_N) {
            b_row(tid - (kThreads - TILE_N));
        }
        if constexpr (!kStartApart) {
            if (tid < TILE_N) b_row(tid);
        }
        __syncthreads();
    }
    if (s_cta[0] || s_cta[1] - s_cta[2] > kBSpan) {
        if constexpr (kEarly) {  // the primed slots' copies land before exact_tile reuses the ring
            ring_part<Part::Drain>(p, m0, n0, cr, warp, lane, s_ref, smem);
            __syncthreads();
        }
        exact_tile<kThreads, kExactBFrag16S>(p, geo, m0, n0, TILE_M, TILE_N, kSplit ? 4 * cr.x : 0,
                                             kSplit ? 4 * cr.y : p.K / 32, smem, tid);
        finish_split();
        return;
    }
    if (kProbeTs && threadIdx.x == 0) probe_c[1] = clock64();  // the start-up done (after its barrier)

    const int refB = s_cta[1] - kWindow;  // 2^(e - refB) in [2^-87, 2^13]
    const uint32_t kB = f4gemm::dec_scale_bias(refB);

    const int g = lane >> 2;
    int refA[kMt8];
#pragma unroll
    for (int h = 0; h < kMt8; ++h) refA[h] = s_ref[8 * h + g];
    float acc[kRw][kMt8][4];
#pragma unroll
    for (int rg = 0; rg < kRw; ++rg)
#pragma unroll
        for (int h = 0; h < kMt8; ++h)
#pragma unroll
            for (int i = 0; i < 4; ++i) acc[rg][h][i] = 0.0f;

    main_loops<kWG, kEarly ? Part::Run : Part::All>(p, m0, n0, cr, warp, lane, refA, s_ref, kB, acc, smem);

    pdl_trigger();    // the main loop is done: the next kernel on the stream may be scheduled
    __syncthreads();  // the partials below overwrite the ring of other warps
    if (kProbeTs && threadIdx.x == 0) probe_c[2] = clock64();  // every warp's main loop done
    // Partials -> shared memory: acc[r][h][i] is output (m = 8h + 2t + i%2, n = 16rg + g + 8(i/2)) with
    // rg = r (DEC_WG 0) or the warp's r-th group q + 4r (DEC_WG 1: the other rows of its slice stay
    // unwritten).
    const int t = lane & 3;
    float* mine = red + warp * TILE_M * kRedPitch;
#pragma unroll
    for (int r = 0; r < kRw; ++r) {
        const int rg = kWG ? warp % 4 + 4 * r : r;
#pragma unroll
        for (int h = 0; h < kMt8; ++h)
#pragma unroll
            for (int i = 0; i < 4; ++i)
                mine[(8 * h + 2 * t + (i % 2)) * kRedPitch + 16 * rg + g + 8 * (i / 2)] = acc[r][h][i];
    }
    __syncthreads();
    if (kProbeTs && threadIdx.x == 0) probe_c[3] = clock64();  // the partials in shared memory
    // Sum over warps in order; v = sum * 2^(refA - 127) * 2^(refB - 127 + 14) (bit-plane B is e2m1 * 2^-14).
    const float qnan = __int_as_float(0x7FC00000);
    for (int idx = tid; idx < TILE_M * TILE_N; idx += kThreads) {
        const int m = idx / TILE_N, n = idx % TILE_N;
        if (m0 + m >= p.M || n0 + n >= p.N) continue;
        float s = 0.0f;
        if constexpr (kWG) {  // the warps that own row n: warp (n / 16) % 4 of each warpgroup, in order
#pragma unroll
            for (int w = (n / 16) % 4; w < kWarps; w += 4) s += red[(w * TILE_M + m) * kRedPitch + n];
        } else {
#pragma unroll
            for (int w = 0; w < kWarps; ++w) s += red[(w * TILE_M + m) * kRedPitch + n];
        }
        float v = ldexpf(s, s_ref[m] + refB - 254 + 14);
        if (s_nan[m] || s_nan[TILE_M + n]) v = qnan;
        store_value(p, geo, m0 + m, n0 + n, v);
    }
    finish_split();
    if constexpr (kProbeTs) {  // after the tile's own stores (the barrier orders them before these)
        __syncthreads();
        if (threadIdx.x == 0) {
            probe_c[4] = clock64();
            const uint64_t g1 = global_timer_ns();
            uint32_t w[10] = {uint32_t(probe_g0), uint32_t(probe_g0 >> 32), uint32_t(g1), uint32_t(g1 >> 32),
                              sm_id()};
            for (int q = 0; q < 5; ++q)  // cycles from entry; 0: a point this build does not pass
                w[5 + q] = probe_c[q] ? uint32_t(probe_c[q] - probe_c0) : 0u;
            uint16_t* d = reinterpret_cast<uint16_t*>(p.D) + (size_t)m0 * p.ldd + n0;
            for (int i = 0; i < 40; ++i)  // byte i as a bf16 integer: the high half of its fp32
                d[i] = uint16_t(__float_as_uint(float((w[i / 4] >> (8 * (i % 4))) & 0xFFu)) >> 16);
        }
    }
}

// DEC_SK 1 in S = num_splits splits: this CTA's run of the tiles' U chunks. c: its index among the G
// working CTAs (-1: not needed, it leaves), u0 / ue: its first chunk and its end. The launch's index and
// extent and the SM count are read with volatile asm, so that a call inside the run's loop is recomputed
// there (uniform values from special registers and the arguments) rather than kept live across the tile.
struct SkRun {
    int c, u0, ue, g;
};
__device__ __forceinline__ SkRun sk_run(const F4gemmSm90Args& args) {
    uint32_t nsm, cx, cy, cz, nx, ny, nz;
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(nsm));
    asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(cy));
    asm volatile("mov.u32 %0, %%ctaid.z;" : "=r"(cz));
    asm volatile("mov.u32 %0, %%nctaid.x;" : "=r"(nx));
    asm volatile("mov.u32 %0, %%nctaid.y;" : "=r"(ny));
    asm volatile("mov.u32 %0, %%nctaid.z;" : "=r"(nz));
    const int M = (int)args.base.M, N = (int)args.base.N, S = (int)args.num_splits;
    const int tiles = (M + TILE_M - 1) / TILE_M * ((N + TILE_N - 1) / TILE_N), nch = (int)args.base.K / 128;
    const int T = (int)(nx * ny * nz);
    const long U = (long)tiles * nch;
    // S = 1: every CTA its own tile (T = the tiles); else runs of at least ceil(nch / (S - 1)) chunks
    const int G = S < 2 ? T : min(min((int)nsm * kCtasPerSm, T), (int)(U / ((nch + S - 2) / (S - 1))));
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(cx));
    const int lin = (int)(cx + nx * (cy + ny * cz));
    const int c0 = F4GEMM_DEC_SK_LAST ? 0 : T - G;  // the working CTAs: [c0, c0 + G) of the launch
    SkRun r;
    r.c = (lin < c0 || lin >= c0 + G) ? -1 : lin - c0;
    r.u0 = (int)((long)r.c * U / G);
    r.ue = (int)((long)(r.c + 1) * U / G);
    r.g = G;
    return r;
}

}  // namespace

// The CTA's warps split its K among themselves; DEC_SPLIT 1 also splits K across CTAs (gridDim.z). B from W.
F4GEMM_EXPORT_ROW(F4GEMM_KNL_NAME, kSmemBytes, kThreads, TILE_M, TILE_N, kSplit ? 1 : 0, F4GEMM_ABI_SM90V1,
                  F4GEMM_B_FRAG16S, F4GEMM_ACCUM_EXACT, 0, 0);

extern "C" __global__ void __launch_bounds__(kThreads, F4GEMM_MIN_BLOCKS)
    F4GEMM_KNL_NAME(const __grid_constant__ F4gemmSm90Args args) {
#if F4GEMM_SM90A_ENABLED
    if constexpr (kSK) {
        // Stream-K (DEC_SK above): CTA c of the G working ones takes chunks [c U / G, (c + 1) U / G) of the
        // tiles' U. Every run is at least ceil(nch / (S - 1)) long, so a tile meets at most S of them (the
        // slabs the launch has). Decided from the arguments alone, before pdl_wait, so that the CTAs the runs
        // do not need leave without waiting for the kernel ahead on the stream. S = 1 takes this path too
        // (each CTA its own tile), so that the kernel holds one copy of the tile.
        const SkRun r0 = sk_run(args);
        if (r0.c < 0) return;
        pdl_wait();
        extern __shared__ __align__(16) uint8_t smem[];
        // Only the next chunk u stays in a register across a tile; the rest is recomputed per tile from
        // the arguments and the special registers (sk_run reads them with volatile asm, so they are not
        // hoisted out of the loop): kept live at the 168-register cap, the run's state made the main loop
        // spill (session 39, call C), and read back from shared memory it was no longer warp-uniform to
        // the compiler (call E: 2.4x the R2UR of the plain path).
        for (int next = r0.u0;;) {
            const int u = next;
            const SkRun r = sk_run(args);
            if (u >= r.ue) break;
            const Problem q = load_problem(args);
            const SplitGeometry qg = split_geometry(q, TILE_M, TILE_N);
            const int qn = q.K / 128;
            const long qu = (long)qg.tiles_m * qg.tiles_n * qn;
            // the run holding chunk x
            const auto cta_of = [&](long x) { return ((x + 1) * r.g - 1) / qu; };
            const int t = u / qn, cs = u - t * qn, ce = min(qn, cs + (r.ue - u));
            const long first = cta_of((long)t * qn), last = cta_of((long)t * qn + qn - 1);
            next = u + (ce - cs);  // the one value live across the tile
            // The segment's Problem: its tile's segment count as the splits (1: D directly), and the
            // partials base moved so that store_value's slab (blockIdx.z) lands on the segment's index
            // (integer arithmetic: the base alone may lie outside the workspace; every store does not)
            Problem pt = q;
            pt.splits = (int)(last - first + 1);
            pt.ws = reinterpret_cast<float*>(reinterpret_cast<uintptr_t>(q.ws) +
                                             ((r.c - first) - (long)blockIdx.z) * (long)qg.Mr * qg.Nr * 4);
            dec_tile(args, pt, qg, unsigned(t / qg.tiles_n), unsigned(t % qg.tiles_n), make_int2(cs, ce),
                     smem, 0, 0);
            // The next tile's bulk copies (async proxy) overwrite what this tile's threads wrote (the
            // partials, the images): each thread orders its writes before them, then the CTA meets.
            fence_proxy_async();
            __syncthreads();
        }
        return;
    }
    pdl_wait();
    uint64_t probe_g0 = 0, probe_c0 = 0;  // DEC_PROBE_TS
    if (kProbeTs && threadIdx.x == 0) {
        probe_g0 = global_timer_ns();
        probe_c0 = clock64();
    }
    extern __shared__ __align__(16) uint8_t smem[];
    const Problem p = load_problem(args);
    const SplitGeometry geo = split_geometry(p, TILE_M, TILE_N);
    dec_tile(args, p, geo, blockIdx.y, blockIdx.x, cta_chunks(p), smem, probe_g0, probe_c0);
#else
    F4GEMM_TRAP_WRONG_ARCH();
#endif
}
