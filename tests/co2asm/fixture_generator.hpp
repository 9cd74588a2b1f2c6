// Generates assembly fixtures too repetitive to write by hand: one object per target holding a
// kernel for every `.amdhsa_next_free_sgpr` value (with VCC / flat-scratch reservations varied)
// and for every user SGPR count, so the descriptor fix-ups are tested over their whole range.
#pragma once

#include <string>

namespace co2asm_test {

struct SweepShape {
    int max_next_free_sgpr = 102;         // the assembler's limit for the target
    bool accum_offset = false;            // gfx90a/gfx942/gfx950 require .amdhsa_accum_offset
    bool flat_scratch_directive = false;  // .amdhsa_reserve_flat_scratch exists (gfx9 before gfx940)
    int max_user_sgpr_count = 16;
};

// Kernels `sgpr_<n>` for n in [0, max_next_free_sgpr] and `user_sgprs_<c>` for c in [2, max].
std::string descriptor_sweep_source(const SweepShape& shape, const std::string& processor);

}  // namespace co2asm_test
