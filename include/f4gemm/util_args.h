/* Argument blocks and launch geometry of the sm_90a data-preparation kernels (kernels/sm90a/sm90_util.cu,
 * one cubin f4gemm_sm90a_util.cubin): packing a weight into W (weight.h), padding an MXFP4 A operand, and
 * quantizing bf16/fp32 activations straight into the padded A. The binary contract between the host
 * launcher and the kernels: plain C structs of fixed-size fields, device pointers as uint64_t, padding
 * explicit, every offset pinned by a static_assert (as kernarg.h). Each kernel takes its block by value as
 * its only parameter (a __grid_constant__ struct), so the host passes the struct's bytes as the one kernel
 * argument (cuLaunchKernel kernelParams = {&args}, or the bytes through CU_LAUNCH_PARAM_BUFFER_POINTER). */
#ifndef F4GEMM_UTIL_ARGS_H
#define F4GEMM_UTIL_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "f4gemm/weight.h"

/* The code object (installed beside the GEMM cubins, share/f4gemm/sm90a) and its extern "C" entry points. */
#define F4GEMM_UTIL_CUBIN "f4gemm_sm90a_util.cubin"
#define F4GEMM_UTIL_PACK_WEIGHT "f4gemm_sm90a_pack_weight"
#define F4GEMM_UTIL_PAD_A "f4gemm_sm90a_pad_a"
#define F4GEMM_UTIL_QUANTIZE "f4gemm_sm90a_quantize"

/* Every util kernel runs CTAs of exactly this many threads (__launch_bounds__; the quantizer's teams assume
 * 8 warps), with no dynamic shared memory. */
#define F4GEMM_UTIL_THREADS 256u
#define F4GEMM_UTIL_PACK_WEIGHT_THREADS F4GEMM_UTIL_THREADS
#define F4GEMM_UTIL_PAD_A_THREADS F4GEMM_UTIL_THREADS
#define F4GEMM_UTIL_QUANTIZE_THREADS F4GEMM_UTIL_THREADS

/* F4gemmQuantizeArgs.dtype */
#define F4GEMM_UTIL_DTYPE_FP32 0u
#define F4GEMM_UTIL_DTYPE_BF16 1u

/* clang-format off */
/* f4gemm_sm90a_pack_weight: plain B + scales -> W = w_header(n, k) then the body, every body word
 * w_body_word() (weight.h). w must be 16-byte aligned (cuMemAlloc gives 256); w_bytes(n, k) bytes. */
typedef struct F4gemmPackWeightArgs {
    uint64_t w;           /* 0x00 W: 256-byte header + body (weight.h), w_bytes(n, k) bytes        */
    uint64_t b;           /* 0x08 fp4x2 [n, k/2], row pitch ldb bytes                               */
    uint64_t b_scale;     /* 0x10 e8m0 [n, k/32], row pitch lds bytes                               */
    uint32_t n;           /* 0x18 rows of B, > 0                                                    */
    uint32_t k;           /* 0x1c elements per row, > 0, multiple of 32                             */
    uint32_t ldb;         /* 0x20 bytes, >= k/2, multiple of 4                                      */
    uint32_t lds;         /* 0x24 bytes, >= k/32                                                    */
    uint32_t _reserved[2]; /* 0x28 0                                                                */
} F4gemmPackWeightArgs;   /* 0x30 bytes */

/* f4gemm_sm90a_pad_a: plain A + scales -> padded A (weight.h ASource, a_pad_scale): data
 * [a_m_pad(m), w_k_pad(k)/2] and scales [a_m_pad(m), w_k_pad(k)/32], contiguous rows. Outputs 16-byte
 * aligned. The A loads are 16-byte when a and lda are multiples of 16, byte loads otherwise. */
typedef struct F4gemmPadAArgs {
    uint64_t a_out;       /* 0x00 fp4x2 [a_m_pad(m), w_k_pad(k)/2], contiguous                     */
    uint64_t a_scale_out; /* 0x08 e8m0 [a_m_pad(m), w_k_pad(k)/32], contiguous                     */
    uint64_t a;           /* 0x10 fp4x2 [m, k/2], row pitch lda bytes                               */
    uint64_t a_scale;     /* 0x18 e8m0 [m, k/32], row pitch lds bytes                               */
    uint32_t m;           /* 0x20 rows of A, > 0 (a_m_pad(0) = 0: nothing to write, no launch)      */
    uint32_t k;           /* 0x24 > 0, multiple of 32                                               */
    uint32_t lda;         /* 0x28 bytes, >= k/2                                                     */
    uint32_t lds;         /* 0x2c bytes, >= k/32                                                    */
} F4gemmPadAArgs;         /* 0x30 bytes */

/* f4gemm_sm90a_quantize: bf16 or fp32 [m, k] row-major -> MXFP4 by mx_quantize.h (bit-identical to the
 * host's quantize_mxfp4 of the same values), written as the padded A of f4gemm_sm90a_pad_a. The x loads
 * are 16-byte when x and ldx * element size are multiples of 16, element loads otherwise. */
typedef struct F4gemmQuantizeArgs {
    uint64_t a_out;       /* 0x00 fp4x2 [a_m_pad(m), w_k_pad(k)/2], contiguous, 16-byte aligned    */
    uint64_t a_scale_out; /* 0x08 e8m0 [a_m_pad(m), w_k_pad(k)/32], contiguous                     */
    uint64_t x;           /* 0x10 bf16 or fp32 [m, k], row pitch ldx elements                       */
    uint32_t m;           /* 0x18 rows, > 0 (a_m_pad(0) = 0: nothing to write, no launch)           */
    uint32_t k;           /* 0x1c > 0, multiple of 32                                               */
    uint32_t ldx;         /* 0x20 elements, >= k                                                    */
    uint32_t dtype;       /* 0x24 F4GEMM_UTIL_DTYPE_FP32 or F4GEMM_UTIL_DTYPE_BF16                  */
    uint32_t _reserved[2]; /* 0x28 0                                                                */
} F4gemmQuantizeArgs;     /* 0x30 bytes */
/* clang-format on */

#define F4GEMM_UTIL_ARGS_BYTES 0x30

#ifdef __cplusplus
static_assert(sizeof(F4gemmPackWeightArgs) == F4GEMM_UTIL_ARGS_BYTES, "pack_weight args are 0x30 bytes");
static_assert(offsetof(F4gemmPackWeightArgs, w) == 0x00, "w");
static_assert(offsetof(F4gemmPackWeightArgs, b) == 0x08, "b");
static_assert(offsetof(F4gemmPackWeightArgs, b_scale) == 0x10, "b_scale");
static_assert(offsetof(F4gemmPackWeightArgs, n) == 0x18, "n");
static_assert(offsetof(F4gemmPackWeightArgs, k) == 0x1c, "k");
static_assert(offsetof(F4gemmPackWeightArgs, ldb) == 0x20, "ldb");
static_assert(offsetof(F4gemmPackWeightArgs, lds) == 0x24, "lds");
static_assert(offsetof(F4gemmPackWeightArgs, _reserved) == 0x28, "_reserved");

static_assert(sizeof(F4gemmPadAArgs) == F4GEMM_UTIL_ARGS_BYTES, "pad_a args are 0x30 bytes");
static_assert(offsetof(F4gemmPadAArgs, a_out) == 0x00, "a_out");
static_assert(offsetof(F4gemmPadAArgs, a_scale_out) == 0x08, "a_scale_out");
static_assert(offsetof(F4gemmPadAArgs, a) == 0x10, "a");
static_assert(offsetof(F4gemmPadAArgs, a_scale) == 0x18, "a_scale");
static_assert(offsetof(F4gemmPadAArgs, m) == 0x20, "m");
static_assert(offsetof(F4gemmPadAArgs, k) == 0x24, "k");
static_assert(offsetof(F4gemmPadAArgs, lda) == 0x28, "lda");
static_assert(offsetof(F4gemmPadAArgs, lds) == 0x2c, "lds");

static_assert(sizeof(F4gemmQuantizeArgs) == F4GEMM_UTIL_ARGS_BYTES, "quantize args are 0x30 bytes");
static_assert(offsetof(F4gemmQuantizeArgs, a_out) == 0x00, "a_out");
static_assert(offsetof(F4gemmQuantizeArgs, a_scale_out) == 0x08, "a_scale_out");
static_assert(offsetof(F4gemmQuantizeArgs, x) == 0x10, "x");
static_assert(offsetof(F4gemmQuantizeArgs, m) == 0x18, "m");
static_assert(offsetof(F4gemmQuantizeArgs, k) == 0x1c, "k");
static_assert(offsetof(F4gemmQuantizeArgs, ldx) == 0x20, "ldx");
static_assert(offsetof(F4gemmQuantizeArgs, dtype) == 0x24, "dtype");
static_assert(offsetof(F4gemmQuantizeArgs, _reserved) == 0x28, "_reserved");

namespace f4gemm {

constexpr const char* kUtilCubin = F4GEMM_UTIL_CUBIN;

/* Launch geometry: block = F4GEMM_UTIL_THREADS threads, 0 bytes of dynamic shared memory, grid = (x, 1, 1)
 * with x from the functions below. Every kernel strides over its work by gridDim.x, so a smaller grid
 * (at least 1) is also correct; these give one pass. */

/* pack_weight: one thread per 16 body bytes (4 words); block 0 also writes the header. */
F4GEMM_FRAG16S_HD inline size_t util_pack_weight_grid(size_t n, size_t k) {
    const size_t pieces = w_body_bytes(n, k) / 16;
    return pieces == 0 ? 1 : (pieces + F4GEMM_UTIL_THREADS - 1) / F4GEMM_UTIL_THREADS;
}

/* pad_a: one thread per (row, 32-block) of the padded A: its 16 data bytes and its scale byte. */
F4GEMM_FRAG16S_HD inline size_t util_pad_a_grid(size_t m, size_t k) {
    const size_t items = a_m_pad(m) * (w_k_pad(k) / 32);
    return (items + F4GEMM_UTIL_THREADS - 1) / F4GEMM_UTIL_THREADS;
}

/* quantize: a row is quantized by a team of util_quantize_warps_per_row(k) warps (a warp-step covers 1024
 * bf16 or 512 fp32 elements: a lane owns 64 bytes of x), so a CTA of 8 warps takes 8 / warps_per_row rows;
 * teams are sized so that a long row spreads over the whole CTA (latency at small m) and a short one does
 * not leave warps idle. The kernel derives the same numbers from k; the grid does not depend on the dtype. */
F4GEMM_FRAG16S_HD inline uint32_t util_quantize_warps_per_row(size_t k) {
    const size_t steps = w_k_pad(k) / 1024;
    return steps >= 8 ? 8u : steps >= 4 ? 4u : steps >= 2 ? 2u : 1u;
}
F4GEMM_FRAG16S_HD inline size_t util_quantize_grid(size_t m, size_t k) {
    return a_m_pad(m) / (F4GEMM_UTIL_THREADS / 32 / util_quantize_warps_per_row(k));
}

}  // namespace f4gemm
#endif

#endif /* F4GEMM_UTIL_ARGS_H */
