// Operand generators. The seed's generator is reproduced bit for bit (asm_f4gemm
// f4gemm_ref.hpp make_operand: mt19937, per row K/2 bytes drawing the low then the high nibble
// from uniform_int(0,15), then K/32 scales from uniform_int(124,130)); the others stress what
// the seed's data cannot: wide scale ranges, realistic Gaussian data, zero blocks, NaN scales.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace f4gemm {

// Plain MXFP4 operand: [rows, k/2] packed e2m1 and [rows, k/32] E8M0, row-major.
struct MxOperand {
    size_t rows = 0, k = 0;
    std::vector<uint8_t> packed;  // rows x k/2
    std::vector<uint8_t> scales;  // rows x k/32
};

enum class DataKind {
    Seed,        // the seed's: nibbles uniform, exponents 124..130 (2^-3..2^3)
    WideScale,   // nibbles uniform, exponents uniform over 97..157 (2^-30..2^30), except that a
                 // row's blocks 0 and 1 draw from 97..103 and 151..157 in a per-row random order, so
                 // every row of k >= 64 spans >= 48 binades and A/B rows often meet crossed;
                 // every product and sum stays finite in float32
    Gaussian,    // N(0,1) float32 (mt19937(seed) + std::normal_distribution<float>, row-major)
                 // quantized with quantize_mxfp4
    ZeroBlocks,  // seed data with ~1/4 of the 32-blocks all zero nibbles (scales kept)
    NanScale,    // seed data with scales 0xFF at flat scale index j (row-major [rows, k/32])
                 // where j % 61 == 17 % min(rows*k/32, 61): about 1 in 61, at least one
};
DataKind parse_data_kind(const std::string& s);  // seed|wide|gaussian|zero|nan; throws
const char* to_string(DataKind d);

constexpr uint32_t kSeedA = 1234;
constexpr uint32_t kSeedB = 5678;

MxOperand make_operand(size_t rows, size_t k, uint32_t seed, DataKind kind = DataKind::Seed);

// Dequantized float32 [rows, k] (NaN where a scale is 0xFF).
std::vector<float> dequantize(const MxOperand& op);

}  // namespace f4gemm
