/* f4gemm C API: a thin face over the Session (include/f4gemm/session.hpp), loaded by bench/ from Python
 * (ctypes) so f4gemm runs in the same process as the peers it is compared with. Device pointers are
 * integers (CUdeviceptr, e.g. torch's tensor.data_ptr()). B is the packed weight W (f4gemm_pack_weight,
 * docs/LAYOUTS_SM90.md "The packed weight W"): one buffer that carries B's scales, for every M.
 * A is in the operand layout: round_up(M, 256) rows of round_up(K, 256)/2 bytes and its scales
 * round_up(M, 256) rows of round_up(K, 256)/32 bytes (f4gemm_operand_bytes); for K % 256 == 0 that is the
 * plain [M, K/2] layout with rows allocated to a multiple of 256. Padding K blocks of A hold zero data
 * and the row's largest non-NaN scale; padding rows zero data (docs/ABI_SM90.md).
 * Every function returns 0 (or a valid handle, or a size) on success; f4gemm_last_error() says why not. */
#ifndef F4GEMM_F4GEMM_H
#define F4GEMM_F4GEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct f4gemm_handle f4gemm_handle;

/* Accumulation modes (include/f4gemm/accum.hpp, docs/VERIFY.md): EXACT, every result the nearest bf16 of the
 * exact sum (the default); PROMOTED, FP8 tensor-core partial sums promoted into fp32 every 128 K: faster,
 * with the bounded error |d - ref| <= 2^-8 |ref| + c_w |alpha| sum_k |a_k b_k|. An exact kernel serves both;
 * a promoted kernel only PROMOTED requests. Any other value is an error. */
#define F4GEMM_ACCUM_EXACT 0
#define F4GEMM_ACCUM_PROMOTED 1

/* The last error of this thread, one line; "" if none. */
const char* f4gemm_last_error(void);

/* Opens CUDA device `device` and the manifest in `co_dir` (NULL or "": our built-in kernels). */
f4gemm_handle* f4gemm_open(const char* co_dir, int device);
void f4gemm_close(f4gemm_handle* h);

int f4gemm_num_kernels(const f4gemm_handle* h);
/* co_name, tile and split capability of kernel i (manifest order). */
const char* f4gemm_kernel_name(const f4gemm_handle* h, int i);
int f4gemm_kernel_info(const f4gemm_handle* h, int i, int* tile_m, int* tile_n, int* split_k);
/* The B layout kernel i reads: "frag16s" (the packed weight W's body) for every shipped sm_90a kernel;
 * "plain", "aiter16x16", "bitplane", "frag16" for dev-ladder or aiter manifests. NULL for a bad index. */
const char* f4gemm_kernel_b_layout(const f4gemm_handle* h, int i);
/* The accumulation mode kernel i implements (F4GEMM_ACCUM_*); -1 for a bad index. */
int f4gemm_kernel_accum(const f4gemm_handle* h, int i);
/* The promoted mode's bound constant c_w for a kernel that sees K = k_launch and promotes every 128 K
 * (docs/VERIFY.md section 7): |d - ref| <= 2^-8 |ref| + c_w |alpha| sum_k |a_k b_k|. */
double f4gemm_promoted_cw(size_t k_launch);
/* c_w of kernel i for a GEMM of reduction K = k: the K it sees and the K of its FP8 chains (128, or 256 for
 * the tiles that promote every 256 K; the manifest's promote_k). -1 for a bad index or k <= 0. */
double f4gemm_kernel_cw(const f4gemm_handle* h, int i, int k);
/* The K kernel i sees for a GEMM of reduction K = k (round_up(k, 256) for the packed-weight kernels, k for
 * aiter's); -1 for a bad index or k <= 0. */
int f4gemm_kernel_k(const f4gemm_handle* h, int i, int k);
/* The SM count the heuristic uses. */
int f4gemm_num_sms(const f4gemm_handle* h);

/* Kernel choice for a shape and an accumulation mode (F4GEMM_ACCUM_*): the tuned table's row for the shape
 * and mode when it has one, else the heuristic (splitk as the CLI's --splitk); a PROMOTED request takes a
 * promoted kernel where one is offered for the shape, else an exact one (f4gemm_kernel_accum tells which). */
int f4gemm_select(f4gemm_handle* h, int m, int n, int k, int splitk, int accum, int* kernel,
                  int* log2_k_split);

/* Bytes of the packed weight W of an n x k weight (a 256-byte header, then B padded to round_up(n, 256)
 * rows and round_up(k, 256) columns with its scales); 0 on bad n or k (k must be a multiple of 32). */
size_t f4gemm_weight_bytes(const f4gemm_handle* h, int n, int k);

/* Bytes of the A operand layout for m x k: its data and its scales (either pointer may be NULL). */
int f4gemm_operand_bytes(const f4gemm_handle* h, int m, int k, size_t* data_bytes, size_t* scale_bytes);

/* Packs W on the device from plain B (uint8 [n, k/2], e2m1 pairs, element 2i in the low nibble) and its
 * E8M0 scales (uint8 [n, k/32]), contiguous rows, into `w` (f4gemm_weight_bytes(h, n, k) bytes), on
 * `stream` (0 = the handle's own). Bit-identical to the host packer (`f4gemm pack --layout weight`). */
int f4gemm_pack_weight(f4gemm_handle* h, uint64_t b, uint64_t b_scale, int n, int k, uint64_t w,
                       uint64_t stream);

/* Plain A (uint8 [m, k/2]) and its scales (uint8 [m, k/32]), contiguous rows, into the operand layout
 * (a_out, a_scale_out of f4gemm_operand_bytes), on `stream`. */
int f4gemm_pad_a(f4gemm_handle* h, uint64_t a, uint64_t a_scale, int m, int k, uint64_t a_out,
                 uint64_t a_scale_out, uint64_t stream);

/* Activations x (bf16 when is_bf16, else fp32; [m, k], row pitch ldx elements) quantized to MXFP4 (OCP MX
 * v1.0, bit-identical to the host quantizer) straight into the operand layout, on `stream`. */
int f4gemm_quantize(f4gemm_handle* h, uint64_t x, int is_bf16, int m, int k, int ldx, uint64_t a_out,
                    uint64_t a_scale_out, uint64_t stream);

/* D = alpha * A * W^T + beta * C with kernel `kernel` (-1: f4gemm_select's choice for `accum`, splitk 0)
 * under accumulation mode `accum` (F4GEMM_ACCUM_*; a promoted kernel under F4GEMM_ACCUM_EXACT is refused),
 * asynchronously on `stream` (a CUstream; 0 = the handle's own stream). c may be 0 when beta == 0.
 * W must be packed for (n, k): a weight packed by this handle is checked by its recorded shape, another
 * by its header (read once, outside graph capture). Buffers shorter than their allocation's end allows
 * are refused before launch.
 * A handle owns one workspace (split-K partials; the pre-pass image on every call), reused by each call:
 * calls on one handle must be ordered (one stream, or synchronised); use one handle per stream for
 * concurrent GEMMs. */
int f4gemm_gemm(f4gemm_handle* h, int kernel, int log2_k_split, int accum, int m, int n, int k, float alpha,
                float beta, uint64_t a, uint64_t a_scale, uint64_t w, uint64_t c, uint64_t d,
                uint64_t stream);

/* Programmatic dependent launch for this handle's later f4gemm_gemm calls (on: 1, off: 0, the default): each
 * GEMM's first kernel may be scheduled while the kernel ahead of it on the stream still runs, and waits for
 * it (its completion and memory) before it reads or writes anything, so any predecessor is safe; in a chain
 * of GEMMs (a layer's four) each start-up overlaps the previous tail (docs/KERNELS_SM90.md "Launch overlap").
 */
int f4gemm_set_pdl(f4gemm_handle* h, int on);

#ifdef __cplusplus
}
#endif

#endif /* F4GEMM_F4GEMM_H */
