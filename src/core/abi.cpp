// Host side of the kernel ABI: launch plans (grid, aiter's split-K gdz rule, buffer sizes) and the
// kernarg blocks of include/f4gemm/kernarg.h. Ported from asm_f4gemm's make_launch and fill_args
// (f4gemm.hpp), which port the entry point of aiter's csrc/py_itfs_cu/asm_gemm_a4w4.cu.
#include "f4gemm/abi.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "f4gemm/error.hpp"
#include "f4gemm/kernarg.h"
#include "f4gemm/layout.hpp"

namespace f4gemm {

namespace {

// Rows a pre-pass converts: A rounded up to tile_M, and with_b, B rounded up to tile_N (sm90pp1).
size_t prepass_rows(const KernelConfig& kc, int m, int n, bool with_b) {
    const size_t mr = round_up(static_cast<size_t>(m), static_cast<size_t>(kc.tile_m));
    return with_b ? mr + round_up(static_cast<size_t>(n), static_cast<size_t>(kc.tile_n)) : mr;
}

// The pre-pass workspace: one e5m2 byte per element of those rows, then one uint32 word per row.
size_t prepass_image_bytes(size_t rows, size_t k) {
    return rows * k + 4 * rows;
}

std::string shape_str(int m, int n, int k) {
    return "M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k);
}

}  // namespace

LaunchPlan make_launch_plan(const KernelConfig& kc, int m, int n, int k, int log2_k_split, bool has_c) {
    if (m <= 0 || n <= 0 || k <= 0)
        throw Error(Errc::InvalidArgument,
                    "GEMM shape (got " + shape_str(m, n, k) + "): M, N and K must be positive");
    if (k % 32 != 0)
        throw Error(
            Errc::InvalidArgument,
            "K (got " + std::to_string(k) + "): must be a multiple of 32 (one E8M0 scale per 32 elements)");
    if (kc.tile_m <= 0 || kc.tile_n <= 0 || kc.threads <= 0 || kc.smem_bytes < 0)
        throw Error(Errc::InvalidArgument, "kernel " + kc.co_name + " (got tile " +
                                               std::to_string(kc.tile_m) + "x" + std::to_string(kc.tile_n) +
                                               ", threads " + std::to_string(kc.threads) +
                                               "): tiles and threads must be positive in the manifest");

    // The A pre-pass tiles (sm90pa1) split K; the kernels that convert both operands first do not.
    if (has_prepass(kc.abi) && kc.abi != KernelAbi::Sm90pa1 &&
        kc.split_k)  // before the split checks, whose advice would not apply
        throw Error(Errc::InvalidArgument, "kernel " + kc.co_name + " (got splitK=1 with abi " +
                                               to_string(kc.abi) +
                                               "): pre-pass kernels of both operands do not split K; set "
                                               "splitK to 0 in the manifest");

    LaunchPlan p;
    p.grid.x = static_cast<unsigned>(ceil_div(static_cast<size_t>(n), static_cast<size_t>(kc.tile_n)));
    p.grid.y = static_cast<unsigned>(ceil_div(static_cast<size_t>(m), static_cast<size_t>(kc.tile_m)));
    p.block.x = static_cast<unsigned>(kc.threads);
    p.smem_bytes = static_cast<unsigned>(kc.smem_bytes);

    if (kc.split_k) {
        if (log2_k_split < 0)
            throw Error(Errc::InvalidArgument,
                        "log2_k_split (got " + std::to_string(log2_k_split) + ") for split-capable kernel " +
                            kc.co_name + ": resolve --splitk -1 with the heuristic, or pass L >= 0");
        // asm_f4gemm's wording, K(<K>) % (1 << log2_k_split)(<k_num>) != 0; 2^L past 62 bits
        // divides no int K either, so it reports the same way.
        const long long k_num = log2_k_split < 62 ? (1LL << log2_k_split) : (1LL << 62);
        if (k % k_num != 0)
            throw Error(Errc::InvalidArgument,
                        "K(" + std::to_string(k) + ") % (1 << log2_k_split)(" + std::to_string(k_num) +
                            ") != 0 (got log2_k_split=" + std::to_string(log2_k_split) +
                            "): pick --splitk L with K % 2^L == 0");
        p.log2_k_split = log2_k_split;
        p.k_num = static_cast<int>(k_num);
        p.k_per_split = static_cast<int>(round_up(static_cast<size_t>(k / k_num), 256));
        p.gdz = static_cast<int>(ceil_div(static_cast<size_t>(k), static_cast<size_t>(p.k_per_split)));
        // aiter's split epilogue accumulates into D with bf16 atomics, so D starts at 0. Our sm90v1
        // kernels reduce in the fp32 workspace instead and overwrite D.
        p.zero_out = kc.abi == KernelAbi::Aiter && p.k_num > 1;
    } else {
        // Non-split kernels ignore --splitk silently, as asm_f4gemm does.
        p.log2_k_split = 0;
        p.k_num = 1;
        p.k_per_split = static_cast<int>(round_up(static_cast<size_t>(k), 256));
        p.gdz = 1;
    }
    p.grid.z = static_cast<unsigned>(p.gdz);

    const size_t M = static_cast<size_t>(m), N = static_cast<size_t>(n), K = static_cast<size_t>(k);
    p.a_bytes = round_up(M, kOperandRowPad) * (K / 2);  // (round_up(M,256), K/2) fp4x2, zero rows past M
    p.b_bytes = round_up(N, kOperandRowPad) * (K / 2);  // (round_up(N,256), K/2) fp4x2, per b_layout
    if (kc.b_layout == BLayout::Frag16S)
        p.b_bytes =
            frag16s_bytes(round_up(N, kOperandRowPad), K);  // the W body (K = its padded K), scales inside
    if (kc.scale_layout == ScaleLayout::AiterShuffled) {
        p.scale_stride = round_up(K / 32, 8);  // sn: aiter pads the scale columns to 8
    } else {
        p.scale_stride = K / 32;
    }
    p.sa_bytes = round_up(M, kOperandRowPad) * p.scale_stride;  // (round_up(M,256), stride) e8m0
    p.sb_bytes = kc.b_layout == BLayout::Frag16S ? 0 : round_up(N, kOperandRowPad) * p.scale_stride;
    p.d_bytes = round_up(M, kOutputRowPad) * N * 2;  // (round_up(M,32), N) bf16
    p.c_bytes = has_c ? M * N * 2 : 0;               // (M, N) bf16
    // A split of our kernels (sm90v1, or sm90pa1 after its A image) sums fp32 partials and counts its tiles:
    // in the launcher's counter buffer, or after the partials in a workspace zeroed before the launch (for
    // sm90pa1 the memset precedes the pre-pass on the stream).
    p.zero_workspace = (kc.abi == KernelAbi::Sm90v1 || kc.abi == KernelAbi::Sm90pa1) && p.gdz > 1;
    if (p.zero_workspace)
        p.counter_slots =
            ceil_div(N, static_cast<size_t>(kc.tile_n)) * ceil_div(M, static_cast<size_t>(kc.tile_m));
    p.workspace_bytes = kc.abi == KernelAbi::Sm90v1 && p.gdz > 1 ? sm90_workspace_bytes(kc, m, n, p.gdz) : 0;
    if (has_prepass(kc.abi)) {
        const size_t rows = prepass_rows(kc, m, n, kc.abi != KernelAbi::Sm90pa1);
        p.workspace_bytes = kc.abi == KernelAbi::Sm90pa1 ? sm90pa_workspace_bytes(kc, m, n, k, p.gdz)
                                                         : sm90pp_workspace_bytes(kc, m, n, k);
        p.pre_grid.x = static_cast<unsigned>(ceil_div(rows, size_t(kPrepassThreads / 32)));
        if (kc.abi == KernelAbi::Sm90pa1)  // A alone: a warp per (row, K slice), docs/ABI_SM90.md
            p.pre_grid.y = static_cast<unsigned>(
                ceil_div(static_cast<size_t>(K), size_t(F4GEMM_SM90PA_PREPASS_SLICE_K)));
        p.pre_block.x = kPrepassThreads;
    }
    if (has_bconv(kc.abi)) {
        p.bconv_grid.x = kBconvCtas;
        p.bconv_block.x = kBconvThreads;
    }
    p.args_bytes = kc.abi == KernelAbi::Aiter ? F4GEMM_KERNARG_PREFIX_BYTES : F4GEMM_SM90_ARGS_BYTES;
    return p;
}

size_t sm90pa_partials_offset(const KernelConfig& kc, int m, int k) {
    if (m <= 0 || k <= 0 || kc.tile_m <= 0) return 0;
    return static_cast<size_t>(F4GEMM_SM90PA_PARTIALS_OFFSET(int64_t(m), int64_t(k), int64_t(kc.tile_m)));
}

size_t sm90pa_workspace_bytes(const KernelConfig& kc, int m, int n, int k, int gdz) {
    if (m <= 0 || k <= 0 || kc.tile_m <= 0) return 0;
    const size_t image = prepass_image_bytes(prepass_rows(kc, m, 0, false), static_cast<size_t>(k));
    if (gdz <= 1) return image;
    return sm90pa_partials_offset(kc, m, k) + sm90_workspace_bytes(kc, m, n, gdz);
}

size_t sm90pp_workspace_bytes(const KernelConfig& kc, int m, int n, int k) {
    if (m <= 0 || n <= 0 || k <= 0 || kc.tile_m <= 0 || kc.tile_n <= 0) return 0;
    const size_t image = prepass_image_bytes(prepass_rows(kc, m, n, true), static_cast<size_t>(k));
    if (kc.abi != KernelAbi::Sm90pp2) return image;
    const size_t tiles_n = ceil_div(static_cast<size_t>(n), static_cast<size_t>(kc.tile_n));
    return image + 4 * tiles_n * (static_cast<size_t>(k) / 128);  // ready counters
}

int sm90_ctas_per_sm(const KernelConfig& kc) {
    constexpr long kSmemPerSm = 228 * 1024, kReservedPerCta = 1024, kThreadsPerSm = 2048, kMaxCtas = 32;
    long c = kMaxCtas;
    if (kc.smem_bytes > 0) c = std::min(c, kSmemPerSm / (long(kc.smem_bytes) + kReservedPerCta));
    if (kc.threads > 0) c = std::min(c, kThreadsPerSm / long(kc.threads));
    if (kc.reg_ctas > 0) c = std::min(c, long(kc.reg_ctas));  // the launch register budget the kernel pins
    return int(std::max(1L, c));
}

size_t sm90_workspace_bytes(const KernelConfig& kc, int m, int n, int gdz) {
    if (gdz <= 1 || m <= 0 || n <= 0 || kc.tile_m <= 0 || kc.tile_n <= 0) return 0;
    const size_t gdx = ceil_div(static_cast<size_t>(n), static_cast<size_t>(kc.tile_n));
    const size_t gdy = ceil_div(static_cast<size_t>(m), static_cast<size_t>(kc.tile_m));
    const size_t partials = static_cast<size_t>(gdz) * (gdy * kc.tile_m) * (gdx * kc.tile_n) * 4;  // fp32
    const size_t counters = gdx * gdy * 4;  // one uint32 per output tile
    return partials + counters;
}

F4gemmKernelArgs make_kernel_args(const LaunchPlan& p, const DevicePointers& ptr, int m, int n, int k,
                                  float alpha, float beta) {
    F4gemmKernelArgs a;
    std::memset(&a, 0, sizeof a);  // asm_f4gemm zeroes the unread slots; aiter leaves them garbage
    a.ptr_D = ptr.d;
    a.ptr_C = ptr.c;
    a.ptr_A = ptr.a;
    a.ptr_B = ptr.b;
    a.alpha = alpha;
    a.beta = beta;
    // aiter's kernels read stride_C0 for the D store too; stride_D0 is dead but filled alike.
    a.stride_C0 = static_cast<uint32_t>(n);
    a.stride_D0 = static_cast<uint32_t>(n);
    // fp4 elements: the kernels shift right by one to get bytes (aiter passes stride(0) * 2).
    a.stride_A0 = static_cast<uint32_t>(k);
    a.stride_B0 = static_cast<uint32_t>(k);
    a.M = static_cast<uint32_t>(m);
    a.N = static_cast<uint32_t>(n);
    a.K = static_cast<uint32_t>(k);
    a.ptr_ScaleA = ptr.scale_a;
    a.ptr_ScaleB = ptr.scale_b;
    a.stride_ScaleA0 = static_cast<uint32_t>(p.scale_stride);  // bytes
    a.stride_ScaleB0 = static_cast<uint32_t>(p.scale_stride);
    a.log2_k_split = p.log2_k_split;
    return a;
}

F4gemmSm90Args make_sm90_args(const LaunchPlan& p, const DevicePointers& ptr, int m, int n, int k,
                              float alpha, float beta) {
    F4gemmSm90Args s;
    std::memset(&s, 0, sizeof s);
    s.base = make_kernel_args(p, ptr, m, n, k, alpha, beta);
    s.ptr_workspace = p.workspace_bytes ? ptr.workspace : 0;
    s.workspace_bytes = p.workspace_bytes;
    s.num_splits = static_cast<uint32_t>(p.gdz);
    s.k_per_split = static_cast<uint32_t>(p.k_per_split);
    s.ptr_counters = p.workspace_bytes && p.counter_slots ? ptr.counters : 0;
    return s;
}

// A slab width make_pp_slab_launches takes: whole tiles of kc, whole W groups of 16 rows.
static bool pp_slab_fits(const KernelConfig& kc, int w) {
    return w > 0 && kc.tile_n > 0 && w % kc.tile_n == 0 && w % 16 == 0;
}

int pp_slab_width(const KernelConfig& kc, int m, int n, int k, int sms) {
    if (kc.abi != KernelAbi::Sm90pp1 || kc.accum != Accum::Promoted || m <= 0 || n <= 0 || k < kPpSlabMinK ||
        sms <= 0 || kc.tile_m <= 0 || kc.tile_n <= 0)
        return 0;
    const long tiles_m = long(ceil_div(size_t(m), size_t(kc.tile_m)));
    const auto waves = [&](long cols) {  // the waves of one slab of `cols` columns
        const long tiles = tiles_m * long(ceil_div(size_t(cols), size_t(kc.tile_n)));
        return (tiles + sms - 1) / sms;
    };
    const long whole = waves(n);
    for (int w = kPpSlabMinWidth; w <= kPpSlabMaxWidth && w < n; w += kPpSlabStep) {
        if (!pp_slab_fits(kc, w)) continue;
        const long slabbed = long(n / w) * waves(w) + (n % w != 0 ? waves(n % w) : 0);
        if (slabbed <= whole) return w;
    }
    return 0;
}

int pp_launch_slab_n(const KernelConfig& kc, int m, int n, int k, int sms, int lab_n) {
    if (kc.abi != KernelAbi::Sm90pp1) return 0;
    const int w = lab_n >= 0 ? lab_n : pp_slab_width(kc, m, n, k, sms);
    return w > 0 && n > w ? w : 0;
}

std::vector<PpSlabLaunch> make_pp_slab_launches(const KernelConfig& kc, const DevicePointers& ptr, int m,
                                                int n, int k, float alpha, float beta, bool has_c,
                                                int slab_n) {
    if (kc.abi != KernelAbi::Sm90pp1)
        throw Error(Errc::InvalidArgument, "kernel " + kc.co_name + " (got abi " + to_string(kc.abi) +
                                               "): N slabs are for sm90pp1 kernels only; run it unslabbed");
    if (!pp_slab_fits(kc, slab_n))
        throw Error(Errc::InvalidArgument, "N slab (got " + std::to_string(slab_n) + ") for kernel " +
                                               kc.co_name + ": use a positive multiple of its tile_n (" +
                                               std::to_string(kc.tile_n) + ") and of 16");
    make_launch_plan(kc, m, n, k, 0, has_c);  // the whole GEMM's shape checks, before any slab's
    const size_t group_bytes = frag16s_group_bytes(static_cast<size_t>(k));
    const size_t nr0 = round_up(static_cast<size_t>(std::min(slab_n, n)), static_cast<size_t>(kc.tile_n));
    std::vector<PpSlabLaunch> out;
    for (int n0 = 0; n0 < n; n0 += slab_n) {
        PpSlabLaunch s;
        s.n0 = n0;
        s.n = std::min(slab_n, n - n0);
        const LaunchPlan p = make_launch_plan(kc, m, s.n, k, 0, has_c);
        DevicePointers q = ptr;
        q.d += uint64_t(n0) * 2;  // bf16 columns
        if (q.c) q.c += uint64_t(n0) * 2;
        q.b += uint64_t(n0 / 16) * group_bytes;  // W's groups of 16 rows, one after the other
        F4gemmSm90Args a = make_sm90_args(p, q, m, s.n, k, alpha, beta);
        a.base.stride_D0 = static_cast<uint32_t>(n);
        a.base.stride_C0 = static_cast<uint32_t>(n);
        const size_t nr = round_up(static_cast<size_t>(s.n), static_cast<size_t>(kc.tile_n));
        a.prepass_skip_a = n0 > 0 && nr == nr0 ? 1u : 0u;  // else A's row words would sit elsewhere
        s.pre_grid = p.pre_grid;                           // A's and B's rows, or B's alone:
        if (a.prepass_skip_a)
            s.pre_grid.x = static_cast<unsigned>(ceil_div(nr, size_t(kPrepassThreads / 32)));
        s.grid = p.grid;
        s.args.resize(sizeof a);
        std::memcpy(s.args.data(), &a, sizeof a);
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<uint8_t> make_arg_blob(const KernelConfig& kc, const LaunchPlan& p, const DevicePointers& ptr,
                                   int m, int n, int k, float alpha, float beta) {
    std::vector<uint8_t> blob;
    if (kc.abi != KernelAbi::Aiter) {
        const F4gemmSm90Args s = make_sm90_args(p, ptr, m, n, k, alpha, beta);
        blob.resize(sizeof s);
        std::memcpy(blob.data(), &s, sizeof s);
    } else {
        const F4gemmKernelArgs a = make_kernel_args(p, ptr, m, n, k, alpha, beta);
        blob.resize(sizeof a);
        std::memcpy(blob.data(), &a, sizeof a);
    }
    return blob;
}

}  // namespace f4gemm
