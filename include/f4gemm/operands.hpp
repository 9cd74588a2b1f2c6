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
    WideScale,   // nibbles uniform, exponents uniform over 1..254 (rows span > 30 binades)
    Gaussian,    // N(0,1) float32 quantized with OCP MX rules
    ZeroBlocks,  // seed data with ~1/4 of the 32-blocks all zero nibbles
    NanScale,    // seed data with a few scales set to 0xFF
};
DataKind parse_data_kind(const std::string& s);  // seed|wide|gaussian|zero|nan; throws
const char* to_string(DataKind d);

constexpr uint32_t kSeedA = 1234;
constexpr uint32_t kSeedB = 5678;

MxOperand make_operand(size_t rows, size_t k, uint32_t seed, DataKind kind = DataKind::Seed);

// Dequantized float32 [rows, k] (NaN where a scale is 0xFF).
std::vector<float> dequantize(const MxOperand& op);

}  // namespace f4gemm
