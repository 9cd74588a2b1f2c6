// sm_90a MXFP4 x MXFP4 -> bf16 GEMM for large shapes, in two launches (abi sm90pp1):
//
//   <name>_prepass  every row of A and B once: e2m1 -> e5m2 with the E8M0 block scale folded into the
//                   exponent (relative to the row's reference exponent), written to the workspace in
//                   exactly the shared-memory image the GEMM's wgmma reads (tile-major, 128-byte rows,
//                   128B swizzle), plus one word per row: reference exponent, NaN and wide flags. A is
//                   plain with its plain scales; B is the packed weight W (frag16s, weight.h), its scales in
//                   the chunks and its row summaries in the group headers.
//   <name>          warp-specialised FP8 wgmma GEMM: one thread issues two 1D bulk copies (TMA engine,
//                   no tensor map) per 128-K stage into a shared-memory ring; both wgmma operands come
//                   from shared memory; one fresh accumulator per 32-element scale block, promoted into
//                   fp32 registers (the exactness argument of sm90_mxfp4_gemm_ws.cu, unchanged).
//
// Why: the ws kernels convert every operand element once per tile that uses it (N/128 times for A,
// M/128 times for B); at 8192^3 that conversion kept the ALU the busiest pipe (docs/PERF.md entry 9).
// The pre-pass converts each element once, and the pre-tiled image turns the loads into one large
// bulk copy per operand and stage. Design, precision and measurements: docs/KERNELS_SM90.md,
// docs/PERF.md; workspace layout and launch geometry: docs/ABI_SM90.md.
#include "sm90_common.cuh"
#include "sm90_ptx.cuh"
#include "sm90_wgmma_e5m2.cuh"

// ---------------------------------------------------------------------------------------------
// Config (one cubin per config, from -D macros; defaults let the file compile on its own)
//   BLOCK_M  tile rows of A = 64 per consumer warpgroup (64 or 128; 192 = three warpgroups at 160
//            registers spilled and serialised the wgmmas, C7512)
//   BLOCK_N  tile rows of B = wgmma N
//   STAGES   depth of the ring (128 K per stage)
//   GROUP_M  tile raster: GROUP_M row bands of tiles are swept together, so the operands of the CTAs
//            resident at once stay in L2
// ---------------------------------------------------------------------------------------------
#ifndef F4GEMM_KNL_NAME
#define F4GEMM_KNL_NAME f4gemm_sm90a_pp_128x128
#endif
#ifndef F4GEMM_BLOCK_M
#define F4GEMM_BLOCK_M 128
#endif
#ifndef F4GEMM_BLOCK_N
#define F4GEMM_BLOCK_N 128
#endif
#ifndef F4GEMM_STAGES
#define F4GEMM_STAGES 6
#endif
#ifndef F4GEMM_GROUP_M
#define F4GEMM_GROUP_M 8
#endif
//   SPAN     stages per straight-line block of the consumer loop (1 or 2): the wgmma pipeline drains once
//            per block
#ifndef F4GEMM_SPAN
#define F4GEMM_SPAN 1
#endif

//   PROMOTE  0: accumulation mode exact (a fresh accumulator per 32-K scale block, promoted into fp32);
//            P > 0: mode promoted, one wgmma chain over P stages (P * 128 K: 4P k32 steps accumulating in
//            the tensor core) per promotion (docs/VERIFY.md, "Promoted mode")
#ifndef F4GEMM_PROMOTE
#define F4GEMM_PROMOTE 0
#endif

//   BCONV    0: abi sm90pp1, the pre-pass converts A and B, then the GEMM runs.
//            1: abi sm90pp2, B is converted by <name>_bconv, a few persistent CTAs launched after the
//            pre-pass (which then converts A only, writes B's row words and zeroes one ready counter per (B
//            tile, 128-K stage)), while the GEMM runs: its producer waits for a stage's counter before
//            copying it, so the GEMM's main loop overlaps the conversion of B (docs/KERNELS_SM90.md "B
//            converted beside the GEMM"). (The GEMM's own producer warps converting B instead was measured
//            and removed: PERF.md entry 46.)
#ifndef F4GEMM_BCONV
#define F4GEMM_BCONV 0
#endif

//   PRE_RING 0: the pre-pass's warps load A's rows and B's chunks into registers. R > 0: each warp streams
//            them through a ring of R shared-memory slots filled by bulk copies (docs/PERF.md entry 45)
#ifndef F4GEMM_PRE_RING
#define F4GEMM_PRE_RING 0
#endif

#define F4GEMM_PREPASS_NAME F4GEMM_CAT(F4GEMM_KNL_NAME, _prepass)
#define F4GEMM_BCONV_NAME F4GEMM_CAT(F4GEMM_KNL_NAME, _bconv)

namespace {
using namespace f4gemm::sm90;

constexpr int BLOCK_M = F4GEMM_BLOCK_M;
constexpr int BLOCK_N = F4GEMM_BLOCK_N;
constexpr int kStages = F4GEMM_STAGES;
constexpr int kGroupM = F4GEMM_GROUP_M;
constexpr int kSpan = F4GEMM_SPAN;
constexpr int kPromote = F4GEMM_PROMOTE;
constexpr bool kBconv = F4GEMM_BCONV != 0;
constexpr int kPreRing = F4GEMM_PRE_RING;
static_assert(kPreRing >= 0 && kPreRing <= 6, "pre-pass ring: 0 (register loads) or 1..6 slots per B warp");
constexpr int kKStage = 128;                      // K per stage = one 128-byte swizzle atom of e5m2
constexpr int kSteps = kKStage / 32;              // k32 wgmmas (= scale blocks) per stage
constexpr int kConsumers = BLOCK_M / 64;          // consumer warpgroups 1..kConsumers, 64 A rows each
constexpr int kThreads = 128 * (1 + kConsumers);  // WG0: producer (one thread issues the copies)
constexpr int kConsumerThreads = 128 * kConsumers;
constexpr int kAccRegs = BLOCK_N / 2;

// Registers: the launch gives every thread 65536 / kThreads (rounded down to 8); WG0 gives most of its
// share back (setmaxnreg.dec) and the consumers take it (setmaxnreg.inc). Measured: a one-warp producer
// (288 threads, 224 registers each) is refused at launch (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES): the
// register file is handed out per warpgroup, so 288 threads cost as much as 384.
constexpr int kLaunchRegs = (65536 / kThreads) / 8 * 8 > 255 ? 255 : (65536 / kThreads) / 8 * 8;
constexpr int kRegWG0 = 40;
constexpr int kRegPool = (1 + kConsumers) * kLaunchRegs - kRegWG0;
constexpr int kRegConsumer = kRegPool / kConsumers / 8 * 8 > 240 ? 240 : kRegPool / kConsumers / 8 * 8;
// Two fresh accumulators (wgmma j+1 in flight while j is promoted) where the budget allows.
constexpr bool kDoubleFrag = 3 * kAccRegs + 24 <= kRegConsumer;
static_assert(kRegWG0 + kConsumers * kRegConsumer <= (1 + kConsumers) * kLaunchRegs,
              "setmaxnreg budget exceeds the registers allocated at launch: inc would never return");

static_assert(BLOCK_M % 64 == 0 && kConsumers >= 1 && kConsumers <= 2, "64 A rows per consumer warpgroup");
static_assert(BLOCK_N == 64 || BLOCK_N == 128 || BLOCK_N == 256, "wgmma N with an SS wrapper");
static_assert(256 % BLOCK_M == 0 && 256 % BLOCK_N == 0, "tiles divide the host's 256-row padding");
static_assert(kStages >= 2 * kSpan, "a ring");
static_assert(kSpan == 1 || kSpan == 2, "K % 256 == 0 makes the stage count even, not more");
static_assert(kPromote == 0 || kPromote == 1 || kPromote == 2,
              "a promotion unit divides the (even) stage count");
static_assert(kPromote == 0 || kSpan * kPromote <= 2,
              "a straight-line block of units covers at most 2 stages");

// Shared memory (offsets from a 1024-byte aligned base): per stage A (BLOCK_M, 128 B) then B
// (BLOCK_N, 128 B), both SW128 K-major, exactly as the pre-pass wrote them; then the mbarriers and the
// per-row words of the tile.
constexpr int kABytes = BLOCK_M * kKStage;
constexpr int kBBytes = BLOCK_N * kKStage;
constexpr int kStageBytes = kABytes + kBBytes;
constexpr int kOffBar = kStages * kStageBytes;  // full[kStages], empty[kStages]
constexpr int kOffRows = kOffBar + 2 * kStages * 8;
constexpr int kSmemBytes = kOffRows + 4 * (BLOCK_M + BLOCK_N) + 1024;
static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0, "SW128 atoms need 1024-byte alignment");
static_assert(kOffBar >= kExactSmemBytes, "the exact fallback reuses the ring as staging");
static_assert(kSmemBytes <= 227 * 1024, "sm_90 dynamic shared memory limit");

// Workspace view (docs/ABI_SM90.md, "sm90pp1"): Mr = tiles_m * BLOCK_M, Nr = tiles_n * BLOCK_N;
//   A8   (Mr/BLOCK_M, K/128, BLOCK_M, 128) e5m2 at byte 0
//   B8   (Nr/BLOCK_N, K/128, BLOCK_N, 128) e5m2 at byte Mr*K
//   rows uint32 [Mr] (A) then [Nr] (B)        at byte (Mr+Nr)*K
//   ready uint32 [Nr/BLOCK_N][K/128] at byte (Mr+Nr)*(K+4), sm90pp2 only: per B tile and 128-K stage, the
//        16-row groups of that stage converted (BLOCK_N/16 = ready)
// Inside a (rows, 128) slab the 16-byte chunk c of row r is stored at chunk c ^ (r % 8): the 128B swizzle.
struct Workspace {
    uint8_t* a8;
    uint8_t* b8;
    uint32_t* rows_a;
    uint32_t* rows_b;
    uint32_t* ready;  // sm90pp2
};
__device__ __forceinline__ Workspace workspace_view(const F4gemmSm90Args& args, const SplitGeometry& g,
                                                    int K) {
    uint8_t* ws = reinterpret_cast<uint8_t*>(args.ptr_workspace);
    Workspace w;
    w.a8 = ws;
    w.b8 = ws + (size_t)g.Mr * K;
    w.rows_a = reinterpret_cast<uint32_t*>(ws + (size_t)(g.Mr + g.Nr) * K);
    w.rows_b = w.rows_a + g.Mr;
    w.ready = w.rows_b + g.Nr;
    return w;
}

using WgmmaSS = WgmmaE5m2SS<BLOCK_N>;
using WgmmaSSAcc = WgmmaE5m2SSAcc<BLOCK_N>;
static_assert(WgmmaSS::kRegs == kAccRegs, "accumulator fragment size");

// Promoted mode: the chain of unit u (stages u * kPromote ..), 4 * kPromote k32 wgmmas into f (the first
// overwrites it), one commit group. A function rather than a lambda so that it is always inlined: as a lambda
// called twice ptxas kept both accumulators in local memory and serialised the wgmmas (C7514).
__device__ __forceinline__ void promoted_chain(float (&f)[kAccRegs], int u, uint8_t* smem, uint64_t* bar_full,
                                               int c) {
#pragma unroll
    for (int ss = 0; ss < (kPromote > 0 ? kPromote : 1); ++ss) {
        const int s = u * kPromote + ss, slot = s % kStages;
        mbar_wait(&bar_full[slot], (s / kStages) & 1);
        if (ss == 0)
            wgmma_fence();  // after the wait: a branch between the fence and the wgmma serialised them
        const uint32_t base = smem_u32(smem + slot * kStageBytes);
#pragma unroll
        for (int j = 0; j < kSteps; ++j) {
            const uint64_t da = make_desc_sw128(base + c * (64 * 128) + j * 32);
            const uint64_t db = make_desc_sw128(base + kABytes + j * 32);
            if (ss == 0 && j == 0)
                WgmmaSS::mma(f, da, db);
            else
                WgmmaSSAcc::mma(f, da, db);
        }
    }
    wgmma_commit();
}

constexpr int kPrepassThreads = 256;  // one warp per row of A, one warp per (16-row group, chunk subset) of B
constexpr int kBChunkWarps = 16;      // B: the 16 warps of a 16-row group split its 128-K chunks

// One scale block of W (16 bytes of bit-plane words: row r, block j of a 128-K chunk) -> its two 16-byte
// chunks 2j (words 0, 1: elements 0..15) and 2j + 1 of the row's 128-byte SW128 image row `dst_row` (chunk q
// stored at q ^ sw, sw = r % 8), e2m1 * 2^(e - ref) as e5m2; NaN blocks: zeros (the epilogue writes NaN for
// the column). The pre-pass and sm90pp2's _bconv write B's image with it.
__device__ __forceinline__ void b_block_store(const uint4& x, uint32_t e, int ref, uint8_t* dst_row, int j,
                                              int sw) {
    uint4 o0 = make_uint4(0u, 0u, 0u, 0u), o1 = make_uint4(0u, 0u, 0u, 0u);
    if (e != 0xFFu) {
        uint32_t lut_lo, lut_hi;
        make_lut((int)e - ref, lut_lo, lut_hi);
        cvt8_bitplane(x.x, lut_lo, lut_hi, o0.x, o0.y);  // natural k order, as for A
        cvt8_bitplane(x.y, lut_lo, lut_hi, o0.z, o0.w);
        cvt8_bitplane(x.z, lut_lo, lut_hi, o1.x, o1.y);
        cvt8_bitplane(x.w, lut_lo, lut_hi, o1.z, o1.w);
    }
    *reinterpret_cast<uint4*>(dst_row + (((2 * j) ^ sw) << 4)) = o0;
    *reinterpret_cast<uint4*>(dst_row + (((2 * j + 1) ^ sw) << 4)) = o1;
}

// PRE_RING: one pre-pass warp streams n pieces of global memory through its kPreRing shared-memory slots
// (`ring`, `bar`: the warp's own). Lane 0 bulk-copies piece i (`src(i, dst, bar)` issues the copy and returns
// nothing) into slot i % kPreRing; every lane waits for it, `read(slot)` takes what it needs into registers,
// the slot is refilled with piece i + kPreRing, and `use(i, data)` converts and stores. The A rows and the B
// chunks of the pre-pass both go through here.
template <int kRing, class Src, class Read, class Use>
__device__ __forceinline__ void warp_ring_stream(uint8_t (*ring)[F4GEMM_FRAG16S_CHUNK], uint64_t* bar, int n,
                                                 int lane, Src src, Read read, Use use) {
    if (lane == 0) {
        for (int q = 0; q < kRing; ++q) mbar_init(&bar[q], 1);
        fence_barrier_init();
        for (int i = 0; i < n && i < kRing; ++i) src(i, ring[i % kRing], &bar[i % kRing]);
    }
    __syncwarp();
    for (int i = 0; i < n; ++i) {
        const int slot = i % kRing;
        mbar_wait(&bar[slot], (i / kRing) & 1);
        const auto data = read(ring[slot]);
        __syncwarp();  // every lane has read the slot before it is refilled
        if (lane == 0 && i + kRing < n) src(i + kRing, ring[slot], &bar[slot]);
        use(i, data);
    }
}

// The GEMM's side of the ready counters of one B tile: waits until stage s is converted (all BLOCK_N / 16
// groups) and returns the end of the run of converted stages from s, judged on up to 64 counters read at once
// (relaxed 8-byte loads from the even stage s0 at or below s, then an acquire fence: one round trip per 64
// stages; an acquire load per stage made the producer the bottleneck, docs/PERF.md entry 44). Stages below s
// are known converted, and nks is even (K % 256 == 0), so the loads stay 8-byte aligned and inside the tile's
// row.
__device__ __forceinline__ int wait_ready(const uint32_t* ready, int s, int nks) {
    constexpr uint32_t kDone = BLOCK_N / 16;
    const int s0 = s & ~1;
    for (;;) {
        uint2 v[32];
#pragma unroll
        for (int q = 0; q < 32; ++q)
            v[q] = s0 + 2 * q < nks ? ld_relaxed_gpu_v2(ready + s0 + 2 * q) : make_uint2(0u, 0u);
        int e = s0;
#pragma unroll
        for (int q = 0; q < 32; ++q) {
            if (e == s0 + 2 * q && v[q].x >= kDone) ++e;
            if (e == s0 + 2 * q + 1 && v[q].y >= kDone) ++e;
        }
        if (e > s) {
            __threadfence();  // acquire: the stores counted before the relaxed loads that saw them
            return e;
        }
        __nanosleep(64);
    }
}

#if F4GEMM_BCONV
constexpr int kBconvBatch = 8;  // chunks per warp and run (stages of one group): loads in flight, one fence
// sm90pp2's _bconv: 8 warps per CTA (abi.hpp), the host picks the CTA count
constexpr int kBconvThreads = 256;

// sm90pp2's _bconv order: the GEMM's grouped raster sweeps min(tiles_m, GROUP_M) tile rows column by column,
// so its resident CTAs hold about (SMs / that) B tiles, all near the same stage. Work goes in windows of wb B
// tiles (the power of two at or below that); inside a window in runs of kBconvBatch stages, and inside a run
// tile by tile. Item i (one warp's work: one 16-row group's chunks over one run of stages) of the window
// space (tiles_n rounded up to wb) is group i % gpb of tile (i / gpb) % wb of its window, run (i / (wb gpb))
// % nruns: one division per item, and the group's header words read once per run. Items of tiles past tiles_n
// are skipped.
struct BconvOrder {
    int log2_wb, nruns, tiles_n;
    __device__ __forceinline__ bool item(int i, int& tile, int& run, int& G) const {
        constexpr int gpb = BLOCK_N / 16;
        const int r = i & ((gpb << log2_wb) - 1);
        const int q = i >> (log2_wb + __ffs(gpb) - 1);
        const int win = q / nruns;
        run = q - win * nruns;
        tile = (win << log2_wb) + r / gpb;
        G = tile * gpb + r % gpb;
        return tile < tiles_n;
    }
};
#endif
}  // namespace

// No split-K (the pre-pass image covers the whole K); B from W.
F4GEMM_EXPORT_ROW(F4GEMM_KNL_NAME, kSmemBytes, kThreads, BLOCK_M, BLOCK_N, 0,
                  kBconv ? F4GEMM_ABI_SM90PP2 : F4GEMM_ABI_SM90PP1, F4GEMM_B_FRAG16S,
                  kPromote > 0 ? F4GEMM_ACCUM_PROMOTED : F4GEMM_ACCUM_EXACT, 128 * kPromote, 1);

// =============================================================================================
// Pre-pass: grid = ceil((Mr + Nr) / 8) CTAs of 256 threads, no dynamic shared memory; warp w of the grid is
// item w of the sequence A rows 0 .. Mr-1, then B items 0 .. Nr-1 (docs/ABI_SM90.md); with prepass_skip_a,
// grid = ceil(Nr / 8) and warp w is item Mr + w (B alone). Padded rows
// (M <= m < Mr, N <= n < Nr) are real allocated rows (zero data, scale 0x7F) and are converted like the
// others: A's by the host's padding, B's by W's (Nr <= Np since every tile divides 256).
// =============================================================================================
extern "C" __global__ void __launch_bounds__(kPrepassThreads)
    F4GEMM_PREPASS_NAME(const __grid_constant__ F4gemmSm90Args args) {
#if F4GEMM_SM90A_ENABLED
    // PRE_RING: per warp, kPreRing slots of 1088 bytes (a B chunk or up to 1024 bytes of an A row) and their
    // mbarriers
    __shared__ __align__(128)
        uint8_t s_pre_ring[kPrepassThreads / 32][kPreRing > 0 ? kPreRing : 1][F4GEMM_FRAG16S_CHUNK];
    __shared__ uint64_t s_pre_bar[kPrepassThreads / 32][kPreRing > 0 ? kPreRing : 1];
    pdl_wait();
    const Problem p = load_problem(args);
    const SplitGeometry g = split_geometry(p, BLOCK_M, BLOCK_N);
    // prepass_skip_a (an N slab after the first, docs/ABI_SM90.md "N slabs"): the grid covers B's items alone
    const int item =
        blockIdx.x * (kPrepassThreads / 32) + threadIdx.x / 32 + (args.prepass_skip_a ? g.Mr : 0);
    const int lane = threadIdx.x % 32;
    if (item >= g.Mr + g.Nr) return;
    const Workspace w = workspace_view(args, g, p.K);

    if (item < g.Mr) {
        // A row `item`: scan its scales, then 16 elements (8 bytes of fp4, one scale block half) per lane and
        // iteration -> one 16-byte chunk of the image.
        const int row = item, t = row / BLOCK_M, r = row % BLOCK_M;
        const uint8_t* src = p.A + (size_t)row * p.lda;
        const uint8_t* sc = p.sA + (size_t)row * p.ldsa;
        uint8_t* tile = w.a8 + (size_t)t * BLOCK_M * p.K;
        const RowRef rr = scan_row(sc, p.K / 256, lane, 32, true);
        if (lane == 0) w.rows_a[row] = row_word(rr);
        const auto piece = [&](int u,
                               uint2 x) {  // elements 16u .. 16u + 15 -> one 16-byte chunk of the image
            const uint32_t e = __ldg(sc + u / 2);
            uint4 o = make_uint4(0u, 0u, 0u, 0u);  // NaN blocks: zeros (the epilogue writes NaN for the row)
            if (e != 0xFFu) {
                uint32_t lut_lo, lut_hi;
                make_lut((int)e - rr.ref, lut_lo, lut_hi);
                cvt8(x.x, lut_lo, lut_hi, o.x, o.y);  // elements 0..3, 4..7: natural k order
                cvt8(x.y, lut_lo, lut_hi, o.z, o.w);
            }
            const int kc = u / 8, c = u % 8;
            *reinterpret_cast<uint4*>(tile + ((size_t)kc * BLOCK_M + r) * 128 + ((c ^ (r & 7)) << 4)) = o;
        };
        if constexpr (kPreRing == 0) {
            for (int u = lane; u < p.K / 16; u += 32)
                piece(u, __ldg(reinterpret_cast<const uint2*>(src) + u));
        } else {
            // PRE_RING: the row's fp4 bytes in segments of up to 1024 (K / 2 is a multiple of 128) through
            // the warp's ring; 4 pieces of 8 bytes per lane and segment.
            struct Seg {
                uint2 x[4];
            };
            const int bytes = p.K / 2;
            constexpr int kRing = kPreRing > 0 ? kPreRing : 1;  // (1 only in the discarded PRE_RING 0 branch)
            warp_ring_stream<kRing>(
                s_pre_ring[threadIdx.x / 32], s_pre_bar[threadIdx.x / 32], (bytes + 1023) / 1024, lane,
                [&](int i, uint8_t* dst, uint64_t* b) {
                    const uint32_t nb = (uint32_t)min(1024, bytes - 1024 * i);
                    mbar_arrive_expect_tx(b, nb);
                    bulk_copy_g2s(dst, src + 1024 * i, nb, b);
                },
                [&](const uint8_t* slot) {
                    Seg g;
#pragma unroll
                    for (int q = 0; q < 4; ++q) g.x[q] = reinterpret_cast<const uint2*>(slot)[lane + 32 * q];
                    return g;
                },
                [&](int i, const Seg& g) {
#pragma unroll
                    for (int q = 0; q < 4; ++q) {
                        const int u = 128 * i + lane + 32 * q;
                        if (u < p.K / 16) piece(u, g.x[q]);
                    }
                });
        }
        return;
    }

    // B item n: warp `part` = n % 16 of the 16-row group G = n / 16 of W converts the group's chunks
    // c = part, part + 16, ... (a warp per row would read 16-byte pieces 128 bytes apart, one half-used
    // sector each). Per chunk the warp reads the 1024 data bytes whole, 16 contiguous bytes per lane and
    // load: piece q = lane (+ 32) is block j = lane / 8 of row gg = lane % 8 (+ 8) (frag16s: word
    // h*128 + j*32 + g*4 + t), i.e. one whole scale block; its scale is byte 1024 + 4 * row + j of the chunk.
    // The 16 rows' 128-byte image rows of that 128-K slab are contiguous (16 | BLOCK_N), so the warp's
    // stores cover 2048 contiguous bytes per chunk.
    const int n = item - g.Mr, G = n / 16, part = n % 16;
    const int gg = lane % 8, j = lane / 8;
    const uint8_t* grp = p.B + (size_t)G * f4gemm::frag16s_group_bytes(p.K);
    // Row words from the group header: the summary over the row's real blocks (W's padding blocks and rows
    // leave it as the scan over the padded row would find it), read by frag16s_row_ref with the scan's rule
    // (finish_row), so the word is the one the plain pre-pass wrote.
    const auto row_ref_of = [&](int r16) {
        return w_row_ref(__ldg(reinterpret_cast<const uint32_t*>(grp) + r16));
    };
    if (lane == 0) w.rows_b[n] = row_word(row_ref_of(part));
    const int nch = p.K / 128;
    if constexpr (kBconv) {  // _bconv converts B; this warp zeroes counters n % BLOCK_N + 32 i of its B tile
        uint32_t* ready = w.ready + (size_t)(n / BLOCK_N) * nch;
        for (int c = n % BLOCK_N + lane * BLOCK_N; c < nch; c += 32 * BLOCK_N) ready[c] = 0u;
        return;
    }
    const int ref0 = row_ref_of(gg).ref, ref1 = row_ref_of(gg + 8).ref;
    const int t = (16 * G) / BLOCK_N, r0 = (16 * G) % BLOCK_N + gg, r1 = r0 + 8;  // image rows; r % 8 = gg
    uint8_t* tile = w.b8 + (size_t)t * BLOCK_N * p.K;
    const int ref[2] = {ref0, ref1}, r[2] = {r0, r1};
    if constexpr (kPreRing == 0) {
        for (int c = part; c < nch; c += kBChunkWarps) {
            const uint8_t* chunk = grp + F4GEMM_FRAG16S_HEAD + (size_t)c * F4GEMM_FRAG16S_CHUNK;
            const uint4 x[2] = {__ldg(reinterpret_cast<const uint4*>(chunk) + lane),
                                __ldg(reinterpret_cast<const uint4*>(chunk) + 32 + lane)};
            const uint32_t e[2] = {__ldg(chunk + 1024 + 4 * gg + j), __ldg(chunk + 1024 + 4 * (gg + 8) + j)};
#pragma unroll
            for (int h = 0; h < 2; ++h)
                b_block_store(x[h], e[h], ref[h], tile + ((size_t)c * BLOCK_N + r[h]) * 128, j, gg);
        }
    } else {
        // PRE_RING: the warp's chunks c = part + 16 i come through its own ring of kPreRing shared-memory
        // slots, one bulk copy each (the chunk's 1088 bytes are contiguous and 16-byte aligned), so the bytes
        // in flight do not cost registers: the register loads above kept 1 KB per warp in flight and the loop
        // waited on them.
        struct Blk {
            uint4 x[2];
            uint32_t e[2];
        };
        constexpr int kRing = kPreRing > 0 ? kPreRing : 1;  // (1 only in the discarded PRE_RING 0 branch)
        warp_ring_stream<kRing>(
            s_pre_ring[threadIdx.x / 32], s_pre_bar[threadIdx.x / 32],
            (nch - part + kBChunkWarps - 1) / kBChunkWarps, lane,
            [&](int i, uint8_t* dst, uint64_t* b) {  // chunk part + 16 i
                mbar_arrive_expect_tx(b, F4GEMM_FRAG16S_CHUNK);
                bulk_copy_g2s(
                    dst, grp + F4GEMM_FRAG16S_HEAD + (size_t)(part + kBChunkWarps * i) * F4GEMM_FRAG16S_CHUNK,
                    F4GEMM_FRAG16S_CHUNK, b);
            },
            [&](const uint8_t* chunk) {
                return Blk{{reinterpret_cast<const uint4*>(chunk)[lane],
                            reinterpret_cast<const uint4*>(chunk)[32 + lane]},
                           {chunk[1024 + 4 * gg + j], chunk[1024 + 4 * (gg + 8) + j]}};
            },
            [&](int i, const Blk& k) {
                const int c = part + kBChunkWarps * i;
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    b_block_store(k.x[h], k.e[h], ref[h], tile + ((size_t)c * BLOCK_N + r[h]) * 128, j, gg);
            });
    }
#else
    F4GEMM_TRAP_WRONG_ARCH();
#endif
}

#if F4GEMM_BCONV
// =============================================================================================
// B converter (sm90pp2): grid = a few CTAs of kBconvThreads (the host's choice, docs/ABI_SM90.md), launched
// after the pre-pass with the programmatic-serialisation attribute, the GEMM after it with the same. It waits
// for the pre-pass (ready counters zeroed, row words written), lets the GEMM launch at once, and converts
// every chunk of B in BconvOrder, each warp taking items gw, gw + warps, ...; after an item's stores, one
// fence and one relaxed add per chunk on its (B tile, stage) counter. It never waits on the GEMM, and the
// GEMM launches only once every converter CTA runs, so the GEMM's waits always end.
// =============================================================================================
extern "C" __global__ void __launch_bounds__(kBconvThreads, 1)
    F4GEMM_BCONV_NAME(const __grid_constant__ F4gemmSm90Args args) {
#if F4GEMM_SM90A_ENABLED
    pdl_wait();
    pdl_trigger();
    const Problem p = load_problem(args);
    const SplitGeometry g = split_geometry(p, BLOCK_M, BLOCK_N);
    const Workspace w = workspace_view(args, g, p.K);
    const int lane = threadIdx.x % 32;
    const int nwarps = gridDim.x * (kBconvThreads / 32);
    const int gw = blockIdx.x * (kBconvThreads / 32) + threadIdx.x / 32;
    const int nch = p.K / 128;
    BconvOrder ord;
    const int wb = max(1, (int)sm_count() / min(g.tiles_m, kGroupM));
    ord.log2_wb = 31 - __clz(wb);
    ord.nruns = (nch + kBconvBatch - 1) / kBconvBatch;
    ord.tiles_n = g.tiles_n;
    const int total = (((g.tiles_n - 1) >> ord.log2_wb) + 1) * ord.nruns * (BLOCK_N / 16) << ord.log2_wb;
    // Byte offsets below 2^32 (W and the image of B are below 4 GB: the host's shapes, int M, N, K), so the
    // address arithmetic is 32-bit: one 64-bit add per access.
    const uint32_t group_bytes = (uint32_t)f4gemm::frag16s_group_bytes(p.K);
    const int gg = lane % 8, j = lane / 8;
    for (int i = gw; i < total; i += nwarps) {
        int tile, run, G;
        if (!ord.item(i, tile, run, G)) continue;
        const uint8_t* grp = p.B + (uint32_t)G * group_bytes;
        const int c0 = run * kBconvBatch, nc = min(kBconvBatch, nch - c0);
        const int ref0 = w_row_ref(__ldg(reinterpret_cast<const uint32_t*>(grp) + gg)).ref;
        const int ref1 = w_row_ref(__ldg(reinterpret_cast<const uint32_t*>(grp) + gg + 8)).ref;
        uint4 x[kBconvBatch][2];
        uint32_t e[kBconvBatch][2];
#pragma unroll
        for (int q = 0; q < kBconvBatch; ++q) {
            if (q >= nc) break;
            const uint8_t* chunk = grp + F4GEMM_FRAG16S_HEAD + (uint32_t)(c0 + q) * F4GEMM_FRAG16S_CHUNK;
            x[q][0] = __ldg(reinterpret_cast<const uint4*>(chunk) + lane);
            x[q][1] = __ldg(reinterpret_cast<const uint4*>(chunk) + 32 + lane);
            e[q][0] = __ldg(chunk + 1024 + 4 * gg + j);
            e[q][1] = __ldg(chunk + 1024 + 4 * (gg + 8) + j);
        }
        // image row 16 (G % gpb) + gg of tile `tile`, slab c: byte ((tile nch + c) BLOCK_N + row) 128
        uint8_t* dst =
            w.b8 + ((((uint32_t)tile * nch + c0) * BLOCK_N + 16 * (G % (BLOCK_N / 16)) + gg) * 128u);
#pragma unroll
        for (int q = 0; q < kBconvBatch; ++q) {
            if (q >= nc) break;
            b_block_store(x[q][0], e[q][0], ref0, dst + q * (BLOCK_N * 128), j, gg);
            b_block_store(x[q][1], e[q][1], ref1, dst + q * (BLOCK_N * 128) + 8 * 128, j, gg);
        }
        // One fence per run: a fence waits for the thread's stores to land, ~1 us, and one per chunk starved
        // the GEMM (docs/PERF.md entry 44). Fence, then relaxed adds: the release pattern.
        fence_proxy_async_global();
        __threadfence();
        __syncwarp();
        if (lane < nc) atomicAdd(w.ready + (uint32_t)tile * nch + c0 + lane, 1u);
    }
#else
    F4GEMM_TRAP_WRONG_ARCH();
#endif
}
#endif

// =============================================================================================
// GEMM: grid (tiles_n, tiles_m), kThreads threads, kSmemBytes of dynamic shared memory. Needs the
// pre-pass of the same arguments to have completed (stream order).
// =============================================================================================
extern "C" __global__ void __launch_bounds__(kThreads, 1)
    F4GEMM_KNL_NAME(const __grid_constant__ F4gemmSm90Args args) {
#if F4GEMM_SM90A_ENABLED
    // sm90pp2: launched early after _bconv, which waited for the pre-pass before letting it launch; what this
    // kernel reads of B's image it waits for on the ready counters (the producer, below).
    if constexpr (!kBconv) pdl_wait();
    extern __shared__ uint8_t smem_dyn[];
    uint8_t* smem = smem_dyn + ((1024u - (smem_u32(smem_dyn) & 1023u)) & 1023u);
    uint64_t* bar_full = reinterpret_cast<uint64_t*>(smem + kOffBar);
    uint64_t* bar_empty = bar_full + kStages;
    uint32_t* s_rows = reinterpret_cast<uint32_t*>(smem + kOffRows);  // [BLOCK_M] A rows, [BLOCK_N] B rows

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const Problem p = load_problem(args);
    const SplitGeometry geo = split_geometry(p, BLOCK_M, BLOCK_N);
    const Workspace w = workspace_view(args, geo, p.K);

    // Grouped raster: kGroupM row bands are swept together, column by column.
    const int id = blockIdx.x + blockIdx.y * gridDim.x;
    const int per_group = kGroupM * geo.tiles_n;
    const int first_m = (id / per_group) * kGroupM;
    const int group_m = min(geo.tiles_m - first_m, kGroupM);
    const int tm = first_m + (id % per_group) % group_m;
    const int tn = (id % per_group) / group_m;
    const int m0 = tm * BLOCK_M, n0 = tn * BLOCK_N;
    const int nks = p.K / kKStage;

    if (tid == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbar_init(&bar_full[s], 1);
            mbar_init(&bar_empty[s], kConsumerThreads);
        }
        fence_barrier_init();
    }
    int wide = 0;
    for (int i = tid; i < BLOCK_M + BLOCK_N; i += kThreads) {
        const uint32_t v = i < BLOCK_M ? w.rows_a[m0 + i] : w.rows_b[n0 + i - BLOCK_M];
        s_rows[i] = v;
        wide |= (v & kRowWide) != 0;
    }
    // Exact path for tiles with a row whose scales do not fold into e5m2 (> 26 binades): A plain, B from W.
    if (__syncthreads_or(wide)) {
        exact_tile<kThreads, kExactBFrag16S>(p, geo, m0, n0, BLOCK_M, BLOCK_N, 0, p.K / 32, smem, tid);
        // sm90pp2: the tile's B stages were converted all the same; the GEMM does not complete before _bconv
        // has finished writing the workspace (the next launch's pre-pass rewrites it).
        if (kBconv && tid == 0)
            for (int s = 0; s < nks;) s = wait_ready(w.ready + (size_t)tn * nks, s, nks);
        return;
    }

    if (warp < 4) {
        // Producer: one thread, two bulk copies per stage (the pre-pass image is contiguous per stage).
        setmaxnreg_dec<kRegWG0>();
        if (tid == 0) {
            const uint8_t* a_src = w.a8 + (size_t)tm * BLOCK_M * p.K;
            const uint8_t* b_src = w.b8 + (size_t)tn * BLOCK_N * p.K;
            int ready_end = 0;  // sm90pp2: stages [0, ready_end) of this B tile are known converted
            for (int s = 0; s < nks; ++s) {
                const int slot = s % kStages;
                if (s >= kStages) mbar_wait(&bar_empty[slot], ((s / kStages) - 1) & 1);
                if constexpr (kBconv) {  // stage s of B's image written by _bconv, then read by the async
                                         // proxy
                    if (s >= ready_end) {
                        ready_end = wait_ready(w.ready + (size_t)tn * nks, s, nks);
                        fence_proxy_async_global();
                    }
                }
                uint8_t* dst = smem + slot * kStageBytes;
                mbar_arrive_expect_tx(&bar_full[slot], kStageBytes);
                bulk_copy_g2s(dst, a_src + (size_t)s * kABytes, kABytes, &bar_full[slot]);
                bulk_copy_g2s(dst + kABytes, b_src + (size_t)s * kBBytes, kBBytes, &bar_full[slot]);
            }
        }
        return;
    }

    // Consumers: warpgroup c multiplies A rows [64c, 64c+64) of the tile by all BLOCK_N B rows.
    setmaxnreg_inc<kRegConsumer>();
    const int c = warp / 4 - 1;
    float acc[kAccRegs];
#pragma unroll
    for (int i = 0; i < kAccRegs; ++i) acc[i] = 0.0f;
    float frag[kDoubleFrag ? 2 : 1][kAccRegs];

    auto issue = [&](int s, int j, float(&f)[kAccRegs]) {
        const int slot = s % kStages;
        if (j == 0) mbar_wait(&bar_full[slot], (s / kStages) & 1);
        const uint32_t base = smem_u32(smem + slot * kStageBytes);
        wgmma_ss<WgmmaSS>(f, base + c * (64 * 128) + j * 32, base + kABytes + j * 32);
    };
    auto promote = [&](float(&f)[kAccRegs]) { promote_add(acc, f); };

    if constexpr (kPromote > 0) {
        // Promoted: one chain of 4 * kPromote k32 wgmmas per unit of kPromote stages into one accumulator
        // (the first overwrites it), committed as one group; per straight-line block of kSpan units, unit
        // q+1's chain is issued before unit q's 64 FADDs (a quarter of the exact mode's per 128 K).
        static_assert(kDoubleFrag, "the promoted schedule keeps two chains' accumulators");
        const int units = nks / (kPromote > 0 ? kPromote : 1);
        auto release = [&](int u) {
#pragma unroll
            for (int ss = 0; ss < kPromote; ++ss) mbar_arrive(&bar_empty[(u * kPromote + ss) % kStages]);
        };
        for (int u0 = 0; u0 < units; u0 += kSpan) {
            promoted_chain(frag[0], u0, smem, bar_full, c);
            if constexpr (kSpan == 2) {
                promoted_chain(frag[1], u0 + 1, smem, bar_full, c);
                wgmma_wait<1>();
                promote_add(acc, frag[0]);
                release(u0);
                wgmma_wait<0>();
                promote_add(acc, frag[1]);
                release(u0 + 1);
            } else {
                wgmma_wait<0>();
                promote_add(acc, frag[0]);
                release(u0);
            }
        }
    } else if constexpr (kDoubleFrag) {
        // Per block of kSpan stages, straight-line: wgmma q+1 is issued before the FADDs of step q, and
        // the block drains before the next one (the other consumer warpgroup covers the bubble). With a
        // wgmma in flight across the loop's back edge, or issued under a run-time condition, ptxas
        // serialised every wgmma here (C7514 / C7518), as it did in the ws kernels' rotating schedule.
        constexpr int kQ = kSpan * kSteps;  // wgmmas per block
        for (int s0 = 0; s0 < nks; s0 += kSpan) {
            issue(s0, 0, frag[0]);
#pragma unroll
            for (int q = 0; q < kQ; ++q) {
                if (q + 1 < kQ) {
                    issue(s0 + (q + 1) / kSteps, (q + 1) % kSteps, frag[(q + 1) % 2]);
                    wgmma_wait<1>();
                } else {
                    wgmma_wait<0>();
                }
                promote(frag[q % 2]);
                // The slot of stage s0 + q/kSteps is free once its last wgmma (step q) has completed.
                if (q % kSteps == kSteps - 1) mbar_arrive(&bar_empty[(s0 + q / kSteps) % kStages]);
            }
        }
    } else {
        for (int s = 0; s < nks; ++s) {
#pragma unroll
            for (int j = 0; j < kSteps; ++j) {
                issue(s, j, frag[0]);
                wgmma_wait<0>();
                promote(frag[0]);
            }
            mbar_arrive(&bar_empty[s % kStages]);
        }
    }

    // Epilogue (sm90_common.cuh): scales, NaN rows and columns, alpha/beta, the (M, N) mask.
    pdl_trigger();  // the main loop is done: the next kernel on the stream may be scheduled
    store_tile_a_on_m<BLOCK_M>(p, geo, acc, s_rows, m0, n0, c * 64 + (warp % 4) * 16 + lane / 4, lane % 4);
#else
    F4GEMM_TRAP_WRONG_ARCH();
#endif
}
