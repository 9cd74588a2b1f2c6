/* f4gemm C API: the library that bench/ loads from Python (ctypes) so f4gemm runs in the same
 * process as the peers it is compared with. Device pointers are integers (CUdeviceptr, e.g.
 * torch's tensor.data_ptr()); operands are in the layouts the kernel's manifest row names
 * (plain for our sm_90a kernels), rows over-allocated to 256 as docs/ABI.md says.
 * Every function returns 0 (or a valid handle) on success; f4gemm_last_error() says why not. */
#ifndef F4GEMM_F4GEMM_H
#define F4GEMM_F4GEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct f4gemm_handle f4gemm_handle;

/* The last error of this thread, one line; "" if none. */
const char* f4gemm_last_error(void);

/* Opens CUDA device `device` and the manifest in `co_dir` (NULL or "": our built-in kernels). */
f4gemm_handle* f4gemm_open(const char* co_dir, int device);
void f4gemm_close(f4gemm_handle* h);

int f4gemm_num_kernels(const f4gemm_handle* h);
/* co_name, tile and split capability of kernel i (manifest order). */
const char* f4gemm_kernel_name(const f4gemm_handle* h, int i);
int f4gemm_kernel_info(const f4gemm_handle* h, int i, int* tile_m, int* tile_n, int* split_k);
/* The B layout kernel i reads ("plain", "aiter16x16", "bitplane", "frag16" or "frag16s";
 * docs/LAYOUTS_SM90.md): the caller of f4gemm_gemm passes B in it. NULL for a bad index. */
const char* f4gemm_kernel_b_layout(const f4gemm_handle* h, int i);
/* The SM count the heuristic uses. */
int f4gemm_num_sms(const f4gemm_handle* h);

/* Kernel choice for a shape: the tuned table when it has the shape, else the heuristic
 * (splitk as the CLI's --splitk). */
int f4gemm_select(f4gemm_handle* h, int m, int n, int k, int splitk, int* kernel, int* log2_k_split);

/* Launches kernel `kernel` (-1: f4gemm_select's choice with splitk 0) asynchronously on `stream`
 * (a CUstream; 0 = the handle's own stream). c may be 0 when beta == 0.
 * A handle owns one workspace (split-K partials; the sm90pp1 pre-pass image on every call), reused by
 * each call: calls on one handle must be ordered (one stream, or synchronised); use one handle per
 * stream for concurrent GEMMs. */
int f4gemm_gemm(f4gemm_handle* h, int kernel, int log2_k_split, int m, int n, int k, float alpha, float beta,
                uint64_t a, uint64_t a_scale, uint64_t b, uint64_t b_scale, uint64_t c, uint64_t d,
                uint64_t stream);

#ifdef __cplusplus
}
#endif

#endif /* F4GEMM_F4GEMM_H */
