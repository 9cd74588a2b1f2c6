// Uses an installed f4gemm: the seed's operands, the CPU backend, the float64 reference.
#include <cstdio>

#include "f4gemm/driver.hpp"

int main() {
    using namespace f4gemm;
    const Problem p = make_problem(32, 64, 256, 1.f, 0.f, DataKind::Seed, kSeedA, kSeedB, false);
    const std::vector<uint16_t> d = cpu_run(p, 0);
    const std::vector<float> ref = reference_for(p);
    const VerifyResult v = verify_bf16(d.data(), 64, ref.data(), 32, 64, default_tolerance(false));
    std::printf("consumer: mismatches=%zu max_rel_err=%g\n", v.mismatches, v.max_rel_err);
    return v.passed() ? 0 : 1;
}
