// Launch geometry shared by the launch plan (abi.hpp) and the backends' interface (runtime.hpp), so that
// neither header reaches into the other.
#pragma once

namespace f4gemm {

struct Dim3 {
    unsigned x = 1, y = 1, z = 1;
};

}  // namespace f4gemm
