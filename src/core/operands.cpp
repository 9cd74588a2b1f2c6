// Operand generators: the seed's (a bit-for-bit port of asm_f4gemm f4gemm_ref.hpp make_operand)
// and four stress kinds built on it (wide scales, quantized Gaussian, zero blocks, NaN scales),
// plus dequantization to float32. Bit-exactness holds for libstdc++'s std::mt19937 and
// std::uniform_int_distribution, which is what the original was built against.
#include "f4gemm/operands.hpp"

#include <algorithm>
#include <random>

#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"

namespace f4gemm {

namespace {

// ZeroBlocks picks its blocks with a second, salted engine, so the seed stream (and with it the
// seed kind's data) stays unchanged.
constexpr uint32_t kZeroSalt = 0x9E3779B9u;
// NanScale: flat scale index j (row-major over [rows, k/32]) is 0xFF when j % kNanStride ==
// kNanFirst % min(total, kNanStride). 61 is prime, so the NaNs walk over rows and blocks.
constexpr size_t kNanStride = 61;
constexpr size_t kNanFirst = 17;

// asm_f4gemm's loop with the scale range as a parameter: per row, k/2 bytes drawing the low
// then the high nibble from uniform_int(0,15), then the row's k/32 scales; one engine for all.
// WideScale keeps every row wide by construction: its first two blocks draw from 97..103 and
// 151..157 (2^-30..2^-24 and 2^24..2^30), in an order a coin picks per row, so any row with two
// blocks spans at least 48 binades, and an A row and a B row often meet "crossed" (A's smallest
// block against B's largest), which defeats any per-row reference exponent window. The range
// stops at 2^+-30 so every product and sum stays finite in float32 and bf16.
MxOperand uniform_operand(size_t rows, size_t k, uint32_t seed, bool wide) {
    MxOperand op;
    op.rows = rows;
    op.k = k;
    op.packed.resize(rows * (k / 2));        // (rows, k/2) fp4x2, K-major
    op.scales.resize(rows * (k / kBlockK));  // (rows, k/32) e8m0
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> nib(0, 15);
    std::uniform_int_distribution<int> seed_exp(124, 130);  // 2^-3 .. 2^3: products exact in f32
    std::uniform_int_distribution<int> wide_exp(97, 157), wide_lo(97, 103), wide_hi(151, 157), coin(0, 1);
    const size_t kp = k / 2, ks = k / kBlockK;
    for (size_t r = 0; r < rows; ++r) {
        for (size_t b = 0; b < kp; ++b) {
            const int lo = nib(rng);
            const int hi = nib(rng);
            op.packed[r * kp + b] = uint8_t(lo | (hi << 4));
        }
        const bool low_first = wide && ks >= 2 && coin(rng) == 1;
        for (size_t s = 0; s < ks; ++s) {
            int e;
            if (!wide)
                e = seed_exp(rng);
            else if (s < 2 && ks >= 2)
                e = (s == 0) == low_first ? wide_lo(rng) : wide_hi(rng);
            else
                e = wide_exp(rng);
            op.scales[r * ks + s] = uint8_t(e);
        }
    }
    return op;
}

MxOperand gaussian_operand(size_t rows, size_t k, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(rows * k);  // (rows, k) f32, row-major
    for (float& v : x) v = normal(rng);
    MxOperand op;
    op.rows = rows;
    op.k = k;
    op.packed.resize(rows * (k / 2));
    op.scales.resize(rows * (k / kBlockK));
    quantize_mxfp4(x.data(), rows, k, op.packed.data(), op.scales.data());
    return op;
}

void zero_blocks(MxOperand& op, uint32_t seed) {
    std::mt19937 rng(seed ^ kZeroSalt);
    std::uniform_int_distribution<int> quarter(0, 3);
    const size_t ks = op.k / kBlockK, kp = op.k / 2;
    for (size_t r = 0; r < op.rows; ++r)
        for (size_t s = 0; s < ks; ++s)
            if (quarter(rng) == 0)
                std::fill_n(&op.packed[r * kp + s * (kBlockK / 2)], kBlockK / 2, uint8_t(0));
}

void nan_scales(MxOperand& op) {
    const size_t total = op.scales.size();
    if (total == 0) return;
    const size_t first = kNanFirst % std::min(total, kNanStride);
    for (size_t j = first; j < total; j += kNanStride) op.scales[j] = 0xFF;
}

}  // namespace

DataKind parse_data_kind(const std::string& s) {
    if (s == "seed") return DataKind::Seed;
    if (s == "wide") return DataKind::WideScale;
    if (s == "gaussian") return DataKind::Gaussian;
    if (s == "zero") return DataKind::ZeroBlocks;
    if (s == "nan") return DataKind::NanScale;
    throw Error(Errc::InvalidArgument,
                "unknown data kind (got '" + s + "'): use seed, wide, gaussian, zero or nan");
}

const char* to_string(DataKind d) {
    switch (d) {
        case DataKind::Seed:
            return "seed";
        case DataKind::WideScale:
            return "wide";
        case DataKind::Gaussian:
            return "gaussian";
        case DataKind::ZeroBlocks:
            return "zero";
        case DataKind::NanScale:
            return "nan";
    }
    return "?";
}

MxOperand make_operand(size_t rows, size_t k, uint32_t seed, DataKind kind) {
    if (k == 0 || k % kBlockK != 0)
        throw Error(Errc::InvalidArgument,
                    "make_operand: K (got " + std::to_string(k) + ") must be a positive multiple of 32");
    switch (kind) {
        case DataKind::Gaussian:
            return gaussian_operand(rows, k, seed);
        case DataKind::WideScale:
            return uniform_operand(rows, k, seed, true);
        default:
            break;
    }
    MxOperand op = uniform_operand(rows, k, seed, false);
    if (kind == DataKind::ZeroBlocks) zero_blocks(op, seed);
    if (kind == DataKind::NanScale) nan_scales(op);
    return op;
}

std::vector<float> dequantize(const MxOperand& op) {
    if (op.k % kBlockK != 0 || op.packed.size() != op.rows * (op.k / 2) ||
        op.scales.size() != op.rows * (op.k / kBlockK))
        throw Error(Errc::InvalidArgument,
                    "dequantize: operand of " + std::to_string(op.rows) + " rows, K " + std::to_string(op.k) +
                        " has " + std::to_string(op.packed.size()) + " packed bytes and " +
                        std::to_string(op.scales.size()) +
                        " scales: want rows*K/2 and rows*K/32 with K a multiple of 32");
    std::vector<float> out(op.rows * op.k);  // (rows, k) f32, row-major
    const size_t kp = op.k / 2, ks = op.k / kBlockK;
    for (size_t r = 0; r < op.rows; ++r)
        dequantize_mxfp4_row(&op.packed[r * kp], &op.scales[r * ks], op.k, &out[r * op.k]);
    return out;
}

}  // namespace f4gemm
