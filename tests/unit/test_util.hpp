// Helpers shared by the unit tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "f4gemm/abi.hpp"
#include "f4gemm/formats.hpp"
#include "f4gemm/manifest.hpp"
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

// A manifest in `dir` of one kernel whose code object, k.cubin, is an empty file: `row` is its CSV row, in
// the columns tile_M .. scale_layout.
inline Manifest one_kernel_manifest(const std::filesystem::path& dir, const std::string& row) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "k.cubin") << "";
    return parse_manifest(
        "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,scale_"
        "layout\n" +
            row + "\n",
        (dir / "f4gemm_bf16_per1x32Fp4.csv").string());
}

// Device pointers for a launch that never dereferences them (a plan, an argument block, a recording device):
// D, A, B and both scales made up, no C, no workspace.
inline DevicePointers made_up_pointers() {
    DevicePointers ptr;
    ptr.d = 0xd000;
    ptr.a = 0xa000;
    ptr.b = 0xb000;
    ptr.scale_a = 0x5a00;
    ptr.scale_b = 0x5b00;
    return ptr;
}

}  // namespace f4gemm::test
