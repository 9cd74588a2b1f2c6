// The accumulation mode (include/f4gemm/accum.hpp) on the host: its names and the bound's constant, the
// selection policy per mode (an exact request never runs a promoted kernel; a promoted request takes the
// promoted kernels first and falls back to the exact ones, saying so in the explain steps; the tuned table
// keyed by mode; a forced kernel checked against the request), the Session's Choice and the CPU backend
// (exact in both modes, judged by the promoted bound), on synthetic manifests: no GPU, no built kernel
// needed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "f4gemm/accum.hpp"
#include "f4gemm/driver.hpp"
#include "f4gemm/error.hpp"
#include "f4gemm/session.hpp"

using namespace f4gemm;
namespace fs = std::filesystem;

namespace {

const char* kHeader =
    "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,scale_layout,max_"
    "m,"
    "min_m,priority,accum\n";

// Shaped like the shipped manifest with the promoted kernel (kernels/sm90a/kernels.json): pp_p is a 128 x 128
// tile offered from M = 128 on, with the lowest priority value.
const char* kRows =
    "128,128,0,0,pab,pab.cubin,sm_90a,384,153120,sm90pa1,frag16s,plain,256,,10,exact\n"
    "128,128,0,0,pp,pp.cubin,sm_90a,384,198752,sm90pp1,frag16s,plain,,,20,exact\n"
    "128,128,0,0,pp_p,pp_p.cubin,sm_90a,384,198752,sm90pp1,frag16s,plain,,128,5,promoted\n"
    "16,64,0,0,dec,dec.cubin,sm_90a,256,91936,sm90v1,frag16s,plain,,,30,exact\n"
    "64,128,1,0,swap64,swap64.cubin,sm_90a,384,217032,sm90v1,frag16s,plain,,,40,exact\n";

Manifest manifest(const std::string& rows = kRows) {
    return parse_manifest(std::string(kHeader) + rows, "accum.csv");
}

Selection pick(const Manifest& m, int mm, Accum accum, const TunedTable* tuned = nullptr,
               const std::string& kernel = "") {
    return select(m, kernel, HeuristicQuery{mm, 16384, 16384, 132, 0, 0}, true, tuned, accum);
}

std::string name(const Manifest& m, const Selection& s) {
    return s.index >= 0 ? m.kernels[size_t(s.index)].knl_name : "";
}

// Whether some explain step (of kernel `knl`, or a policy note for "") contains `text`.
bool said(const Manifest& m, const Selection& s, const std::string& knl, const std::string& text) {
    for (const HeuristicStep& st : s.heuristic.steps) {
        const std::string who = st.index >= 0 ? m.kernels[size_t(st.index)].knl_name : "";
        if (who == knl && st.reason.find(text) != std::string::npos) return true;
    }
    return false;
}

std::string error_of(const std::function<void()>& f, Errc* code = nullptr) {
    try {
        f();
    } catch (const Error& e) {
        if (code) *code = e.code();
        return e.what();
    }
    return "";
}

}  // namespace

TEST(Accum, NamesParseAndAllow) {
    EXPECT_STREQ(accum_name(Accum::Exact), "exact");
    EXPECT_STREQ(accum_name(Accum::Promoted), "promoted");
    EXPECT_EQ(parse_accum("exact"), Accum::Exact);
    EXPECT_EQ(parse_accum("promoted"), Accum::Promoted);
    Errc code = Errc::Io;
    const std::string e = error_of([] { parse_accum("fast"); }, &code);
    EXPECT_EQ(code, Errc::InvalidArgument);
    EXPECT_EQ(e, "accum 'fast': unknown mode: pass exact or promoted");
    EXPECT_NE(error_of([] { parse_accum("Exact"); }).find("accum 'Exact'"), std::string::npos);
    EXPECT_NE(error_of([] { parse_accum(""); }).find("accum ''"), std::string::npos);
    EXPECT_TRUE(accum_allows(Accum::Exact, Accum::Exact));
    EXPECT_FALSE(accum_allows(Accum::Exact, Accum::Promoted));
    EXPECT_TRUE(accum_allows(Accum::Promoted, Accum::Exact));
    EXPECT_TRUE(accum_allows(Accum::Promoted, Accum::Promoted));
}

TEST(Accum, PromotedBoundConstant) {
    // 133 * 2^-13 for the FP8 accumulator over one 128-K chunk, plus 2^-24 per fp32 promotion add.
    const double chunk = 133.0 / 8192.0, add = std::ldexp(1.0, -24);
    EXPECT_DOUBLE_EQ(promoted_cw(128), chunk + add);
    EXPECT_DOUBLE_EQ(promoted_cw(129), chunk + 2 * add);  // ceil(K / 128)
    EXPECT_DOUBLE_EQ(promoted_cw(256), chunk + 2 * add);
    EXPECT_DOUBLE_EQ(promoted_cw(16384), chunk + 128 * add);
    EXPECT_DOUBLE_EQ(promoted_cw(3072), chunk + 24 * add);       // K = 2880 launched at round_up(K, 256)
    EXPECT_DOUBLE_EQ(promoted_cw(1 << 20), chunk + 8192 * add);  // the fp32 adds: 2^-11 at K = 2^20
    EXPECT_DOUBLE_EQ(promoted_cw(16384, 128), promoted_cw(16384));
}

// Chains of n = chain_k / 32 steps: C(n) = ceil(((1 + 32u)(1 + 33u)^(n-1) - 1) / u * (1 + 1/257) + 1/2), the
// step-by-step count of docs/VERIFY.md section 7 (4 steps: 131.8 -> 133; 8 steps: 266.8 -> 269), plus one
// 2^-24 per promotion, now one per chain.
TEST(Accum, PromotedBoundConstantGrowsWithTheChain) {
    const double u = 1.0 / 8192.0, add = std::ldexp(1.0, -24);
    EXPECT_DOUBLE_EQ(promoted_cw(16384, 256), 269 * u + 64 * add);
    EXPECT_DOUBLE_EQ(promoted_cw(16384 + 256, 256), 269 * u + 65 * add);
    EXPECT_DOUBLE_EQ(promoted_cw(3072, 256), 269 * u + 12 * add);
    EXPECT_DOUBLE_EQ(promoted_cw(4096, 32), 33 * u + 128 * add);  // one step: 32 addends, the rounding
    // the step-by-step count itself, against a loop over the steps
    for (int n : {1, 2, 4, 8, 16}) {
        double eps = 32 * u;
        for (int j = 2; j <= n; ++j) eps += 33 * u * (1 + eps);
        const double c = std::ceil(eps / u * (1 + 1.0 / 257) + 0.5);
        EXPECT_DOUBLE_EQ(promoted_cw(0, size_t(32 * n)), c * u) << n;
    }
    EXPECT_LT(promoted_cw(0, 256), 2.03 * promoted_cw(0, 128));          // about twice the 128-K constant
    EXPECT_DOUBLE_EQ(promoted_cw(16384, 0), promoted_cw(16384));         // 0: 128, no division by zero
    EXPECT_DOUBLE_EQ(promoted_cw(16384, 270), promoted_cw(16384, 256));  // whole k32 steps
}

TEST(AccumPolicy, ExactRequestsNeverRunAPromotedKernel) {
    const Manifest m = manifest();
    ASSERT_EQ(m.kernels[2].accum, Accum::Promoted);
    for (int mm : {1, 16, 64, 100, 128, 256, 257, 4096, 8192}) {
        const Selection s = pick(m, mm, Accum::Exact);
        EXPECT_EQ(m.kernels[size_t(s.index)].accum, Accum::Exact) << mm;
        EXPECT_TRUE(said(m, s, "pp_p", "implements promoted accumulation, the request is exact")) << mm;
    }
    EXPECT_EQ(name(m, pick(m, 4096, Accum::Exact)), "pp");
    EXPECT_EQ(name(m, pick(m, 200, Accum::Exact)), "pab");
    EXPECT_EQ(name(m, pick(m, 16, Accum::Exact)), "dec");
    // Without explain the steps stay empty.
    EXPECT_TRUE(select(m, "", HeuristicQuery{4096, 4096, 4096, 132, 0, 0}, false, nullptr, Accum::Exact)
                    .heuristic.steps.empty());
}

TEST(AccumPolicy, PromotedRequestsTakePromotedKernelsFirstAndFallBack) {
    const Manifest m = manifest();
    // Where pp_p is offered (M >= min_m 128, its tile the smallest covering M or none covering it): pp_p.
    for (int mm : {128, 129, 256, 257, 4096, 8192}) {
        const Selection s = pick(m, mm, Accum::Promoted);
        EXPECT_EQ(name(m, s), "pp_p") << mm;
        EXPECT_TRUE(said(m, s, "", "promoted request: the promoted kernels are considered first")) << mm;
        EXPECT_FALSE(said(m, s, "", "fallback")) << mm;
    }
    // Below min_m, and where a smaller tile covers M: no promoted kernel is offered, the exact kernels serve
    // the request (the exact contract meets the promoted bound) and the explain steps say so.
    struct Case {
        int m;
        const char* want;
        const char* why;
    };
    for (const Case c : {Case{100, "pab", "skip: min_m 128 > M"}, Case{16, "dec", "skip: min_m 128 > M"},
                         Case{64, "swap64", "skip: min_m 128 > M"}}) {
        const Selection s = pick(m, c.m, Accum::Promoted);
        EXPECT_EQ(name(m, s), c.want) << c.m;
        EXPECT_TRUE(said(m, s, "pp_p", c.why)) << c.m;
        EXPECT_TRUE(said(m, s, "", "fallback: no promoted kernel is offered for M=" + std::to_string(c.m)))
            << c.m;
    }
    // A promoted kernel whose tile is taller than the smallest one covering M is not offered either.
    Manifest low = m;
    low.kernels[2].min_m = 0;
    const Selection s16 = pick(low, 16, Accum::Promoted);
    EXPECT_EQ(name(low, s16), "dec");
    EXPECT_TRUE(said(low, s16, "pp_p", "skip: tile_M 128 > 16, the smallest tile covering M"));
    EXPECT_TRUE(said(low, s16, "", "fallback"));
    EXPECT_EQ(name(low, pick(low, 100, Accum::Promoted)), "pp_p");
}

TEST(AccumPolicy, ManifestsWithoutPromotedKernels) {
    // aiter's manifest (no accum column): every kernel exact; a promoted request runs the exact port.
    const std::string csv = F4GEMM_AITER_CSV;
    const Manifest aiter = load_manifest(csv.substr(0, csv.rfind('/')));
    const HeuristicQuery q{8192, 8192, 8192, 256, 0, 1};
    const Selection p = select(aiter, "", q, true, nullptr, Accum::Promoted);
    EXPECT_EQ(p.index, select_kernel(aiter, q).index);
    EXPECT_TRUE(said(aiter, p, "", "the manifest has no promoted kernel"));
    // A manifest of promoted kernels only: an exact request is an error naming the fix.
    const Manifest only =
        manifest("128,128,0,0,pp_p,pp_p.cubin,sm_90a,384,1,sm90pp1,frag16s,plain,,,5,promoted\n");
    Errc code = Errc::Io;
    const std::string e = error_of([&] { pick(only, 4096, Accum::Exact); }, &code);
    EXPECT_EQ(code, Errc::NotFound);
    EXPECT_NE(e.find("offers only promoted kernels: pass --accum promoted"), std::string::npos) << e;
    EXPECT_EQ(name(only, pick(only, 4096, Accum::Promoted)), "pp_p");
}

TEST(AccumPolicy, ForcedKernelIsCheckedAgainstTheRequest) {
    const Manifest m = manifest();
    Errc code = Errc::Io;
    const std::string e = error_of([&] { pick(m, 4096, Accum::Exact, nullptr, "pp_p.cubin"); }, &code);
    EXPECT_EQ(code, Errc::InvalidArgument);
    EXPECT_EQ(e,
              "kernel pp_p.cubin implements promoted accumulation; pass --accum promoted or choose an exact "
              "kernel");
    EXPECT_EQ(name(m, pick(m, 4096, Accum::Promoted, nullptr, "pp_p")), "pp_p");
    // An exact kernel under a promoted request runs (its contract is stricter), even where pp_p is offered.
    EXPECT_EQ(name(m, pick(m, 4096, Accum::Promoted, nullptr, "pp")), "pp");
    EXPECT_EQ(name(m, pick(m, 16, Accum::Promoted, nullptr, "pp_p")), "pp_p") << "forced: no min_m";
}

TEST(AccumPolicy, TunedTableIsKeyedByMode) {
    const Manifest m = manifest();
    const TunedTable t = parse_tuned(
        "cu_num,M,N,K,accum,kernelName,splitK\n"
        "132,4096,16384,16384,exact,pab.cubin,0\n"
        "132,4096,16384,16384,promoted,pp.cubin,0\n"
        "132,512,16384,16384,promoted,pp_p.cubin,0\n"
        "132,1024,16384,16384,exact,pp_p.cubin,0\n",  // hand-edited: a promoted kernel in an exact row
        "t.csv");
    Selection s = pick(m, 4096, Accum::Exact, &t);
    EXPECT_TRUE(s.tuned);
    EXPECT_EQ(name(m, s), "pab");
    s = pick(m, 4096, Accum::Promoted, &t);  // an exact kernel in a promoted row is allowed
    EXPECT_TRUE(s.tuned);
    EXPECT_EQ(name(m, s), "pp");
    s = pick(m, 512, Accum::Promoted, &t);
    EXPECT_TRUE(s.tuned);
    EXPECT_EQ(name(m, s), "pp_p");
    s = pick(m, 512, Accum::Exact, &t);  // the promoted row is not the exact request's
    EXPECT_FALSE(s.tuned);
    EXPECT_EQ(name(m, s), "pp");
    s = pick(m, 1024, Accum::Exact, &t);  // the row's kernel is not allowed: ignored, with a note
    EXPECT_FALSE(s.tuned);
    EXPECT_EQ(name(m, s), "pp");
    EXPECT_TRUE(said(m, s, "pp_p",
                     "skip tuned row (t.csv): the kernel implements promoted accumulation, the "
                     "request is exact"));
}

// Below every promoted kernel's min_m the exact kernels serve a promoted request, and so does the exact
// mode's tuned row; where a promoted kernel is offered, an exact row alone does not decide a promoted
// request.
TEST(AccumPolicy, PromotedRequestBelowMinMUsesTheExactTunedRow) {
    const Manifest m = manifest();
    const TunedTable t = parse_tuned(
        "cu_num,M,N,K,accum,kernelName,splitK\n"
        "132,16,16384,16384,exact,swap64.cubin,0\n"
        "132,512,16384,16384,exact,pab.cubin,0\n",
        "t.csv");
    Selection s = pick(m, 16, Accum::Promoted, &t);
    EXPECT_TRUE(s.tuned);
    EXPECT_EQ(name(m, s), "swap64");
    s = pick(m, 512, Accum::Promoted, &t);
    EXPECT_FALSE(s.tuned);
    EXPECT_EQ(name(m, s), "pp_p");
}

// The time model (docs/HEURISTIC.md): a modelled pick is replaced by the modelled kernel of the pool
// predicted fastest, any tile, with an explain step; unmodelled picks keep the rules.
TEST(AccumPolicy, TimeModelPicksThePredictedFastestModelledKernel) {
    const char* rows =
        "128,128,0,0,pab,pab.cubin,sm_90a,384,153120,sm90pa1,frag16s,plain,256,,10,exact,0.00752,\n"
        "128,128,0,0,pp,pp.cubin,sm_90a,384,198752,sm90pp1,frag16s,plain,,,20,exact,0.00577,3.15e-07\n"
        "16,64,0,0,dec,dec.cubin,sm_90a,256,91936,sm90v1,frag16s,plain,,,30,exact,,\n"
        "64,128,1,0,swap64,swap64.cubin,sm_90a,384,217032,sm90v1,frag16s,plain,,,40,exact,0.00628,\n";
    const Manifest m =
        parse_manifest(std::string("tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,"
                                   "smem_bytes,abi,b_layout,scale_layout,max_m,min_m,priority,"
                                   "accum,cost_wave_k,cost_prepass\n") +
                           rows,
                       "cost.csv");
    const auto pick_at = [&](int mm, int n, int k) {
        return select(m, "", HeuristicQuery{mm, n, k, 132, 0, 0}, true, nullptr, Accum::Exact);
    };
    // 128 x 8192 x 28672: pab's 64 CTAs fill half the SMs, swap64's 128 one wave (6.28e-3 * 28672 = 180 us
    // against pab's 7.52e-3 * 28672 = 216): the rules already pick swap64 here, and the model agrees.
    Selection s = pick_at(128, 8192, 28672);
    EXPECT_EQ(name(m, s), "swap64");
    EXPECT_TRUE(said(m, s, "swap64", "time model: 180.1 us predicted, the fastest of the modelled kernels"));
    // 256 x 10240 x 8192: 160 tiles of 128 x 128, two waves either way; pp's faster waves pay for its
    // pre-pass (5.77e-3 * 2 * 8192 + 3.15e-7 * (256 + 10240) * 8192 = 121.6 us) against pab's 7.52e-3 * 2 *
    // 8192 = 123.2, which the rules pick (pp is its same-tile twin, skipped by priority).
    s = pick_at(256, 10240, 8192);
    EXPECT_EQ(name(m, s), "pp");
    EXPECT_EQ(s.log2_k_split, 0);
    EXPECT_TRUE(said(m, s, "pp", "time model: 121.6 us predicted against 123.2 for pab.cubin"));
    // 128 x 16384^2: pab's 128 CTAs are one wave; swap64's 256 two: pab stays, and says so.
    s = pick_at(128, 16384, 16384);
    EXPECT_EQ(name(m, s), "pab");
    EXPECT_TRUE(said(m, s, "pab", "the fastest of the modelled kernels"));
    // 4096 x 16384^2: pp's pre-pass (16384 + 4096 rows) is paid back by its faster waves.
    EXPECT_EQ(name(m, pick_at(4096, 16384, 16384)), "pp");
    // decode: the rules' pick carries no model, nothing is predicted
    s = pick_at(1, 16384, 16384);
    EXPECT_EQ(name(m, s), "dec");
    EXPECT_FALSE(said(m, s, "dec", "time model"));
}

namespace {
std::string manifest_dir(const std::string& rows) {
    const fs::path d = fs::temp_directory_path() / "f4gemm_accum_session";
    fs::create_directories(d);
    std::ofstream(d / kManifestFile) << kHeader << rows;
    return d.string();
}
}  // namespace

TEST(AccumSession, ChoiceCarriesTheRequestAndTheKernelMode) {
    SessionOptions o;
    o.co_dir = manifest_dir(kRows);
    o.open_device = false;
    o.backend = BackendKind::Cuda;
    o.num_cu = 132;
    const Session s(o);
    GemmRequest r;
    r.m = 16;
    r.n = 8192;
    r.k = 8192;
    r.accum = Accum::Promoted;
    Choice c = s.select(r);
    EXPECT_EQ(c.accum, Accum::Promoted);
    EXPECT_EQ(s.manifest().kernels[size_t(c.index)].knl_name, "dec");
    EXPECT_EQ(s.kernel_accum(c), Accum::Exact) << "the promoted request fell back to an exact kernel";
    r.m = 4096;
    c = s.select(r);
    EXPECT_EQ(s.kernel_accum(c), Accum::Promoted);
    EXPECT_EQ(c.launch_k, 8192);
    r.accum = Accum::Exact;
    c = s.select(r);
    EXPECT_EQ(c.accum, Accum::Exact);
    EXPECT_EQ(s.kernel_accum(c), Accum::Exact);
    r.kernel = "pp_p";
    EXPECT_NE(error_of([&] { s.select(r); }).find("pass --accum promoted or choose an exact kernel"),
              std::string::npos);
}

// The CPU backend runs the exact mode's arithmetic for both modes: a promoted request there is judged by the
// promoted bound (verify_result) and shows next to no error beyond the bf16 rounding.
TEST(AccumSession, CpuBackendIsExactInBothModes) {
    SessionOptions o;
    o.backend = BackendKind::Cpu;
    Session s(o);
    GemmRequest r;
    r.m = 33;
    r.n = 200;
    r.k = 2880;
    r.accum = Accum::Promoted;
    r.explain = true;
    const Choice c = s.select(r);
    EXPECT_EQ(c.index, -1);
    EXPECT_EQ(c.accum, Accum::Promoted);
    EXPECT_EQ(s.kernel_accum(c), Accum::Exact);
    ASSERT_EQ(c.steps.size(), 1u);
    EXPECT_EQ(c.steps[0].index, -1);
    EXPECT_NE(c.steps[0].reason.find("runs the exact mode"), std::string::npos) << c.steps[0].reason;
    for (DataKind kind : {DataKind::Seed, DataKind::Gaussian, DataKind::WideScale, DataKind::NanScale}) {
        const Problem p = make_problem(r.m, r.n, r.k, -1.5f, 0.f, kind, 7, 8, false);
        const std::vector<uint16_t> d = s.prepare(c, p)->run_and_fetch();
        const VerifyResult v = verify_result(p, d, Accum::Promoted, c.launch_k);
        EXPECT_TRUE(v.promoted);
        EXPECT_TRUE(v.passed()) << to_string(kind) << ": " << v.mismatches << " outside the bound";
        EXPECT_DOUBLE_EQ(v.cw, promoted_cw(2880));
        // The exact mode's arithmetic (exact 32-blocks, fp32 across them): at most a few fp32 roundings of S
        // beyond the bf16 rounding, against 133 * 2^-13 allowed.
        EXPECT_LT(v.observed_c, std::ldexp(1.0, -16)) << to_string(kind);
        std::printf("[ measured ] cpu backend, promoted request, %s: observed c = %.3g\n", to_string(kind),
                    v.observed_c);
        const VerifyResult e = verify_result(p, d, Accum::Exact, c.launch_k);
        EXPECT_FALSE(e.promoted);
        EXPECT_TRUE(e.passed()) << to_string(kind);
        EXPECT_EQ(e.mismatches, v.mismatches);
        EXPECT_EQ(e.nan_outputs, v.nan_outputs);
    }
}
