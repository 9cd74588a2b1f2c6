// GPU tests of the promoted accumulation mode (docs/VERIFY.md, "Promoted mode: the bound"): every promoted
// kernel of the manifest on the four input families the bound is stated for, at K = 4096 and 16384, each
// output against |d - ref| <= 2^-8 |ref| + c_w * sum_k |a_k b_k| (ref and the sum in float64), and the
// measured constant c = max over outputs of max(0, |d - ref| - 2^-8 |ref|) / sum_k |a_k b_k|, printed per
// family and K, at most 2^-11 on seed-like and Gaussian data. NaN scales give NaN in exactly the affected
// outputs, as in the exact mode. Skipped without an NVIDIA GPU or without the built kernels.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

#include "f4gemm/accum.hpp"
#include "f4gemm/formats.hpp"
#include "f4gemm/verify.hpp"
#include "f4gemm/weight.h"
#include "gpu_fixture.hpp"
#include "launcher.hpp"

using namespace f4gemm;

namespace {

using gputest::Gpu;

Gpu* gpu() {
    static Gpu* g = gputest::open_gpu(false);
    return g;
}

std::vector<int> promoted_kernels() {
    std::vector<int> out;
    for (size_t i = 0; i < gpu()->manifest.kernels.size(); ++i)
        if (gpu()->manifest.kernels[i].accum == Accum::Promoted) out.push_back(int(i));
    return out;
}

// Gaussian activations and weights with outlier channels: N(0, 1), every 61st K channel of A and every 89th
// of B scaled by 64 (the LLM activation pattern), quantized by the host quantizer.
MxOperand gaussian_outliers(size_t rows, size_t k, uint32_t seed, size_t period) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.f, 1.f);
    std::vector<float> x(rows * k);
    for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < k; ++c) x[r * k + c] = g(rng) * (c % period == 7 ? 64.f : 1.f);
    MxOperand o;
    o.rows = rows;
    o.k = k;
    o.packed.resize(rows * k / 2);
    o.scales.resize(rows * k / 32);
    quantize_mxfp4(x.data(), rows, k, o.packed.data(), o.scales.data());
    return o;
}

// Adversarial chunks: the seed's uniform nibbles, and inside every 128-K chunk (4 scale blocks) block
// exponents 127 + {0, d, d/2, 0}, d = 8, 12, 16 or 20 by row, on A and B at once: the four k32 steps of one
// promotion meet products up to 2d = 40 binades apart, and every row spans d <= 26 binades, so all of it runs
// the folded (fast) path, not the exact fallback.
MxOperand adversarial(size_t rows, size_t k, uint32_t seed) {
    std::mt19937 rng(seed);
    MxOperand o;
    o.rows = rows;
    o.k = k;
    o.packed.resize(rows * k / 2);
    o.scales.resize(rows * k / 32);
    for (auto& b : o.packed) b = uint8_t(rng());
    const int pattern[4] = {0, 2, 1, 0};  // in units of d/2
    for (size_t r = 0; r < rows; ++r) {
        const int d = 8 + int((r + seed) % 4) * 4;
        for (size_t b = 0; b < k / 32; ++b)
            o.scales[r * (k / 32) + b] = uint8_t(127 + pattern[b % 4] * d / 2);
    }
    return o;
}

struct Outcome {
    double c = 0;        // the measured constant
    size_t over = 0;     // outputs the judge rejects (outside the bound, or NaN on one side only)
    size_t nan_bad = 0;  // of those, NaN where the reference is finite or the other way round
};

// Runs kernel `kern` of `man` (default: the shipped manifest) on p and judges every output by the promoted
// bound (verify_promoted_bf16 against the float64 reference and sum |a b|, reference_abs_for), its c_w that
// of the kernel's FP8 chains (the manifest's promote_k: 256 K for the PIPE 3 tiles and the dev ladder's
// pp_128x128_p2, 128 K for the others; promoted_cw).
Outcome judge(int kern, const Problem& p, const Manifest* man = nullptr, int log2_split = 0) {
    const Manifest& mf = man ? *man : gpu()->manifest;
    GpuGemm g(*gpu()->dev, mf, kern, log2_split, p);
    const std::vector<uint16_t> d = g.run_and_fetch();
    const size_t m = size_t(p.m), n = size_t(p.n);
    const MxReferenceAbs r = reference_abs_for(p);
    const VerifyResult v =
        verify_promoted_bf16(d.data(), n, r.ref.data(), r.abs_sum.data(), m, n, p.alpha,
                             promoted_cw(w_k_pad(size_t(p.k)), chain_k(mf.kernels[size_t(kern)])));
    Outcome o;
    o.c = v.observed_c;
    o.over = v.mismatches;
    for (size_t i = 0; i < m * n; ++i) o.nan_bad += std::isnan(r.ref[i]) != std::isnan(bf16_to_float(d[i]));
    return o;
}

}  // namespace

TEST(Sm90Promoted, ManifestHasAPromotedKernel) {
    REQUIRE_GPU();
    EXPECT_FALSE(promoted_kernels().empty()) << "no kernel of the manifest implements accum promoted";
}

// The bound on the four families, K = 4096 and 16384; the constant per family and K is printed.
TEST(Sm90Promoted, BoundHoldsAndConstantIsSmallOnEveryFamily) {
    REQUIRE_GPU();
    const int m = 128, n = 256;
    for (int kern : promoted_kernels()) {
        const std::string name = gpu()->manifest.kernels[size_t(kern)].co_name;
        for (int k : {4096, 16384}) {
            for (const char* family : {"seed", "gaussian_outliers", "wide", "adversarial"}) {
                Problem p;
                const std::string f = family;
                if (f == "seed" || f == "wide") {
                    p = make_problem(m, n, k, 1.f, 0.f, f == "seed" ? DataKind::Seed : DataKind::WideScale,
                                     kSeedA + uint32_t(k), kSeedB + uint32_t(k), false);
                } else {
                    p.m = m;
                    p.n = n;
                    p.k = k;
                    p.a = f == "adversarial" ? adversarial(size_t(m), size_t(k), 11u)
                                             : gaussian_outliers(size_t(m), size_t(k), 11u, 61);
                    p.b = f == "adversarial" ? adversarial(size_t(n), size_t(k), 23u)
                                             : gaussian_outliers(size_t(n), size_t(k), 23u, 89);
                }
                const Outcome o = judge(kern, p);
                std::printf("promoted %s %s K=%d: c = %.3g (2^%.1f), outside the bound %zu of %d\n",
                            name.c_str(), family, k, o.c, o.c > 0 ? std::log2(o.c) : -INFINITY, o.over,
                            m * n);
                EXPECT_EQ(o.over, 0u) << name << " " << family << " K=" << k;
                EXPECT_EQ(o.nan_bad, 0u) << name << " " << family << " K=" << k;
                if (f == "seed" || f == "gaussian_outliers") {
                    EXPECT_LE(o.c, std::ldexp(1.0, -11)) << name << " " << family << " K=" << k;
                }
            }
        }
    }
}

// NaN scales: NaN in exactly the affected outputs (rows of A / columns of B holding a 0xFF scale).
TEST(Sm90Promoted, NanScaleGivesNanInExactlyTheAffectedOutputs) {
    REQUIRE_GPU();
    for (int kern : promoted_kernels()) {
        const Problem p = make_problem(256, 512, 1024, 1.f, 0.f, DataKind::NanScale, kSeedA, kSeedB, false);
        const Outcome o = judge(kern, p);
        EXPECT_EQ(o.nan_bad, 0u) << gpu()->manifest.kernels[size_t(kern)].co_name;
        EXPECT_EQ(o.over, 0u) << gpu()->manifest.kernels[size_t(kern)].co_name;
    }
}

// Ragged shapes (K padded inside W and A, N not a multiple of 16, M not a multiple of the tile) with
// alpha = -0.5 (sign and scale of the epilogue); split-capable promoted kernels (ws_swap_64x128_fs_p) also
// with 2- and 4-way K splits (fp32 partials: the bound is unchanged).
TEST(Sm90Promoted, RaggedShapesAndAlpha) {
    REQUIRE_GPU();
    for (int kern : promoted_kernels()) {
        const KernelConfig& kc = gpu()->manifest.kernels[size_t(kern)];
        for (auto s : {std::array<int, 3>{130, 1000, 2880}, std::array<int, 3>{257, 201, 1056},
                       std::array<int, 3>{40, 1000, 8192}}) {
            const Problem p =
                make_problem(s[0], s[1], s[2], -0.5f, 0.f, DataKind::Gaussian, kSeedA + 3, kSeedB + 5, false);
            for (int l = 0; l <= (kc.split_k ? 2 : 0); ++l) {
                const Outcome o = judge(kern, p, nullptr, l);
                EXPECT_EQ(o.over, 0u)
                    << kc.co_name << " L=" << l << " " << s[0] << "x" << s[1] << "x" << s[2];
                EXPECT_EQ(o.nan_bad, 0u) << kc.co_name << " L=" << l;
            }
        }
    }
}

// The dev ladder's promoted kernels: the bound (c_w of each kernel's chains: pp_128x128_p2's span 256 K, the
// manifest's promote_k) and the constant on seed and Gaussian data.
TEST(Sm90Promoted, DevLadderPromotedKernels) {
    REQUIRE_GPU();
    const std::string dir = gpu()->manifest.dir + "/dev";
    if (!std::ifstream(dir + "/" + kManifestFile).good()) GTEST_SKIP() << "no dev ladder built";
    const Manifest ladder =
        filter_for_device(load_manifest(dir), BackendKind::Cuda, gpu()->dev->props().arch);
    int n = 0;
    for (size_t i = 0; i < ladder.kernels.size(); ++i) {
        if (ladder.kernels[i].accum != Accum::Promoted) continue;
        ++n;
        for (DataKind kind : {DataKind::Seed, DataKind::Gaussian}) {
            for (const int mm : {40, 256}) {
                const Problem p = make_problem(mm, 512, 8192, 1.f, 0.f, kind, kSeedA, kSeedB, false);
                // split-capable kernels (the promoted swap kernels) also with 2- and 4-way K splits, whose
                // partials add in fp32: the bound is unchanged
                for (int l = 0; l <= (ladder.kernels[i].split_k ? 2 : 0); ++l) {
                    const Outcome o = judge(int(i), p, &ladder, l);
                    std::printf("promoted (dev) %s %s M=%d K=8192 split %d: c = %.3g\n",
                                ladder.kernels[i].co_name.c_str(), to_string(kind), mm, 1 << l, o.c);
                    EXPECT_EQ(o.over, 0u) << ladder.kernels[i].co_name << " M=" << mm << " L=" << l;
                    EXPECT_EQ(o.nan_bad, 0u) << ladder.kernels[i].co_name << " M=" << mm << " L=" << l;
                    EXPECT_LE(o.c, std::ldexp(1.0, -11))
                        << ladder.kernels[i].co_name << " M=" << mm << " L=" << l;
                }
            }
        }
        // K = 1184 pads to 1280: five 256-K stages, an odd count (the K_STAGE 256 builds' last stage alone)
        const Problem p = make_problem(64, 528, 1184, 1.f, 0.f, DataKind::Gaussian, kSeedA, kSeedB, false);
        const Outcome o = judge(int(i), p, &ladder, 0);
        std::printf("promoted (dev) %s M=64 K=1184: c = %.3g\n", ladder.kernels[i].co_name.c_str(), o.c);
        EXPECT_EQ(o.over, 0u) << ladder.kernels[i].co_name << " K=1184";
        EXPECT_EQ(o.nan_bad, 0u) << ladder.kernels[i].co_name << " K=1184";
        EXPECT_LE(o.c, std::ldexp(1.0, -11)) << ladder.kernels[i].co_name << " K=1184";
    }
    EXPECT_GE(n, 1) << "the dev ladder lists no promoted kernel";
}
