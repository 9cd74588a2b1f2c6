// Host side of the kernel ABI: filling the kernarg blocks of include/f4gemm/kernarg.h, the
// launch grid (aiter's split-K gdz rule) and the byte sizes of every buffer a launch needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "f4gemm/dim3.hpp"
#include "f4gemm/kernarg.h"
#include "f4gemm/manifest.hpp"

namespace f4gemm {

// Launch plan for one (kernel, shape, split): pure arithmetic, no device.
struct LaunchPlan {
    Dim3 grid;   // (ceil(N/tile_N), ceil(M/tile_M), gdz)
    Dim3 block;  // (threads, 1, 1)
    unsigned smem_bytes = 0;
    int log2_k_split = 0;   // 0 for kernels that cannot split (the flag is ignored there)
    int k_num = 1;          // 1 << log2_k_split
    int k_per_split = 0;    // round_up(K / k_num, 256)
    int gdz = 1;            // ceil(K / k_per_split): can be below k_num (K=1280, L=2 -> 3)
    bool zero_out = false;  // aiter: memset D before every split launch
    // Buffer sizes in bytes, with the row over-allocations applied:
    size_t a_bytes = 0, b_bytes = 0, sa_bytes = 0, sb_bytes = 0;
    size_t d_bytes = 0;           // round_up(M,32) x N bf16
    size_t c_bytes = 0;           // M x N bf16 (0 when no C)
    size_t workspace_bytes = 0;   // sm90v1 split-K partials, or the pre-pass image (sm90pp1, sm90pa1):
                                  // docs/ABI_SM90.md
    bool zero_workspace = false;  // sm90v1 split-K: the host zeroes it before the launch, unless the
                                  // launch has a counter buffer (counter_slots)
    size_t counter_slots = 0;     // sm90v1 split-K: uint32 tile counters (tiles_m x tiles_n) the kernel
                                  // counts in DevicePointers::counters, when that is not 0
    Dim3 pre_grid{0, 1, 1};       // pre-pass ABIs: (ceil(rows / 8), 1, 1), rows = Mr + Nr (pp1); pa1:
                                  // (ceil(Mr / 8), ceil(K / F4GEMM_SM90PA_PREPASS_SLICE_K), 1);
                                  // x = 0: no pre-pass launch
    Dim3 pre_block{0, 1, 1};      // pre-pass ABIs: (256, 1, 1)
    Dim3 bconv_grid{0, 1, 1};   // sm90pp2: (kBconvCtas, 1, 1), <knl_name>_bconv beside the GEMM; x = 0: none
    Dim3 bconv_block{0, 1, 1};  // sm90pp2: (256, 1, 1)
    size_t scale_stride = 0;    // stride_ScaleA0 == stride_ScaleB0 in bytes
    size_t args_bytes = 0;      // 0x174 (aiter) or 0x1a0 (sm90v1, sm90pp1, sm90pa1)
};

// Throws Errc::InvalidArgument if K % (1 << log2_k_split) != 0 (asm_f4gemm's split error),
// or on a negative split for a split-capable kernel.
LaunchPlan make_launch_plan(const KernelConfig& kc, int m, int n, int k, int log2_k_split, bool has_c);

// sm90v1 split-K workspace: fp32 partials [gdz][gdy*tile_M][gdx*tile_N] + one uint32 counter per
// output tile, 0 when gdz == 1 (docs/ABI_SM90.md is the kernels' side of this contract).
size_t sm90_workspace_bytes(const KernelConfig& kc, int m, int n, int gdz);

// CTAs of this kernel that one sm_90 SM holds at once, by shared memory (228 KB per SM, 1 KB reserved per
// CTA), threads (2048 per SM) and, where the kernel pins its launch register budget (the manifest's reg_ctas:
// the setmaxnreg kernels), registers; at least 1. Used by our selection policy. (Before reg_ctas, a 4-stage
// A pre-pass tile at 103 KB of shared memory counted as two CTAs per SM though its 384 threads x 168
// registers take the whole register file: PERF.md entry 64.)
int sm90_ctas_per_sm(const KernelConfig& kc);

// sm90pp1 pre-pass workspace: e5m2 images of A (Mr x K) and B (Nr x K) bytes, then one uint32 per row
// of each (Mr = M rounded up to tile_M, Nr = N to tile_N); sm90pp2 (kc.abi) adds one uint32 ready counter per
// B tile and 128-K stage (Nr / tile_N x K / 128).
size_t sm90pp_workspace_bytes(const KernelConfig& kc, int m, int n, int k);
// sm90pa1 pre-pass workspace: the e5m2 image of A (Mr x K bytes), then one uint32 per row of A; split in gdz
// > 1 parts of K (a split-capable kernel: the A pre-pass tiles), sm90_workspace_bytes's partials and counters
// follow from sm90pa_partials_offset, the image's size rounded up to 256 bytes (the kernels'
// partials_after_a_image).
size_t sm90pa_workspace_bytes(const KernelConfig& kc, int m, int n, int k, int gdz = 1);
size_t sm90pa_partials_offset(const KernelConfig& kc, int m, int k);
// True for the ABIs with a <knl_name>_prepass launch before the GEMM (sm90pp1, sm90pa1).
inline bool has_prepass(KernelAbi abi) {
    return abi == KernelAbi::Sm90pp1 || abi == KernelAbi::Sm90pa1 || abi == KernelAbi::Sm90pp2;
}
// True for the ABI whose B is converted by <knl_name>_bconv while the GEMM runs (sm90pp2).
inline bool has_bconv(KernelAbi abi) {
    return abi == KernelAbi::Sm90pp2;
}
constexpr unsigned kBconvThreads = 256;  // sm90pp2's _bconv: 8 warps per CTA
constexpr unsigned kBconvCtas = 32;      // and this many CTAs (docs/PERF.md entry 44)
constexpr const char* kBconvSuffix = "_bconv";
constexpr unsigned kPrepassThreads = 256;  // 8 warps: a row each (sm90pp1), a (row, K slice) each (sm90pa1)
constexpr const char* kPrepassSuffix = "_prepass";

struct DevicePointers {
    uint64_t d = 0, c = 0, a = 0, b = 0, scale_a = 0, scale_b = 0, workspace = 0;
    uint64_t counters = 0;  // sm90v1 split-K: >= counter_slots zeroed uint32s (ptr_counters), or 0
};

// An sm90pp1 GEMM in N slabs (docs/ABI_SM90.md "N slabs", lab: PERF.md entry 79): slab s covers columns
// n0 .. n0 + n - 1 of D and the W groups from n0 / 16, as a GEMM of its own (pre-pass, then the GEMM on the
// same workspace); measured faster where each slab is whole waves (PERF.md entries 79, 80: the GEMM's
// lock-step waves take fewer cycles at high clock; its slab_n x K image does not stay in L2 as first meant).
// Slab 0's pre-pass converts A; a later slab's skips it (prepass_skip_a) when its Nr equals slab 0's, so A's
// image and row words are where its GEMM reads them.
struct PpSlabLaunch {
    int n0 = 0, n = 0;          // the slab's first column and width
    Dim3 pre_grid{0, 1, 1};     // its pre-pass grid ((Mr + Nr) / 8, or Nr / 8 with prepass_skip_a)
    Dim3 grid;                  // its GEMM grid (tiles of its n, tiles_m, 1)
    std::vector<uint8_t> args;  // its argument block: D, C and W advanced to n0, stride_D0 = stride_C0 = N
};
// The slab width the launcher gives an sm90pp1 launch on `sms` SMs, 0 for none (PERF.md entries 79, 80,
// measured on an H100): for a promoted kernel only (the exact pp_128x128 measured 1.00-1.07x its unslabbed
// time), the narrowest width from kPpSlabMinWidth to kPpSlabMaxWidth in steps of kPpSlabStep, below N, whose
// slabs take no more waves of `sms` CTAs in all (each slab's tiles, the ragged last one too, in whole waves)
// than the unslabbed grid: a slab that leaves SMs idle or adds a nearly empty wave cost 5-60% (1536 or 2560
// at M = 1024; 2048 at M = 512), while even waves took 3-14% off (2048 at M = 1024, 4096 at M = 512, 2816 at
// 768 x 16384^2). The narrowest such width holds the smallest image. None below kPpSlabMinK (K = 8192 ..
// 28672 measured; at short K a slab's GEMM is short and its two launches weigh more). F4GEMM_PP_SLAB_N
// overrides it (lab).
constexpr int kPpSlabMinK = 8192;
constexpr int kPpSlabMinWidth = 2048;
constexpr int kPpSlabMaxWidth = 4096;  // the widest measured
constexpr int kPpSlabStep = 256;
int pp_slab_width(const KernelConfig& kc, int m, int n, int k, int sms);
// The slab width a launch of kc at (m, n, k) uses, 0 for one launch: the one answer the launcher runs and
// --dry-run prints. 0 for kernels other than sm90pp1; else lab_n where lab_n >= 0 (F4GEMM_PP_SLAB_N, read by
// lab_pp_slab_n in the driver; 0 = none), otherwise pp_slab_width's; a width at or above N is one launch.
int pp_launch_slab_n(const KernelConfig& kc, int m, int n, int k, int sms, int lab_n);
// Throws InvalidArgument unless kc is sm90pp1 and slab_n a positive multiple of kc.tile_n and of 16.
// One slab when slab_n >= n. `k` is the launch's K (W's padded K).
std::vector<PpSlabLaunch> make_pp_slab_launches(const KernelConfig& kc, const DevicePointers& ptr, int m,
                                                int n, int k, float alpha, float beta, bool has_c,
                                                int slab_n);

// aiter's fill: the whole block zeroed, then D/C/A/B, alpha, beta, stride_C0 = stride_D0 = N,
// stride_A0 = stride_B0 = K (fp4 elements), M/N/K, scales, stride_Scale*0, log2_k_split.
F4gemmKernelArgs make_kernel_args(const LaunchPlan& p, const DevicePointers& ptr, int m, int n, int k,
                                  float alpha, float beta);
F4gemmSm90Args make_sm90_args(const LaunchPlan& p, const DevicePointers& ptr, int m, int n, int k,
                              float alpha, float beta);
// The argument blob a backend passes to the launch (args_bytes long).
std::vector<uint8_t> make_arg_blob(const KernelConfig& kc, const LaunchPlan& p, const DevicePointers& ptr,
                                   int m, int n, int k, float alpha, float beta);

}  // namespace f4gemm
