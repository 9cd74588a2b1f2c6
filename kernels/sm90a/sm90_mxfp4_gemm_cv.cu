// sm_90a MXFP4 x MXFP4 -> bf16 GEMM with converter warpgroups (abi sm90pa1), accumulation mode promoted or
// (EXACT 1) exact:
//
//   <name>_prepass  A once into its e5m2 image (sm90_a_prepass.cuh, the pab_* pre-pass)
//   <name>          WG0: one thread bulk-copies, per stage (128 or 256 K), the stage of A's image and the W
//                   chunks of the tile's weight rows into a ring slot. Converter warpgroups turn the W chunks
//                   into the SW128 K-major e5m2 image of B with each block's scale folded (cvt8_bitplane, one
//                   LUT per row and 32-K block). Consumer warpgroups issue SS wgmmas on the two images: one
//                   chain of four k32 wgmmas per 128 K into a fresh accumulator, promoted into fp32 (EXACT
//                   0); or (EXACT 1) each k32 wgmma into a fresh accumulator, added into fp32 before the next
//                   block's result: the exact mode of pp_* (both images fold each block's scale relative
//                   to the row's reference, so a k32 block sum is exact, docs/KERNELS_SM90.md "Precision
//                   argument"), on a tile that W's 80-row groups let fill 128 SMs at N = 10240.
//
// Why: in the register-fragment kernels (ws_swap_*, pab_*) the consumers convert W themselves, 8 elements per
// thread and row per 32-K block, so the LUT of every (row, block) is built four times and the conversion
// shares the issue slots with the wgmma issue and the promotion: ~570 warp instructions per k32 step and SM
// at 64 x 16384^2, half of them the conversion (docs/PERF.md entry 33). Here a lane converts one whole (row,
// block) (one LUT per 32 elements) in warps that issue nothing else. Design and the estimate it tests:
// docs/KERNELS_SM90.md ("Where the time goes", open item 2); workspace and launches: docs/ABI_SM90.md.
#include "f4gemm/frag16s.h"
#include "f4gemm/weight.h"
#include "sm90_a_prepass.cuh"
#include "sm90_common.cuh"
#include "sm90_ptx.cuh"
#include "sm90_wgmma_e5m2.cuh"

// ---------------------------------------------------------------------------------------------
// Config (one cubin per config, from -D macros; kernels/sm90a/kernels.json, family cv)
//   BLOCK_M   activation rows per CTA = 64 per consumer warpgroup (wgmma M)
//   BLOCK_N   weight rows per CTA = wgmma N (64 or 128)
//   K_STAGE   K per stage (128 or 256: one or two 128-K atoms of both images; 256 halves the stage hand-offs)
//   STAGES    ring depth (K_STAGE of K per stage)
//   CONV_WG   converter warpgroups
//   REG_CONV  setmaxnreg of a converter warpgroup; the consumers get the rest of the launch pool
//   SPAN      128-K chains per straight-line block of the consumer loop (2: chain q+1 issued before
//             chain q's promotion; at K_STAGE 256 a stage's two chains)
// ---------------------------------------------------------------------------------------------
#ifndef F4GEMM_KNL_NAME
#define F4GEMM_KNL_NAME f4gemm_sm90a_cv_64x128_p
#endif
#ifndef F4GEMM_BLOCK_M
#define F4GEMM_BLOCK_M 64
#endif
#ifndef F4GEMM_BLOCK_N
#define F4GEMM_BLOCK_N 128
#endif
#ifndef F4GEMM_K_STAGE
#define F4GEMM_K_STAGE 128
#endif
#ifndef F4GEMM_STAGES
#define F4GEMM_STAGES 6
#endif
#ifndef F4GEMM_CONV_WG
#define F4GEMM_CONV_WG 2
#endif
#ifndef F4GEMM_REG_CONV
#define F4GEMM_REG_CONV 128
#endif
#ifndef F4GEMM_SPAN
#define F4GEMM_SPAN 2
#endif
//   CONV_SPAN stages a converter warp converts per iteration (1 or 2: twice the independent work per warp)
//   CONS_K    consumer warpgroups per 64 activation rows, taking the stages in turn (2: while one drains its
//             chain and promotes, the other's wgmmas run; their accumulators are summed in the epilogue)
#ifndef F4GEMM_CONV_SPAN
#define F4GEMM_CONV_SPAN 2
#endif
#ifndef F4GEMM_CONS_K
#define F4GEMM_CONS_K 1
#endif
//   EXACT     0: accumulation mode promoted (a chain of four k32 wgmmas per 128-K stage, one FADD per
//             output and stage); 1: mode exact (one FADD per output and k32 wgmma; per straight-line block
//             of SPAN stages, wgmma q + 1 is issued before the FADDs of step q, as pp_*'s exact loop)
#ifndef F4GEMM_EXACT
#define F4GEMM_EXACT 0
#endif
// Lab knob, never in kernels.json (wrong results by design), bit flags: 1 copies A's image only into the
// first round of slots, 8 W's chunks likewise, 2 zeroes the LUT (the conversion still runs), 16 skips the
// converters' shared-memory loads, stores and fence too, 32 only their fence, 64 only their image stores, 4
// skips the wgmmas: what each part of the time is (docs/PERF.md entry 36; 29 = every role only passes the
// barriers). scripts/cv_probes.py builds them.
#ifndef F4GEMM_CV_PROBE
#define F4GEMM_CV_PROBE 0
#endif

namespace {
using namespace f4gemm::sm90;

constexpr int BLOCK_M = F4GEMM_BLOCK_M;
constexpr int BLOCK_N = F4GEMM_BLOCK_N;
constexpr int kStages = F4GEMM_STAGES;
constexpr int kConvWG = F4GEMM_CONV_WG;
constexpr int kSpan = F4GEMM_SPAN;
constexpr int kConvSpan = F4GEMM_CONV_SPAN;
constexpr int kKStage = F4GEMM_K_STAGE;  // K per stage
constexpr int kSub = kKStage / 128;  // 128-K atoms per stage: one 128-byte swizzle atom of e5m2, one W chunk
constexpr int kSteps = 128 / 32;     // k32 wgmmas per 128-K atom (one chain)
constexpr int kConsK = F4GEMM_CONS_K;
constexpr bool kExact = F4GEMM_EXACT != 0;
static_assert(F4GEMM_EXACT == 0 || F4GEMM_EXACT == 1, "EXACT: 0 or 1");
static_assert(kKStage == 128 || kKStage == 256, "K_STAGE: one or two 128-K atoms");
static_assert(!kExact || F4GEMM_CONS_K == 1, "EXACT 1: one K turn");
constexpr int kFrags = kExact ? 2 : F4GEMM_SPAN;  // fresh accumulators a consumer thread holds
constexpr int kRowWGs = BLOCK_M / 64;             // consumer warpgroups per K turn (64 activation rows each)
constexpr int kConsumers = kRowWGs * kConsK;
constexpr int kConvWarps = 4 * kConvWG;
constexpr int kConvThreads = 128 * kConvWG;
constexpr int kConsumerThreads = 128 * kConsumers;
constexpr int kWarpGroups = 1 + kConvWG + kConsumers;
constexpr int kThreads = 128 * kWarpGroups;
constexpr int kAccRegs = BLOCK_N / 2;
constexpr int kGroups = BLOCK_N / 16;    // 16-row groups of W per tile (one 1088-byte chunk each per stage)
constexpr int kWarpTasks = BLOCK_N / 8;  // per stage: (group, half) pairs, 8 rows x 4 blocks = 32 lanes
// Even: every converter warp has kTasks tasks per stage. Otherwise (three converter warpgroups, 12 warps for
// 16 tasks) task T = s * kWarpTasks + q of the stage sequence goes to warp T % kConvWarps: one or two per
// stage, kWarpTasks / kConvWarps on average.
constexpr bool kEven = kWarpTasks % kConvWarps == 0;
constexpr int kTasks = (kWarpTasks + kConvWarps - 1) / kConvWarps;  // per converter warp and stage, at most

constexpr int kLaunchRegs = (65536 / kThreads) / 8 * 8 > 255 ? 255 : (65536 / kThreads) / 8 * 8;
constexpr int kRegWG0 = 24;
constexpr int kRegConv = F4GEMM_REG_CONV;
constexpr int kRegPool = kWarpGroups * kLaunchRegs - kRegWG0 - kConvWG * kRegConv;
constexpr int kRegConsumer = kRegPool / kConsumers / 8 * 8 > 240 ? 240 : kRegPool / kConsumers / 8 * 8;

static_assert(BLOCK_M % 64 == 0 && kConsumers >= 1 && kConsumers <= 2, "64 activation rows per consumer WG");
static_assert(kConsK == 1 || (kConsK == 2 && F4GEMM_SPAN == 1 && kSub == 1),
              "K turns of one chain each (K % 256: stage count even)");
static_assert(BLOCK_N == 64 || BLOCK_N == 80 || BLOCK_N == 128,
              "wgmma N; 256 would need 128 accumulator + 128 chain registers");
static_assert(256 % BLOCK_M == 0, "tiles divide the host's 256-row padding of A");
// W's rows are padded to F4GEMM_W_ROW_PAD: a tile width that does not divide it (80: N = 10240 in 128 tiles)
// leaves the last tile groups past W's end, which are neither copied nor converted (zero image rows, outputs
// past N never stored).
constexpr bool kWholeGroups = (int)F4GEMM_W_ROW_PAD % BLOCK_N == 0;
static_assert(kWholeGroups || !kEven, "the even converter path converts every group");
static_assert(kTasks >= 1 && (kEven || kConvSpan == 1),
              "uneven task counts: one stage per converter iteration");
// The consumers count 128-K atoms (K % 256 == 0 makes their number even, not more); the converters stages.
static_assert(kSpan == 1 || kSpan == 2, "K % 256 == 0 makes the atom count even, not more");
static_assert(kStages * kSub >= 2 * kSpan && kStages >= 2, "a ring");
static_assert((kConvSpan == 1 || (kConvSpan == 2 && kSub == 1)) && kStages >= 2 * kConvSpan,
              "K % 256 == 0: pairs of 128-K stages");
static_assert(kRegWG0 % 8 == 0 && kRegConv % 8 == 0 && kRegConsumer % 8 == 0,
              "setmaxnreg takes multiples of 8");
static_assert(kRegWG0 + kConvWG * kRegConv + kConsumers * kRegConsumer <= kWarpGroups * kLaunchRegs,
              "setmaxnreg budget exceeds the registers allocated at launch: inc would never return");
static_assert(kAccRegs * (1 + kFrags) + 24 <= kRegConsumer, "accumulators and chain fragments fit");

// Shared memory (offsets from a 1024-byte aligned base), per stage: the B image (kSub, BLOCK_N, 128) e5m2
// SW128 K-major, the A image (kSub, BLOCK_M, 128) as the pre-pass wrote it (its 128-K slabs are consecutive),
// the W chunks (kGroups, kSub) x 1088 bytes (bit-plane words, then the 16 rows' 4 scale bytes; a group's
// chunks are consecutive in W too); then the mbarriers and the tile's row words.
constexpr int kBAtomBytes = BLOCK_N * 128;  // one 128-K atom of the B image
constexpr int kAAtomBytes = BLOCK_M * 128;  // ... of the A image
constexpr int kBImgBytes = kSub * kBAtomBytes;
constexpr int kAImgBytes = kSub * kAAtomBytes;
constexpr int kGroupRawBytes = kSub * (int)F4GEMM_FRAG16S_CHUNK;  // a group's chunks of one stage
constexpr int kRawBytes = kGroups * kGroupRawBytes;
constexpr int kOffAImg = kBImgBytes;
constexpr int kOffRaw = kBImgBytes + kAImgBytes;
constexpr int kStageBytes = kOffRaw + (kRawBytes + 1023) / 1024 * 1024;
constexpr int kOffBar = kStages * kStageBytes;  // full, conv, empty: kStages each
constexpr int kOffRows = kOffBar + 3 * kStages * 8;
constexpr int kSmemBytes = kOffRows + 4 * (BLOCK_M + BLOCK_N) + 1024;
static_assert(kBAtomBytes % 1024 == 0 && kAAtomBytes % 1024 == 0, "SW128 atoms need 1024-byte alignment");
static_assert(kOffBar >= kExactSmemBytes, "the exact fallback reuses the ring as staging");
static_assert(kSmemBytes <= 227 * 1024, "sm_90 dynamic shared memory limit");

using WgmmaSS = WgmmaE5m2SS<BLOCK_N>;
using WgmmaSSAcc = WgmmaE5m2SSAcc<BLOCK_N>;
static_assert(WgmmaSS::kRegs == kAccRegs, "accumulator fragment size");

// The chain of 128-K atom v (stage v / kSub): four k32 wgmmas into f (the first overwrites it), one commit
// group; the stage's first atom waits for its images. A function, not a lambda, so that it is always inlined
// (as a lambda called twice ptxas kept both accumulators in local memory and serialised the wgmmas, C7514:
// sm90_mxfp4_gemm_pp.cu).
__device__ __forceinline__ void chain(float (&f)[kAccRegs], int v, uint8_t* smem, uint64_t* bar_full,
                                      uint64_t* bar_conv, int c) {
    const int s = v / kSub, u = v % kSub, slot = s % kStages;
    if (u == 0) {
        const uint32_t par = (s / kStages) & 1;
        mbar_wait(&bar_full[slot], par);  // A's image landed (the converters saw W's chunks land)
        mbar_wait(&bar_conv[slot], par);  // B's image written
    }
    wgmma_fence();
    const uint32_t base = smem_u32(smem + slot * kStageBytes);
#pragma unroll
    for (int j = 0; j < kSteps; ++j) {
        const uint64_t da = make_desc_sw128(base + kOffAImg + u * kAAtomBytes + c * (64 * 128) + j * 32);
        const uint64_t db = make_desc_sw128(base + u * kBAtomBytes + j * 32);
        if (j == 0)
            WgmmaSS::mma(f, da, db);
        else
            WgmmaSSAcc::mma(f, da, db);
    }
    wgmma_commit();
}

// The slot of 128-K atom v, released by a consumer thread after the stage's last atom.
__device__ __forceinline__ void release(uint64_t* bar_empty, int v) {
    if (v % kSub == kSub - 1) mbar_arrive(&bar_empty[(v / kSub) % kStages]);
}

// EXACT 1: k32 step j of 128-K atom v into f (overwritten), one commit group; the stage's first step waits
// for its images.
__device__ __forceinline__ void step(float (&f)[kAccRegs], int v, int j, uint8_t* smem, uint64_t* bar_full,
                                     uint64_t* bar_conv, int c) {
    const int s = v / kSub, u = v % kSub, slot = s % kStages;
    if (j == 0 && u == 0) {
        const uint32_t par = (s / kStages) & 1;
        mbar_wait(&bar_full[slot], par);
        mbar_wait(&bar_conv[slot], par);
    }
    wgmma_fence();
    const uint32_t base = smem_u32(smem + slot * kStageBytes);
    WgmmaSS::mma(f, make_desc_sw128(base + kOffAImg + u * kAAtomBytes + c * (64 * 128) + j * 32),
                 make_desc_sw128(base + u * kBAtomBytes + j * 32));
    wgmma_commit();
}
}  // namespace

// No split-K (the A image covers the whole K, sm90pa1); B from W.
F4GEMM_EXPORT_ROW(F4GEMM_KNL_NAME, kSmemBytes, kThreads, BLOCK_M, BLOCK_N, 0, F4GEMM_ABI_SM90PA1,
                  F4GEMM_B_FRAG16S, kExact ? F4GEMM_ACCUM_EXACT : F4GEMM_ACCUM_PROMOTED, kExact ? 0 : 128, 1);

F4GEMM_A_PREPASS_KERNEL(BLOCK_M, BLOCK_N)

// =============================================================================================
// GEMM: grid (tiles_n, tiles_m), kThreads threads, kSmemBytes of dynamic shared memory; after the pre-pass
// of the same arguments (stream order).
// =============================================================================================
extern "C" __global__ void __launch_bounds__(kThreads, 1)
    F4GEMM_KNL_NAME(const __grid_constant__ F4gemmSm90Args args) {
#if F4GEMM_SM90A_ENABLED
    pdl_wait();
    extern __shared__ uint8_t smem_dyn[];
    uint8_t* smem = smem_dyn + ((1024u - (smem_u32(smem_dyn) & 1023u)) & 1023u);
    uint64_t* bar_full =
        reinterpret_cast<uint64_t*>(smem + kOffBar);                  // WG0 -> all: A image + W chunks landed
    uint64_t* bar_conv = bar_full + kStages;                          // converters -> consumers: B image
    uint64_t* bar_empty = bar_conv + kStages;                         // consumers -> WG0: slot free
    uint32_t* s_rows = reinterpret_cast<uint32_t*>(smem + kOffRows);  // [BLOCK_M] A rows, [BLOCK_N] W rows

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const Problem p = load_problem(args);
    const SplitGeometry geo = split_geometry(p, BLOCK_M, BLOCK_N);
    const int tm = blockIdx.y, tn = blockIdx.x;
    const int m0 = tm * BLOCK_M, n0 = tn * BLOCK_N;
    const int nks = p.K / kKStage;  // stages (W pads K to 256)
    const int nka = p.K / 128;      // 128-K atoms (even)
    const uint8_t* ws = reinterpret_cast<const uint8_t*>(args.ptr_workspace);
    const uint32_t* rows_a = reinterpret_cast<const uint32_t*>(ws + (size_t)geo.Mr * p.K);
    const size_t grp_bytes = f4gemm::frag16s_group_bytes(p.K);
    const uint8_t* w_tile = p.B + (size_t)(n0 / 16) * grp_bytes;  // the tile's first 16-row group of W
    const int groups = w_tile_groups<BLOCK_N>(p.N, n0);           // the tile's 16-row groups that W has

    if (tid == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbar_init(&bar_full[s], 1);
            mbar_init(&bar_conv[s], kConvThreads);
            mbar_init(&bar_empty[s], kConsumerThreads / kConsK);  // one K turn's consumers release a stage
        }
        fence_barrier_init();
    }
    // Row words: A's from the pre-pass, W's from the group headers (the summary over the row's whole K,
    // finish_row's rule; rows N .. Np-1 exist with zero data and read as "no exponent").
    int wide = 0;
    for (int i = tid; i < BLOCK_M + BLOCK_N; i += kThreads) {
        uint32_t v;
        if (i < BLOCK_M) {
            v = rows_a[m0 + i];
        } else {
            const int r = i - BLOCK_M;
            v = row_word(w_row_ref(
                r / 16 < groups
                    ? __ldg(reinterpret_cast<const uint32_t*>(w_tile + (size_t)(r / 16) * grp_bytes) + r % 16)
                    : 0u));
        }
        s_rows[i] = v;
        wide |= (v & kRowWide) != 0;
    }
    // Exact path for tiles with a row whose scales do not fold into e5m2 (> 26 binades): A plain, B from W.
    if (__syncthreads_or(wide)) {
        exact_tile<kThreads, kExactBFrag16S>(p, geo, m0, n0, BLOCK_M, BLOCK_N, 0, p.K / 32, smem, tid);
        return;
    }

    if (warp < 4) {
        // WG0: one thread, per stage one bulk copy of A's image and one per 16-row group of W.
        setmaxnreg_dec<kRegWG0>();
        if (tid == 0) {
            const uint8_t* a_src = ws + (size_t)tm * BLOCK_M * p.K;
            for (int s = 0; s < nks; ++s) {
                const int slot = s % kStages;
                if (s >= kStages) mbar_wait(&bar_empty[slot], ((s / kStages) - 1) & 1);
                uint8_t* dst = smem + slot * kStageBytes;
                const bool a = !(F4GEMM_CV_PROBE & 1) || s < kStages,
                           w = !(F4GEMM_CV_PROBE & 8) || s < kStages;
                mbar_arrive_expect_tx(&bar_full[slot],
                                      (a ? kAImgBytes : 0) + (w ? groups * kGroupRawBytes : 0));
                if (a)
                    bulk_copy_g2s(dst + kOffAImg, a_src + (size_t)s * kAImgBytes, kAImgBytes,
                                  &bar_full[slot]);
#pragma unroll
                for (int G = 0; G < kGroups; ++G)
                    if (w && G < groups)
                        bulk_copy_g2s(
                            dst + kOffRaw + G * kGroupRawBytes,
                            w_tile + G * grp_bytes + F4GEMM_FRAG16S_HEAD + (size_t)s * kGroupRawBytes,
                            kGroupRawBytes, &bar_full[slot]);
            }
        }
        return;
    }

    if (warp < 4 + kConvWarps) {
        // Converters. Warp task q (q = cw, cw + kConvWarps, ..) is half h = q % 2 of group G = q / 2: lane (g
        // = lane % 8, j = lane / 8) converts block j of row r = 16 G + 8 h + g. Its four bit-plane words sit
        // at h * 512 + j * 128 + 16 g of the group's chunk (frag16s: word h*128 + j*32 + 4g + t), so a warp
        // reads 512 contiguous bytes; its scale is byte 1024 + 4 (8h + g) + j. cvt8_bitplane of word t gives
        // the bytes of elements 8t..8t+3 (lo) and 8t+4..8t+7 (hi), stored as A's pre-pass stores a block (lo
        // words in 16-byte chunk 2j, hi words in 2j + 1, swizzled by r % 8 = g): both images share the k
        // order.
        if constexpr (kRegConv < kLaunchRegs) setmaxnreg_dec<kRegConv>();
        if constexpr (kRegConv > kLaunchRegs) setmaxnreg_inc<kRegConv>();
        const int cw = warp - 4, g = lane % 8, j = lane / 8;
        uint32_t sink = 0;  // F4GEMM_CV_PROBE & 64 only
        if constexpr (!kEven) {
#pragma unroll 1
            for (int s = 0; s < nks; ++s) {
                const int slot = s % kStages;
                mbar_wait(&bar_full[slot], (s / kStages) & 1);
                uint8_t* st = smem + slot * kStageBytes;
#pragma unroll
                for (int u = 0; u < kSub; ++u) {  // the stage's 128-K atoms, tasks dealt per atom
                    const int q0 =
                        ((cw - (s * kSub + u) * kWarpTasks) % kConvWarps + kConvWarps) % kConvWarps;
#pragma unroll
                    for (int i = 0; i < kTasks; ++i) {
                        const int q = q0 + kConvWarps * i;  // warp-uniform
                        if (q < kWarpTasks) {
                            const int G = q / 2, h = q % 2, r = 16 * G + 8 * h + g;
                            uint4 lo = make_uint4(0u, 0u, 0u, 0u), hi = lo;  // rows past W's end: zeros
                            if (kWholeGroups || G < groups) {                // warp-uniform
                                const uint8_t* chunk =
                                    st + kOffRaw + G * kGroupRawBytes + u * (int)F4GEMM_FRAG16S_CHUNK;
                                const uint4 x =
                                    *reinterpret_cast<const uint4*>(chunk + h * 512 + j * 128 + 16 * g);
                                const uint32_t e = chunk[1024 + 4 * (8 * h + g) + j];
                                uint32_t lut_lo, lut_hi;
                                make_lut((int)e - row_ref(s_rows[BLOCK_M + r]), lut_lo, lut_hi);
                                if (e == 0xFFu || (F4GEMM_CV_PROBE & 2)) lut_lo = lut_hi = 0u;
                                cvt32_bitplane(x, lut_lo, lut_hi, lo, hi);
                            }
                            store_block_sw128(st + u * kBAtomBytes + r * 128, j, g, lo, hi);
                        }
                    }
                }
                fence_proxy_async();  // generic-proxy stores -> wgmma (async proxy) reads
                mbar_arrive(&bar_conv[slot]);
            }
        } else {
            int ref[kTasks], raw_off[kTasks], sc_off[kTasks], img_off[kTasks];
#pragma unroll
            for (int i = 0; i < kTasks; ++i) {
                const int q = cw + kConvWarps * i, G = q / 2, h = q % 2, r = 16 * G + 8 * h + g;
                ref[i] = row_ref(s_rows[BLOCK_M + r]);
                raw_off[i] = kOffRaw + G * kGroupRawBytes + h * 512 + j * 128 + 16 * g;
                sc_off[i] = kOffRaw + G * kGroupRawBytes + 1024 + 4 * (8 * h + g) + j;
                img_off[i] = r * 128;
            }
#pragma unroll 1
            for (int s = 0; s < nks; s += kConvSpan) {
                // Entry q of x, e: 128-K atom q % kSub of stage s + q / kSub (kConvSpan x kSub atoms).
                constexpr int kAtoms = kConvSpan * kSub;
                uint4 x[kAtoms][kTasks];
                uint32_t e[kAtoms][kTasks];
                uint8_t* st[kAtoms];
#pragma unroll
                for (int q = 0; q < kAtoms; ++q) {
                    const int slot = (s + q / kSub) % kStages, u = q % kSub;
                    if (u == 0) mbar_wait(&bar_full[slot], ((s + q / kSub) / kStages) & 1);
                    st[q] = smem + slot * kStageBytes + u * kBAtomBytes;  // the atom's B image
                    const uint8_t* raw =
                        smem + slot * kStageBytes + u * (int)F4GEMM_FRAG16S_CHUNK;  // its W chunks
                    if (!(F4GEMM_CV_PROBE & 16)) {
#pragma unroll
                        for (int i = 0; i < kTasks; ++i) {
                            x[q][i] = *reinterpret_cast<const uint4*>(raw + raw_off[i]);
                            e[q][i] = raw[sc_off[i]];
                        }
                    }
                }
                if (!(F4GEMM_CV_PROBE & 16)) {
                    // Branch-free, so that the tasks' conversions interleave: a NaN block (scale 0xFF) gets
                    // an all-zero LUT, i.e. signed zeros (the epilogue writes NaN for its column).
#pragma unroll
                    for (int q = 0; q < kAtoms; ++q) {
#pragma unroll
                        for (int i = 0; i < kTasks; ++i) {
                            uint32_t lut_lo, lut_hi;
                            make_lut((int)e[q][i] - ref[i], lut_lo, lut_hi);
                            if (e[q][i] == 0xFFu || (F4GEMM_CV_PROBE & 2)) lut_lo = lut_hi = 0u;
                            uint4 lo, hi;
                            cvt32_bitplane(x[q][i], lut_lo, lut_hi, lo, hi);
                            if (!(F4GEMM_CV_PROBE & 64))
                                store_block_sw128(st[q] + img_off[i], j, g, lo, hi);
                            else  // keep the whole conversion alive
                                sink ^= lo.x ^ lo.y ^ lo.z ^ lo.w ^ hi.x ^ hi.y ^ hi.z ^ hi.w;
                        }
                    }
                    if (!(F4GEMM_CV_PROBE & 32))
                        fence_proxy_async();  // generic-proxy stores -> wgmma (async proxy) reads
                }
#pragma unroll
                for (int q = 0; q < kConvSpan; ++q) mbar_arrive(&bar_conv[(s + q) % kStages]);
            }
        }
        if ((F4GEMM_CV_PROBE & 64) && sink == 0x12345678u) smem[0] = 1;
        return;
    }

    // Consumers: warpgroup c multiplies activation rows [64c, 64c + 64) by the tile's BLOCK_N weight rows,
    // over the 128-K atoms of its K turn kq (atoms kq * kSpan + j * kConsK * kSpan ..); a stage's slot is
    // released after its last atom.
    setmaxnreg_inc<kRegConsumer>();
    const int cwg = (warp - 4 - kConvWarps) / 4;
    const int c = kConsK == 1 ? cwg : cwg % kRowWGs, kq = kConsK == 1 ? 0 : cwg / kRowWGs;
    float acc[kAccRegs];
#pragma unroll
    for (int i = 0; i < kAccRegs; ++i) acc[i] = 0.0f;
    float frag[kFrags][kAccRegs];
    if constexpr (kExact) {
        // Per block of kSpan 128-K atoms, straight-line (pp_*'s exact loop): wgmma q + 1 is issued before the
        // FADDs of step q, the block drains before the next (the other consumer warpgroup covers the bubble).
        constexpr int kQ = kSpan * kSteps;
        for (int v0 = 0; v0 < nka; v0 += kSpan) {
            step(frag[0], v0, 0, smem, bar_full, bar_conv, c);
#pragma unroll
            for (int q = 0; q < kQ; ++q) {
                if (q + 1 < kQ) {
                    step(frag[(q + 1) % 2], v0 + (q + 1) / kSteps, (q + 1) % kSteps, smem, bar_full, bar_conv,
                         c);
                    wgmma_wait<1>();
                } else {
                    wgmma_wait<0>();
                }
                promote_add(acc, frag[q % 2]);
                // The slot of atom v0 + q / kSteps is free once its stage's last wgmma (step q) has
                // completed.
                if (q % kSteps == kSteps - 1) release(bar_empty, v0 + q / kSteps);
            }
        }
    }
    for (int u0 = kq * kSpan; !kExact && u0 < nka; u0 += kSpan * kConsK) {
        if (F4GEMM_CV_PROBE & 4) {
#pragma unroll
            for (int q = 0; q < kSpan; ++q) {
                const int v = u0 + q;
                if (v % kSub == 0) mbar_wait(&bar_conv[(v / kSub) % kStages], ((v / kSub) / kStages) & 1);
                release(bar_empty, v);
            }
            continue;
        }
        chain(frag[0], u0, smem, bar_full, bar_conv, c);
        if constexpr (kSpan == 2) {
            chain(frag[kSpan - 1], u0 + 1, smem, bar_full, bar_conv, c);
            wgmma_wait<1>();
            promote_add(acc, frag[0]);
            release(bar_empty, u0);
            wgmma_wait<0>();
            promote_add(acc, frag[kSpan - 1]);
            release(bar_empty, u0 + 1);
        } else {
            wgmma_wait<0>();
            promote_add(acc, frag[0]);
            release(bar_empty, u0);
        }
    }

    if constexpr (kConsK == 2) {
        // The second turn's accumulators join the first's through the ring, which every role is done with
        // once both turns have finished (each waited on the conversion of its stages, which waited on their
        // copies).
        float* sum = reinterpret_cast<float*>(smem) + c * 128 + threadIdx.x % 128;
        named_barrier(1, kConsumerThreads);
        if (kq == 1) {
#pragma unroll
            for (int i = 0; i < kAccRegs; ++i) sum[i * kRowWGs * 128] = acc[i];
        }
        named_barrier(1, kConsumerThreads);
        if (kq == 1) return;
#pragma unroll
        for (int i = 0; i < kAccRegs; ++i) acc[i] += sum[i * kRowWGs * 128];
    }

    // Epilogue (sm90_common.cuh, pp_*'s): scales, NaN rows and columns, alpha/beta, the (M, N) mask.
    pdl_trigger();  // the main loop is done: the next kernel on the stream may be scheduled
    store_tile_a_on_m<BLOCK_M>(p, geo, acc, s_rows, m0, n0, c * 64 + (warp % 4) * 16 + lane / 4, lane % 4);
#else
    F4GEMM_TRAP_WRONG_ARCH();
#endif
}
