// Identifies what a code object file was built for, before any runtime touches it: CUDA cubins
// (ELF, EM_CUDA), PTX text (.target line) and AMDGPU code objects (ELF, EM_AMDGPU). Lets a backend
// refuse a code object for another architecture with a clear message instead of a launch failure.
#pragma once

#include <string>

namespace f4gemm {

enum class CodeObjectKind { Cubin, Ptx, Amdgpu, Unknown };

struct CodeObjectInfo {
    CodeObjectKind kind = CodeObjectKind::Unknown;
    int sm = 0;                  // CUDA: 90 for sm_90/sm_90a (cubins do not record the 'a')
    bool arch_specific = false;  // PTX ".target sm_90a"
    std::string target;          // "sm_90a" (PTX), "sm_90" (cubin), "gfx950" (AMDGPU, from e_flags mach)
};

// Throws Errc::NotFound for a missing file, Errc::BadInput for an unreadable/truncated one.
CodeObjectInfo inspect_code_object(const std::string& path);

// Can a CUDA device of compute capability major.minor run this code object? When not, `why`
// says so in one line naming both architectures.
bool cuda_can_run(const CodeObjectInfo& info, int cc_major, int cc_minor, std::string* why);

}  // namespace f4gemm
