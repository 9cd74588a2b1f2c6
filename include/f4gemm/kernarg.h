/* f4gemm kernel argument blocks: the binary contract between every host backend and every
 * kernel. Plain C so that host C++, nvcc device code and tests include the same bytes.
 * The prefix is aiter's gfx950 f4gemm kernarg block (ported from asm_f4gemm's KernelArgs and
 * aiter csrc/py_itfs_cu/asm_gemm_a4w4.cu): every field in a 16-byte slot, 0x174 bytes.
 * Our sm_90a kernels take the prefix plus the extension below; docs/ABI.md mirrors both. */
#ifndef F4GEMM_KERNARG_H
#define F4GEMM_KERNARG_H

#include <stddef.h>
#include <stdint.h>

/* The slot tables below are laid out by hand, one 16-byte slot per line. */
/* clang-format off */
#define F4GEMM_P(name, n) uint8_t name[n]

#pragma pack(push, 1)
/* aiter prefix. Strides: stride_C0 is used by aiter's kernels for BOTH C and D (stride_D0 is
 * dead there); A/B strides are counted in fp4 elements (bytes * 2); scale strides are bytes. */
typedef struct F4gemmKernelArgs {
    uint64_t ptr_D;          F4GEMM_P(_p00, 8); /* 0x000 bf16 [M, N] (rows padded)          */
    uint64_t ptr_C;          F4GEMM_P(_p01, 8); /* 0x010 bf16 [M, N] or 0 (bias)            */
    uint64_t ptr_A;          F4GEMM_P(_p02, 8); /* 0x020 fp4x2 [M, K/2]                     */
    uint64_t ptr_B;          F4GEMM_P(_p03, 8); /* 0x030 fp4x2 [N, K/2] (layout per kernel) */
    float alpha;             F4GEMM_P(_p04, 12); /* 0x040 */
    float beta;              F4GEMM_P(_p05, 12); /* 0x050 */
    uint32_t stride_D0;      F4GEMM_P(_p06, 12); /* 0x060 elements */
    uint32_t stride_D1;      F4GEMM_P(_p07, 12); /* 0x070 */
    uint32_t stride_C0;      F4GEMM_P(_p08, 12); /* 0x080 elements; aiter: also D's stride */
    uint32_t stride_C1;      F4GEMM_P(_p09, 12); /* 0x090 */
    uint32_t stride_A0;      F4GEMM_P(_p10, 12); /* 0x0a0 fp4 elements (= K) */
    uint32_t stride_A1;      F4GEMM_P(_p11, 12); /* 0x0b0 */
    uint32_t stride_B0;      F4GEMM_P(_p12, 12); /* 0x0c0 fp4 elements (= K) */
    uint32_t stride_B1;      F4GEMM_P(_p13, 12); /* 0x0d0 */
    uint32_t M;              F4GEMM_P(_p14, 12); /* 0x0e0 */
    uint32_t N;              F4GEMM_P(_p15, 12); /* 0x0f0 */
    uint32_t K;              F4GEMM_P(_p16, 12); /* 0x100 */
    uint64_t ptr_ScaleA;     F4GEMM_P(_p17, 8);  /* 0x110 e8m0 [M, K/32] (layout per kernel) */
    uint64_t ptr_ScaleB;     F4GEMM_P(_p18, 8);  /* 0x120 e8m0 [N, K/32] (layout per kernel) */
    uint32_t stride_ScaleA0; F4GEMM_P(_p19, 12); /* 0x130 bytes */
    uint32_t stride_ScaleA1; F4GEMM_P(_p20, 12); /* 0x140 */
    uint32_t stride_ScaleB0; F4GEMM_P(_p21, 12); /* 0x150 bytes */
    uint32_t stride_ScaleB1; F4GEMM_P(_p22, 12); /* 0x160 */
    int32_t log2_k_split;                        /* 0x170 split-capable kernels only */
} F4gemmKernelArgs;

/* f4gemm sm_90a kernels: the prefix, padded to 0x180, then our extension. */
typedef struct F4gemmSm90Args {
    F4gemmKernelArgs base;       /* 0x000 .. 0x174 */
    uint32_t prepass_skip_a;     /* 0x174 sm90pp1 pre-pass only: 1 = convert B's rows alone, A's image
                                  *       and row words are already in the workspace (an earlier N slab
                                  *       of the same GEMM, docs/ABI_SM90.md "N slabs"); 0 otherwise */
    F4GEMM_P(_p_base, 8);        /* 0x178 .. 0x180 */
    uint64_t ptr_workspace;      /* 0x180 fp32 split-K partials + tile counters; 0 when gdz == 1.
                                  *       The host zeroes it before the launch only when ptr_counters
                                  *       is 0 (the counters then live here, after the partials) */
    uint64_t workspace_bytes;    /* 0x188 */
    uint32_t num_splits;         /* 0x190 gdz actually launched (K chunks)  */
    uint32_t k_per_split;        /* 0x194 K elements per chunk, multiple of 256 */
    uint64_t ptr_counters;       /* 0x198 split-K: one uint32 tile counter per output tile, zero
                                  *       before the launch; the tile's last CTA sets it back to 0,
                                  *       so the host zeroes the buffer once, when it allocates it.
                                  *       0: the counters after the partials in ptr_workspace */
} F4gemmSm90Args;               /* 0x1a0 bytes */
#pragma pack(pop)

#undef F4GEMM_P
/* clang-format on */

#define F4GEMM_KERNARG_PREFIX_BYTES 0x174
#define F4GEMM_SM90_ARGS_BYTES 0x1a0

/* The workspace of an sm90pa1 split (the A pre-pass tiles, docs/ABI_SM90.md): the pre-pass's image of A (Mr x
 * K e5m2 bytes, Mr = M rounded up to tile_M, then one uint32 word per row) first, the fp32 split partials
 * from this byte offset, the image's size rounded up to 256. One formula for the host's plan and the kernels
 * (a macro, so each side keeps its own integer types: m and k 64-bit). */
#define F4GEMM_SM90PA_ROWS(m, tile_m) (((m) + (tile_m)-1) / (tile_m) * (tile_m))
#define F4GEMM_SM90PA_PARTIALS_OFFSET(m, k, tile_m) \
    ((F4GEMM_SM90PA_ROWS(m, tile_m) * (k) + 4 * F4GEMM_SM90PA_ROWS(m, tile_m) + 255) / 256 * 256)

/* The sm90pa1 A pre-pass splits each row's K into slices of this many elements, one warp per (row, slice),
 * one 32-element scale block per lane: grid (ceil(Mr / 8), ceil(K / F4GEMM_SM90PA_PREPASS_SLICE_K), 1). A
 * warp per whole row left the pre-pass on Mr / 8 SMs (16 at M = 128: 12.5 us at K = 16384, docs/PERF.md entry
 * 62). The kernel strides its blocks by the grid's y extent, so any y extent converts every block. */
#define F4GEMM_SM90PA_PREPASS_SLICE_K 1024

/* A code object whose kernels all wait for the kernels ahead of them on the stream (PTX griddepcontrol.wait)
 * before they touch global memory defines this global (kernels/sm90a/sm90_common.cuh): the host then
 * launches them early (programmatic dependent launch, docs/KERNELS_SM90.md "Launch overlap"). A code
 * object without it (an older build, aiter's) is launched plainly. */
#define F4GEMM_PDL_GLOBAL f4gemm_pdl_wait_v1
#define F4GEMM_PDL_SYMBOL "f4gemm_pdl_wait_v1"

#if defined(__cplusplus)
static_assert(sizeof(F4gemmKernelArgs) == 0x174, "aiter kernarg block is 0x174 bytes");
static_assert(offsetof(F4gemmKernelArgs, ptr_D) == 0x000, "ptr_D");
static_assert(offsetof(F4gemmKernelArgs, ptr_C) == 0x010, "ptr_C");
static_assert(offsetof(F4gemmKernelArgs, ptr_A) == 0x020, "ptr_A");
static_assert(offsetof(F4gemmKernelArgs, ptr_B) == 0x030, "ptr_B");
static_assert(offsetof(F4gemmKernelArgs, alpha) == 0x040, "alpha");
static_assert(offsetof(F4gemmKernelArgs, beta) == 0x050, "beta");
static_assert(offsetof(F4gemmKernelArgs, stride_D0) == 0x060, "stride_D0");
static_assert(offsetof(F4gemmKernelArgs, stride_D1) == 0x070, "stride_D1");
static_assert(offsetof(F4gemmKernelArgs, stride_C0) == 0x080, "stride_C0");
static_assert(offsetof(F4gemmKernelArgs, stride_C1) == 0x090, "stride_C1");
static_assert(offsetof(F4gemmKernelArgs, stride_A0) == 0x0a0, "stride_A0");
static_assert(offsetof(F4gemmKernelArgs, stride_A1) == 0x0b0, "stride_A1");
static_assert(offsetof(F4gemmKernelArgs, stride_B0) == 0x0c0, "stride_B0");
static_assert(offsetof(F4gemmKernelArgs, stride_B1) == 0x0d0, "stride_B1");
static_assert(offsetof(F4gemmKernelArgs, M) == 0x0e0, "M");
static_assert(offsetof(F4gemmKernelArgs, N) == 0x0f0, "N");
static_assert(offsetof(F4gemmKernelArgs, K) == 0x100, "K");
static_assert(offsetof(F4gemmKernelArgs, ptr_ScaleA) == 0x110, "ptr_ScaleA");
static_assert(offsetof(F4gemmKernelArgs, ptr_ScaleB) == 0x120, "ptr_ScaleB");
static_assert(offsetof(F4gemmKernelArgs, stride_ScaleA0) == 0x130, "stride_ScaleA0");
static_assert(offsetof(F4gemmKernelArgs, stride_ScaleA1) == 0x140, "stride_ScaleA1");
static_assert(offsetof(F4gemmKernelArgs, stride_ScaleB0) == 0x150, "stride_ScaleB0");
static_assert(offsetof(F4gemmKernelArgs, stride_ScaleB1) == 0x160, "stride_ScaleB1");
static_assert(offsetof(F4gemmKernelArgs, log2_k_split) == 0x170, "log2_k_split");
static_assert(sizeof(F4gemmSm90Args) == F4GEMM_SM90_ARGS_BYTES, "sm90 args are 0x1a0 bytes");
static_assert(offsetof(F4gemmSm90Args, prepass_skip_a) == 0x174, "prepass_skip_a");
static_assert(offsetof(F4gemmSm90Args, ptr_workspace) == 0x180, "ptr_workspace");
static_assert(offsetof(F4gemmSm90Args, workspace_bytes) == 0x188, "workspace_bytes");
static_assert(offsetof(F4gemmSm90Args, num_splits) == 0x190, "num_splits");
static_assert(offsetof(F4gemmSm90Args, k_per_split) == 0x194, "k_per_split");
static_assert(offsetof(F4gemmSm90Args, ptr_counters) == 0x198, "ptr_counters");
#endif

#endif /* F4GEMM_KERNARG_H */
