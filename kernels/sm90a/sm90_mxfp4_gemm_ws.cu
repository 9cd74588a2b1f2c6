// sm_90a MXFP4 x MXFP4 -> bf16 GEMM for small and mid M, B on the wgmma M side (R = B, S = A: N fills the
// 64-row wgmma M, the few activation rows are the wgmma N): warp-specialised, a shared-memory ring, A's
// e2m1 -> e5m2 conversion with the E8M0 block scale folded into the exponent (or A's pre-pass image), FP8
// wgmma (QGMMA) with one fresh accumulator per 32-element scale block, promoted into fp32 registers.
// Shipped configs read B as the packed weight W (frag16s, include/f4gemm/weight.h); the ladder's
// ws_swap_32x128 / ws_swap_64x128 read plain B and its plain scales. One source, many cubins: the tile config
// comes from -D macros (kernels/sm90a/kernels.json); design, precision argument and ladder in
// docs/KERNELS_SM90.md, argument use and workspace in docs/ABI_SM90.md.
#include "f4gemm/frag16s.h"
#include "sm90_a_prepass.cuh"
#include "sm90_common.cuh"
#include "sm90_ptx.cuh"
#include "sm90_wgmma_e5m2.cuh"

#include <type_traits>

// ---------------------------------------------------------------------------------------------
// Template parameters (one cubin per config; defaults let the file compile on its own)
//   BLOCK_R  rows of the register-side operand B = wgmma M, 64 per consumer warpgroup (tile_N)
//   BLOCK_S  rows of the shared-memory-side operand A = wgmma N (tile_M)
//   K_STAGE  K elements per pipeline stage (128 or 256)
//   STAGES   depth of the ring
// The R = A orientation (SWAP_AB 0: ws_128x128, ws_128x64, ws_64x128, pa_*) was retired with the W format:
// every shipped kernel reads B as W, and those configs read plain B through WG0 (PERF.md entries 1-15).
// ---------------------------------------------------------------------------------------------
#ifndef F4GEMM_KNL_NAME
#define F4GEMM_KNL_NAME f4gemm_sm90a_ws_swap_16x128_fs
#endif
#ifndef F4GEMM_BLOCK_R
#define F4GEMM_BLOCK_R 128
#endif
#ifndef F4GEMM_BLOCK_S
#define F4GEMM_BLOCK_S 16
#endif
#ifndef F4GEMM_K_STAGE
#define F4GEMM_K_STAGE 256
#endif
#ifndef F4GEMM_STAGES
#define F4GEMM_STAGES 8
#endif
//   PARTS    0: the original schedule (one or two full-width fresh accumulators, see kDoubleFrag).
//            > 0: rotating schedule: every k32 step is PARTS wgmmas of N = BLOCK_S / PARTS, each into
//            its own fresh accumulator, DEPTH of them rotating, DEPTH - 1 wgmmas kept in flight while
//            the oldest is promoted (wgmma.wait_group DEPTH-1); A fragments of a whole stage in registers.
//   DEPTH    fresh accumulators in the rotation (PARTS > 0 only)
//   REG_WG0  setmaxnreg of WG0 (the consumers get the rest of the launch pool, rounded down to 8)
#ifndef F4GEMM_PARTS
#define F4GEMM_PARTS 1
#endif
#ifndef F4GEMM_DEPTH
#define F4GEMM_DEPTH 8
#endif
//   MIN_BLOCKS  CTAs per SM the register budget is cut for (__launch_bounds__ minimum blocks); shared
//            memory must fit as many (the config in kernels.json picks STAGES accordingly)
#ifndef F4GEMM_MIN_BLOCKS
#define F4GEMM_MIN_BLOCKS 1
#endif
#ifndef F4GEMM_REG_WG0
#define F4GEMM_REG_WG0 96
#endif
//   R_BITPLANE  2 (every shipped config; manifest b_layout frag16s): B is the body of the packed weight
//            W (include/f4gemm/weight.h): bit-plane words (bitplane.h) in the frag16s layout (frag16s.h, the
//            dec kernels' B): per (16-row group, 128-K chunk) 1024 bytes of words in per-lane fragment order
//            plus the 16 rows' 4 scale bytes. Each consumer warp owns one 16-row group: one 1D bulk copy per
//            chunk brings its fragments and scales (mbarrier transaction count, no cp.async), and the rows'
//            reference exponents come from the group header instead of a scan of B's scales. Fragments
//            become e5m2 bytes of e2m1 * 2^-14 with two masks and a shift, no LUT, and the block scale
//            2^(e - ref) is applied in the promotion (FFMA instead of FADD, exact: a power of two times an
//            exact block sum, then one rounding as before).
//            0 (the ladder's ws_swap_32x128 / 64x128; b_layout plain): plain B rows by cp.async, B's
//            plain scales from p.sB, converted with the LUT like A. 1 (bit-plane words in plain rows, the
//            _bp configs) was retired with the W format.
#ifndef F4GEMM_R_BITPLANE
#define F4GEMM_R_BITPLANE 2
#endif
//   A_PREPASS  1 (abi sm90pa1; K_STAGE 128 or 256; pab_*): A is converted once by <name>_prepass into
//            the workspace as the SW128 shared-memory image the wgmma reads as its S operand (k order of
//            the S side, perm below), so WG0 only issues one bulk copy per stage and converts nothing,
//            and the consumers convert their own bit-plane B rows in registers (PERF.md 15, 18).
#ifndef F4GEMM_A_PREPASS
#define F4GEMM_A_PREPASS 0
#endif
//   PROMOTE  0: accumulation mode exact (the schedules above). 1 (B from W, PARTS > 0): mode promoted, per
//            128 K one chain of 4 k32 wgmmas per part into one accumulator (one per stage at K_STAGE 128, two
//            at 256), B's block scales folded into its e5m2 fragments by the LUT (cvt8_bitplane) instead of
//            applied at promotion, and one FADD per accumulator per chain (docs/VERIFY.md, "Promoted mode").
#ifndef F4GEMM_PROMOTE
#define F4GEMM_PROMOTE 0
#endif
//   PIPE     promoted schedule only. 0: the B fragment of k32 step j + 1 is converted while step j's wgmmas
//            run (the wgmma issue waits on each conversion). 1: the four fragments of the next 128-K chain
//            are converted while the whole current chain runs (a second set of fragment registers), so a
//            chain's wgmmas issue back to back (PERF.md entry 33). 2 (PARTS 2, K_STAGE 128): as 1, and the
//            two parts pipelined over pairs of chains: each part's 4-wgmma chain is its own commit group,
//            part 0 is promoted while part 1 still runs and the pair's next part 0 is issued before part 1 is
//            promoted; the queue drains once per pair instead of once per chain (PERF.md entry 58). (A value
//            3, each part one chain over a pair of stages, promoted every 256 K, measured 0.93-0.97x the time
//            and a constant of 2^-10.5 on Gaussian data with outlier channels, above the 2^-11 the promoted
//            mode holds: removed, PERF.md entry 65.)
#ifndef F4GEMM_PIPE
#define F4GEMM_PIPE 0
#endif
//   B_WG0    A_PREPASS with B from W only. 0: each consumer warp issues its own 16-row group's bulk copy per
//            stage (kStages - 1 ahead, on its own stage barrier). 1: WG0's copy thread, which already issues
//            the A image per stage, issues the tile's B groups too, on the same stage barrier, once the
//            consumers released the slot: the consumers' per-stage copy issue (the elected lane, its
//            addresses in uniform registers, the slot arithmetic) and their second barrier go (PERF.md
//            entry 58: 12% of pab_128x128_p's loop samples were that issue). A value 2 (B on barriers of its
//            own, filled by a second WG0 thread once every consumer warp read the slot) measured 1.10-1.19x
//            slower on the promoted tiles and was removed (PERF.md entry 59).
#ifndef F4GEMM_B_WG0
#define F4GEMM_B_WG0 0
#endif
//   EPI      0: the epilogue scales and stores each accumulator register in straight-line code (~2900 SASS
//            instructions in pab_128x128, run once per CTA: ncu put 14-21% of a 128 x 8192 x 8192 launch's
//            warp samples there, mostly "no instruction" stalls, PERF.md entry 59). 1: the consumers write
//            their accumulators and their rows' exponents to the ring (free after the main loop) and scale
//            and store the tile from there in a rolled loop, four adjacent outputs per thread and step.
//            Measured (PERF.md entry 60): 1 is 0.97-1.00x the time of 0 on the exact tiles and pab_128x128_p,
//            not the 5-8 us per launch predicted, and 0.99-1.05x on the promoted 64-row tiles, which keep 0.
#ifndef F4GEMM_EPI
#define F4GEMM_EPI 0
#endif

namespace {
using namespace f4gemm::sm90;

constexpr int BLOCK_R = F4GEMM_BLOCK_R;
constexpr int BLOCK_S = F4GEMM_BLOCK_S;
constexpr int K_STAGE = F4GEMM_K_STAGE;
constexpr int kStages = F4GEMM_STAGES;
constexpr bool kRFrag = F4GEMM_R_BITPLANE == 2;  // B = the W body: bit-plane words in the frag16s layout
constexpr bool kAPreS = F4GEMM_A_PREPASS != 0;   // the A image is the S operand (pab_*): WG0 converts nothing
constexpr bool kPromote = F4GEMM_PROMOTE != 0;   // accumulation mode promoted (128-K chains)
constexpr bool kPipe = F4GEMM_PIPE == 1;   // promoted: the next chain's fragments converted a chain ahead
constexpr bool kPipe2 = F4GEMM_PIPE == 2;  // ... and the two parts' chains pipelined
constexpr bool kBWG0 = F4GEMM_B_WG0 != 0;  // A_PREPASS: WG0 copies B beside the A image
static_assert(F4GEMM_B_WG0 >= 0 && F4GEMM_B_WG0 <= 1, "B_WG0: 0 or 1");
constexpr bool kEpiSmem = F4GEMM_EPI == 1;  // the epilogue through the ring, rolled
static_assert(F4GEMM_EPI >= 0 && F4GEMM_EPI <= 1, "EPI: 0 or 1");
// The epilogue's exponent bias of an R row: bit-plane fragments of the exact mode hold e2m1 * 2^-14.
constexpr int kRExpBias = kRFrag && !kPromote ? 14 : 0;
static_assert(F4GEMM_PIPE >= 0 && F4GEMM_PIPE <= 2, "PIPE: 0, 1 or 2");
static_assert(!(kPipe || kPipe2) || kPromote, "PIPE is a schedule of the promoted mode");
static_assert(!kPipe2 || (F4GEMM_PARTS == 2 && F4GEMM_K_STAGE == 128),
              "PIPE 2: two parts, one 128-K chain per stage");
static_assert(!kPromote || (kRFrag && F4GEMM_PARTS > 0 && F4GEMM_K_STAGE % 128 == 0),
              "the promoted schedule: B from W (its scales fold into the fragments), the rotating schedule's "
              "per-step fragments, 128-K chains");
static_assert(F4GEMM_R_BITPLANE == 0 || F4GEMM_R_BITPLANE == 2, "B: plain rows (0) or the W body (2)");
static_assert(!kAPreS || (kRFrag && F4GEMM_PARTS > 0 && (F4GEMM_K_STAGE == 128 || F4GEMM_K_STAGE == 256)),
              "A pre-pass as S: B from W, the rotating schedule, one or two 128-byte atoms per stage");
static_assert(!kRFrag || F4GEMM_PARTS > 0,
              "bit-plane R scales are read at promotion: only the rotating schedule promotes every step of a "
              "stage before the next stage's scales are loaded");

constexpr int kConsumers = BLOCK_R / 64;          // consumer warpgroups
constexpr int kThreads = 128 * (1 + kConsumers);  // WG0: S-operand copy (+ convert); WG1..: consumers
constexpr int kConvThreads = 128;
constexpr int kConsumerThreads = 128 * kConsumers;
constexpr int kSteps = K_STAGE / 32;          // k32 wgmma steps (= scale blocks) per stage
constexpr int kRawPitch = K_STAGE / 2 + 16;   // raw fp4 row pitch: +16 B makes 8 rows hit 8 bank groups
constexpr int TILE_M = BLOCK_S;               // activation rows
constexpr int TILE_N = BLOCK_R;               // weight rows
constexpr int kAccRegs = BLOCK_S / 2;         // fp32 accumulator registers per consumer thread
constexpr int kConvTasks = BLOCK_S * kSteps;  // (S row, scale block) pairs per stage
constexpr int kConvTasksPerThread = (kConvTasks + kConvThreads - 1) / kConvThreads;

// Register budgets (setmaxnreg). The pool is what the CTA got at launch, not the whole register file:
// __launch_bounds__(kThreads, 1) caps a thread at kLaunchRegs, and setmaxnreg.inc blocks until the pool
// can satisfy it. Seen on the device: 96 + 2 x 208 > 3 x 168 hung every 2-consumer config.
constexpr int kMinBlocks = F4GEMM_MIN_BLOCKS;
constexpr int kLaunchRegs = (65536 / (kThreads * kMinBlocks)) / 8 * 8 > 255
                                ? 255
                                : (65536 / (kThreads * kMinBlocks)) / 8 * 8;
constexpr int kRegWG0 = F4GEMM_REG_WG0;
constexpr int kRegPool = (1 + kConsumers) * kLaunchRegs - kRegWG0;  // what the consumers may take
constexpr int kRegConsumer = kRegPool / kConsumers / 8 * 8 > 240 ? 240 : kRegPool / kConsumers / 8 * 8;

// Double-buffered fresh accumulators where the consumer register budget allows (acc + 2 x frag + ~56).
constexpr bool kDoubleFrag = 3 * kAccRegs + 56 <= kRegConsumer;
static_assert(kSteps % 2 == 0, "A fragments and accumulators alternate by step parity across stages");

// Rotating schedule (PARTS > 0): sub-step u = j * kParts + p of a stage is the wgmma of k32 step j on
// S rows [p * kPartN, (p + 1) * kPartN), into fresh accumulator fb[u % kDepth]. A fragment of step j
// lives in a[j] (one per step of a stage), so it is rewritten one stage later, long after its wgmmas.
constexpr bool kRotate = F4GEMM_PARTS > 0;
constexpr int kParts = kRotate ? F4GEMM_PARTS : 1;
constexpr int kDepth = kRotate ? F4GEMM_DEPTH : 1;
constexpr int kPartN = BLOCK_S / kParts;
constexpr int kPartRegs = kPartN / 2;
constexpr int kSub = kSteps * kParts;         // sub-steps (wgmmas) per stage and consumer warpgroup
constexpr int kABufs = kRotate ? kSteps : 2;  // A fragment buffers
static_assert(!kRotate || (BLOCK_S % kParts == 0 && kPartN % 16 == 0), "parts are whole wgmma N >= 16");
static_assert(!kRotate || (kDepth >= 1 && kDepth <= 8 && kDepth <= kSub),
              "fresh accumulators in the rotation: the drain of a stage waits with counts 0..7");

static_assert(BLOCK_R % 64 == 0 && kConsumers >= 1 && kConsumers <= 2, "64 R rows per consumer WG");
static_assert(BLOCK_S % 16 == 0 && BLOCK_S >= 16 && BLOCK_S <= 256, "wgmma N for e5m2, 8-row swizzle atoms");
static_assert(K_STAGE == 128 || K_STAGE == 256, "a stage is one or two 128-byte swizzle atoms of fp8");
static_assert(256 % TILE_M == 0 && 256 % TILE_N == 0,
              "tiles must divide 256 so that row loads stay inside the host's 256-row padding");
static_assert(kRegWG0 + kConsumers * kRegConsumer <= (1 + kConsumers) * kLaunchRegs,
              "setmaxnreg budget exceeds the registers allocated at launch: inc would never return");
static_assert(kRegWG0 % 8 == 0 && kRegConsumer % 8 == 0, "setmaxnreg takes multiples of 8");
static_assert(128 % BLOCK_S == 0, "a WG0 thread converts blocks of one S row");
static_assert(kConvTasks % kConvThreads == 0, "every WG0 thread converts the same number of blocks");
static_assert(kConvTasksPerThread <= 8, "converter prefetch registers");
static_assert(kStages >= 3, "consumers keep kStages-1 copy groups in flight");

// ---------------------------------------------------------------------------------------------
// Shared-memory budget and carve-up (offsets from a 1024-byte aligned base)
// ---------------------------------------------------------------------------------------------
constexpr int kS8Bytes = BLOCK_S * K_STAGE;  // per stage: (kKAtoms, BLOCK_S, 128) e5m2, SW128 K-major
// per stage, B: W (frag16s) (BLOCK_R / 16 groups, K_STAGE / 128 chunks) of F4GEMM_FRAG16S_CHUNK bytes,
// group-major; plain (the ladder) (BLOCK_R, K_STAGE/2) fp4x2 at pitch kRawPitch
constexpr int kChunksPerStage = K_STAGE / 128;
constexpr int kFragGroupBytes = kChunksPerStage * (int)F4GEMM_FRAG16S_CHUNK;
constexpr int kRawRBytes = kRFrag ? (BLOCK_R / 16) * kFragGroupBytes : BLOCK_R * kRawPitch;
// per stage, A: (BLOCK_S, K_STAGE/2) fp4x2 at pitch kRawPitch, converted by WG0; none when the S image comes
// from the pre-pass (pab_*: B's scales ride in its W chunks)
constexpr int kRawSBytes = kAPreS ? 0 : BLOCK_S * kRawPitch;
constexpr int kA8Bytes = TILE_M * K_STAGE;  // A_PREPASS: one stage of the A image (one bulk copy)
constexpr int kOffS8 = 0;
constexpr int kOffRawR = kOffS8 + kStages * kS8Bytes;
constexpr int kOffRawS = kOffRawR + kStages * kRawRBytes;
constexpr int kBars = 3;  // raw_full (unused by pab_*), s8_full, s8_empty
constexpr int kOffBar = (kOffRawS + kStages * kRawSBytes + 15) / 16 * 16;  // kBars x kStages mbarriers
constexpr int kWarpBars = kRFrag ? 4 * kConsumers : 0;  // frag16s R: one mbarrier per consumer warp and stage
constexpr int kOffRefS = kOffBar + (kBars + kWarpBars) * kStages * 8;  // (BLOCK_S) int ref exponent
constexpr int kOffNanS = kOffRefS + BLOCK_S * 4;                       // (BLOCK_S) int NaN flag
constexpr int kOffMisc = kOffNanS + BLOCK_S * 4;                       // wide flag, split flag
constexpr int kSmemBytes = kOffMisc + 16 + 1024;                       // +1024: base alignment slack
static_assert(kOffS8 % 1024 == 0 && kS8Bytes % 1024 == 0, "SW128 atoms need 1024-byte alignment");
static_assert(!kAPreS || kA8Bytes == kS8Bytes, "the A image stage is the S stage");
static_assert(!kBWG0 || (kAPreS && kRFrag), "B_WG0: the A image from the pre-pass, B from W");
constexpr int kBGroups = BLOCK_R / 16;  // B_WG0: the tile's 16-row groups, one bulk copy each per stage
static_assert(kOffBar >= kExactSmemBytes, "the exact fallback reuses the ring as staging");
// EPI 1: the tile's fp32 values (BLOCK_S rows of D, BLOCK_R columns, rows padded by 4 floats: the fragment
// stores of a warp hit 32 banks) and each R row's exponent and NaN flag, in the ring below the barriers.
constexpr int kEpiPitch = BLOCK_R + 4;
constexpr int kEpiBytes = BLOCK_S * kEpiPitch * 4 + 2 * BLOCK_R * 4;
static_assert(!kEpiSmem || kEpiBytes <= kOffBar, "EPI 1: the staged tile must fit below the barriers");
static_assert(kSmemBytes <= 227 * 1024, "sm_90 dynamic shared memory limit");

using Wgmma = WgmmaE5m2<BLOCK_S>;
static_assert(Wgmma::kRegs == kAccRegs, "accumulator fragment size");

using ScaleWord = typename std::conditional<kSteps == 8, uint64_t, uint32_t>::type;

// A_PREPASS workspace (docs/ABI_SM90.md, sm90pa1): Mr = tiles_m * TILE_M;
//   A8   (Mr/TILE_M, K/128, TILE_M, 128) e5m2, SW128 (16-byte chunk c of row r at c ^ (r % 8)), the
//        k order of the S side: block j of a stage in chunks 2j (lo words) and 2j+1 (hi words)
//   rows uint32 [Mr] at byte Mr*K: row_word() (sm90_ptx.cuh)

}  // namespace

// Split-K: any num_splits. With the A pre-pass (sm90pa1) every split reads its K range of the one image of
// A's whole K, and the partials follow the image in the workspace (partials_after_a_image).
F4GEMM_EXPORT_ROW(F4GEMM_KNL_NAME, kSmemBytes, kThreads, TILE_M, TILE_N, 1,
                  kAPreS ? F4GEMM_ABI_SM90PA1 : F4GEMM_ABI_SM90V1, kRFrag ? F4GEMM_B_FRAG16S : F4GEMM_B_PLAIN,
                  kPromote ? F4GEMM_ACCUM_PROMOTED : F4GEMM_ACCUM_EXACT, kPromote ? 128 : 0, kMinBlocks);

#if F4GEMM_A_PREPASS
// Pre-pass: A into the S image (sm90_a_prepass.cuh), the chunks WG0 would write for the S side.
F4GEMM_A_PREPASS_KERNEL(TILE_M, TILE_N)
#endif

// =============================================================================================
// Kernel
// =============================================================================================
extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
    F4GEMM_KNL_NAME(const __grid_constant__ F4gemmSm90Args args) {
#if F4GEMM_SM90A_ENABLED
    pdl_wait();
    extern __shared__ uint8_t smem_dyn[];
    // Align by offsetting the __shared__ pointer itself (not via uintptr_t): the compiler keeps the shared
    // address space and emits LDS/STS instead of generic LD/ST.
    uint8_t* smem = smem_dyn + ((1024u - (smem_u32(smem_dyn) & 1023u)) & 1023u);
    uint64_t* bar_raw_full = reinterpret_cast<uint64_t*>(smem + kOffBar);  // S raw landed (cp.async arrive)
    uint64_t* bar_s8_full = bar_raw_full + kStages;                        // WG0 -> consumers: e5m2 S ready
    uint64_t* bar_s8_empty = bar_s8_full + kStages;                        // consumers -> WG0: slot free
    uint64_t* bar_r_full = bar_raw_full + kBars * kStages;  // W chunks of B landed: [consumer warp][stage]
    int* s_refS = reinterpret_cast<int*>(smem + kOffRefS);
    int* s_nanS = reinterpret_cast<int*>(smem + kOffNanS);
    int* s_wide = reinterpret_cast<int*>(smem + kOffMisc);
    int* s_last = s_wide + 1;

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const Problem p = [&] {
        Problem q = load_problem(args);
        if constexpr (kAPreS) q.ws = partials_after_a_image(args, TILE_M);  // split-K: after the A image
        return q;
    }();
    const SplitGeometry geo = split_geometry(p, TILE_M, TILE_N);
    const int tm = blockIdx.y, tn = blockIdx.x;
    const int m0 = tm * TILE_M, n0 = tn * TILE_N;

    // Operand views: R = B (register side, wgmma M) and S = A (shared-memory side, wgmma N).
    const uint8_t* gR = p.B;    // W body (frag16s), or (rows, K/2) fp4x2 for the plain ladder configs
    const uint8_t* gS = p.A;    // (rows, K/2) fp4x2
    const uint8_t* gRs = p.sB;  // (rows, K/32) e8m0: the plain ladder configs only (null with W)
    const uint8_t* gSs = p.sA;  // (rows, K/32) e8m0
    const int ldR = p.ldb, ldS = p.lda;
    const int ldRs = p.ldsb, ldSs = p.ldsa;
    const int r0 = n0, s0 = m0;
    const int r_rows = p.N, s_rows = p.M;

    int kb0, kb1;
    split_range(p, blockIdx.z, kb0, kb1);
    const int nks = (kb1 - kb0) / kSteps;  // pipeline stages of this split
    const int nwords = (kb1 - kb0) / 8;    // u64 words of scales per row in range
    const long kbyte0 = (long)kb0 * 16;    // byte offset of the split's K range in an fp4 row

    // -----------------------------------------------------------------------------------------
    // Barrier init
    // -----------------------------------------------------------------------------------------
    if (tid == 0) {
        for (int i = 0; i < kStages; ++i) {
            mbar_init(&bar_raw_full[i], kConvThreads);              // one cp.async arrive per WG0 thread
            mbar_init(&bar_s8_full[i], kAPreS ? 1 : kConvThreads);  // kAPreS: one expect_tx arrival
            mbar_init(&bar_s8_empty[i], kConsumerThreads);
        }
        for (int i = 0; i < kWarpBars * kStages; ++i)
            mbar_init(&bar_r_full[i], 1);  // one expect_tx arrival each
        *s_wide = 0;
        fence_barrier_init();
    }
    __syncthreads();

    // Loads are spread over every warp: 16-byte cp.async, so that no single warp's limit on copies in
    // flight caps the stream. Measured (device run 2): one producer warp copying everything moved only
    // ~4-5 B/clk/SM whatever the tile, and all configs ran at that rate.
    //   S rows: all of WG0, completion through raw_full (cp.async.mbarrier.arrive.noinc).
    //   R rows: each consumer warp copies the 16 rows it reads itself (warp-private, cp.async groups).
    constexpr int kChunks = K_STAGE / 32;  // 16-byte chunks per row per stage
    auto produce_s = [&](int s) {
        const int slot = s % kStages;
        const long kbyte = kbyte0 + (long)s * (K_STAGE / 2);
#pragma unroll
        for (int i = tid; i < BLOCK_S * kChunks; i += kConvThreads) {
            const int r = i / kChunks, ch = i % kChunks;
            cp_async_16(smem + kOffRawS + slot * kRawSBytes + r * kRawPitch + ch * 16,
                        gS + (long)(s0 + r) * ldS + kbyte + ch * 16);
        }
        cp_async_mbar_arrive(&bar_raw_full[slot]);
    };
    const int cw = warp / 4 - 1;  // consumer warpgroup index (consumers only)
    const int g = (lane / 4), t = lane % 4;
    const int rr0 = cw * 64 + (warp % 4) * 16 + g, rr1 = rr0 + 8;  // consumer's R rows (tile-local)
    const int rwarp0 = cw * 64 + (warp % 4) * 16;                  // first of the warp's 16 R rows
    // B from W: this warp's 16-row group (global group index), its bytes per group, and its barriers
    const long frag_grp = kRFrag ? (long)f4gemm::frag16s_group_bytes(p.K) : 0;
    const uint8_t* frag_src = kRFrag ? gR + (long)((r0 + rwarp0) / 16) * frag_grp + F4GEMM_FRAG16S_HEAD +
                                           (long)(kb0 / 4) * F4GEMM_FRAG16S_CHUNK
                                     : nullptr;
    uint64_t* wbar = bar_r_full + (warp >= 4 ? (warp - 4) * kStages : 0);
    auto produce_r = [&](int s) {  // consumer warps: this warp's 16 R rows of stage s
        if constexpr (kRFrag) {    // one bulk copy per 128-K chunk, completion on the warp's stage barrier
            if (s < nks && lane == 0) {
                const int slot = s % kStages;
                uint8_t* dst = smem + kOffRawR + slot * kRawRBytes + (rwarp0 / 16) * kFragGroupBytes;
                mbar_arrive_expect_tx(&wbar[slot], kFragGroupBytes);
#pragma unroll
                for (int c = 0; c < kChunksPerStage; ++c)
                    bulk_copy_g2s(dst + c * F4GEMM_FRAG16S_CHUNK,
                                  frag_src + (long)(s * kChunksPerStage + c) * F4GEMM_FRAG16S_CHUNK,
                                  F4GEMM_FRAG16S_CHUNK, &wbar[slot]);
            }
            return;
        }
        if (s < nks) {
            const int slot = s % kStages;
            const long kbyte = kbyte0 + (long)s * (K_STAGE / 2);
#pragma unroll
            for (int i = lane; i < 16 * kChunks; i += 32) {
                const int r = rwarp0 + i / kChunks, ch = i % kChunks;
                cp_async_16(smem + kOffRawR + slot * kRawRBytes + r * kRawPitch + ch * 16,
                            gR + (long)(r0 + r) * ldR + kbyte + ch * 16);
            }
        }
        cp_async_commit();  // one group per stage; empty groups past the end keep the group arithmetic
                            // uniform
    };
    const int prologue_s = nks < kStages ? nks : kStages;
    // A_PREPASS: the A image of stage s, one bulk copy by thread 0 (the pre-pass made it contiguous),
    // straight into the S slot the wgmma reads.
    const uint8_t* a8_src = kAPreS ? reinterpret_cast<const uint8_t*>(args.ptr_workspace) +
                                         (size_t)tm * TILE_M * p.K + (size_t)(kb0 / kSteps) * kA8Bytes
                                   : nullptr;
    // B_WG0: the tile's B groups of stage s into the consumers' slot layout, completing on `bar`
    auto copy_b = [&](int s, uint64_t* bar) {
        const uint8_t* src = gR + (long)(r0 / 16) * frag_grp + F4GEMM_FRAG16S_HEAD +
                             (long)(kb0 / 4 + s * kChunksPerStage) * F4GEMM_FRAG16S_CHUNK;
        uint8_t* dst = smem + kOffRawR + (s % kStages) * kRawRBytes;
#pragma unroll 1
        for (int gi = 0; gi < kBGroups; ++gi)
            bulk_copy_g2s(dst + gi * kFragGroupBytes, src + gi * frag_grp, kFragGroupBytes, bar);
    };
    auto produce_a8 = [&](int s) {
        const int slot = s % kStages;
        mbar_arrive_expect_tx(&bar_s8_full[slot], kA8Bytes + (kBWG0 ? kBGroups * kFragGroupBytes : 0));
        bulk_copy_g2s(smem + kOffS8 + slot * kS8Bytes, a8_src + (size_t)s * kA8Bytes, kA8Bytes,
                      &bar_s8_full[slot]);
        if constexpr (kBWG0) copy_b(s, &bar_s8_full[slot]);  // B_WG0: on the A image's barrier
    };

    // -----------------------------------------------------------------------------------------
    // Prologue: the first stages are put in flight, then the block scales of every row are scanned
    // (reference exponents, NaN rows, foldability) while they land.
    // -----------------------------------------------------------------------------------------
    int ref0 = 127, ref1 = 127;  // consumer rows rr0, rr1: reference exponents
    int nan_r = 0;               // bit h: row rr0 (h = 0) / rr1 (h = 1) has a NaN scale
    if (kAPreS && warp < 4) {
        if (tid == 0)
            for (int s = 0; s < prologue_s; ++s) produce_a8(s);
        // S rows (A): reference, NaN and wide flags from the pre-pass's row words.
        const uint32_t* rows = reinterpret_cast<const uint32_t*>(
            reinterpret_cast<const uint8_t*>(args.ptr_workspace) + (size_t)geo.Mr * p.K);
        for (int row = tid; row < BLOCK_S; row += kConvThreads) {
            const uint32_t w = rows[m0 + row];
            s_refS[row] = row_ref(w);
            s_nanS[row] = (w & kRowNan) ? 1 : 0;
            if (w & kRowWide) *s_wide = 1;
        }
    } else if (warp < 4) {
#pragma unroll 1
        for (int s = 0; s < prologue_s; ++s) produce_s(s);
        // S rows: 8 lanes per row, 16 rows in flight.
        const int part = tid % 8;
        for (int rb = 0; rb < BLOCK_S; rb += kConvThreads / 8) {
            const int row = rb + tid / 8;
            const bool in_tile = row < BLOCK_S;
            const bool valid = in_tile && s0 + row < s_rows;
            const RowRef rf =
                scan_row(gSs + (long)(s0 + (in_tile ? row : 0)) * ldSs + kb0, nwords, part, 8, valid);
            if (in_tile && part == 0) {
                s_refS[row] = rf.ref;
                s_nanS[row] = rf.nan ? 1 : 0;
                if (rf.wide) *s_wide = 1;
            }
        }
    } else if (kRFrag) {
        if constexpr (!kBWG0) {
#pragma unroll 1
            for (int s = 0; s < kStages - 1; ++s) produce_r(s);
        }
        // R rows: reference, NaN and wide flags from the group header's summary words (largest and smallest
        // exponent over the row's whole K, NaN and non-NaN presence; the rule of finish_row, frag16s.h). Rows
        // N .. Np-1 of W exist (zero data, scale 0x7F) but are never stored: read as "no exponent" (ref 127).
        const uint8_t* head = gR + (long)((r0 + rwarp0) / 16) * frag_grp;
        f4gemm::Frag16sRowRef f[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const bool v = r0 + rwarp0 + g + 8 * h < r_rows;
            f[h] = f4gemm::frag16s_row_ref(
                v ? *reinterpret_cast<const uint32_t*>(head + 4 * (g + 8 * h)) : 0u, kWindow);
        }
        ref0 = f[0].ref;
        ref1 = f[1].ref;
        nan_r = (f[0].nan ? 1 : 0) | (f[1].nan ? 2 : 0);
        if (f[0].wide || f[1].wide) *s_wide = 1;
    } else {
#pragma unroll 1
        for (int s = 0; s < kStages - 1; ++s) produce_r(s);
        // R rows: the 4 lanes of a quad share two rows.
        const bool v0 = r0 + rr0 < r_rows, v1 = r0 + rr1 < r_rows;
        const RowRef f0 = scan_row(gRs + (long)(r0 + rr0) * ldRs + kb0, nwords, t, 4, v0);
        const RowRef f1 = scan_row(gRs + (long)(r0 + rr1) * ldRs + kb0, nwords, t, 4, v1);
        ref0 = f0.ref;
        ref1 = f1.ref;
        nan_r = (f0.nan ? 1 : 0) | (f1.nan ? 2 : 0);
        if (t == 0 && (f0.wide || f1.wide)) *s_wide = 1;
    }
    __syncthreads();

    // -----------------------------------------------------------------------------------------
    // Exact path for tiles whose scales do not fold into e5m2 (rows spanning > 26 binades).
    // -----------------------------------------------------------------------------------------
    if (*s_wide) {
        // No copy may land in the staging area exact_tile reuses: every copy the prologue issued is waited
        // for (the consumers' cp.async groups or W chunk barriers, WG0's cp.async rows or A image copies).
        cp_async_wait<0>();
        if (kRFrag && !kBWG0 && warp >= 4)
            for (int s = 0; s < kStages - 1 && s < nks; ++s) mbar_wait(&wbar[s], 0);
        if (warp < 4 && !kAPreS)
            for (int s = 0; s < prologue_s; ++s) mbar_wait(&bar_raw_full[s], 0);
        if (kAPreS && tid == 0)
            for (int s = 0; s < prologue_s; ++s) mbar_wait(&bar_s8_full[s], 0);
        __syncthreads();
        exact_tile<kThreads, kRFrag ? kExactBFrag16S : kExactBPlain>(p, geo, m0, n0, TILE_M, TILE_N, kb0, kb1,
                                                                     smem, tid);
        if (p.splits > 1)
            splitk_finish<TILE_M, TILE_N, kThreads, kAPreS>(args, tm, tn, tid, s_last,
                                                            [] { __syncthreads(); });
        return;
    }

    if (kAPreS && warp < 4) {
        // WG0 with the S image from the pre-pass: thread 0 refills each S slot as soon as the consumers
        // have released it; nothing to convert.
        setmaxnreg_dec<kRegWG0>();
        if (tid == 0) {
#pragma unroll 1
            for (int s = prologue_s; s < nks; ++s) {
                mbar_wait(&bar_s8_empty[s % kStages], ((s / kStages) & 1) ^ 1);
                produce_a8(s);
            }
        }
        return;
    }
    if (warp < 4) {
        // =====================================================================================
        // WG0: S operand. Per stage: raw fp4 rows -> e5m2 with scales folded, SW128 K-major, once
        // for both consumer warpgroups; then the freed raw slot is refilled kStages ahead.
        // Task i = (row i % BLOCK_S, block i / BLOCK_S); a thread keeps one row.
        // =====================================================================================
        setmaxnreg_dec<kRegWG0>();
        const int row = tid % BLOCK_S;
        const int ref = s_refS[row];
        const uint8_t* sc_src = gSs + (long)(s0 + row) * ldSs + kb0;  // (nks * kSteps) scale bytes
        uint32_t sc_next[kConvTasksPerThread];
#pragma unroll
        for (int u = 0; u < kConvTasksPerThread; ++u)
            sc_next[u] = nks > 0 ? __ldg(sc_src + (tid + u * kConvThreads) / BLOCK_S) : 0u;
        for (int s = 0; s < nks; ++s) {
            const int slot = s % kStages;
            const uint32_t par = (s / kStages) & 1;
            uint32_t sc[kConvTasksPerThread];
#pragma unroll
            for (int u = 0; u < kConvTasksPerThread; ++u) {
                sc[u] = sc_next[u];  // scale bytes are loaded one stage ahead
                if (s + 1 < nks)
                    sc_next[u] = __ldg(sc_src + (s + 1) * kSteps + (tid + u * kConvThreads) / BLOCK_S);
            }
            mbar_wait(&bar_raw_full[slot], par);
            mbar_wait(&bar_s8_empty[slot], par ^ 1);
            const uint8_t* raw = smem + kOffRawS + slot * kRawSBytes;
            uint8_t* s8 = smem + kOffS8 + slot * kS8Bytes;
#pragma unroll
            for (int u = 0; u < kConvTasksPerThread; ++u) {
                const int j = (tid + u * kConvThreads) / BLOCK_S;
                uint32_t lut_lo, lut_hi;
                make_lut((int)sc[u] - ref, lut_lo, lut_hi);
                const uint4 x = *reinterpret_cast<const uint4*>(raw + row * kRawPitch + j * 16);
                uint4 lo, hi;
                cvt32(x, lut_lo, lut_hi, lo, hi);
                // (K_STAGE/128, BLOCK_S, 128 B): 16-byte chunk c of a row lands at c ^ (row % 8)
                store_block_sw128(s8 + (j / 4) * (BLOCK_S * 128) + row * 128, j, row & 7, lo, hi);
            }
            fence_proxy_async();  // generic-proxy stores -> wgmma (async proxy) reads
            mbar_arrive(&bar_s8_full[slot]);
            named_barrier(2, kConvThreads);  // every WG0 thread is done reading raw slot `slot`
            if (s + kStages < nks) produce_s(s + kStages);
        }
        return;
    }

    // =========================================================================================
    // Consumers: per k32 step, convert this thread's B fragment (rows rr0, rr1) in registers, one
    // wgmma into a fresh accumulator, then promote into fp32 registers (FFMA with B's block scale for
    // W, FADD for the plain ladder configs, whose B scale is folded into the fragment).
    // =========================================================================================
    setmaxnreg_inc<kRegConsumer>();
    float acc[kAccRegs];
    float frag[kDoubleFrag ? 2 : 1][kAccRegs];  // fresh per-k32 accumulators (wgmma D, output-only)
#pragma unroll
    for (int i = 0; i < kAccRegs; ++i) acc[i] = 0.0f;

    const uint8_t* srow0 = gRs + (long)(r0 + rr0) * ldRs + kb0;  // plain B: this thread's R scale rows
    const uint8_t* srow1 = gRs + (long)(r0 + rr1) * ldRs + kb0;
    ScaleWord sc_next0 = 0, sc_next1 = 0, sc0 = 0, sc1 = 0;
    if (!kRFrag && nks > 0) {
        sc_next0 = __ldg(reinterpret_cast<const ScaleWord*>(srow0));
        sc_next1 = __ldg(reinterpret_cast<const ScaleWord*>(srow1));
    }
    // wgmma A fragments (of B's rows), double-buffered by step parity: wgmma reads its register operands
    // asynchronously, so the fragment of step j must stay untouched (and live) until its wgmma_wait, while
    // the next one is converted. Seen on the device: with one buffer ptxas reused the A registers for address
    // arithmetic right after QGMMA issue and corrupted the product.
    uint32_t a[kABufs][4];

    // Loads and converts the wgmma A fragment of step j of stage s into a[j % kABufs]. At j == 0: waits for
    // this warp's copies of stage s, then refills the slot read during stage s-1 with stage s + kStages - 1.
    // The S operand's descriptor of k32 step j, part pp (S rows [pp * kPartN, ..)) in ring slot `slot`. The
    // descriptor's address field is (addr >> 4) & 0x3FFF and every shared address is below 2^18, so the
    // descriptor of base + off is that of base plus off >> 4: one add per wgmma once the stage's base
    // descriptor is formed (it was five uniform instructions per wgmma).
    auto s_desc = [&](int slot, int j, int pp) {
        return make_desc_sw128(smem_u32(smem + kOffS8 + slot * kS8Bytes)) +
               (uint64_t)(((j / 4) * (BLOCK_S * 128) + pp * (kPartN * 128) + (j % 4) * 32) >> 4);
    };
    auto prep_to = [&](int s, int j, uint32_t(&af)[4]) {
        const int slot = s % kStages;
        if (kRFrag && j == 0) {
            if constexpr (kBWG0) {
                mbar_wait(&bar_s8_full[slot], (s / kStages) & 1);  // stage s (A image and B) landed
            } else {
                mbar_wait(&wbar[slot], (s / kStages) & 1);  // this warp's chunks of stage s landed
                __syncwarp();  // every lane's reads of the slot refilled below (stage s - 1) are done
                produce_r(s + kStages - 1);
            }
            // scale words of rows g and g + 8: 4 blocks per chunk, after the chunk's 1024 bytes of words
            const uint8_t* grp = smem + kOffRawR + slot * kRawRBytes + (rwarp0 / 16) * kFragGroupBytes + 1024;
            const uint32_t w00 = *reinterpret_cast<const uint32_t*>(grp + g * 4);
            const uint32_t w01 = *reinterpret_cast<const uint32_t*>(grp + (8 + g) * 4);
            if constexpr (kChunksPerStage == 2) {
                const uint32_t w10 = *reinterpret_cast<const uint32_t*>(grp + F4GEMM_FRAG16S_CHUNK + g * 4);
                const uint32_t w11 =
                    *reinterpret_cast<const uint32_t*>(grp + F4GEMM_FRAG16S_CHUNK + (8 + g) * 4);
                sc0 = (ScaleWord)((uint64_t)w00 | ((uint64_t)w10 << 32));
                sc1 = (ScaleWord)((uint64_t)w01 | ((uint64_t)w11 << 32));
            } else {
                sc0 = (ScaleWord)w00;
                sc1 = (ScaleWord)w01;
            }
        } else if (j == 0) {
            cp_async_wait<kStages - 2>();  // groups committed: stages 0 .. s+kStages-2
            __syncwarp();                  // ... and the other lanes' copies of this warp are visible
            produce_r(s + kStages - 1);
            sc0 = sc_next0;
            sc1 = sc_next1;
            if (s + 1 < nks) {
                sc_next0 = __ldg(reinterpret_cast<const ScaleWord*>(srow0) + s + 1);
                sc_next1 = __ldg(reinterpret_cast<const ScaleWord*>(srow1) + s + 1);
            }
        }
        uint32_t x0, x1;
        if constexpr (kRFrag) {  // word t of block j of rows g (first half) and g + 8 (second half)
            const uint8_t* q = smem + kOffRawR + slot * kRawRBytes + (rwarp0 / 16) * kFragGroupBytes +
                               (j / 4) * F4GEMM_FRAG16S_CHUNK + (j % 4) * 128 + lane * 4;
            x0 = *reinterpret_cast<const uint32_t*>(q);
            x1 = *reinterpret_cast<const uint32_t*>(q + 512);
        } else {
            const uint8_t* raw = smem + kOffRawR + slot * kRawRBytes + j * 16 + t * 4;
            x0 = *reinterpret_cast<const uint32_t*>(raw + rr0 * kRawPitch);
            x1 = *reinterpret_cast<const uint32_t*>(raw + rr1 * kRawPitch);
        }
        if constexpr (kPromote) {  // B's block scale folded in: e2m1 * 2^(e - ref), |e - ref| <= 13
            uint32_t l0, h0, l1, h1;
            make_lut((int)((sc0 >> (8 * j)) & 0xFF) - ref0, l0, h0);
            make_lut((int)((sc1 >> (8 * j)) & 0xFF) - ref1, l1, h1);
            cvt8_bitplane(x0, l0, h0, af[0], af[2]);
            cvt8_bitplane(x1, l1, h1, af[1], af[3]);
        } else if constexpr (kRFrag) {
            af[0] =
                f4gemm::bitplane_lo_e5m2(x0);  // e0..e3 as e5m2 of e2m1 * 2^-14 (include/f4gemm/bitplane.h)
            af[2] = f4gemm::bitplane_hi_e5m2(x0);  // e4..e7
            af[1] = f4gemm::bitplane_lo_e5m2(x1);
            af[3] = f4gemm::bitplane_hi_e5m2(x1);
        } else {
            uint32_t l0, h0, l1, h1;
            make_lut((int)((sc0 >> (8 * j)) & 0xFF) - ref0, l0, h0);
            make_lut((int)((sc1 >> (8 * j)) & 0xFF) - ref1, l1, h1);
            cvt8(x0, l0, h0, af[0], af[2]);
            cvt8(x1, l1, h1, af[1], af[3]);
        }
    };
    auto prep = [&](int s, int j) { prep_to(s, j, a[j % kABufs]); };
    // Promoted schedules, once a chain's wgmmas completed: keep_frags keeps its four fragments (frags[j0 ..
    // j0 + 3]), read by those wgmmas until their wait, live up to here; promote_part adds part pp's fresh
    // accumulator into the fp32 sums (one FADD per register); promote_chain does both for every part.
    auto keep_frags = [&](auto& frags, int j0) {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj)
#pragma unroll
            for (int i = 0; i < 4; ++i) fence_reg(frags[j0 + jj][i]);
    };
    auto promote_part = [&](auto& fp, int pp) {
#pragma unroll
        for (int i = 0; i < kPartRegs; ++i) {
            fence_reg(fp[pp][i]);
            acc[pp * kPartRegs + i] += fp[pp][i];
        }
    };
    auto promote_chain = [&](auto& frags, int j0, auto& fp) {
        keep_frags(frags, j0);
#pragma unroll
        for (int pp = 0; pp < kParts; ++pp) promote_part(fp, pp);
    };

    if constexpr (kPromote && kPipe2) {
        // Promoted, converted a chain ahead, parts pipelined (PIPE 2; one 128-K chain per stage). Chain q's
        // part pp is one commit group of 4 chained wgmmas into fp[pp]. Per pair of chains (q, q + 1),
        // straight-line code:
        //   issue P0(q), P1(q) | convert q + 1 | wait P0(q), FADD part 0 | issue P0(q + 1) | wait P1(q),
        //   FADD part 1 | issue P1(q + 1) | convert q + 2 | wait P0(q + 1), FADD part 0 | wait P1(q + 1),
        //   FADD part 1
        // so inside the pair one group of this warpgroup is queued behind the one that runs while it promotes
        // (PIPE 1 drains its queue and then adds, every chain). The pair drains at its end: no wgmma is in
        // flight across the loop's back edge and none is issued under a run-time condition (else ptxas
        // serialises every wgmma, C7514; seen with the pipeline carried across the back edge). Each
        // accumulator's chain is the same sequence of wgmmas as in PIPE 1; only the two independent parts
        // interleave differently, so the results are identical. nq = nks is even (W pads K to 256).
        float fp[kParts][kPartRegs];
        uint32_t ap[2][4][4];
        using WgmmaP = WgmmaE5m2<kPartN>;
        using WgmmaPAcc = WgmmaE5m2Acc<kPartN>;
        static_assert(WgmmaP::kRegs == kPartRegs, "part accumulator size");
        const int nq = nks;
        if (nq & 1) __trap();  // unreachable: see above
        auto issue_part = [&](int slot, auto pc, const uint32_t(&frag)[4][4]) {
            constexpr int pp = decltype(pc)::value;
            wgmma_fence();
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) {
                const uint64_t desc = s_desc(slot, jj, pp);
                if (jj == 0)
                    WgmmaP::mma(fp[pp], frag[jj], desc);
                else
                    WgmmaPAcc::mma(fp[pp], frag[jj], desc);
            }
            wgmma_commit();
        };
        constexpr auto P0 = std::integral_constant<int, 0>{};
        constexpr auto P1 = std::integral_constant<int, 1>{};
        if (nq > 0) {
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) prep_to(0, jj, ap[0][jj]);
        }
        int slot = 0;  // chain q's ring slot and its parity
        uint32_t phase = 0;
#pragma unroll 1
        for (int q = 0; q < nq; q += 2) {
            const int slot1 = slot + 1 == kStages ? 0 : slot + 1;
            const uint32_t phase1 = slot1 == 0 ? phase ^ 1u : phase;
            if constexpr (!kBWG0) mbar_wait(&bar_s8_full[slot], phase);  // B_WG0 1: in prep_to
            issue_part(slot, P0, ap[0]);
            issue_part(slot, P1, ap[0]);
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) prep_to(q + 1, jj, ap[1][jj]);
            wgmma_wait<1>();  // P0(q) complete
            promote_part(fp, 0);
            if constexpr (!kBWG0) mbar_wait(&bar_s8_full[slot1], phase1);
            issue_part(slot1, P0, ap[1]);
            wgmma_wait<1>();  // P1(q) complete
            keep_frags(ap[0], 0);
            promote_part(fp, 1);
            mbar_arrive(&bar_s8_empty[slot]);
            issue_part(slot1, P1, ap[1]);
            if (q + 2 < nq) {
#pragma unroll
                for (int jj = 0; jj < 4; ++jj) prep_to(q + 2, jj, ap[0][jj]);
            }
            wgmma_wait<1>();  // P0(q + 1) complete
            promote_part(fp, 0);
            wgmma_wait<0>();  // P1(q + 1) complete
            keep_frags(ap[1], 0);
            promote_part(fp, 1);
            mbar_arrive(&bar_s8_empty[slot1]);
            slot = slot1 + 1 == kStages ? 0 : slot1 + 1;
            phase = slot == 0 ? phase1 ^ 1u : phase1;
        }
    } else if constexpr (kPromote && kPipe) {
        // Promoted, converted a chain ahead: chain q (stage q / kChains, 128-K chain q % kChains) issues its
        // 4 * kParts wgmmas back to back from fragments converted during chain q - 1, then converts chain
        // q + 1's fragments while they run, drains, and adds. No wgmma is in flight across the loop's back
        // edge (each pair of chains is straight-line code, drained per chain) and none is issued under a
        // run-time condition: nq = nks * kChains is even (W pads K to 256: K_STAGE 128 gives an even nks, 256
        // two chains per stage).
        constexpr int kChains = kSteps / 4;
        float fp[kParts][kPartRegs];
        uint32_t ap[2][4][4];
        using WgmmaP = WgmmaE5m2<kPartN>;
        using WgmmaPAcc = WgmmaE5m2Acc<kPartN>;
        static_assert(WgmmaP::kRegs == kPartRegs, "part accumulator size");
        const int nq = nks * kChains;
        if (nq & 1) __trap();  // unreachable: see above
        if (nq > 0) {
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) prep_to(0, jj, ap[0][jj]);
        }
        // Chain q0 + par of an even q0; par is a compile-time 0 or 1, so the chain's place in its stage is.
        auto chain = [&](int q0, auto par, uint32_t(&cur)[4][4], uint32_t(&nxt)[4][4]) {
            constexpr int c = kChains == 2 ? decltype(par)::value : 0;
            const int q = q0 + decltype(par)::value;
            const int s = q / kChains, slot = s % kStages;
            if (c == 0) mbar_wait(&bar_s8_full[slot], (s / kStages) & 1);
            wgmma_fence();
#pragma unroll
            for (int jj = 0; jj < 4; ++jj)
#pragma unroll
                for (int pp = 0; pp < kParts; ++pp) {
                    const uint64_t desc = s_desc(slot, 4 * c + jj, pp);
                    if (jj == 0)
                        WgmmaP::mma(fp[pp], cur[jj], desc);
                    else
                        WgmmaPAcc::mma(fp[pp], cur[jj], desc);
                }
            wgmma_commit();
            if (q + 1 < nq) {
                const int sn = (q + 1) / kChains, cn = (q + 1) % kChains;
#pragma unroll
                for (int jj = 0; jj < 4; ++jj) prep_to(sn, 4 * cn + jj, nxt[jj]);
            }
            wgmma_wait<0>();
            promote_chain(cur, 0, fp);
            if (c == kChains - 1) mbar_arrive(&bar_s8_empty[slot]);
        };
#pragma unroll 1
        for (int q = 0; q < nq; q += 2) {
            chain(q, std::integral_constant<int, 0>{}, ap[0], ap[1]);
            chain(q, std::integral_constant<int, 1>{}, ap[1], ap[0]);
        }
    } else if constexpr (kPromote) {
        // Promoted: per 128 K (4 k32 steps; one chain per stage at K_STAGE 128, two at 256), for each step j
        // the B fragment is converted (scale folded) and one wgmma per part adds step j into the part's
        // accumulator (the chain's first overwrites it): kParts chains of 4 wgmmas, one commit group; then
        // one FADD per accumulator register. Conversion of step j + 1 runs while the wgmmas of step j do;
        // each chain drains before its FADDs, and the other consumer warpgroup (where there is one) keeps the
        // tensor cores busy meanwhile (as DeepGEMM overlaps promotion with two math warpgroups).
        float fp[kParts][kPartRegs];
        using WgmmaP = WgmmaE5m2<kPartN>;
        using WgmmaPAcc = WgmmaE5m2Acc<kPartN>;
        static_assert(WgmmaP::kRegs == kPartRegs, "part accumulator size");
        for (int s = 0; s < nks; ++s) {
            const int slot = s % kStages;
#pragma unroll
            for (int c = 0; c < kSteps / 4; ++c) {  // one chain of 4 k32 steps (128 K) per promotion
#pragma unroll
                for (int jj = 0; jj < 4; ++jj) {
                    const int j = 4 * c + jj;
                    prep(s, j);
                    if (j == 0) mbar_wait(&bar_s8_full[slot], (s / kStages) & 1);
                    if (jj == 0) wgmma_fence();
#pragma unroll
                    for (int pp = 0; pp < kParts; ++pp) {
                        const uint64_t desc = s_desc(slot, j, pp);
                        if (jj == 0)
                            WgmmaP::mma(fp[pp], a[j], desc);
                        else
                            WgmmaPAcc::mma(fp[pp], a[j], desc);
                    }
                }
                wgmma_commit();
                wgmma_wait<0>();
                promote_chain(a, 4 * c, fp);
            }
            mbar_arrive(&bar_s8_empty[slot]);
        }
    } else if constexpr (kRotate) {
        // Rotating fresh accumulators: sub-step q + kDepth - 1 is issued before sub-step q is promoted,
        // so kDepth - 1 wgmmas run while the FADDs of the oldest one issue. Each wgmma still covers one
        // k32 scale block of each operand (scale-d = 0): exactness is that of the original schedule.
        float fb[kDepth][kPartRegs];
        using WgmmaP = WgmmaE5m2<kPartN>;
        static_assert(WgmmaP::kRegs == kPartRegs, "part accumulator size");
        auto issue_sub = [&](int s, int u, float(&f)[kPartRegs]) {
            const int j = u / kParts, pp = u % kParts;
            const int slot = s % kStages;
            if (pp == 0) prep(s, j);  // a[j]: its previous readers (step j of stage s-1) completed
            if (u == 0) mbar_wait(&bar_s8_full[slot], (s / kStages) & 1);
            const uint64_t desc = s_desc(slot, j, pp);
            wgmma_fence();
            WgmmaP::mma(f, a[j], desc);
            wgmma_commit();
        };
        // Promotes sub-step u (its wgmma is complete) into the fp32 accumulators; a[j] may be rewritten
        // once the last part of step j is complete, so it is kept live until then.
        auto promote = [&](int u) {
            if (u % kParts == kParts - 1) {
#pragma unroll
                for (int i = 0; i < 4; ++i) fence_reg(a[u / kParts][i]);
            }
            if constexpr (kRFrag) {
                // R block scale of step j relative to the row reference, 2^(e - ref) in [2^-13, 2^13] for a
                // foldable row (NaN blocks give garbage in NaN rows only; the epilogue writes NaN there).
                const int j = u / kParts;
                const float sr[2] = {__int_as_float((int)(((sc0 >> (8 * j)) & 0xFF) - ref0 + 127) << 23),
                                     __int_as_float((int)(((sc1 >> (8 * j)) & 0xFF) - ref1 + 127) << 23)};
#pragma unroll
                for (int i = 0; i < kPartRegs; ++i) {
                    fence_reg(fb[u % kDepth][i]);
                    float& d = acc[(u % kParts) * kPartRegs + i];
                    d = fmaf(fb[u % kDepth][i], sr[(i % 4) / 2], d);
                }
            } else {
#pragma unroll
                for (int i = 0; i < kPartRegs; ++i) {
                    fence_reg(fb[u % kDepth][i]);
                    acc[(u % kParts) * kPartRegs + i] += fb[u % kDepth][i];
                }
            }
        };
        // Each stage is straight-line code that fills the rotation, keeps kDepth - 1 wgmmas in flight and
        // drains it with compile-time wait counts: no wgmma is in flight across the loop's back edge, and
        // none is issued under a run-time condition. With wgmmas in flight across the back edge (or
        // issued conditionally) ptxas serialised every wgmma (C7513/C7514; seen in this file's SASS
        // for kDepth 4). The other consumer warpgroup covers the fill/drain bubble at a stage boundary.
        for (int s = 0; s < nks; ++s) {
#pragma unroll
            for (int u = 0; u < kDepth - 1; ++u) issue_sub(s, u, fb[u]);
#pragma unroll
            for (int u = 0; u < kSub; ++u) {
                const int v = u + kDepth - 1;
                if (v < kSub) {  // compile-time
                    issue_sub(s, v, fb[v % kDepth]);
                    wgmma_wait<kDepth - 1>();
                } else if (kSub - 1 - u >= 7) {
                    wgmma_wait<7>();
                } else if (kSub - 1 - u == 6) {
                    wgmma_wait<6>();
                } else if (kSub - 1 - u == 5) {
                    wgmma_wait<5>();
                } else if (kSub - 1 - u == 4) {
                    wgmma_wait<4>();
                } else if (kSub - 1 - u == 3) {
                    wgmma_wait<3>();
                } else if (kSub - 1 - u == 2) {
                    wgmma_wait<2>();
                } else if (kSub - 1 - u == 1) {
                    wgmma_wait<1>();
                } else {
                    wgmma_wait<0>();
                }
                promote(u);
            }
            mbar_arrive(&bar_s8_empty[s % kStages]);
        }
    } else {
        if (nks > 0) prep(0, 0);
        if constexpr (!kDoubleFrag) {
            // One fresh accumulator: wgmma(j) runs while fragment j+1 is converted, then FADD; the other
            // consumer warpgroup keeps the tensor cores busy while this one promotes.
            for (int s = 0; s < nks; ++s) {
                const int slot = s % kStages;
                mbar_wait(&bar_s8_full[slot], (s / kStages) & 1);
                const uint32_t s8_base = smem_u32(smem + kOffS8 + slot * kS8Bytes);
#pragma unroll
                for (int j = 0; j < kSteps; ++j) {
                    const uint64_t desc = make_desc_sw128(s8_base + (j / 4) * (BLOCK_S * 128) + (j % 4) * 32);
                    wgmma_fence();
                    Wgmma::mma(frag[0], a[j % 2], desc);
                    wgmma_commit();
                    if (j + 1 < kSteps) {
                        prep(s, j + 1);
                    } else if (s + 1 < nks) {
                        prep(s + 1, 0);
                    }
                    wgmma_wait<0>();
#pragma unroll
                    for (int i = 0; i < 4; ++i) fence_reg(a[j % 2][i]);
                    promote_add(acc, frag[0]);
                }
                mbar_arrive(&bar_s8_empty[slot]);
            }
        } else if (nks > 0) {
            // Two fresh accumulators: wgmma(q+1) is issued before the FADDs of step q, so every consumer
            // warpgroup keeps one wgmma in flight while it promotes the previous one.
            auto issue = [&](int s, int j, float(&f)[kAccRegs]) {
                const int slot = s % kStages;
                if (j == 0) mbar_wait(&bar_s8_full[slot], (s / kStages) & 1);
                const uint32_t s8_base = smem_u32(smem + kOffS8 + slot * kS8Bytes);
                const uint64_t desc = make_desc_sw128(s8_base + (j / 4) * (BLOCK_S * 128) + (j % 4) * 32);
                // No register fence on f here: an asm that "defines" accumulator registers between wgmma
                // issue and wait makes ptxas serialise every wgmma (C7515).
                wgmma_fence();
                Wgmma::mma(f, a[j % 2], desc);
                wgmma_commit();
            };
            issue(0, 0, frag[0]);
            for (int s = 0; s < nks; ++s) {
#pragma unroll
                for (int j = 0; j < kSteps; ++j) {
                    const bool last = (j + 1 == kSteps) && (s + 1 == nks);
                    if (!last) {
                        const int sn = j + 1 < kSteps ? s : s + 1, jn = (j + 1) % kSteps;
                        prep(sn, jn);  // writes a[(j+1)%2], whose wgmma (step q-1) completed last iteration
                        issue(sn, jn, frag[(j + 1) % 2]);
                        wgmma_wait<1>();
                    } else {
                        wgmma_wait<0>();
                    }
#pragma unroll
                    for (int i = 0; i < 4; ++i) fence_reg(a[j % 2][i]);
                    promote_add(acc, frag[j % 2]);
                }
                mbar_arrive(&bar_s8_empty[s % kStages]);
            }
        }
    }               // !kRotate
    pdl_trigger();  // the main loop is done: the next kernel on the stream may be scheduled

    // -----------------------------------------------------------------------------------------
    // Epilogue: v = acc * 2^(refR-127) * 2^(refS-127) (one ldexp, no intermediate under/overflow),
    // NaN for rows/columns with a NaN scale; then D = bf16(alpha*v + beta*C) or the fp32 partial.
    // -----------------------------------------------------------------------------------------
    const float qnan = __int_as_float(0x7FC00000);
    if constexpr (kEpiSmem) {
        // Every consumer warp is past its last wgmma and every copy into the ring has landed (each issued
        // stage was consumed), so once both warpgroups are here the ring is free.
        named_barrier(1, kConsumerThreads);
        float* s_tile = reinterpret_cast<float*>(smem);  // [BLOCK_S][kEpiPitch]
        int* s_eR = reinterpret_cast<int*>(smem + BLOCK_S * kEpiPitch * 4);
        int* s_nR = s_eR + BLOCK_R;
#pragma unroll
        for (int i = 0; i < kAccRegs / 4; ++i) {
            const int c = 8 * i + 2 * t;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int rr = h ? rr1 : rr0;
                s_tile[c * kEpiPitch + rr] = acc[4 * i + 2 * h];
                s_tile[(c + 1) * kEpiPitch + rr] = acc[4 * i + 2 * h + 1];
            }
        }
        if (t == 0) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                s_eR[h ? rr1 : rr0] = (h ? ref1 : ref0) - 127 + kRExpBias;
                s_nR[h ? rr1 : rr0] = (nan_r >> h) & 1;
            }
        }
        named_barrier(1, kConsumerThreads);
        const bool pair_ok = ((p.ldd & 1) == 0) && ((reinterpret_cast<uintptr_t>(p.D) & 3) == 0);
#pragma unroll 1
        for (int q = tid - 128; q < BLOCK_S * (BLOCK_R / 4); q += kConsumerThreads) {
            const int c = q / (BLOCK_R / 4),
                      rq = (q % (BLOCK_R / 4)) * 4;  // D row m0 + c, columns n0 + rq ..
            const float4 a4 = *reinterpret_cast<const float4*>(s_tile + c * kEpiPitch + rq);
            const int4 e4 = *reinterpret_cast<const int4*>(s_eR + rq);
            const int4 n4 = *reinterpret_cast<const int4*>(s_nR + rq);
            const int eS = s_refS[c] - 127;
            const bool nS = s_nanS[c] != 0;
            float v[4] = {ldexpf(a4.x, e4.x + eS), ldexpf(a4.y, e4.y + eS), ldexpf(a4.z, e4.z + eS),
                          ldexpf(a4.w, e4.w + eS)};
            const int nr[4] = {n4.x, n4.y, n4.z, n4.w};
#pragma unroll
            for (int j = 0; j < 4; ++j)
                if (nS || nr[j]) v[j] = qnan;
            if (p.splits > 1) {
                *reinterpret_cast<float4*>(partial_ptr(p, geo, blockIdx.z, m0 + c, n0 + rq)) =
                    make_float4(v[0], v[1], v[2], v[3]);
            } else {
                store_pair(p, geo, m0 + c, n0 + rq, v[0], v[1], pair_ok);
                store_pair(p, geo, m0 + c, n0 + rq + 2, v[2], v[3], pair_ok);
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < kAccRegs / 4; ++i) {
            const int c = 8 * i + 2 * t;  // tile-local S index of acc[4i], acc[4i+1] (+1)
            const int eS0 = s_refS[c] - 127, eS1 = s_refS[c + 1] - 127;
            const bool nS0 = s_nanS[c] != 0, nS1 = s_nanS[c + 1] != 0;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int rr = h ? rr1 : rr0;
                const int eR = (h ? ref1 : ref0) - 127 + kRExpBias;
                const bool nR = (nan_r >> h) & 1;
                float v0 = ldexpf(acc[4 * i + 2 * h], eR + eS0);
                float v1 = ldexpf(acc[4 * i + 2 * h + 1], eR + eS1);
                if (nR || nS0) v0 = qnan;
                if (nR || nS1) v1 = qnan;
                store_value(p, geo, m0 + c, n0 + rr, v0);  // transposed: S rows are D rows
                store_value(p, geo, m0 + c + 1, n0 + rr, v1);
            }
        }
    }  // !kEpiSmem
    if (p.splits > 1) {
        splitk_finish<TILE_M, TILE_N, kConsumerThreads, kAPreS>(args, tm, tn, tid - 128, s_last,
                                                                [] { named_barrier(1, kConsumerThreads); });
    }
#else
    F4GEMM_TRAP_WRONG_ARCH();
#endif
}
