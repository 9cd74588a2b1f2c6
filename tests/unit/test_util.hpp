// Helpers shared by the unit tests.
#pragma once

#include <cstddef>
#include <cstdint>

#include "f4gemm/formats.hpp"
#include "f4gemm/operands.hpp"

namespace f4gemm::test {

// A plain MXFP4 operand whose element (r, i) has nibble nib(r, i) and block (r, b) scale sc(r, b).
template <class Nib, class Sc>
MxOperand make_mx(size_t rows, size_t k, Nib nib, Sc sc) {
    MxOperand op;
    op.rows = rows;
    op.k = k;
    op.packed.assign(rows * k / 2, 0);
    op.scales.assign(rows * k / kBlockK, 0);
    for (size_t r = 0; r < rows; ++r) {
        for (size_t i = 0; i < k; ++i) pack_nibble(op.packed.data() + r * k / 2, i, nib(r, i));
        for (size_t b = 0; b < k / kBlockK; ++b) op.scales[r * (k / kBlockK) + b] = sc(r, b);
    }
    return op;
}

}  // namespace f4gemm::test
