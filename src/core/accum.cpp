// The accumulation mode's names (include/f4gemm/accum.hpp).
#include "f4gemm/accum.hpp"

#include "f4gemm/error.hpp"

namespace f4gemm {

const char* accum_name(Accum a) {
    switch (a) {
        case Accum::Exact:
            return "exact";
        case Accum::Promoted:
            return "promoted";
    }
    return "?";
}

Accum parse_accum(const std::string& s) {
    if (s == "exact") return Accum::Exact;
    if (s == "promoted") return Accum::Promoted;
    throw Error(Errc::InvalidArgument, "accum '" + s + "': unknown mode: pass " + kAccumChoices);
}

}  // namespace f4gemm
