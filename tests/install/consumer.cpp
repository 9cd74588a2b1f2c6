// Uses an installed f4gemm through its front door: a CPU Session, the policy's choice, a GEMM on the
// seed's operands at a shape the packed-weight rules admit (K = 2880), against the float64 reference.
#include <cstdio>

#include "f4gemm/session.hpp"

int main() {
    using namespace f4gemm;
    SessionOptions o;
    o.backend = BackendKind::Cpu;
    Session s(o);
    GemmRequest r;
    r.m = 32;
    r.n = 1000;
    r.k = 2880;
    const Choice c = s.select(r);
    const Problem p = make_problem(r.m, r.n, r.k, 1.f, 0.f, DataKind::Seed, kSeedA, kSeedB, false);
    const std::vector<uint16_t> d = s.prepare(c, p)->run_and_fetch();
    const std::vector<float> ref = reference_for(p);
    const VerifyResult v =
        verify_bf16(d.data(), size_t(r.n), ref.data(), size_t(r.m), size_t(r.n), default_tolerance(false));
    std::printf("consumer: mismatches=%zu max_rel_err=%g, W of 1000 x 2880 = %zu bytes\n", v.mismatches,
                v.max_rel_err, Session::weight_bytes(1000, 2880));
    return v.passed() ? 0 : 1;
}
