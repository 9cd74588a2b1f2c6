// The A pre-pass of abi sm90pa1 (docs/ABI_SM90.md), shared by the kernels that read A as an image:
// sm90_mxfp4_gemm_ws.cu with A_PREPASS (pab_*) and sm90_mxfp4_gemm_cv.cu (cv_*).
#pragma once

#include "sm90_common.cuh"
#include "sm90_ptx.cuh"

namespace f4gemm {
namespace sm90 {

// Grid = (ceil(Mr / 8), ceil(K / F4GEMM_SM90PA_PREPASS_SLICE_K)) CTAs of 256 threads, one warp per (A row,
// K slice) (padded rows included: they are allocated, zero data, scale 0x7F). Every warp scans its row's
// scales over the whole K (the reference is the row's), then lane u of slice y converts scale blocks
// 32 y + u, 32 (y + Y) + u, ... (Y = gridDim.y: one block per lane at the host's Y; any Y covers every block)
// with the folding LUT into the S image (Mr / tile_m, K / 128, tile_m, 128) e5m2, SW128, in the k order of
// the ws kernels' S side (block j of a 128-K slab in chunks 2j (lo words) and 2j + 1 (hi words)). Slice 0
// writes the row word (reference, NaN, wide) at byte Mr * K.
__device__ __forceinline__ void a_prepass_s_image(const F4gemmSm90Args& args, int tile_m, int tile_n) {
    const Problem p = load_problem(args);
    const SplitGeometry g = split_geometry(p, tile_m, tile_n);
    const int row = blockIdx.x * 8 + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= g.Mr) return;
    uint8_t* ws = reinterpret_cast<uint8_t*>(args.ptr_workspace);
    uint32_t* rows = reinterpret_cast<uint32_t*>(ws + (size_t)g.Mr * p.K);
    const uint8_t* src = p.A + (size_t)row * p.lda;
    const uint8_t* sc = p.sA + (size_t)row * p.ldsa;
    const RowRef rr = scan_row(sc, p.K / 256, lane, 32, true);
    if (lane == 0 && blockIdx.y == 0) rows[row] = row_word(rr);
    const int t = row / tile_m, r = row % tile_m, sw = r & 7;
    uint8_t* tile = ws + (size_t)t * tile_m * p.K;
    for (int u = (int)blockIdx.y * 32 + lane; u < p.K / 32; u += 32 * (int)gridDim.y) {
        const uint4 x = __ldg(reinterpret_cast<const uint4*>(src) + u);
        const uint32_t e = __ldg(sc + u);
        uint4 lo = make_uint4(0u, 0u, 0u, 0u), hi = make_uint4(0u, 0u, 0u, 0u);  // NaN block: zeros
        if (e != 0xFFu) {
            uint32_t lut_lo, lut_hi;
            make_lut((int)e - rr.ref, lut_lo, lut_hi);
            cvt32(x, lut_lo, lut_hi, lo, hi);
        }
        store_block_sw128(tile + ((size_t)(u / 4) * tile_m + r) * 128, u, sw, lo, hi);
    }
}

}  // namespace sm90
}  // namespace f4gemm

// The pre-pass kernel <F4GEMM_KNL_NAME>_prepass of a GEMM whose tile is tile_m x tile_n (one definition for
// the sources that ship one: ws with A_PREPASS, cv). Waits on the kernel ahead like every kernel (launch
// overlap).
#define F4GEMM_A_PREPASS_KERNEL(tile_m, tile_n)                                              \
    extern "C" __global__ void __launch_bounds__(256)                                        \
        F4GEMM_CAT(F4GEMM_KNL_NAME, _prepass)(const __grid_constant__ F4gemmSm90Args args) { \
        F4GEMM_A_PREPASS_BODY(tile_m, tile_n)                                                \
    }
#if F4GEMM_SM90A_ENABLED
#define F4GEMM_A_PREPASS_BODY(tile_m, tile_n) \
    f4gemm::sm90::pdl_wait();                 \
    f4gemm::sm90::a_prepass_s_image(args, (tile_m), (tile_n));
#else
#define F4GEMM_A_PREPASS_BODY(tile_m, tile_n) F4GEMM_TRAP_WRONG_ARCH();
#endif
