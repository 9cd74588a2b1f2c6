// Decode sm_90a MXFP4 x MXFP4 -> bf16 GEMM for small M (the `dec` family): no shared-memory staging of
// the weights. B comes in the frag16 layout (include/f4gemm/layout.hpp: 16-row groups, 128-K chunks of
// 1024 bytes, bit-plane words), so every lane loads its mma.sync fragments of B straight from global
// memory with 16-byte loads, two chunks ahead in registers. The weight rows are the M side of
// mma.sync.m16n8k32 (e5m2, fp32 accumulate), the activation rows (up to 16 per CTA row) the N side.
//   - B: e5m2 bytes of e2m1 * 2^-14 with two masks and a shift per 4 elements (bit-plane words); its
//     block scale 2^(e - ref) is applied in the promotion (FFMA), as in the bit-plane ws kernels.
//   - A: read from the plain layout (small, L1/L2 resident) and converted in registers with the LUT of
//     cvt8, its block scale folded relative to a per-row reference, as in every other kernel.
//   - One mma per (16 weight rows, 8 activation rows, 32-element scale block) into a zero accumulator,
//     then one FFMA per output: the exactness argument of docs/KERNELS_SM90.md holds unchanged (exact
//     block sums, power-of-two scale, one fp32 rounding per block).
//   - The CTA's warps split K; their fp32 partials are summed in shared memory in warp order
//     (deterministic), and the epilogue applies 2^(refA + refB), alpha, beta * C.
//   - Rows whose scales span more than the FP8 window, in A or B, send the whole CTA to exact_tile.
// One source, many cubins (kernels/sm90a/CMakeLists.txt); docs/KERNELS_SM90.md "dec".
#include "sm90_common.cuh"
#include "sm90_ptx.cuh"

#ifndef F4GEMM_KNL_NAME
#define F4GEMM_KNL_NAME f4gemm_sm90a_dec_16x64
#endif
//   DEC_R       16-row weight groups per CTA (tile_N = 16 * DEC_R)
//   DEC_WARPS   warps per CTA, splitting K (>= 8: exact_tile needs 256 threads)
//   MIN_BLOCKS  CTAs per SM the register budget is cut for
//   DEC_PF      chunks of B loaded ahead (1 or 2)
#ifndef F4GEMM_DEC_R
#define F4GEMM_DEC_R 4
#endif
#ifndef F4GEMM_DEC_WARPS
#define F4GEMM_DEC_WARPS 8
#endif
#ifndef F4GEMM_MIN_BLOCKS
#define F4GEMM_MIN_BLOCKS 1
#endif
#ifndef F4GEMM_DEC_PF
#define F4GEMM_DEC_PF 2
#endif

namespace {
using namespace f4gemm::sm90;

constexpr int kR = F4GEMM_DEC_R;
constexpr int kWarps = F4GEMM_DEC_WARPS;
constexpr int kThreads = 32 * kWarps;
constexpr int kPf = F4GEMM_DEC_PF;
constexpr int TILE_M = 16;
constexpr int TILE_N = 16 * kR;
constexpr int kRedPitch = TILE_N + 4;  // floats; = 4 mod 32: the fragment stores hit 32 distinct banks
constexpr int kRedBytes = kWarps * TILE_M * kRedPitch * 4;
constexpr int kUnionBytes = kRedBytes > kExactSmemBytes ? kRedBytes : kExactSmemBytes;
constexpr int kSmemBytes = kUnionBytes + 8 * (TILE_M + TILE_N) + 16;  // checked against the manifest
static_assert(kWarps >= 8, "exact_tile needs 256 threads");
static_assert(kPf == 1 || kPf == 2, "prefetch depth");
#ifdef F4GEMM_THREADS
static_assert(F4GEMM_THREADS == kThreads, "CMakeLists.txt threads disagree");
#endif
#ifdef F4GEMM_SMEM_BYTES
static_assert(F4GEMM_SMEM_BYTES == kSmemBytes, "CMakeLists.txt smem disagrees");
#else
static_assert(kSmemBytes > 0, "");
#endif

// 16 bytes of B that are read once: no L1 allocation.
__device__ __forceinline__ uint4 ldg_stream(const uint8_t* ptr) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(ptr));
    return v;
}

__device__ __forceinline__ uint32_t word_of(const uint4& v, int j) {
    return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
}

// D(16x8, fp32) = A(16x32, e5m2, row) * B(32x8, e5m2, col), zero accumulator.
__device__ __forceinline__ void mma_e5m2(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%10, %10, %10, %10};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(0.0f));
}

// Per-warp main loop over chunks [c0, c1) of 128 K. kNt8: activation 8-row tiles (1 when M - m0 <= 8).
template <int kNt8>
__device__ __forceinline__ void dec_loop(const Problem& p, int m0, int n0, int c0, int c1, int lane,
                                         const int (&refA)[2], const int (&refB)[kR][2],
                                         float (&acc)[kR][2][4]) {
    const int g = lane >> 2, t = lane & 3;
    const long grp = 16L * p.ldb;  // bytes per 16-row group of B
    const uint8_t* bbase = p.B + (long)(n0 / 16) * grp + lane * 16;
    const uint8_t* arow[2] = {p.A + (long)(m0 + g) * p.lda + 4 * t, p.A + (long)(m0 + 8 + g) * p.lda + 4 * t};
    const uint8_t* asrow[2] = {p.sA + (long)(m0 + g) * p.ldsa, p.sA + (long)(m0 + 8 + g) * p.ldsa};
    const uint8_t* bsrow = p.sB + (long)(n0 + g) * p.ldsb;  // row g of group 0; row 16rg + 8h at + (16rg + 8h) * ldsb
    const int ls8 = 8 * p.ldsb;
    uint4 bw[kPf][kR][2];  // chunks c .. c + kPf - 1 of B: this lane's 16 bytes of rows g and g + 8
    auto load_b = [&](int c, uint4(&dst)[kR][2]) {
        if (c < c1) {
#pragma unroll
            for (int rg = 0; rg < kR; ++rg) {
                const uint8_t* q = bbase + rg * grp + (long)c * 1024;
                dst[rg][0] = ldg_stream(q);
                dst[rg][1] = ldg_stream(q + 512);
            }
        }
    };
#pragma unroll
    for (int i = 0; i < kPf; ++i) load_b(c0 + i, bw[i]);
    struct Small {
        uint32_t aw[kNt8][4], asc[kNt8], bsc[kR][2];
    } nx;
    auto load_small = [&](int c, Small& dst) {
        if (c < c1) {
#pragma unroll
            for (int h = 0; h < kNt8; ++h) {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    dst.aw[h][j] = __ldg(reinterpret_cast<const uint32_t*>(arow[h] + (c * 4 + j) * 16));
                dst.asc[h] = __ldg(reinterpret_cast<const uint32_t*>(asrow[h] + c * 4));
            }
#pragma unroll
            for (int rg = 0; rg < kR; ++rg) {
                dst.bsc[rg][0] = __ldg(reinterpret_cast<const uint32_t*>(bsrow + (2 * rg) * ls8 + c * 4));
                dst.bsc[rg][1] = __ldg(reinterpret_cast<const uint32_t*>(bsrow + (2 * rg + 1) * ls8 + c * 4));
            }
        }
    };
    load_small(c0, nx);

    for (int c = c0; c < c1; ++c) {
        uint4 cur[kR][2];
#pragma unroll
        for (int rg = 0; rg < kR; ++rg) {
            cur[rg][0] = bw[0][rg][0];
            cur[rg][1] = bw[0][rg][1];
        }
#pragma unroll
        for (int i = 0; i + 1 < kPf; ++i)
#pragma unroll
            for (int rg = 0; rg < kR; ++rg) {
                bw[i][rg][0] = bw[i + 1][rg][0];
                bw[i][rg][1] = bw[i + 1][rg][1];
            }
        load_b(c + kPf, bw[kPf - 1]);

        // This chunk's A words (4 blocks) and scales and the B scales of this lane's rows, loaded one chunk
        // ahead (A is read once per CTA, from L2).
        uint32_t aw[kNt8][4], asc[kNt8], bsc[kR][2];
#pragma unroll
        for (int h = 0; h < kNt8; ++h) {
#pragma unroll
            for (int j = 0; j < 4; ++j) aw[h][j] = nx.aw[h][j];
            asc[h] = nx.asc[h];
        }
#pragma unroll
        for (int rg = 0; rg < kR; ++rg) {
            bsc[rg][0] = nx.bsc[rg][0];
            bsc[rg][1] = nx.bsc[rg][1];
        }
        load_small(c + 1, nx);

#pragma unroll
        for (int j = 0; j < 4; ++j) {
            uint32_t bf[kNt8][2];  // activation fragments (mma B operand): lo / hi of word t
#pragma unroll
            for (int h = 0; h < kNt8; ++h) {
                uint32_t lut_lo, lut_hi;
                make_lut((int)((asc[h] >> (8 * j)) & 0xFF) - refA[h], lut_lo, lut_hi);
                cvt8(aw[h][j], lut_lo, lut_hi, bf[h][0], bf[h][1]);
            }
#pragma unroll
            for (int rg = 0; rg < kR; ++rg) {
                const uint32_t x0 = word_of(cur[rg][0], j), x1 = word_of(cur[rg][1], j);
                uint32_t af[4];
                af[0] = x0 & 0x8E8E8E8Eu;  // e0..e3 of row g as e5m2 of e2m1 * 2^-14
                af[1] = x1 & 0x8E8E8E8Eu;  // row g + 8
                af[2] = ((x0 >> 3) & 0x0E0E0E0Eu) | ((x0 & 0x01010101u) << 7);  // e4..e7
                af[3] = ((x1 >> 3) & 0x0E0E0E0Eu) | ((x1 & 0x01010101u) << 7);
                // 2^(e - ref) in [2^-13, 2^13] for a foldable row (NaN rows: garbage, overwritten by NaN)
                const float f0 = __int_as_float((int)(((bsc[rg][0] >> (8 * j)) & 0xFF) - refB[rg][0] + 127) << 23);
                const float f1 = __int_as_float((int)(((bsc[rg][1] >> (8 * j)) & 0xFF) - refB[rg][1] + 127) << 23);
#pragma unroll
                for (int h = 0; h < kNt8; ++h) {
                    float d[4];
                    mma_e5m2(d, af, bf[h][0], bf[h][1]);
                    acc[rg][h][0] = fmaf(d[0], f0, acc[rg][h][0]);
                    acc[rg][h][1] = fmaf(d[1], f0, acc[rg][h][1]);
                    acc[rg][h][2] = fmaf(d[2], f1, acc[rg][h][2]);
                    acc[rg][h][3] = fmaf(d[3], f1, acc[rg][h][3]);
                }
            }
        }
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads, F4GEMM_MIN_BLOCKS)
    F4GEMM_KNL_NAME(const __grid_constant__ F4gemmSm90Args args) {
#if F4GEMM_SM90A_ENABLED
    extern __shared__ __align__(16) uint8_t smem[];
    float* red = reinterpret_cast<float*>(smem);  // [kWarps][TILE_M][kRedPitch] fp32 partials
    int* s_ref = reinterpret_cast<int*>(smem + kUnionBytes);  // [TILE_M] A rows, then [TILE_N] B rows
    int* s_nan = s_ref + TILE_M + TILE_N;
    int* s_wide = s_nan + TILE_M + TILE_N;

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const Problem p = load_problem(args);
    const SplitGeometry geo = split_geometry(p, TILE_M, TILE_N);
    const int m0 = blockIdx.y * TILE_M, n0 = blockIdx.x * TILE_N;

    if (tid == 0) *s_wide = 0;
    __syncthreads();
    // Per-row scale scan over the whole K (8 lanes per row): reference, NaN, wide. A rows past M and B
    // rows past N are padding (scale 0x7F) and never stored: not scanned.
    {
        constexpr int kRows = TILE_M + TILE_N;
        const int sub = lane / 8, part = lane % 8;
        for (int r0 = warp * 4; r0 < kRows; r0 += 4 * kWarps) {  // warp-uniform trip count
            const int r = r0 + sub;
            const bool is_a = r < TILE_M;
            const int row = is_a ? m0 + r : n0 + (r - TILE_M);
            const bool valid = r < kRows && (is_a ? row < p.M : row < p.N);
            const uint8_t* sc = valid ? (is_a ? p.sA + (long)row * p.ldsa : p.sB + (long)row * p.ldsb) : p.sA;
            const RowRef rr = scan_row(sc, p.K / 256, part, 8, valid);
            if (part == 0 && r < kRows) {
                s_ref[r] = rr.ref;
                s_nan[r] = rr.nan;
                if (rr.wide) *s_wide = 1;
            }
        }
    }
    __syncthreads();
    if (*s_wide) {
        exact_tile<kThreads, kExactBFrag16>(p, geo, m0, n0, TILE_M, TILE_N, 0, p.K / 32, smem, tid);
        return;
    }

    const int g = lane >> 2, t = lane & 3;
    int refA[2] = {s_ref[g], s_ref[8 + g]};
    int refB[kR][2];
#pragma unroll
    for (int rg = 0; rg < kR; ++rg) {
        refB[rg][0] = s_ref[TILE_M + 16 * rg + g];
        refB[rg][1] = s_ref[TILE_M + 16 * rg + 8 + g];
    }
    float acc[kR][2][4];
#pragma unroll
    for (int rg = 0; rg < kR; ++rg)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int i = 0; i < 4; ++i) acc[rg][h][i] = 0.0f;

    const int nch = p.K / 128;
    const int c0 = warp * nch / kWarps, c1 = (warp + 1) * nch / kWarps;
    if (p.M - m0 > 8) {
        dec_loop<2>(p, m0, n0, c0, c1, lane, refA, refB, acc);
    } else {
        dec_loop<1>(p, m0, n0, c0, c1, lane, refA, refB, acc);
    }

    // Partials -> shared memory: acc[rg][h][i] is output (m = 8h + 2t + i%2, n = 16rg + g + 8(i/2)).
    float* mine = red + warp * TILE_M * kRedPitch;
#pragma unroll
    for (int rg = 0; rg < kR; ++rg)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int i = 0; i < 4; ++i)
                mine[(8 * h + 2 * t + (i % 2)) * kRedPitch + 16 * rg + g + 8 * (i / 2)] = acc[rg][h][i];
    __syncthreads();
    // Sum over warps in order; v = sum * 2^(refA - 127) * 2^(refB - 127 + 14) (bit-plane B is e2m1 * 2^-14).
    const float qnan = __int_as_float(0x7FC00000);
    for (int idx = tid; idx < TILE_M * TILE_N; idx += kThreads) {
        const int m = idx / TILE_N, n = idx % TILE_N;
        if (m0 + m >= p.M || n0 + n >= p.N) continue;
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) s += red[(w * TILE_M + m) * kRedPitch + n];
        float v = ldexpf(s, s_ref[m] + s_ref[TILE_M + n] - 254 + 14);
        if (s_nan[m] || s_nan[TILE_M + n]) v = qnan;
        store_value(p, geo, m0 + m, n0 + n, v);
    }
#else
    F4GEMM_TRAP_WRONG_ARCH();
#endif
}
