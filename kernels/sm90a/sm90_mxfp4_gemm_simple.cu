// Rung 1 of the sm_90a ladder: the first simple correct MXFP4 x MXFP4 -> bf16 kernel, on CUDA cores.
// One 64x64 output tile per CTA of 256 threads; exact fp32 sums inside each 32-element scale block,
// fp64 across blocks; alpha/beta/C, M/N edges, NaN scales and fp32 split-K through the workspace.
// Kept forever as the reference rung of the dev ladder (plain B and scales, kernels/sm90a/kernels.json): it
// shares exact_tile() with the wgmma kernels' fallback.
#include "sm90_common.cuh"

#ifndef F4GEMM_KNL_NAME
#define F4GEMM_KNL_NAME f4gemm_sm90a_simple_64x64
#endif

namespace {
constexpr int kThreads = 256;
constexpr int kTileM = 64;
constexpr int kTileN = 64;
static_assert(kTileM == f4gemm::sm90::kExactSub && kTileN == f4gemm::sm90::kExactSub,
              "rung 1 computes exactly one exact_tile sub-tile per CTA");
}  // namespace

// Plain B and its plain scales (the dev ladder's reference rung; the shipped kernels read W), any split-K.
F4GEMM_EXPORT_ROW(F4GEMM_KNL_NAME, f4gemm::sm90::kExactSmemBytes, kThreads, kTileM, kTileN, 1,
                  F4GEMM_ABI_SM90V1, F4GEMM_B_PLAIN, F4GEMM_ACCUM_EXACT, 0, 0);

extern "C" __global__ void __launch_bounds__(kThreads, 1)
    F4GEMM_KNL_NAME(const __grid_constant__ F4gemmSm90Args args) {
#if F4GEMM_SM90A_ENABLED
    f4gemm::sm90::pdl_wait();
    using namespace f4gemm::sm90;
    extern __shared__ __align__(16) uint8_t smem[];  // kExactSmemBytes: exact_tile staging
    __shared__ int s_last;                           // split-K: is this CTA the last to arrive?

    const Problem p = load_problem(args);
    const SplitGeometry g = split_geometry(p, kTileM, kTileN);
    const int tm = blockIdx.y, tn = blockIdx.x;
    int kb0, kb1;
    split_range(p, blockIdx.z, kb0, kb1);

    exact_tile<kThreads>(p, g, tm * kTileM, tn * kTileN, kTileM, kTileN, kb0, kb1, smem, threadIdx.x);

    if (p.splits > 1) {
        splitk_finish<kTileM, kTileN, kThreads>(args, tm, tn, threadIdx.x, &s_last, [] { __syncthreads(); });
    }
#else
    F4GEMM_TRAP_WRONG_ARCH();
#endif
}
