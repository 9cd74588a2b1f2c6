// The CPU backend's GEMM: D = alpha * A.B^T + beta * C on plain MXFP4 operands, blocked in
// 64x64 output tiles spread over std::threads. It mirrors what the block-scaled GPU kernels do
// (an exact per-32-block partial sum, scaled by 2^(ea+eb), added into an fp32 accumulator;
// split-K chunks in their own fp32 accumulators, added in chunk order) and is deliberately not
// the float64 reference it is checked against. docs/VERIFY.md states the semantics.
#include "f4gemm/cpu_backend.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"

namespace f4gemm {
namespace {

constexpr size_t BLOCK_M = 64;  // output rows per tile
constexpr size_t BLOCK_N = 64;  // output columns per tile
constexpr uint8_t kE8m0Nan = 0xFF;
constexpr int kE8m0Bias = 127;

// packed byte -> its two e2m1 values (low nibble = even element), unscaled.
struct ByteLut {
    std::array<std::array<float, 2>, 256> v;
    ByteLut() {
        for (int byte = 0; byte < 256; ++byte) {
            v[byte][0] = e2m1_to_float(uint8_t(byte & 0xF));
            v[byte][1] = e2m1_to_float(uint8_t(byte >> 4));
        }
    }
};

const ByteLut& byte_lut() {
    static const ByteLut lut;
    return lut;
}

// 2^e as a float for e in [-126, 127] (normal range), built from the bits.
inline float pow2f(int e) {
    const uint32_t u = uint32_t(e + 127) << 23;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// x * 2^e with one IEEE rounding (only where the result is subnormal) and overflow to Inf.
inline float scale_pow2(float x, int e) {
    if (e >= -126 && e <= 127) return x * pow2f(e);
    return std::ldexp(x, e);
}

// An fp32 accumulator with an unbounded exponent: value = acc * 2^exp. Adding v * 2^e rescales
// acc to the larger exponent first. Scaling by a power of two is exact in the normal range, so
// while no intermediate over- or underflows this gives bit for bit what a plain float
// accumulator gives (float arithmetic commutes with power-of-two scaling); block scales that
// span more than float's range (DataKind::WideScale) then neither overflow to Inf (and Inf-Inf
// to NaN) in the middle of a sum nor flush small terms before they meet their peers.
inline void wide_add(float& acc, int& exp, float v, int e) {
    if (v == 0.f) return;
    if (acc == 0.f) {
        acc = v;
        exp = e;
    } else if (e > exp) {
        acc = scale_pow2(acc, exp - e) + v;
        exp = e;
    } else {
        acc += scale_pow2(v, e - exp);
    }
}

struct Plan {
    const CpuGemmArgs* args;
    uint16_t* d;
    size_t ld;
    size_t k_blocks;          // k / 32
    size_t blocks_per_split;  // k_per_split / 32
    int splits;
    size_t tiles_m, tiles_n;
};

// One thread's working set: decoded operand blocks of one tile and the tile's accumulators.
struct TileScratch {
    std::array<float, BLOCK_M * kBlockK> a_blk;    // (BLOCK_M, 32) e2m1 values of A rows, unscaled
    std::array<float, kBlockK * BLOCK_N> b_blk_t;  // (32, BLOCK_N) e2m1 values of B rows, transposed
    std::array<int, BLOCK_M> ea;                   // unbiased A exponents; kNanExp marks 0xFF
    std::array<int, BLOCK_N> eb;
    std::array<float, BLOCK_M * BLOCK_N> part;  // (BLOCK_M, BLOCK_N) exact 32-block sums
    std::array<float, BLOCK_M * BLOCK_N> chunk_acc, total_acc;
    std::array<int, BLOCK_M * BLOCK_N> chunk_exp, total_exp;
};
constexpr int kNanExp = std::numeric_limits<int>::min();

// Decodes rows [row0, row0 + rows) of one operand at 32-block kb: values into dst with the given
// element strides (row_stride between rows, elem_stride between the 32 elements), exponents into
// exps. Rows past `rows` up to `pad_rows` are zero with exponent 0.
void decode_block(const MxOperand& op, size_t row0, size_t rows, size_t pad_rows, size_t kb, float* dst,
                  size_t row_stride, size_t elem_stride, int* exps) {
    const ByteLut& lut = byte_lut();
    const size_t row_bytes = op.k / 2, row_scales = op.k / kBlockK;
    for (size_t r = 0; r < pad_rows; ++r) {
        float* out = dst + r * row_stride;
        if (r >= rows) {
            for (size_t t = 0; t < size_t(kBlockK); ++t) out[t * elem_stride] = 0.f;
            exps[r] = 0;
            continue;
        }
        const uint8_t* bytes = op.packed.data() + (row0 + r) * row_bytes + kb * (kBlockK / 2);
        for (size_t t = 0; t < size_t(kBlockK / 2); ++t) {
            out[(2 * t) * elem_stride] = lut.v[bytes[t]][0];
            out[(2 * t + 1) * elem_stride] = lut.v[bytes[t]][1];
        }
        const uint8_t s = op.scales[(row0 + r) * row_scales + kb];
        exps[r] = s == kE8m0Nan ? kNanExp : int(s) - kE8m0Bias;
    }
}

void run_tile(const Plan& p, size_t tile, TileScratch& w) {
    const CpuGemmArgs& g = *p.args;
    const size_t m0 = (tile / p.tiles_n) * BLOCK_M, n0 = (tile % p.tiles_n) * BLOCK_N;
    const size_t rows = std::min(BLOCK_M, g.m - m0), cols = std::min(BLOCK_N, g.n - n0);
    constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

    w.total_acc.fill(0.f);
    w.total_exp.fill(0);
    for (int split = 0; split < p.splits; ++split) {
        const size_t kb_begin = std::min(p.k_blocks, size_t(split) * p.blocks_per_split);
        const size_t kb_end = std::min(p.k_blocks, kb_begin + p.blocks_per_split);
        w.chunk_acc.fill(0.f);
        w.chunk_exp.fill(0);
        for (size_t kb = kb_begin; kb < kb_end; ++kb) {
            decode_block(*g.a, m0, rows, rows, kb, w.a_blk.data(), kBlockK, 1, w.ea.data());
            decode_block(*g.b, n0, cols, BLOCK_N, kb, w.b_blk_t.data(), 1, BLOCK_N, w.eb.data());
            // Exact block sums: e2m1 products are multiples of 1/4 of magnitude <= 36, so any
            // partial sum of 32 of them (<= 1152) is exact in fp32, whatever the order.
            w.part.fill(0.f);
            for (size_t i = 0; i < rows; ++i) {
                float* part_row = w.part.data() + i * BLOCK_N;
                for (size_t t = 0; t < size_t(kBlockK); ++t) {
                    const float av = w.a_blk[i * kBlockK + t];
                    if (av == 0.f) continue;
                    const float* b_t = w.b_blk_t.data() + t * BLOCK_N;
                    for (size_t j = 0; j < BLOCK_N; ++j) part_row[j] += av * b_t[j];
                }
            }
            for (size_t i = 0; i < rows; ++i) {
                for (size_t j = 0; j < cols; ++j) {
                    const size_t o = i * BLOCK_N + j;
                    if (w.ea[i] == kNanExp || w.eb[j] == kNanExp) {
                        w.chunk_acc[o] = kNan;  // NaN scale: NaN * anything, zeros included
                        continue;
                    }
                    wide_add(w.chunk_acc[o], w.chunk_exp[o], w.part[o], w.ea[i] + w.eb[j]);
                }
            }
        }
        // Chunk sums meet in chunk order, in fp32 (not bf16 atomics as in aiter's split-K).
        for (size_t i = 0; i < rows; ++i) {
            for (size_t j = 0; j < cols; ++j) {
                const size_t o = i * BLOCK_N + j;
                if (std::isnan(w.chunk_acc[o]))
                    w.total_acc[o] = kNan;
                else
                    wide_add(w.total_acc[o], w.total_exp[o], w.chunk_acc[o], w.chunk_exp[o]);
            }
        }
    }

    // Epilogue in fp32: alpha * acc, then + beta * C (bf16 widened), rounded to bf16 once.
    const bool use_c = g.c != nullptr && g.beta != 0.f;
    for (size_t i = 0; i < rows; ++i) {
        uint16_t* d_row = p.d + (m0 + i) * p.ld + n0;
        for (size_t j = 0; j < cols; ++j) {
            const size_t o = i * BLOCK_N + j;
            float v = scale_pow2(g.alpha * w.total_acc[o], w.total_exp[o]);
            if (use_c) v += g.beta * bf16_to_float(g.c[(m0 + i) * g.n + n0 + j]);
            d_row[j] = float_to_bf16(v);
        }
    }
}

std::string show(long long v) {
    return std::to_string(v);
}

void check_operand(const MxOperand* op, const char* name, size_t rows, const char* rows_name, size_t k) {
    const std::string who = std::string("cpu_gemm: operand ") + name;
    if (!op) throw Error(Errc::InvalidArgument, who + " is null (got nullptr): pass a plain MxOperand");
    if (op->k != k)
        throw Error(Errc::InvalidArgument, who + " k (got " + show(op->k) + ") differs from the GEMM's k = " +
                                               show(k) + ": pass an operand built for k");
    if (op->rows < rows)
        throw Error(Errc::InvalidArgument, who + " has too few rows (got " + show(op->rows) + ", need " +
                                               rows_name + " = " + show(rows) + "): pass a larger operand");
    if (op->packed.size() != op->rows * (k / 2) || op->scales.size() != op->rows * (k / kBlockK))
        throw Error(Errc::InvalidArgument,
                    who + " buffers do not match its shape (got packed " + show(op->packed.size()) +
                        " and scales " + show(op->scales.size()) + " bytes, want " +
                        show(op->rows * (k / 2)) + " and " + show(op->rows * (k / kBlockK)) + " for [" +
                        show(op->rows) + ", " + show(k) + "])");
}

}  // namespace

void cpu_gemm(const CpuGemmArgs& args, uint16_t* d, size_t ld) {
    const CpuGemmArgs& g = args;
    if (g.m == 0 || g.n == 0 || g.k == 0)
        throw Error(Errc::InvalidArgument, "cpu_gemm: shape (got m=" + show(g.m) + ", n=" + show(g.n) +
                                               ", k=" + show(g.k) + "): m, n and k must be positive");
    if (g.k % kBlockK != 0)
        throw Error(Errc::InvalidArgument, "cpu_gemm: k (got " + show(g.k) +
                                               ") is not a multiple of 32: MXFP4 has one scale per 32");
    check_operand(g.a, "A", g.m, "m", g.k);
    check_operand(g.b, "B", g.n, "n", g.k);
    if (!d) throw Error(Errc::InvalidArgument, "cpu_gemm: output D is null (got nullptr): pass [m, ld] bf16");
    if (ld < g.n)
        throw Error(Errc::InvalidArgument, "cpu_gemm: row stride ld (got " + show(ld) +
                                               ") is smaller than n (" + show(g.n) + "): pass ld >= n");
    if (g.splits < 1)
        throw Error(Errc::InvalidArgument,
                    "cpu_gemm: splits (got " + show(g.splits) + ") must be >= 1 (1 = no split-K)");
    size_t k_per_split = g.k;
    if (g.splits > 1 || g.k_per_split != 0) {
        if (g.k_per_split <= 0 || g.k_per_split % kBlockK != 0)
            throw Error(Errc::InvalidArgument, "cpu_gemm: k_per_split (got " + show(g.k_per_split) +
                                                   ") must be a positive multiple of 32");
        if ((long long)g.k_per_split * g.splits < (long long)g.k)
            throw Error(Errc::InvalidArgument,
                        "cpu_gemm: k_per_split * splits (got " + show(g.k_per_split) + " * " +
                            show(g.splits) + " = " + show((long long)g.k_per_split * g.splits) +
                            ") does not cover k = " + show(g.k) + ": pass k_per_split >= ceil(k / splits)");
        k_per_split = size_t(g.k_per_split);
    }

    Plan p;
    p.args = &g;
    p.d = d;
    p.ld = ld;
    p.k_blocks = g.k / kBlockK;
    p.blocks_per_split = k_per_split / kBlockK;
    p.splits = g.splits;
    p.tiles_m = (g.m + BLOCK_M - 1) / BLOCK_M;
    p.tiles_n = (g.n + BLOCK_N - 1) / BLOCK_N;
    const size_t num_tiles = p.tiles_m * p.tiles_n;

    size_t num_threads =
        g.threads > 0 ? size_t(g.threads) : std::max<size_t>(1, std::thread::hardware_concurrency());
    num_threads = std::min(num_threads, num_tiles);

    std::atomic<size_t> next_tile{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto worker = [&] {
        try {
            auto scratch = std::make_unique<TileScratch>();
            for (size_t t; (t = next_tile.fetch_add(1)) < num_tiles;) run_tile(p, t, *scratch);
        } catch (...) {
            std::lock_guard<std::mutex> lock(failure_mutex);
            if (!failure) failure = std::current_exception();
            next_tile = num_tiles;
        }
    };
    std::vector<std::thread> pool;
    try {
        for (size_t t = 1; t < num_threads; ++t) pool.emplace_back(worker);
    } catch (const std::system_error&) {
        // Fewer threads than asked for is still correct: the tiles are shared through next_tile.
    }
    worker();
    for (auto& th : pool) th.join();
    if (failure) std::rethrow_exception(failure);
}

}  // namespace f4gemm
