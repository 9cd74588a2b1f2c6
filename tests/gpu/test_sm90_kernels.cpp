// GPU tests of our sm_90a kernels through the real driver path (manifest -> CUDA backend ->
// launch -> float64 reference): every kernel, split-K, edge shapes, alpha/beta/C, NaN scales,
// wide-scale data, the PTX code-object path, and refusal of a wrong-architecture object.
// Skipped without an NVIDIA GPU or without the built kernels.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "f4gemm/accum.hpp"
#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"
#include "f4gemm/npy.hpp"
#include "gpu_fixture.hpp"
#include "launcher.hpp"

namespace fs = std::filesystem;
using namespace f4gemm;

namespace {

constexpr double kBf16Rounding = 1.0 / 256;  // 2^-8: the precision contract without split and with fp32 split

using gputest::Gpu;

// One device and the built-in manifest for the whole test binary: the exact mode's tests, so the kernels
// implementing accum promoted are left out (test_sm90_promoted.cpp judges them by their bound).
Gpu* gpu() {
    static Gpu* g = gputest::open_gpu(true);
    return g;
}

VerifyResult run_case(int kernel, int log2_split, const Problem& p,
                      const Tolerance& tol = default_tolerance(false)) {
    GpuGemm g(*gpu()->dev, gpu()->manifest, kernel, log2_split, p);
    const std::vector<uint16_t> d = g.run_and_fetch();
    const std::vector<float> ref = reference_for(p);
    return verify_bf16(d.data(), size_t(p.n), ref.data(), size_t(p.m), size_t(p.n), tol);
}

std::string describe(const VerifyResult& v) {
    return "max_rel_err=" + std::to_string(v.max_rel_err) + " mismatches=" + std::to_string(v.mismatches) +
           "/" + std::to_string(v.total) +
           (v.has_first ? " first at (" + std::to_string(v.first_m) + "," + std::to_string(v.first_n) +
                              ") got " + std::to_string(v.first_got) + " want " + std::to_string(v.first_want)
                        : "");
}

// Runs the f4gemm command with `args` (stderr folded into stdout); returns its exit status and output.
std::pair<int, std::string> run_command(const std::string& args) {
    const std::string cmd = std::string(F4GEMM_EXE) + (args.empty() ? "" : " " + args) + " 2>&1";
    FILE* f = popen(cmd.c_str(), "r");
    std::string out;
    char buf[512];
    while (f && fgets(buf, sizeof buf, f)) out += buf;
    const int rc = f ? pclose(f) : -1;
    return {rc, out};
}

int heuristic_pick(int m, int n, int k, int splitk = 0) {
    HeuristicQuery q{m, n, k, gpu()->dev->props().num_cu, splitk, default_bpreshuffle(gpu()->manifest)};
    return select(gpu()->manifest, "", q, false).index;
}

// The outputs of d whose NaN-ness is not the reference's.
size_t nan_mismatches(const std::vector<uint16_t>& d, const std::vector<float>& ref) {
    size_t wrong = 0;
    for (size_t e = 0; e < d.size(); ++e) wrong += std::isnan(bf16_to_float(d[e])) != std::isnan(ref[e]);
    return wrong;
}

// The dev ladder's manifest (build/kernels/sm90a/dev, beside the built one) for this device; none where it is
// not built.
std::optional<Manifest> dev_ladder() {
    const std::string dir = gpu()->manifest.dir + "/dev";
    if (!fs::exists(fs::path(dir) / kManifestFile)) return std::nullopt;
    return filter_for_device(load_manifest(dir), BackendKind::Cuda, gpu()->dev->props().arch);
}

}  // namespace

TEST(Sm90, DeviceIsHopper) {
    REQUIRE_GPU();
    const DeviceProps& p = gpu()->dev->props();
    EXPECT_EQ(p.cc_major, 9);
    EXPECT_GT(p.num_cu, 0);
    EXPECT_FALSE(gpu()->manifest.kernels.empty());
    std::printf("device %s, %s, %d SMs, %zu kernels\n", p.name.c_str(), p.arch.c_str(), p.num_cu,
                gpu()->manifest.kernels.size());
}

TEST(Sm90, EveryKernelAt300x2048x1024) {
    REQUIRE_GPU();
    const Problem p = make_problem(300, 2048, 1024, 1.f, 0.f, DataKind::Seed, kSeedA, kSeedB, false);
    for (size_t i = 0; i < gpu()->manifest.kernels.size(); ++i) {
        const VerifyResult v = run_case(int(i), 0, p);
        EXPECT_TRUE(v.passed()) << gpu()->manifest.kernels[i].co_name << " " << describe(v);
        EXPECT_LE(v.max_rel_err, kBf16Rounding) << gpu()->manifest.kernels[i].co_name;
    }
}

// Any model's shapes on every shipped kernel (they all read the packed weight W): gpt-oss's K = 2880
// (K % 256 = 64, padded inside W and the A operand), N = 2880 and N = 1000 (not a multiple of 16), a K
// below one 256-K stage, and M on both sides of the tiles; each against the float64 reference.
TEST(Sm90, EveryKernelOnAnyModelShape) {
    REQUIRE_GPU();
    struct Shape {
        int m, n, k;
    };
    for (const Shape s : {Shape{16, 2880, 2880}, Shape{1, 1000, 2880}, Shape{130, 1000, 2880},
                          Shape{33, 2880, 96}, Shape{300, 201, 1056}}) {
        const Problem p =
            make_problem(s.m, s.n, s.k, 1.f, 0.f, DataKind::Gaussian, kSeedA + s.k, kSeedB + s.n, false);
        for (size_t i = 0; i < gpu()->manifest.kernels.size(); ++i) {
            const VerifyResult v = run_case(int(i), 0, p);
            EXPECT_TRUE(v.passed()) << gpu()->manifest.kernels[i].co_name << " " << s.m << "x" << s.n << "x"
                                    << s.k << " " << describe(v);
            EXPECT_LE(v.max_rel_err, kBf16Rounding) << gpu()->manifest.kernels[i].co_name;
        }
        const int kern = heuristic_pick(s.m, s.n, s.k);
        std::printf("%dx%dx%d: the policy picks %s\n", s.m, s.n, s.k,
                    gpu()->manifest.kernels[size_t(kern)].co_name.c_str());
    }
}

// The dev ladder (build/kernels/sm90a/dev: simple_64x64, the reference rung, and the plain-B kernels kept for
// measurement): built and tested, not installed.
TEST(Sm90, DevLadderKernels) {
    REQUIRE_GPU();
    const std::optional<Manifest> dev = dev_ladder();
    if (!dev) GTEST_SKIP() << "no dev ladder built beside " << gpu()->manifest.dir;
    const Manifest& ladder = *dev;
    ASSERT_FALSE(ladder.kernels.empty());
    EXPECT_GE(find_kernel(ladder, "f4gemm_sm90a_simple_64x64"), 0);
    // K = 1184 pads to 1280: five 256-K stages, an odd count (the K_STAGE 256 builds' last stage alone)
    for (const int k : {1024, 1184}) {
        const Problem p = make_problem(130, 1040, k, 2.f, 0.5f, DataKind::Seed, kSeedA, kSeedB, true);
        const std::vector<float> ref = reference_for(p);
        for (size_t i = 0; i < ladder.kernels.size(); ++i) {
            if (ladder.kernels[i].accum != Accum::Exact) continue;  // DevLadderPromotedKernels
            // the plain-B rungs (simple_64x64, ws_swap_64x128, ws_swap_32x128) read B and its scales
            // unpadded: K % 256 == 0 only, as the Session enforces
            if (!kernel_takes_nk(ladder.kernels[i], p.n, k)) continue;
            std::vector<uint16_t> d;
            try {
                GpuGemm g(*gpu()->dev, ladder, int(i), 0, p);
                d = g.run_and_fetch();
            } catch (const std::exception& e) {  // a fault ends the context: name the kernel and stop
                FAIL() << ladder.kernels[i].co_name << " K=" << k << ": " << e.what();
            }
            const VerifyResult v = verify_bf16(d.data(), size_t(p.n), ref.data(), size_t(p.m), size_t(p.n),
                                               default_tolerance(false));
            EXPECT_TRUE(v.passed()) << ladder.kernels[i].co_name << " K=" << k << " " << describe(v);
            EXPECT_LE(v.max_rel_err, kBf16Rounding) << ladder.kernels[i].co_name << " K=" << k;
        }
    }
}

// The decode kernel's stream-K builds (DEC_SK 1, the dev ladder's *_sk): in S = 2^L splits the CTAs an SM
// holds share the tiles' 128-K chunks in even runs, so a tile has one to S segments and a run crosses tiles.
// N = 2560, K = 4096 gives 20 or 40 tiles of 32 chunks: runs of 5 to 32 chunks, tiles of 1 to 8 segments,
// every L; M = 1 / 20 / 40 covers a partial row tile and two row tiles; each case against the float64
// reference, the seed data with alpha, beta and C, the wide-scale data on the exact path and NaN scales, and
// one case twice for bit-identical results (the segments' partials are summed in order).
TEST(Sm90, DecStreamKRunsShareTiles) {
    REQUIRE_GPU();
    const std::optional<Manifest> dev = dev_ladder();
    if (!dev) GTEST_SKIP() << "no dev ladder built beside " << gpu()->manifest.dir;
    const Manifest& ladder = *dev;
    int tested = 0;
    for (size_t i = 0; i < ladder.kernels.size(); ++i) {
        const std::string& name = ladder.kernels[i].co_name;
        if (name.find("_sk.") == std::string::npos) continue;
        ASSERT_TRUE(ladder.kernels[i].split_k) << name << ": a stream-K build is split-capable";
        for (const int m : {1, 20, 40}) {
            for (const DataKind kind : {DataKind::Seed, DataKind::WideScale, DataKind::NanScale}) {
                const bool seed = kind == DataKind::Seed;
                const Problem p = make_problem(m, 2560, 4096, seed ? 2.f : 1.f, seed ? 0.5f : 0.f, kind,
                                               kSeedA + m, kSeedB, seed);
                const std::vector<float> ref = reference_for(p);
                for (int l = 0; l <= 3; ++l) {
                    std::vector<uint16_t> d;
                    try {
                        GpuGemm g(*gpu()->dev, ladder, int(i), l, p);
                        d = g.run_and_fetch();
                        if (l == 2 && seed) {  // the same launch again: the same bits
                            const std::vector<uint16_t> again = g.run_and_fetch();
                            EXPECT_EQ(std::memcmp(d.data(), again.data(), d.size() * 2), 0)
                                << name << " M=" << m;
                        }
                    } catch (const std::exception& e) {
                        FAIL() << name << " M=" << m << " L=" << l << ": " << e.what();
                    }
                    const std::string what = name + " M=" + std::to_string(m) + " L=" + std::to_string(l) +
                                             " data=" + std::to_string(int(kind));
                    if (kind == DataKind::NanScale) {
                        EXPECT_GT(
                            std::count_if(ref.begin(), ref.end(), [](float r) { return std::isnan(r); }), 0)
                            << what;
                        EXPECT_EQ(nan_mismatches(d, ref), 0u) << what;
                        continue;
                    }
                    const VerifyResult v = verify_bf16(d.data(), size_t(p.n), ref.data(), size_t(p.m),
                                                       size_t(p.n), default_tolerance(false));
                    EXPECT_TRUE(v.passed()) << what << " " << describe(v);
                    EXPECT_LE(v.max_rel_err, kBf16Rounding) << what;
                    ++tested;
                }
            }
        }
    }
    if (tested == 0) GTEST_SKIP() << "no stream-K build in " << ladder.dir;
}

TEST(Sm90, SplitKReducesInFp32) {
    REQUIRE_GPU();
    const Problem p = make_problem(256, 1024, 4096, 1.f, 0.f, DataKind::Seed, kSeedA, kSeedB, false);
    int tested = 0;
    for (size_t i = 0; i < gpu()->manifest.kernels.size(); ++i) {
        if (!gpu()->manifest.kernels[i].split_k) continue;
        for (int l = 1; l <= 4; ++l) {
            const VerifyResult v = run_case(int(i), l, p);
            EXPECT_TRUE(v.passed()) << gpu()->manifest.kernels[i].co_name << " L=" << l << " " << describe(v);
            EXPECT_LE(v.max_rel_err, kBf16Rounding) << gpu()->manifest.kernels[i].co_name << " L=" << l;
            ++tested;
        }
    }
    EXPECT_GT(tested, 0) << "no split-capable kernel in the manifest";
}

TEST(Sm90, EdgeShapesWithHeuristicPick) {
    REQUIRE_GPU();
    struct Shape {
        int m, n, k;
    };
    for (const Shape s : {Shape{1, 4096, 2048}, Shape{17, 512, 256}, Shape{300, 2064, 1024},
                          Shape{64, 16, 256}, Shape{129, 272, 512}, Shape{1, 16, 256}}) {
        const Problem p = make_problem(s.m, s.n, s.k, 1.f, 0.f, DataKind::Seed, kSeedA, kSeedB, false);
        const int kern = heuristic_pick(s.m, s.n, s.k);
        const VerifyResult v = run_case(kern, 0, p);
        EXPECT_TRUE(v.passed()) << s.m << "x" << s.n << "x" << s.k << " "
                                << gpu()->manifest.kernels[size_t(kern)].co_name << " " << describe(v);
        EXPECT_LE(v.max_rel_err, kBf16Rounding);
    }
}

// The pre-pass kernels (abi sm90pp1) on shapes whose M and N are not multiples of the tile (the
// pre-pass converts the padded rows too), a long K (the per-row reference spans the whole K), and the
// smallest legal shape; each against the float64 reference under the bf16-rounding bound.
TEST(Sm90, PrepassKernelsOnRaggedShapesAndLongK) {
    REQUIRE_GPU();
    struct Shape {
        int m, n, k;
    };
    int tested = 0;
    for (size_t i = 0; i < gpu()->manifest.kernels.size(); ++i) {
        if (!has_prepass(gpu()->manifest.kernels[i].abi)) continue;
        for (const Shape s : {Shape{300, 2064, 1024}, Shape{129, 272, 16384}, Shape{1, 16, 256}}) {
            const Problem p = make_problem(s.m, s.n, s.k, 1.f, 0.f, DataKind::Seed, kSeedA, kSeedB, false);
            const VerifyResult v = run_case(int(i), 0, p);
            EXPECT_TRUE(v.passed()) << gpu()->manifest.kernels[i].co_name << " " << s.m << "x" << s.n << "x"
                                    << s.k << " " << describe(v);
            EXPECT_LE(v.max_rel_err, kBf16Rounding) << gpu()->manifest.kernels[i].co_name;
            ++tested;
        }
    }
    EXPECT_GT(tested, 0) << "no sm90pp1 kernel in the manifest";
}

// The sm90pp1 kernels in N slabs (F4GEMM_PP_SLAB_N, the launcher's override of pp_slab_width, which slabs
// promoted launches by itself where K >= 8192 and the slabs add no wave; make_pp_slab_launches): every
// slab a pre-pass and a GEMM on D, C and W advanced to its first column, a later slab's pre-pass skipping A
// where its Nr matches the first's. Each output tile is the same computation with or without slabs, so D must
// be bit-identical to the unslabbed launch, in both modes; the exact kernels also against float64. Cases:
// three slabs with a ragged last one that converts A again (768 | 2064), four whose ragged last one has the
// first's Nr and skips A (256 | 1000), two at M = 1, C with alpha and beta, and 1024 x 8192 x 8192 in the
// launcher's own slabs (F4GEMM_PP_SLAB_N unset: pp_slab_width's four, for the promoted kernel alone).
TEST(Sm90, PrepassKernelsInNSlabs) {
    REQUIRE_GPU();
    struct SlabEnv {  // unset on every exit, so no later test runs in slabs
        explicit SlabEnv(int w) { setenv("F4GEMM_PP_SLAB_N", std::to_string(w).c_str(), 1); }
        ~SlabEnv() { unsetenv("F4GEMM_PP_SLAB_N"); }
    };
    const Manifest all =
        filter_for_device(load_manifest(gpu()->manifest.dir), BackendKind::Cuda, gpu()->dev->props().arch);
    struct Case {
        int m, n, k, slab;
        bool c;
    };
    int tested = 0;
    for (size_t i = 0; i < all.kernels.size(); ++i) {
        const KernelConfig& kc = all.kernels[i];
        if (kc.abi != KernelAbi::Sm90pp1) continue;
        for (const Case t : {Case{300, 2064, 1024, 768, true}, Case{129, 1000, 2048, 256, false},
                             Case{1, 512, 512, 256, false}, Case{1024, 8192, 8192, 0, false}}) {
            // the launcher's own width: the promoted kernel's (the exact one is never slabbed by the rule)
            if (t.slab == 0 && kc.accum != Accum::Promoted) continue;
            SCOPED_TRACE(kc.co_name + " " + std::to_string(t.m) + "x" + std::to_string(t.n) + "x" +
                         std::to_string(t.k) + " slab " + std::to_string(t.slab));
            const Problem p = make_problem(t.m, t.n, t.k, t.c ? 1.5f : 1.f, t.c ? 0.5f : 0.f, DataKind::Seed,
                                           kSeedA, kSeedB, t.c);
            std::vector<uint16_t> whole, slabs;
            {
                const SlabEnv env(0);  // no slabs, whatever pp_slab_width would give
                GpuGemm g(*gpu()->dev, all, int(i), 0, p);
                whole = g.run_and_fetch();
            }
            {
                // slab 0: the launcher's own width (pp_slab_width: 4 slabs of 2048)
                std::optional<SlabEnv> env;
                if (t.slab > 0) env.emplace(t.slab);
                GpuGemm g(*gpu()->dev, all, int(i), 0, p);
                slabs = g.run_and_fetch();
            }
            ASSERT_EQ(whole.size(), slabs.size());
            size_t differ = 0;
            for (size_t e = 0; e < whole.size(); ++e) differ += whole[e] != slabs[e];
            EXPECT_EQ(differ, 0u) << "of " << whole.size() << " outputs";
            if (kc.accum == Accum::Exact) {
                const std::vector<float> ref = reference_for(p);
                const VerifyResult v = verify_bf16(slabs.data(), size_t(p.n), ref.data(), size_t(p.m),
                                                   size_t(p.n), default_tolerance(false));
                EXPECT_TRUE(v.passed()) << describe(v);
                EXPECT_LE(v.max_rel_err, kBf16Rounding);
            }
            ++tested;
        }
    }
    EXPECT_GT(tested, 0) << "no sm90pp1 kernel in the manifest";
}

// The dec kernels (B in frag16s through a per-warp shared-memory ring into mma.sync fragments, K split across
// the CTA's warps): M <= 8 and 9..16 take different paths, K = 256 leaves most warps without a chunk,
// N not a multiple of the tile masks the last CTA, M = 33 spans three row tiles, and a long K; each
// against the float64 reference under the bf16-rounding bound, with C and alpha on one shape.
TEST(Sm90, DecodeKernelsOnSmallMRaggedNAndShortK) {
    REQUIRE_GPU();
    struct Shape {
        int m, n, k;
        bool c;
    };
    int tested = 0;
    for (size_t i = 0; i < gpu()->manifest.kernels.size(); ++i) {
        if (gpu()->manifest.kernels[i].b_layout != BLayout::Frag16S) continue;
        for (const Shape s :
             {Shape{1, 16, 256, false}, Shape{1, 4096, 2048, false}, Shape{8, 272, 512, true},
              Shape{9, 1040, 1024, false}, Shape{16, 2048, 8192, false}, Shape{33, 528, 768, true}}) {
            const Problem p = make_problem(s.m, s.n, s.k, s.c ? 2.f : 1.f, s.c ? 0.5f : 0.f, DataKind::Seed,
                                           kSeedA, kSeedB, s.c);
            // Split-capable kernels also with 2 and 8 splits (per split: its own A scan and references).
            for (const int l : {0, 1, 3}) {
                if (l && !gpu()->manifest.kernels[i].split_k) continue;
                const VerifyResult v = run_case(int(i), l, p);
                EXPECT_TRUE(v.passed()) << gpu()->manifest.kernels[i].co_name << " L=" << l << " " << s.m
                                        << "x" << s.n << "x" << s.k << " " << describe(v);
                EXPECT_LE(v.max_rel_err, kBf16Rounding) << gpu()->manifest.kernels[i].co_name << " L=" << l;
                ++tested;
            }
        }
    }
    EXPECT_GT(tested, 0) << "no frag16s (dec) kernel in the manifest";
}

// The dec kernels apply B's block scale with one reference per CTA (2^(e - ref) down to 2^-87): B rows
// whose own scales are narrow but differ by up to 60 binades between rows take the fast path and must
// still give the float64 reference rounded to bf16, column by column (each column has its own scale, so
// the global metric alone would not see the small ones).
TEST(Sm90, DecodeKernelsOnRowsWithFarApartScales) {
    REQUIRE_GPU();
    Problem p = make_problem(16, 512, 1024, 1.f, 0.f, DataKind::Seed, kSeedA, kSeedB, false);
    const size_t ks = size_t(p.k) / 32, M = size_t(p.m), N = size_t(p.n);
    for (size_t r = 0; r < N; ++r)
        for (size_t b = 0; b < ks; ++b) p.b.scales[r * ks + b] = uint8_t(97 + (r * 7) % 61 + (b % 3));
    const std::vector<float> ref = reference_for(p);
    int tested = 0;
    for (size_t i = 0; i < gpu()->manifest.kernels.size(); ++i) {
        if (gpu()->manifest.kernels[i].b_layout != BLayout::Frag16S) continue;
        for (const int l : {0, 2}) {
            if (l && !gpu()->manifest.kernels[i].split_k) continue;
            GpuGemm g(*gpu()->dev, gpu()->manifest, int(i), l, p);
            const std::vector<uint16_t> d = g.run_and_fetch();
            size_t bad = 0, checked = 0;
            for (size_t n = 0; n < N; ++n) {
                double col_max = 0;
                for (size_t m = 0; m < M; ++m) col_max = std::max(col_max, std::fabs(double(ref[m * N + n])));
                for (size_t m = 0; m < M; ++m) {
                    const double want = ref[m * N + n], got = bf16_to_float(d[m * N + n]);
                    if (std::fabs(want) <= 1e-3 * col_max) continue;
                    ++checked;
                    bad += !(std::fabs(got - want) <= kBf16Rounding * 1.001 * std::fabs(want));
                }
            }
            EXPECT_EQ(bad, 0u) << gpu()->manifest.kernels[i].co_name << " L=" << l << " of " << checked;
            EXPECT_GT(checked, M * N / 2);
            ++tested;
        }
    }
    EXPECT_GT(tested, 0) << "no frag16s (dec) kernel in the manifest";
}

TEST(Sm90, AlphaBetaAndC) {
    REQUIRE_GPU();
    const Problem p = make_problem(200, 1040, 512, 2.f, 0.5f, DataKind::Seed, kSeedA, kSeedB, true);
    for (size_t i = 0; i < gpu()->manifest.kernels.size(); ++i) {
        const VerifyResult v = run_case(int(i), 0, p);
        EXPECT_TRUE(v.passed()) << gpu()->manifest.kernels[i].co_name << " " << describe(v);
        EXPECT_LE(v.max_rel_err, kBf16Rounding) << gpu()->manifest.kernels[i].co_name;
    }
}

TEST(Sm90, NanScaleGivesNanInExactlyTheAffectedOutputs) {
    REQUIRE_GPU();
    const Problem p = make_problem(96, 256, 512, 1.f, 0.f, DataKind::NanScale, kSeedA, kSeedB, false);
    const std::vector<float> ref = reference_for(p);
    size_t nan_ref = 0;
    for (float r : ref) nan_ref += std::isnan(r);
    ASSERT_GT(nan_ref, 0u) << "the NanScale generator must plant NaN scales";
    ASSERT_LT(nan_ref, ref.size());
    for (size_t i = 0; i < gpu()->manifest.kernels.size(); ++i) {
        GpuGemm g(*gpu()->dev, gpu()->manifest, int(i), 0, p);
        EXPECT_EQ(nan_mismatches(g.run_and_fetch(), ref), 0u) << gpu()->manifest.kernels[i].co_name;
    }
}

TEST(Sm90, WideScaleData) {
    REQUIRE_GPU();
    // Block exponents over 1..254: each row spans > 30 binades. docs/KERNELS_SM90.md states the
    // contract; the verify metric must hold (outputs are dominated by the largest blocks).
    const Problem p = make_problem(128, 512, 2048, 1.f, 0.f, DataKind::WideScale, kSeedA, kSeedB, false);
    for (size_t i = 0; i < gpu()->manifest.kernels.size(); ++i) {
        const VerifyResult v = run_case(int(i), 0, p);
        EXPECT_TRUE(v.passed()) << gpu()->manifest.kernels[i].co_name << " " << describe(v);
    }
}

TEST(Sm90, GaussianAndZeroBlocks) {
    REQUIRE_GPU();
    for (DataKind kind : {DataKind::Gaussian, DataKind::ZeroBlocks}) {
        const Problem p = make_problem(128, 1024, 1024, 1.f, 0.f, kind, kSeedA, kSeedB, false);
        const int kern = heuristic_pick(128, 1024, 1024);
        const VerifyResult v = run_case(kern, 0, p);
        EXPECT_TRUE(v.passed()) << to_string(kind) << " " << describe(v);
    }
}

TEST(Sm90, PtxCodeObjectRunsThroughAOneLineManifest) {
    REQUIRE_GPU();
    const KernelConfig& kc = gpu()->manifest.kernels.front();
    std::string stem = kc.co_name.substr(0, kc.co_name.rfind('.'));
    const fs::path src = fs::path(gpu()->manifest.dir) / (stem + ".ptx");
    ASSERT_TRUE(fs::exists(src)) << "the build keeps each kernel's PTX beside its cubin: " << src;
    const fs::path dir = fs::temp_directory_path() / "f4gemm_ptx_test";
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy_file(src, dir / (stem + ".ptx"));
    {
        // The manifest row of the kernel, with co_name pointing at the .ptx.
        std::ofstream f(dir / kManifestFile);
        std::ifstream in(fs::path(gpu()->manifest.dir) / kManifestFile);
        std::string header, line;
        std::getline(in, header);
        f << header << "\n";
        while (std::getline(in, line))
            if (line.find("," + kc.co_name) != std::string::npos) {
                const size_t at = line.find(kc.co_name);
                line.replace(at, kc.co_name.size(), stem + ".ptx");
                f << line << "\n";
            }
    }
    Manifest one =
        filter_for_device(load_manifest(dir.string()), BackendKind::Cuda, gpu()->dev->props().arch);
    ASSERT_EQ(one.kernels.size(), 1u);
    const Problem p = make_problem(300, 2048, 1024, 1.f, 0.f, DataKind::Seed, kSeedA, kSeedB, false);
    GpuGemm g(*gpu()->dev, one, 0, 0, p);
    const std::vector<uint16_t> d = g.run_and_fetch();
    const std::vector<float> ref = reference_for(p);
    const VerifyResult v = verify_bf16(d.data(), 2048, ref.data(), 300, 2048, default_tolerance(false));
    EXPECT_TRUE(v.passed()) << describe(v);
    fs::remove_all(dir);
}

TEST(Sm90, MissingCodeObjectIsNamed) {
    REQUIRE_GPU();
    const fs::path dir = fs::temp_directory_path() / "f4gemm_missing_co";
    fs::remove_all(dir);
    fs::create_directories(dir);
    {
        std::ifstream in(fs::path(gpu()->manifest.dir) / kManifestFile);
        std::ofstream f(dir / kManifestFile);
        f << in.rdbuf();
    }
    Manifest m = filter_for_device(load_manifest(dir.string()), BackendKind::Cuda, gpu()->dev->props().arch);
    const Problem p = make_problem(16, 256, 256, 1.f, 0.f, DataKind::Seed, kSeedA, kSeedB, false);
    try {
        GpuGemm g(*gpu()->dev, m, 0, 0, p);
        FAIL() << "expected a missing-code-object error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::NotFound);
        EXPECT_NE(std::string(e.what()).find("no such code object: " + (dir / m.kernels[0].co_name).string()),
                  std::string::npos)
            << e.what();
    }
    fs::remove_all(dir);
}

TEST(Sm90, CommandWithNoArgumentsPasses) {
    REQUIRE_GPU();
    const auto [rc, out] = run_command("");
    std::printf("%s", out.c_str());
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("[f4gemm] PASSED"), std::string::npos) << out;
    EXPECT_NE(out.find("TFLOP/s"), std::string::npos) << out;
    EXPECT_NE(out.find("sm_90a"), std::string::npos) << out;
}

// The command on real data (.npy) the old rules refused: K = 2880 with N = 2880 and N = 1000, on the GPU; the
// run packs W itself and verifies against the float64 reference.
TEST(Sm90, CommandOnRealDataAnyModelShape) {
    REQUIRE_GPU();
    const fs::path dir = fs::temp_directory_path() / ("f4gemm_real_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    for (const auto& mn : std::vector<std::pair<size_t, size_t>>{{16, 2880}, {3, 1000}}) {
        const size_t m = mn.first, n = mn.second, k = 2880;
        const MxOperand a = make_operand(m, k, 101, DataKind::Gaussian),
                        b = make_operand(n, k, 102, DataKind::Gaussian);
        npy_write((dir / "a.npy").string(), NpyDtype::U8, {m, k / 2}, a.packed.data());
        npy_write((dir / "sa.npy").string(), NpyDtype::U8, {m, k / 32}, a.scales.data());
        npy_write((dir / "b.npy").string(), NpyDtype::U8, {n, k / 2}, b.packed.data());
        npy_write((dir / "sb.npy").string(), NpyDtype::U8, {n, k / 32}, b.scales.data());
        const std::string d = (dir / "d.npy").string();
        const auto [rc, out] =
            run_command("--backend cuda --iters 5 --a " + (dir / "a.npy").string() + " --a-scale " +
                        (dir / "sa.npy").string() + " --b " + (dir / "b.npy").string() + " --b-scale " +
                        (dir / "sb.npy").string() + " --out " + d);
        std::printf("%s", out.c_str());
        EXPECT_EQ(rc, 0) << out;
        EXPECT_NE(out.find("[f4gemm] PASSED"), std::string::npos) << out;
        EXPECT_NE(out.find("K padded to 3072"), std::string::npos) << out;
        const NpyArray got = npy_read(d);
        EXPECT_EQ(got.shape, (std::vector<size_t>{m, n}));
    }
    fs::remove_all(dir);
}

// f4gemm tune end to end: every candidate verified and timed, the operand images packed once per layout
// and reused by the other candidates, a one-row table written, and that table then preferred by the driver.
TEST(Sm90, TuneWritesATableTheDriverPrefers) {
    REQUIRE_GPU();
    const fs::path dir = fs::temp_directory_path() / ("f4gemm_tune_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string csv = (dir / "t.csv").string();
    const auto run = run_command;
    const auto [rc, out] = run("tune --shape 200x1024x1024 --reps 1 --iters 3 --out " + csv);
    ASSERT_EQ(rc, 0) << out;
    EXPECT_EQ(out.find("FAILED"), std::string::npos) << out;
    const size_t best = out.find("best 200x1024x1024 (accum exact): ");
    ASSERT_NE(best, std::string::npos) << out;
    // Per operand set (200x1024x1024 rotates 8 sets past 2x L2): A once, B once (the one packed weight
    // format of the manifest); every other candidate reuses them.
    int packed = -1, reused = -1;
    ASSERT_EQ(std::sscanf(out.c_str() + out.find("operand images packed ", best),
                          "operand images packed %d, reused %d", &packed, &reused),
              2)
        << out;
    EXPECT_GE(packed, 2) << out;
    EXPECT_LE(packed, 8 * 4) << out;
    EXPECT_GT(reused, packed) << out;
    std::ifstream t(csv);
    std::string header, row, extra;
    ASSERT_TRUE(std::getline(t, header));
    ASSERT_TRUE(std::getline(t, row));
    EXPECT_FALSE(std::getline(t, extra) && !extra.empty()) << "one shape, one row";
    EXPECT_EQ(header.rfind("cu_num,M,N,K,accum,kernelName,splitK", 0), 0u) << header;
    EXPECT_NE(row.find(",200,1024,1024,exact,"), std::string::npos) << row;
    const std::string kernel =
        row.substr(0, row.find(".cubin") + 6).substr(row.find(",1024,1024,exact,") + 17);
    const auto [rc2, out2] = run("--dry-run -m 200 -n 1024 -k 1024 --tuned " + csv);
    EXPECT_EQ(rc2, 0) << out2;
    EXPECT_NE(out2.find("lists this shape"), std::string::npos) << out2;
    EXPECT_NE(out2.find("kernel " + kernel), std::string::npos) << kernel << "\n" << out2;
    fs::remove_all(dir);
}

// Timing::Graph (what `f4gemm tune` times by default): the replayed graph computes the same D as a launch,
// for every kernel of the manifest and a split-K plan, and a graph keeps working after another GEMM on the
// same launcher grew (and so freed) the launcher's shared workspace.
TEST(Sm90, GraphReplaysComputeTheSameResult) {
    REQUIRE_GPU();
    ASSERT_TRUE(gpu()->dev->graphs_supported());
    const Problem p = make_problem(70, 1024, 1024, 1.f, 0.f, DataKind::Seed, kSeedA, kSeedB, false);
    const std::vector<float> ref = reference_for(p);
    Launcher launcher(*gpu()->dev, gpu()->manifest);
    int split_kernel = -1;
    for (size_t i = 0; i < gpu()->manifest.kernels.size(); ++i) {
        const KernelConfig& kc = gpu()->manifest.kernels[i];
        if (kc.split_k && kc.abi == KernelAbi::Sm90v1 && split_kernel < 0) split_kernel = int(i);
        GpuGemm g(launcher, int(i), 0, p);
        const std::vector<uint16_t> d = g.run_and_fetch(GpuGemm::Timing::Graph);
        const VerifyResult v = verify_bf16(d.data(), size_t(p.n), ref.data(), size_t(p.m), size_t(p.n),
                                           default_tolerance(false));
        EXPECT_TRUE(v.passed()) << kc.co_name << " " << describe(v);
        const double us = g.time_us(3, 1, GpuGemm::Timing::Graph);
        EXPECT_GT(us, 0.0) << kc.co_name;
        EXPECT_LT(us, 1e5) << kc.co_name;
    }
    ASSERT_GE(split_kernel, 0) << "no split-capable sm90v1 kernel in the manifest";
    GpuGemm small(launcher, split_kernel, 1, p);  // 2-way split: a workspace of fp32 partials
    ASSERT_GT(small.plan().workspace_bytes, 0u);
    EXPECT_TRUE(verify_bf16(small.run_and_fetch(GpuGemm::Timing::Graph).data(), size_t(p.n), ref.data(),
                            size_t(p.m), size_t(p.n), default_tolerance(false))
                    .passed());
    {
        GpuGemm big(launcher, split_kernel, 4, p);  // 16-way: grows the shared workspace, freeing the old one
        ASSERT_GT(big.plan().workspace_bytes, small.plan().workspace_bytes);
        big.run_once(0);
    }
    const std::vector<uint16_t> again = small.run_and_fetch(GpuGemm::Timing::Graph);
    const VerifyResult v = verify_bf16(again.data(), size_t(p.n), ref.data(), size_t(p.m), size_t(p.n),
                                       default_tolerance(false));
    EXPECT_TRUE(v.passed()) << "split graph after the shared workspace moved: " << describe(v);
    EXPECT_LE(v.max_rel_err, kBf16Rounding);
}

// Split plans and pre-pass plans share the launcher's workspace (split-K partials and tile counters, the
// pre-pass image): a split launch after another split plan or after a pre-pass image in the same bytes must
// still start from zeroed counters (docs/ABI_SM90.md). A counter left non-zero would make the tiles never
// finish (D left unwritten): each step below is a new problem with its own D, so that shows.
TEST(Sm90, SplitPlansShareTheWorkspaceWithPrepassPlans) {
    REQUIRE_GPU();
    Launcher launcher(*gpu()->dev, gpu()->manifest);
    int prepass = -1;
    std::vector<int> split;
    for (size_t i = 0; i < gpu()->manifest.kernels.size(); ++i) {
        const KernelConfig& kc = gpu()->manifest.kernels[i];
        if (kc.split_k && kc.abi == KernelAbi::Sm90v1 && kc.accum == Accum::Exact) split.push_back(int(i));
        if (has_prepass(kc.abi) && kc.accum == Accum::Exact && prepass < 0) prepass = int(i);
    }
    ASSERT_FALSE(split.empty()) << "no split-capable sm90v1 kernel in the manifest";
    ASSERT_GE(prepass, 0) << "no exact pre-pass kernel in the manifest";
    uint64_t seed = 100;
    const auto check = [&](int kernel, int log2_split, int m, int n, int k) {
        const Problem p = make_problem(m, n, k, 1.f, 0.f, DataKind::Seed, seed, seed + 1, false);
        seed += 2;
        const std::vector<float> ref = reference_for(p);
        GpuGemm g(launcher, kernel, log2_split, p);
        const std::vector<uint16_t> d = g.run_and_fetch();
        const VerifyResult v = verify_bf16(d.data(), size_t(p.n), ref.data(), size_t(p.m), size_t(p.n),
                                           default_tolerance(false));
        EXPECT_TRUE(v.passed()) << gpu()->manifest.kernels[size_t(kernel)].co_name << " L=" << log2_split
                                << " M=" << m << " N=" << n << " K=" << k << " " << describe(v);
    };
    for (const int i : split) {
        check(i, 4, 40, 4096, 4096);  // the largest workspace first: the pre-pass below shares it
        check(i, 2, 16, 1024, 2048);  // the same tiles' counters, three launches in a row
        check(i, 2, 16, 1024, 2048);
        check(i, 1, 16, 1024, 2048);
        check(prepass, 0, 512, 2048, 1024);  // its image over the same workspace bytes
        check(i, 3, 40, 2048, 4096);
    }
}

TEST(Sm90, WrongArchitectureCodeObjectIsRefusedBeforeLaunch) {
    REQUIRE_GPU();
#ifndef F4GEMM_TEST_CUBIN_DIR
    GTEST_SKIP() << "nvcc not available at build time";
#else
    try {
        gpu()->dev->load_module(std::string(F4GEMM_TEST_CUBIN_DIR) + "/tiny_sm80.cubin");
        FAIL() << "an sm_80 cubin must be refused on " << gpu()->dev->props().arch;
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::Unsupported);
        EXPECT_NE(std::string(e.what()).find("sm_80"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(gpu()->dev->load_module(std::string(F4GEMM_TEST_CUBIN_DIR) + "/tiny_sm90a.cubin"));
#endif
}
