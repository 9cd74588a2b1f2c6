// Device helpers shared by every sm_90a MXFP4 kernel: the architecture guard, MXFP4 decoding, the
// exact CUDA-core tile routine (rung 1 of the ladder and the wide-scale fallback of the production
// kernels), the masked bf16 epilogue and the deterministic fp32 split-K reduction.
// The argument block is include/f4gemm/kernarg.h (F4gemmSm90Args); docs/ABI_SM90.md says what is read.
#pragma once

#include <cuda_bf16.h>
#include <stdint.h>

#include "f4gemm/bitplane.h"
#include "f4gemm/frag16s.h"
#include "f4gemm/kernarg.h"
#include "f4gemm/weight.h"
#include "sm90_ptx.cuh"

// ---------------------------------------------------------------------------------------------
// Architecture guard: these kernels use sm_90a-only instructions (wgmma, setmaxnreg). A build for any
// other target compiles the body away and traps at run time instead of computing garbage.
// ---------------------------------------------------------------------------------------------
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define F4GEMM_SM90A_ENABLED 1
#else
#define F4GEMM_SM90A_ENABLED 0
#endif

#define F4GEMM_TRAP_WRONG_ARCH() \
    do {                         \
        asm volatile("trap;");   \
    } while (0)

#define F4GEMM_CAT2(a, b) a##b
#define F4GEMM_CAT(a, b) F4GEMM_CAT2(a, b)

// A kernel's manifest row, as far as the kernel itself decides it: dynamic shared memory bytes, threads per
// block, tile_M x tile_N, whether it takes split-K, its abi, its B layout and the accumulation mode it
// implements, exported as constants that the PTX spells `.global .align 4 .u32 <knl_name>_<field> = <n>;`.
// The build reads them from the .ptx to write the manifest (kernels/sm90a/manifest.cmake), so each is
// computed once, in the kernel source, and never restated in CMake; the selection policy's fields (priority,
// max_m, min_m) come from kernels/sm90a/kernels.json. Not read at run time. Codes: abi 0 sm90v1, 1 sm90pp1,
// 2 sm90pa1, 3 sm90pp2; b_layout 0 plain, 1 frag16s (the W body); accum 0 exact, 1 promoted (docs/VERIFY.md);
// promote_k the K of one FP8 chain between promotions (128 or 256) of a promoted kernel, 0 for an exact one:
// the promoted bound's constant grows with it (docs/VERIFY.md section 7); reg_ctas the CTAs per SM its launch
// register budget allows where the kernel pins that budget (the setmaxnreg kernels: __launch_bounds__'
// minimum blocks), 0 where it does not (the policy then counts shared memory and threads only,
// sm90_ctas_per_sm). With the row, F4GEMM_PDL_GLOBAL (kernarg.h), read at run time: every kernel of the
// source calls pdl_wait() first.
#define F4GEMM_ABI_SM90V1 0
#define F4GEMM_ABI_SM90PP1 1
#define F4GEMM_ABI_SM90PA1 2
#define F4GEMM_ABI_SM90PP2 3
#define F4GEMM_B_PLAIN 0
#define F4GEMM_B_FRAG16S 1
#define F4GEMM_ACCUM_EXACT 0
#define F4GEMM_ACCUM_PROMOTED 1
#define F4GEMM_EXPORT_ROW(knl_name, smem_bytes, threads, tile_m, tile_n, split_k, abi, b_layout, accum, \
                          promote_k, reg_ctas)                                                          \
    extern "C" __device__ const unsigned F4GEMM_CAT(knl_name, _smem_bytes) = (unsigned)(smem_bytes);    \
    extern "C" __device__ const unsigned F4GEMM_CAT(knl_name, _threads) = (unsigned)(threads);          \
    extern "C" __device__ const unsigned F4GEMM_CAT(knl_name, _tile_m) = (unsigned)(tile_m);            \
    extern "C" __device__ const unsigned F4GEMM_CAT(knl_name, _tile_n) = (unsigned)(tile_n);            \
    extern "C" __device__ const unsigned F4GEMM_CAT(knl_name, _split_k) = (unsigned)(split_k);          \
    extern "C" __device__ const unsigned F4GEMM_CAT(knl_name, _abi) = (unsigned)(abi);                  \
    extern "C" __device__ const unsigned F4GEMM_CAT(knl_name, _b_layout) = (unsigned)(b_layout);        \
    extern "C" __device__ const unsigned F4GEMM_CAT(knl_name, _accum) = (unsigned)(accum);              \
    extern "C" __device__ const unsigned F4GEMM_CAT(knl_name, _promote_k) = (unsigned)(promote_k);      \
    extern "C" __device__ const unsigned F4GEMM_CAT(knl_name, _reg_ctas) = (unsigned)(reg_ctas);        \
    /* its kernels start with pdl_wait() (sm90_ptx.cuh): the host may launch them early (kernarg.h) */  \
    extern "C" __device__ const unsigned F4GEMM_PDL_GLOBAL = 1u

namespace f4gemm {
namespace sm90 {

// ---------------------------------------------------------------------------------------------
// Problem view: everything a kernel reads from the argument block, in bytes/elements.
// ---------------------------------------------------------------------------------------------
struct Problem {
    const uint8_t* A;        // (Mpad, K/2) fp4x2, row-major, element 2i in the low nibble
    const uint8_t* B;        // shipped kernels: the W body (weight.h), frag16s (Npad/16 groups of
                             // frag16s_group_bytes(K)); ladder kernels: (Npad, K/2) fp4x2, row-major
    const uint8_t* sA;       // (Mpad, K/32) e8m0, row-major
    const uint8_t* sB;       // ladder kernels only: (Npad, K/32) e8m0, row-major; null for the shipped ones
    const __nv_bfloat16* C;  // (M, N) bf16, row stride ldc elements; null when beta == 0
    __nv_bfloat16* D;        // (M, N) bf16, row stride ldd elements
    float* ws;               // fp32 partials [splits][Mr][Nr] then uint32 counters [tiles_m*tiles_n]
    uint32_t* counters;      // split-K tile counters [tiles_m*tiles_n] the last CTA resets, or null: in ws
    float alpha, beta;
    int M, N, K;
    int lda, ldb;     // bytes per row of A / B (stride_A0 / 2, stride_B0 / 2)
    int ldsa, ldsb;   // bytes per row of the scales
    int ldd, ldc;     // elements per row of D / C
    int splits;       // gridDim.z actually launched
    int k_per_split;  // K elements per split (multiple of 256)
};

__device__ __forceinline__ Problem load_problem(const F4gemmSm90Args& a) {
    Problem p;
    p.A = reinterpret_cast<const uint8_t*>(a.base.ptr_A);
    p.B = reinterpret_cast<const uint8_t*>(a.base.ptr_B);
    p.sA = reinterpret_cast<const uint8_t*>(a.base.ptr_ScaleA);
    p.sB = reinterpret_cast<const uint8_t*>(a.base.ptr_ScaleB);
    p.C = reinterpret_cast<const __nv_bfloat16*>(a.base.ptr_C);
    p.D = reinterpret_cast<__nv_bfloat16*>(a.base.ptr_D);
    p.ws = reinterpret_cast<float*>(a.ptr_workspace);
    p.counters = reinterpret_cast<uint32_t*>(a.ptr_counters);
    p.alpha = a.base.alpha;
    p.beta = a.base.beta;
    p.M = (int)a.base.M;
    p.N = (int)a.base.N;
    p.K = (int)a.base.K;
    p.lda = (int)(a.base.stride_A0 / 2);
    p.ldb = (int)(a.base.stride_B0 / 2);
    p.ldsa = (int)a.base.stride_ScaleA0;
    p.ldsb = (int)a.base.stride_ScaleB0;
    p.ldd = (int)a.base.stride_D0;
    p.ldc = (int)a.base.stride_C0;
    p.splits = a.num_splits > 1 ? (int)a.num_splits : 1;
    p.k_per_split = p.splits > 1 ? (int)a.k_per_split : p.K;
    if (p.beta == 0.0f) p.C = nullptr;  // C may be null when beta == 0: never read it then
    return p;
}

// sm90pa1 split-K (the A pre-pass tiles): the workspace holds the pre-pass's image of A first (Mr x K e5m2
// bytes, then one uint32 word per row: sm90_a_prepass.cuh), the fp32 partials (and the tile counters, without
// the launcher's counter buffer) from the next 256-byte boundary: F4GEMM_SM90PA_PARTIALS_OFFSET (kernarg.h),
// which the host's plan uses, written out (the macro itself moved ptxas's allocation of every pab kernel;
// this form is the device-checked one). Every split test of a pab kernel verifies against float64, which a
// difference between the two would fail.
__device__ __forceinline__ float* partials_after_a_image(const F4gemmSm90Args& a, int tile_m) {
    const long mr = ((long)a.base.M + tile_m - 1) / tile_m * tile_m;
    const long image = mr * (long)a.base.K + 4 * mr;
    return reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(a.ptr_workspace) + (image + 255) / 256 * 256);
}

// K range of split z, in 32-element scale blocks: [kb0, kb1). Empty (kb0 == kb1) is legal.
__device__ __forceinline__ void split_range(const Problem& p, int z, int& kb0, int& kb1) {
    long k0 = (long)z * p.k_per_split;
    long k1 = k0 + p.k_per_split;
    if (k1 > p.K) k1 = p.K;
    if (k0 > p.K) k0 = p.K;
    kb0 = (int)(k0 / 32);
    kb1 = (int)(k1 / 32);
}

// ---------------------------------------------------------------------------------------------
// MXFP4 decoding for the CUDA-core path.
// ---------------------------------------------------------------------------------------------
// e2m1 nibble -> value. Sign in bit 3; magnitudes {0, .5, 1, 1.5, 2, 3, 4, 6}.
__device__ __forceinline__ float e2m1_to_float(uint32_t nib) {
    // 2*|value| for magnitude codes 0..7 = {0,1,2,3,4,6,8,12}, packed one nibble each (no local array)
    const float v = (float)((0xC8643210u >> (4 * (nib & 7))) & 15u) * 0.5f;
    return (nib & 8) ? -v : v;
}

// e8m0 -> 2^(e-127) as a double (exact for every e), NaN for 0xFF.
__device__ __forceinline__ double e8m0_to_double(uint32_t e) {
    if (e == 0xFF) return __longlong_as_double(0x7FF8000000000000ll);
    return __longlong_as_double((long long)(e - 127 + 1023) << 52);
}

// ---------------------------------------------------------------------------------------------
// Output sinks. A tile routine hands every finished fp32 value v = sum_k a*b (scales applied, alpha
// not yet) to store_value(); with one split it becomes D = bf16(alpha*v + beta*C) under the (M, N)
// mask, with several it is written unmasked into this split's fp32 partial slab.
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ float epilogue_value(const Problem& p, int m, int n, float v) {
    float out = p.alpha * v;
    if (p.C != nullptr) out += p.beta * __bfloat162float(p.C[(long)m * p.ldc + n]);
    return out;
}

struct SplitGeometry {
    int Mr, Nr;  // M, N rounded up to the tile
    int tiles_m, tiles_n;
};

__device__ __forceinline__ SplitGeometry split_geometry(const Problem& p, int tile_m, int tile_n) {
    SplitGeometry g;
    g.tiles_m = (p.M + tile_m - 1) / tile_m;
    g.tiles_n = (p.N + tile_n - 1) / tile_n;
    g.Mr = g.tiles_m * tile_m;
    g.Nr = g.tiles_n * tile_n;
    return g;
}

// Partial slab of split z: fp32 (Mr, Nr) row-major at ws + z*Mr*Nr.
__device__ __forceinline__ float* partial_ptr(const Problem& p, const SplitGeometry& g, int z, int m, int n) {
    return p.ws + ((long)z * g.Mr + m) * (long)g.Nr + n;
}

// The tile's counter: in the launcher's counter buffer (ptr_counters, zeroed once and reset by each tile's
// last CTA, so the host zeroes nothing per launch) or, without one, after the partials in the workspace the
// host zeroes before the launch.
__device__ __forceinline__ uint32_t* tile_counter(const Problem& p, const SplitGeometry& g, int tm, int tn) {
    uint32_t* counters = p.counters != nullptr
                             ? p.counters
                             : reinterpret_cast<uint32_t*>(p.ws + (long)p.splits * (long)g.Mr * (long)g.Nr);
    return counters + (long)tm * g.tiles_n + tn;
}

__device__ __forceinline__ void store_value(const Problem& p, const SplitGeometry& g, int m, int n, float v) {
    if (p.splits > 1) {
        *partial_ptr(p, g, blockIdx.z, m, n) = v;
    } else if (m < p.M && n < p.N) {
        p.D[(long)m * p.ldd + n] = __float2bfloat16_rn(epilogue_value(p, m, n, v));
    }
}

// Two horizontally adjacent values (n even). N need not be even: the W format pads B's rows itself, so the
// driver no longer has to hold N to a multiple of 16, and column n + 1 is stored only when it is < N.
__device__ __forceinline__ void store_pair(const Problem& p, const SplitGeometry& g, int m, int n, float v0,
                                           float v1, bool pair_ok) {
    if (p.splits > 1) {
        *reinterpret_cast<float2*>(partial_ptr(p, g, blockIdx.z, m, n)) = make_float2(v0, v1);
    } else if (m < p.M && n < p.N) {
        const bool two = n + 1 < p.N;
        float o0 = p.alpha * v0, o1 = p.alpha * v1;
        const long base_c = (long)m * p.ldc + n;
        if (p.C != nullptr) {
            o0 += p.beta * __bfloat162float(p.C[base_c]);
            if (two) o1 += p.beta * __bfloat162float(p.C[base_c + 1]);
        }
        __nv_bfloat16* d = p.D + (long)m * p.ldd + n;
        if (pair_ok && two) {
            *reinterpret_cast<__nv_bfloat162*>(d) = __floats2bfloat162_rn(o0, o1);
        } else {
            d[0] = __float2bfloat16_rn(o0);
            if (two) d[1] = __float2bfloat16_rn(o1);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Split-K finish: called by `nthreads` threads of a CTA (thread index `tid`) after every one of them
// has stored its partials. Deterministic: the last CTA to arrive sums the splits in order 0..S-1,
// so the result does not depend on arrival order. `sync()` is a barrier over exactly those threads;
// `flag` is one int of shared memory.
// ---------------------------------------------------------------------------------------------
// Out of line: inlined, its counter code moved ptxas's allocation of the kernels at their register cap
// (dec_32x128_wg12_c2_s: 20 -> 36 bytes of spill stores; out of line 4, PERF.md entry 56). The tile and the
// thread count are template arguments, so the out-of-line body keeps constant index arithmetic, and each
// thread sums four adjacent columns with 16-byte loads, up to four splits' loads in flight: out of line with
// runtime sizes, ptxas issued one dependent load per split and element (~700 cycles each), which made every
// split launch 7-43% slower (PERF.md entry 57). The sum per output is still over z = 0..S-1 in order.
// It takes the kernel's __grid_constant__ arguments, not the kernel's Problem: a reference to that local made
// ptxas keep a copy of it on the stack in every thread from the kernel's start (136-144 bytes of stores
// before the ring's first copies; PERF.md entry 57).
// kAImage: an sm90pa1 kernel, whose partials follow the A image in the workspace (partials_after_a_image).
// kParts: the tile has `parts` partial slabs (0 .. parts - 1; the CTAs that count on its counter) instead of
// num_splits: the decode kernel's stream-K (DEC_SK 1), whose tiles have their own segment counts. A template
// flag, so that every other caller's out-of-line body stays as it was.
template <int kTileM, int kTileN, int kThreads, bool kAImage = false, bool kParts = false, typename Sync>
__device__ __noinline__ void splitk_finish(const F4gemmSm90Args& args, int tm, int tn, int tid, int* flag,
                                           Sync sync, int parts = 0) {
    static_assert(kTileN % 4 == 0, "the finish sums four adjacent columns per thread");
    Problem p = load_problem(args);
    if constexpr (kAImage) p.ws = partials_after_a_image(args, kTileM);
    const SplitGeometry g = split_geometry(p, kTileM, kTileN);
    const int splits = kParts ? parts : p.splits;
    __threadfence();  // make this thread's partial stores visible device-wide
    sync();
    if (tid == 0) {
        uint32_t* counter = tile_counter(p, g, tm, tn);
        uint32_t old = atomicAdd(counter, 1u);
        *flag = (old == (uint32_t)(splits - 1));
        // The last CTA: every split has counted, so the counter is the tile's alone again: back to 0 for the
        // next launch (which starts after this one ends, or waits for it: pdl_wait).
        if (*flag && p.counters != nullptr) atomicExch(counter, 0u);
    }
    sync();
    if (!*flag) return;
    __threadfence();
    const int m0 = tm * kTileM, n0 = tn * kTileN, M = p.M, N = p.N;
    const long slab = (long)g.Mr * (long)g.Nr;
    constexpr int kQuads = kTileM * kTileN / 4;
    // kBatch quads per thread at once, two splits per round: 2 * kBatch 16-byte loads in flight before the
    // first add (one quad at a time, ptxas kept each quad's loads behind the previous quad's D stores, which
    // may alias).
    constexpr int kBatch = 4;
    for (int i0 = tid; i0 < kQuads; i0 += kThreads * kBatch) {
        const float4* src[kBatch];
        bool ok[kBatch];
        float4 s[kBatch];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            const int i = i0 + b * kThreads;
            const int m = m0 + i / (kTileN / 4), n = n0 + (i % (kTileN / 4)) * 4;
            ok[b] = i < kQuads && m < M && n < N;
            src[b] = reinterpret_cast<const float4*>(partial_ptr(p, g, 0, ok[b] ? m : m0, ok[b] ? n : n0));
            s[b] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll 2
        for (int z = 0; z < splits; ++z) {
            float4 v[kBatch];
#pragma unroll
            for (int b = 0; b < kBatch; ++b)
                v[b] = ok[b] ? __ldcg(src[b] + z * (slab / 4)) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
            for (int b = 0; b < kBatch; ++b) {
                s[b].x += v[b].x;
                s[b].y += v[b].y;
                s[b].z += v[b].z;
                s[b].w += v[b].w;
            }
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            if (!ok[b]) continue;
            const int i = i0 + b * kThreads;
            const int m = m0 + i / (kTileN / 4), n = n0 + (i % (kTileN / 4)) * 4;
            const float sum[4] = {s[b].x, s[b].y, s[b].z, s[b].w};
#pragma unroll
            for (int j = 0; j < 4; ++j)
                if (n + j < N)
                    p.D[(long)m * p.ldd + n + j] = __float2bfloat16_rn(epilogue_value(p, m, n + j, sum[j]));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Exact CUDA-core tile routine: rung 1 of the ladder, and the fallback of the wgmma kernels for
// tiles whose block scales span more binades than the FP8 window.
//   - within a 32-element scale block: fp32 FMAs of e2m1 values (every product is a multiple of 1/4 up
//     to 36, the block sum at most 1152 in magnitude: exact in fp32);
//   - across blocks: fp64, block sum * 2^(ea-127) * 2^(eb-127) (exact products; the fp64 sum keeps 53
//     bits, so the result is the float64 reference up to fp64 rounding);
//   - a NaN scale (0xFF) makes the scale NaN, so exactly the affected row/column becomes NaN.
// Computes the (tile_m x tile_n) tile at (m0, n0) in 64x64 sub-tiles with NT threads.
// Shared memory: 2 * 64 * 33 floats + 2 * 64 doubles = 17920 bytes.
// ---------------------------------------------------------------------------------------------
// Byte offset in the W body of chunk (row / 16, kb / 4): the (16-row group, 128-K chunk) holding block kb of
// B row `row` (include/f4gemm/frag16s.h: G * frag16s_group_bytes(K) + 64 + 1088 c).
__device__ __forceinline__ long frag16s_chunk_offset(const Problem& p, int row, int kb) {
    return (long)(row / 16) * (long)f4gemm::frag16s_group_bytes(p.K) + F4GEMM_FRAG16S_HEAD +
           (long)(kb / 4) * F4GEMM_FRAG16S_CHUNK;
}

constexpr int kExactSub = 64;
constexpr int kExactSmemBytes = 2 * kExactSub * 33 * 4 + 2 * kExactSub * 8;

// kBLayout: how B is stored. kExactBPlain (the ladder kernels: plain B and plain scales p.sB);
// kExactBFrag16S (every shipped kernel: B is the body of the packed weight W, include/f4gemm/weight.h:
// bit-plane words in 16-row fragment chunks of 1088 bytes, include/f4gemm/layout.hpp frag16_word_index,
// each followed by its 16 rows' 4 scale bytes, a 64-byte header per group; include/f4gemm/frag16s.h).
// With kExactBFrag16S B's scales come from the chunks and p.sB is never read (the driver passes 0): the
// W body is round_up(N, 256) rows by p.K (its padded K) columns, padding rows carry scale 0x7F.
constexpr int kExactBPlain = 0, kExactBFrag16S = 3;
template <int NT, int kBLayout = kExactBPlain>
__device__ void exact_tile(const Problem& p, const SplitGeometry& g, int m0, int n0, int tile_m, int tile_n,
                           int kb0, int kb1, uint8_t* smem, int tid) {
    static_assert(NT >= 256, "256 threads compute a 64x64 sub-tile as 16x16 threads of 4x4 outputs");
    float* a_val = reinterpret_cast<float*>(smem);  // (64, 33) f32: e2m1 values of A, one k-block
    float* b_val = a_val + kExactSub * 33;          // (64, 33) f32: e2m1 values of B
    double* a_sc = reinterpret_cast<double*>(b_val + kExactSub * 33);  // (64) 2^(ea-127) or NaN
    double* b_sc = a_sc + kExactSub;                                   // (64) 2^(eb-127) or NaN
    const int rows_a = (p.M + 255) / 256 * 256;                        // the host pads A and B rows to 256
    const int rows_b = (p.N + 255) / 256 * 256;
    const bool computes = tid < 256;
    const int ty = (tid % 256) / 16, tx = tid % 16;  // outputs (ty + 16i, tx + 16j), i, j < 4

    for (int sm = 0; sm < tile_m; sm += kExactSub) {
        for (int sn = 0; sn < tile_n; sn += kExactSub) {
            double acc[4][4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = 0.0;
            for (int kb = kb0; kb < kb1; ++kb) {
                __syncthreads();
                // 64 rows x 16 bytes of A and of B: one u32 (8 nibbles) per thread-iteration.
                for (int i = tid; i < 2 * kExactSub * 4; i += NT) {
                    const bool is_b = i >= kExactSub * 4;
                    const int r = (i % (kExactSub * 4)) / 4, w = i % 4;
                    const int row = (is_b ? n0 + sn : m0 + sm) + r;
                    const int rows = is_b ? rows_b : rows_a;
                    uint32_t x = 0;
                    if (row < rows) {
                        if constexpr (kBLayout == kExactBFrag16S) {
                            // (16-row group, 128-K chunk) of 1024 bytes + 64 scale bytes, after the
                            // group's 64-byte header; rows g / g+8 halves; block kb % 4 at 128 * (kb % 4)
                            // of the half; lane g*4+w's word in it
                            const long off = is_b
                                                 ? frag16s_chunk_offset(p, row, kb) + ((row % 16) / 8) * 512 +
                                                       (kb % 4) * 128 + ((row % 8) * 4 + w) * 4
                                                 : (long)row * p.lda + kb * 16 + w * 4;
                            x = *reinterpret_cast<const uint32_t*>((is_b ? p.B : p.A) + off);
                            if (is_b) x = f4gemm::bitplane_word_inverse(x);
                        } else {
                            const uint8_t* src = is_b ? p.B + (long)row * p.ldb : p.A + (long)row * p.lda;
                            x = *reinterpret_cast<const uint32_t*>(src + kb * 16 + w * 4);
                        }
                    }
                    float* dst = (is_b ? b_val : a_val) + r * 33 + w * 8;
#pragma unroll
                    for (int e = 0; e < 8; ++e) dst[e] = e2m1_to_float((x >> (4 * e)) & 15);
                }
                for (int i = tid; i < 2 * kExactSub; i += NT) {
                    const bool is_b = i >= kExactSub;
                    const int r = i % kExactSub;
                    const int row = (is_b ? n0 + sn : m0 + sm) + r;
                    const int rows = is_b ? rows_b : rows_a;
                    uint32_t e = 127;
                    if (row < rows) {
                        if constexpr (kBLayout == kExactBFrag16S) {  // B: byte 1024 + 4r + j of the chunk
                            e = is_b ? p.B[frag16s_chunk_offset(p, row, kb) + 1024 + 4 * (row % 16) + kb % 4]
                                     : p.sA[(long)row * p.ldsa + kb];
                        } else {
                            e = is_b ? p.sB[(long)row * p.ldsb + kb] : p.sA[(long)row * p.ldsa + kb];
                        }
                    }
                    (is_b ? b_sc : a_sc)[r] = e8m0_to_double(e);
                }
                __syncthreads();
                if (computes) {
                    float bsum[4][4];
#pragma unroll
                    for (int i = 0; i < 4; ++i)
#pragma unroll
                        for (int j = 0; j < 4; ++j) bsum[i][j] = 0.0f;
#pragma unroll 2
                    for (int k = 0; k < 32; ++k) {
                        float av[4], bv[4];
#pragma unroll
                        for (int i = 0; i < 4; ++i) av[i] = a_val[(ty + 16 * i) * 33 + k];
#pragma unroll
                        for (int j = 0; j < 4; ++j) bv[j] = b_val[(tx + 16 * j) * 33 + k];
#pragma unroll
                        for (int i = 0; i < 4; ++i)
#pragma unroll
                            for (int j = 0; j < 4; ++j) bsum[i][j] = fmaf(av[i], bv[j], bsum[i][j]);
                    }
#pragma unroll
                    for (int i = 0; i < 4; ++i)
#pragma unroll
                        for (int j = 0; j < 4; ++j)
                            acc[i][j] += (double)bsum[i][j] * a_sc[ty + 16 * i] * b_sc[tx + 16 * j];
                }
            }
            if (computes) {
#pragma unroll
                for (int i = 0; i < 4; ++i)
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        const int r = ty + 16 * i, c = tx + 16 * j;
                        if (sm + r < tile_m && sn + c < tile_n)
                            store_value(p, g, m0 + sm + r, n0 + sn + c, (float)acc[i][j]);
                    }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Row summaries of the packed weight W and the epilogue of the kernels with A on the wgmma M side
// ---------------------------------------------------------------------------------------------
// The RowRef of a W row from its group header's summary word (the row's whole K; frag16s_row_ref applies
// finish_row's rule, so it is what a scan of the padded row would find; rows N .. Np-1 read as "no
// exponent").
__device__ __forceinline__ RowRef w_row_ref(uint32_t header_word) {
    const f4gemm::Frag16sRowRef f = f4gemm::frag16s_row_ref(header_word, kWindow);
    RowRef rr;
    rr.ref = f.ref;
    rr.nan = f.nan;
    rr.wide = f.wide;
    return rr;
}

// The 16-row groups of W that a tile of kTileN weight rows starting at row n0 reads: all of them where kTileN
// divides W's row padding (F4GEMM_W_ROW_PAD, as w_n_pad does on the host); the last tile of an 80- or 112-row
// kernel (dec_*, cv_*) reaches past W's padded end and reads only the groups before it.
template <int kTileN>
__device__ __forceinline__ int w_tile_groups(int n, int n0) {
    constexpr int kRowPad = (int)F4GEMM_W_ROW_PAD;
    return kRowPad % kTileN == 0 ? kTileN / 16
                                 : min(kTileN / 16, ((n + kRowPad - 1) / kRowPad * kRowPad - n0) / 16);
}

// Epilogue of a tile whose wgmma accumulator has A rows on M and B rows on N (pp_*, cv_*): rows[0, kRowsA)
// are the tile's A row words, rows[kRowsA, ..) its B row words; rr0 = this thread's first accumulator row in
// the tile, t = lane % 4. v = acc * 2^(refA-127) * 2^(refB-127), NaN for rows/columns with a NaN scale, then
// D = bf16(alpha*v + beta*C) under the (M, N) mask.
template <int kRowsA, int kAccRegs>
__device__ __forceinline__ void store_tile_a_on_m(const Problem& p, const SplitGeometry& geo,
                                                  const float (&acc)[kAccRegs], const uint32_t* rows, int m0,
                                                  int n0, int rr0, int t) {
    const bool pair_ok = ((p.ldd & 1) == 0) && ((reinterpret_cast<uintptr_t>(p.D) & 3) == 0);
    const float qnan = __int_as_float(0x7FC00000);
#pragma unroll
    for (int i = 0; i < kAccRegs / 4; ++i) {
        const int col = 8 * i + 2 * t;
        const uint32_t wb0 = rows[kRowsA + col], wb1 = rows[kRowsA + col + 1];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int rr = rr0 + 8 * h;
            const uint32_t wa = rows[rr];
            const int eA = row_ref(wa) - 127;
            float v0 = ldexpf(acc[4 * i + 2 * h], eA + row_ref(wb0) - 127);
            float v1 = ldexpf(acc[4 * i + 2 * h + 1], eA + row_ref(wb1) - 127);
            if ((wa | wb0) & kRowNan) v0 = qnan;
            if ((wa | wb1) & kRowNan) v1 = qnan;
            store_pair(p, geo, m0 + rr, n0 + col, v0, v1, pair_ok);
        }
    }
}

}  // namespace sm90
}  // namespace f4gemm
