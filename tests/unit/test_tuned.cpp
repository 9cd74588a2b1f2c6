// Tuned table: parsing by header name, errors with file:line, and the selection order
// (--kernel, then the tuned entry for (CU count, M, N, K), then aiter's heuristic).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "f4gemm/driver.hpp"
#include "f4gemm/error.hpp"
#include "f4gemm/tuned.hpp"

using namespace f4gemm;

namespace {
const char* kTable =
    "cu_num,M,N,K,kernelName,splitK,us,tflops,extra\n"
    "256,8192,8192,8192,f4gemm_bf16_per1x32Fp4_BpreShuffle_192x256.co,0,300.5,3600,x\n"
    "256,256,1024,4096,f4gemm_bf16_per1x32Fp4_BpreShuffle_256x256.co,2,10,50,y\n"
    "256,256,1024,4096,f4gemm_bf16_per1x32Fp4_BpreShuffle_128x512.co,1,9,55,z\n"
    "132,8192,8192,8192,f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128.co,0,1,1,w\n";
}

TEST(Tuned, ParsesByHeaderAndLastMatchWins) {
    const TunedTable t = parse_tuned(kTable, "t.csv");
    ASSERT_EQ(t.entries.size(), 4u);
    EXPECT_DOUBLE_EQ(t.entries[0].us, 300.5);
    const TunedEntry* e = t.find(256, 256, 1024, 4096, Accum::Exact);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->kernel, "f4gemm_bf16_per1x32Fp4_BpreShuffle_128x512.co");
    EXPECT_EQ(e->log2_k_split, 1);
    EXPECT_EQ(t.find(256, 1, 2, 3, Accum::Exact), nullptr);
    // A table without the accum column holds exact rows only.
    for (const TunedEntry& x : t.entries) EXPECT_EQ(x.accum, Accum::Exact);
    EXPECT_EQ(t.find(256, 256, 1024, 4096, Accum::Promoted), nullptr);
    // Round trip through the writer.
    const TunedTable again = parse_tuned(format_tuned(t), "again.csv");
    ASSERT_EQ(again.entries.size(), 4u);
    EXPECT_EQ(again.entries[3].kernel, t.entries[3].kernel);
}

// The accumulation mode: a column read by header name (absent or empty: exact), part of the lookup key, and
// written by format_tuned after K.
TEST(Tuned, AccumColumnKeysTheLookup) {
    const TunedTable t = parse_tuned(
        "cu_num,M,N,K,kernelName,splitK,us,tflops,accum\n"
        "132,4096,4096,4096,pp.cubin,0,200,680,exact\n"
        "132,4096,4096,4096,pp_p.cubin,0,150,900,promoted\n"
        "132,16,8192,8192,dec.cubin,0,20,100,\n",
        "t.csv");
    ASSERT_EQ(t.entries.size(), 3u);
    EXPECT_EQ(t.entries[0].accum, Accum::Exact);
    EXPECT_EQ(t.entries[1].accum, Accum::Promoted);
    EXPECT_EQ(t.entries[2].accum, Accum::Exact);  // empty cell
    ASSERT_NE(t.find(132, 4096, 4096, 4096, Accum::Exact), nullptr);
    EXPECT_EQ(t.find(132, 4096, 4096, 4096, Accum::Exact)->kernel, "pp.cubin");
    ASSERT_NE(t.find(132, 4096, 4096, 4096, Accum::Promoted), nullptr);
    EXPECT_EQ(t.find(132, 4096, 4096, 4096, Accum::Promoted)->kernel, "pp_p.cubin");
    EXPECT_EQ(t.find(132, 16, 8192, 8192, Accum::Promoted), nullptr) << "no fallback across modes";
    const std::string text = format_tuned(t);
    EXPECT_EQ(text.substr(0, text.find('\n')), kTunedHeader);
    EXPECT_EQ(std::string(kTunedHeader), "cu_num,M,N,K,accum,kernelName,splitK,us,tflops");
    EXPECT_NE(text.find("\n132,4096,4096,4096,promoted,pp_p.cubin,0,150,900\n"), std::string::npos) << text;
    const TunedTable again = parse_tuned(text, "again.csv");
    ASSERT_EQ(again.entries.size(), 3u);
    EXPECT_EQ(again.entries[1].accum, Accum::Promoted);
    EXPECT_EQ(again.entries[2].accum, Accum::Exact);
    try {
        parse_tuned("cu_num,M,N,K,accum,kernelName,splitK\n1,2,3,4,fast,k,0\n", "bad.csv");
        FAIL() << "a bad accum cell must be an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::Manifest);
        EXPECT_NE(std::string(e.what()).find("bad.csv:2: column accum is not exact or promoted (got 'fast')"),
                  std::string::npos)
            << e.what();
    }
}

TEST(Tuned, ErrorsNameFileAndLine) {
    for (const char* bad : {"cu_num,M,N,K,kernelName\n1,2,3,4,k\n",             // missing splitK
                            "cu_num,M,N,K,kernelName,splitK\n1,2,x,4,k,0\n",    // bad int
                            "cu_num,M,N,K,kernelName,splitK\n1,2,3,4,k\n",      // cell count
                            "cu_num,M,N,K,kernelName,splitK\n1,2,3,4,,0\n"}) {  // empty kernel
        try {
            parse_tuned(bad, "bad.csv");
            FAIL() << bad;
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), Errc::Manifest);
            EXPECT_NE(std::string(e.what()).find("bad.csv:"), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(load_tuned("/nonexistent/tuned.csv"), Error);
}

TEST(Tuned, SelectionPrefersTheTableForItsShapesOnly) {
    const Manifest m =
        load_manifest(std::string(F4GEMM_AITER_CSV).substr(0, std::string(F4GEMM_AITER_CSV).rfind('/')));
    const TunedTable t = parse_tuned(kTable, "t.csv");
    HeuristicQuery q{8192, 8192, 8192, 256, 0, 1};
    Selection s = select(m, "", q, false, &t);
    EXPECT_TRUE(s.tuned);
    EXPECT_EQ(m.kernels[size_t(s.index)].co_name, "f4gemm_bf16_per1x32Fp4_BpreShuffle_192x256.co");
    // Another CU count: the heuristic (which picks 256x256 at 8192^3 on 256 CUs; here 132).
    q.num_cu = 100;
    s = select(m, "", q, false, &t);
    EXPECT_FALSE(s.tuned);
    // Split-capable entry keeps its split.
    q = HeuristicQuery{256, 1024, 4096, 256, 0, 1};
    s = select(m, "", q, false, &t);
    EXPECT_TRUE(s.tuned);
    EXPECT_EQ(m.kernels[size_t(s.index)].co_name, "f4gemm_bf16_per1x32Fp4_BpreShuffle_128x512.co");
    EXPECT_EQ(s.log2_k_split, 1);
    // An explicit --splitk or --kernel bypasses the table.
    q.log2_k_split = 2;
    EXPECT_FALSE(select(m, "", q, false, &t).tuned);
    q.log2_k_split = 0;
    s = select(m, "f4gemm_bf16_per1x32Fp4_BpreShuffle_64x128.co", q, false, &t);
    EXPECT_FALSE(s.tuned);
    EXPECT_EQ(m.kernels[size_t(s.index)].co_name, "f4gemm_bf16_per1x32Fp4_BpreShuffle_64x128.co");
    // A tuned kernel the manifest lacks is ignored.
    const TunedTable stale =
        parse_tuned("cu_num,M,N,K,kernelName,splitK\n256,8192,8192,8192,gone.co,0\n", "s.csv");
    q = HeuristicQuery{8192, 8192, 8192, 256, 0, 1};
    s = select(m, "", q, false, &stale);
    EXPECT_FALSE(s.tuned);
    EXPECT_EQ(m.kernels[size_t(s.index)].co_name, "f4gemm_bf16_per1x32Fp4_BpreShuffle_256x256.co");
}

namespace {
// A manifest shaped like our built sm_90a one (rows in the order CMake writes them).
Manifest sm90_manifest() {
    return parse_manifest(
        "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,scale_"
        "layout\n"
        "64,64,1,0,simple,simple.cubin,sm_90a,256,17920,sm90v1,plain,plain\n"
        "128,128,1,0,ws128x128,ws128x128.cubin,sm_90a,384,1,sm90v1,plain,plain\n"
        "128,64,1,0,ws128x64,ws128x64.cubin,sm_90a,384,1,sm90v1,plain,plain\n"
        "64,128,1,0,ws64x128,ws64x128.cubin,sm_90a,256,1,sm90v1,plain,plain\n"
        "16,128,1,0,swap16,swap16.cubin,sm_90a,384,1,sm90v1,plain,plain\n"
        "32,128,1,0,swap32,swap32.cubin,sm_90a,384,1,sm90v1,plain,plain\n"
        "64,128,1,0,swap64,swap64.cubin,sm_90a,384,1,sm90v1,plain,plain\n",
        "sm90.csv");
}
std::string pick(const Manifest& m, int mm, int n, int k, bool explain = false, Selection* out = nullptr) {
    const Selection s = select(m, "", HeuristicQuery{mm, n, k, 132, 0, 0}, explain);
    if (out) *out = s;
    return m.kernels[size_t(s.index)].knl_name;
}
}  // namespace

TEST(Sm90Policy, SmallestTileCoveringMIsPreferred) {
    const Manifest m = sm90_manifest();
    // Decode: aiter's rule alone picks the 128-row tile (measured 2x slower, PERF.md entry 5).
    EXPECT_EQ(m.kernels[size_t(select_kernel(m, HeuristicQuery{16, 16384, 16384, 132, 0, 0}).index)].knl_name,
              "ws128x128");
    EXPECT_EQ(pick(m, 1, 16384, 16384), "swap16");
    EXPECT_EQ(pick(m, 16, 8192, 8192), "swap16");
    EXPECT_EQ(pick(m, 17, 4096, 4096), "swap32");
    // Where the tallest tile covers M or nothing does, aiter's rule decides among all.
    EXPECT_EQ(pick(m, 128, 16384, 16384), "ws128x128");
    EXPECT_EQ(pick(m, 8192, 8192, 8192), "ws128x128");
    Selection s;
    pick(m, 1, 4096, 4096, true, &s);
    ASSERT_EQ(s.heuristic.steps.size(), m.kernels.size());
    int skipped = 0;
    for (const HeuristicStep& st : s.heuristic.steps) {
        ASSERT_GE(st.index, 0);
        ASSERT_LT(st.index, int(m.kernels.size()));
        if (st.reason.find("smallest tile covering M") != std::string::npos) {
            ++skipped;
            EXPECT_GT(m.kernels[size_t(st.index)].tile_m, 16);
        }
    }
    EXPECT_EQ(skipped, 6);
}

TEST(Sm90Policy, PrepassRowsKeepThePolicy) {
    // The built manifest holds an sm90pp1 row; the policy applies to every non-aiter ABI, so a
    // pre-pass row does not turn it off (with it off, M = 16 would get the 128-row tile as above).
    Manifest m = sm90_manifest();
    const Manifest pp = parse_manifest(
        "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,"
        "scale_layout\n"
        "128,128,0,0,pp128x128,pp128x128.cubin,sm_90a,384,198752,sm90pp1,plain,plain\n",
        "pp.csv");
    m.kernels.push_back(pp.kernels[0]);
    EXPECT_EQ(pick(m, 1, 16384, 16384), "swap16");
    EXPECT_EQ(pick(m, 16, 8192, 8192), "swap16");
    EXPECT_EQ(pick(m, 17, 4096, 4096), "swap32");
    // Same tile as ws128x128: an exact tie in aiter's rule, which keeps the earlier row.
    EXPECT_EQ(pick(m, 128, 16384, 16384), "ws128x128");
    EXPECT_EQ(pick(m, 8192, 8192, 8192), "ws128x128");
    // A manifest of pre-pass kernels alone is ours too: the 128-row tile is dropped for M = 16.
    Manifest only = m;
    only.kernels = {pp.kernels[0], m.kernels[4]};  // pp128x128, swap16
    EXPECT_EQ(pick(only, 16, 8192, 8192), "swap16");
    EXPECT_EQ(pick(only, 8192, 8192, 8192), "pp128x128");
    // Named, it is selected whatever the shape.
    const Selection named = select(m, "pp128x128", HeuristicQuery{16, 8192, 8192, 132, 0, 0}, false);
    EXPECT_EQ(m.kernels[size_t(named.index)].knl_name, "pp128x128");
    EXPECT_EQ(named.log2_k_split, 0);
}

TEST(Sm90Policy, MaxMOffersAKernelOnlyUpToItsM) {
    // pab before pp, same tile, max_m 256 (kernels/sm90a/kernels.json until session 32): the twin rule keeps
    // pab up to M = 256 and pp above; the skip is named in --explain.
    Manifest m = sm90_manifest();
    const Manifest pre = parse_manifest(
        "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,scale_layout,"
        "max_m\n"
        "128,128,0,0,pab128x128,pab128x128.cubin,sm_90a,384,153120,sm90pa1,bitplane,plain,256\n"
        "128,128,0,0,pp128x128,pp128x128.cubin,sm_90a,384,198752,sm90pp1,plain,plain,\n",
        "pre.csv");
    m.kernels.insert(m.kernels.begin() + 1, pre.kernels.begin(), pre.kernels.end());
    EXPECT_EQ(pick(m, 128, 16384, 16384), "pab128x128");
    EXPECT_EQ(pick(m, 256, 16384, 16384), "pab128x128");
    EXPECT_EQ(pick(m, 257, 16384, 16384), "pp128x128");
    EXPECT_EQ(pick(m, 8192, 8192, 8192), "pp128x128");
    EXPECT_EQ(pick(m, 16, 8192, 8192), "swap16");  // the covering-tile rule still comes first
    Selection s;
    pick(m, 512, 16384, 16384, true, &s);
    int named = 0;
    for (const HeuristicStep& st : s.heuristic.steps)
        if (st.reason.find("skip: max_m 256 < M") != std::string::npos) {
            ++named;
            EXPECT_EQ(m.kernels[size_t(st.index)].knl_name, "pab128x128");
        }
    EXPECT_EQ(named, 1);
    // Named or tuned, max_m does not apply: it is a heuristic preference, not a limit of the kernel.
    const Selection forced = select(m, "pab128x128", HeuristicQuery{4096, 4096, 4096, 132, 0, 0}, false);
    EXPECT_EQ(m.kernels[size_t(forced.index)].knl_name, "pab128x128");
}

#ifdef F4GEMM_SM90A_BUILD_DIR
// The untuned policy against measured best picks. A table (tests/data/*_measured.csv: M,N,K,kernel,split,us,
// screen) holds cells timed on every kernel and split that can serve them (the H200, 132 SMs). For each cell
// and mode the policy, with no tuned table, must pick a kernel and split whose measured time is within 10% of
// the best measured time among the kernels the mode allows. Returns the number of (cell, mode) pairs checked.
namespace {

int check_untuned_picks(const Manifest& m, const std::string& table, size_t cells_expected) {
    std::ifstream f(std::string(F4GEMM_SOURCE_DIR) + "/tests/data/" + table);
    EXPECT_TRUE(f.good()) << table;
    struct Time {
        std::string kernel;
        int split;
        double us;
    };
    std::map<std::array<int, 3>, std::vector<Time>> cells;
    std::string line;
    bool header = true;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        if (header) {
            EXPECT_EQ(line, "M,N,K,kernel,split,us,screen") << table;
            header = false;
            continue;
        }
        std::stringstream ss(line);
        std::string c[7];
        for (std::string& x : c) std::getline(ss, x, ',');
        cells[{std::stoi(c[0]), std::stoi(c[1]), std::stoi(c[2])}].push_back(
            {c[3], std::stoi(c[4]), std::stod(c[5])});
    }
    EXPECT_EQ(cells.size(), cells_expected) << table;
    int checked = 0, at_best = 0;
    double worst = 1.0;
    std::string worst_at;
    for (const Accum accum : {Accum::Exact, Accum::Promoted}) {
        for (const auto& [shape, times] : cells) {
            const std::string at = std::string(accum_name(accum)) + " " + std::to_string(shape[0]) + "x" +
                                   std::to_string(shape[1]) + "x" + std::to_string(shape[2]);
            double best = 1e30;
            for (const Time& t : times) {
                const int i = find_kernel(m, t.kernel);
                EXPECT_GE(i, 0) << t.kernel;
                // the best the manifest can run: a kernel the mode allows, split only where it splits
                if (i >= 0 && accum_allows(accum, m.kernels[size_t(i)].accum) &&
                    (t.split == 0 || m.kernels[size_t(i)].split_k))
                    best = std::min(best, t.us);
            }
            const Selection s =
                select(m, "", HeuristicQuery{shape[0], shape[1], shape[2], 132, 0, 0}, false, nullptr, accum);
            const std::string& picked = m.kernels[size_t(s.index)].co_name;
            const auto hit = std::find_if(times.begin(), times.end(), [&](const Time& t) {
                return t.kernel == picked && t.split == s.log2_k_split;
            });
            if (hit == times.end()) {
                ADD_FAILURE() << at << ": the policy picks " << picked << " split " << s.log2_k_split
                              << ", which " << table << " did not time";
                continue;
            }
            EXPECT_LE(hit->us, 1.10 * best) << at << ": " << picked << " split " << s.log2_k_split << " "
                                            << hit->us << " us, best " << best;
            ++checked;
            at_best += hit->us <= best;
            if (hit->us / best > worst) worst = hit->us / best, worst_at = at + " " + picked;
        }
    }
    // The margin the 10% leaves, for whoever changes the policy next (ctest -V prints it).
    std::printf(
        "%s: %d (cell, mode) pairs, the measured best picked on %d, the worst pick %.3fx the best (%s)\n",
        table.c_str(), checked, at_best, worst, worst_at.c_str());
    return checked;
}

// The manifest this build wrote beside its sm_90a cubins, or nullopt (a build without nvcc has none).
std::optional<Manifest> built_manifest() {
    try {
        return load_manifest(F4GEMM_SM90A_BUILD_DIR);
    } catch (const Error&) {
        return std::nullopt;
    }
}

}  // namespace

// GTEST_SKIP returns from the function it is written in, so the skip is a macro the tests expand.
#define F4GEMM_BUILT_MANIFEST_OR_SKIP(m)                                                       \
    const std::optional<Manifest> m##_loaded = built_manifest();                               \
    if (!m##_loaded) GTEST_SKIP() << "no built sm_90a manifest in " << F4GEMM_SM90A_BUILD_DIR; \
    const Manifest& m = *m##_loaded

// "Without the tuned table the selection still picks, on every grid cell M >= 128, a kernel within 10% of the
// best one in the manifest": tests/data/grid_measured.csv holds every serving-grid cell M >= 128 timed on the
// five kernels that can serve it. The time model (docs/HEURISTIC.md) was fitted to these times, so this
// checks that its constants and the rules around it reproduce them; the cells' tuned rows are not used.
TEST(Sm90Policy, UntunedPicksAreWithinTenPercentOfTheMeasuredBestOnTheGrid) {
    F4GEMM_BUILT_MANIFEST_OR_SKIP(m);
    EXPECT_EQ(check_untuned_picks(m, "grid_measured.csv", 20), 40);
}

// Off the grid (issue: "kernels at FP8 speed from M = 128 up", any M): the four serving N x K at M = 384 and
// 768, timed on every kernel offered there, pab_128x128(_p) in every split (tests/data/offgrid_measured.csv).
// The time model's per-wave term (PERF.md entry 76) is what lets it split past one wave where that wins: 384
// x 8192 x 28672, 192 tiles in two waves, runs in 2 splits 0.84x (exact) and 0.85x (promoted) the unsplit
// time; before, the pick there was 1.19x and 1.25x the best.
TEST(Sm90Policy, UntunedPicksAreWithinTenPercentOfTheMeasuredBestOffTheGrid) {
    F4GEMM_BUILT_MANIFEST_OR_SKIP(m);
    EXPECT_EQ(check_untuned_picks(m, "offgrid_measured.csv", 8), 16);
}

// The time model splits K for the A pre-pass tiles (PERF.md entry 59) where 2^L times their tiles fit one
// wave: at 128 x 8192 x 28672 (64 tiles) the exact pick is pab_128x128 in 2 splits (121.4 us measured in
// session 25, 101.8 in session 29, against 174.8 for the swap kernel the rules pick), at 128 x 4096 x 14336
// promoted pab_128x128_p in 4 (45.5 against 57.4 for cv_128x64_p); where the tiles already fill the SMs (128
// x 16384^2, 128 tiles) or a split leaves a second wave (128 x 10240 x 8192: 80 tiles; since session 26 the
// exact cv_128x80 runs there) nothing splits; a caller's own split is kept.
TEST(Sm90Policy, TheTimeModelSplitsTheAPrePassTilesWhereTheirTilesLeaveSmsIdle) {
    F4GEMM_BUILT_MANIFEST_OR_SKIP(m);
    const auto pick = [&](int mm, int n, int k, Accum accum, int splitk, std::string* why) {
        const Selection s = select(m, "", HeuristicQuery{mm, n, k, 132, splitk, 0}, true, nullptr, accum);
        why->clear();
        for (const HeuristicStep& st : s.heuristic.steps) *why += st.reason + "\n";
        return s;
    };
    std::string why;
    Selection s = pick(128, 8192, 28672, Accum::Exact, 0, &why);
    EXPECT_EQ(m.kernels[size_t(s.index)].knl_name, "f4gemm_sm90a_pab_128x128");
    EXPECT_EQ(s.log2_k_split, 1);
    // the rules' pick is the exact cv_128x64 since session 26 (its 128 tiles fill the SMs; 108.7 us in
    // tests/data/grid_measured.csv, pab_128x128 in 2 splits 101.8)
    EXPECT_NE(why.find("time model: 97.1 us predicted in 2 splits of K against 106.5 for "
                       "f4gemm_sm90a_cv_128x64.cubin"),
              std::string::npos)
        << why;
    // --explain lists every prediction the model weighed, one line each (session 33)
    EXPECT_NE(why.find("time model: 97.1 us predicted in 2 splits of K\n"), std::string::npos) << why;
    EXPECT_NE(why.find("time model: 106.5 us predicted\n"), std::string::npos) << why;
    s = pick(128, 4096, 14336, Accum::Promoted, 0, &why);
    EXPECT_EQ(m.kernels[size_t(s.index)].knl_name, "f4gemm_sm90a_pab_128x128_p");
    EXPECT_EQ(s.log2_k_split, 2);
    for (const int n :
         {16384, 10240}) {  // 10240: the exact cv_128x80's 128 tiles (session 26, PERF.md entry 61)
        s = pick(128, n, n == 16384 ? 16384 : 8192, Accum::Exact, 0, &why);
        EXPECT_EQ(m.kernels[size_t(s.index)].knl_name,
                  n == 16384 ? "f4gemm_sm90a_pab_128x128" : "f4gemm_sm90a_cv_128x80")
            << n;
        EXPECT_EQ(s.log2_k_split, 0) << n;
    }
    s = pick(128, 8192, 28672, Accum::Exact, 2, &why);  // --splitk 2: the caller's split, no model split
    EXPECT_EQ(s.log2_k_split, 2);
}

// Decode (issue: "with no tuned table, every decode cell of the grid and of other shapes runs within 10% of
// the best kernel in the manifest; the rule for M <= 64 takes N and K into account"): tests/data/
// decode_measured.csv, the grid's M = 1, 16, 32, 64 cells and 35 cells of other model shapes (M = 1..64, the
// bench's 24 off-grid decode cells among them), every kernel and split that can serve them. The decode model
// (M <= 16), the A pre-pass twin rule, the split rule, half-height tiles (M = 33..64) and the decode kernels
// where the swap kernel leaves most SMs idle (M <= 64) pick there.
TEST(Sm90Policy, UntunedPicksAreWithinTenPercentOfTheMeasuredBestOnDecodeCells) {
    F4GEMM_BUILT_MANIFEST_OR_SKIP(m);
    EXPECT_EQ(check_untuned_picks(m, "decode_measured.csv", 64), 128);
}

// The manifest kernels/sm90a/manifest.cmake wrote in this build (from kernels.json and each kernel's
// exports): every row carries the ABI of its family and the packed weight's B layout, and the selection
// policy picks what docs/HEURISTIC.md says on the mid-M and large shapes.
// docs/ABI_SM90.md's table of the shipped manifest names every row this build wrote, with the row's tile,
// split flag, threads and shared memory (the kernels export them; the table is written by hand), in manifest
// order.
TEST(Sm90Policy, AbiDocTableListsEveryShippedRow) {
    F4GEMM_BUILT_MANIFEST_OR_SKIP(m);
    std::ifstream f(std::string(F4GEMM_SOURCE_DIR) + "/docs/ABI_SM90.md");
    ASSERT_TRUE(f.good());
    std::vector<std::string> lines;
    for (std::string line; std::getline(f, line);) lines.push_back(line);
    size_t last = 0;
    for (const KernelConfig& k : m.kernels) {
        const std::string head = "| " + k.knl_name + " | ";
        const auto it = std::find_if(lines.begin(), lines.end(),
                                     [&](const std::string& l) { return l.rfind(head, 0) == 0; });
        ASSERT_NE(it, lines.end()) << k.knl_name << " is not in docs/ABI_SM90.md's table of shipped rows";
        const std::string cells = fmt::format("| {} x {} | {} | {} | {} |", k.tile_m, k.tile_n,
                                              k.split_k ? 1 : 0, k.threads, k.smem_bytes);
        EXPECT_NE(it->find(cells), std::string::npos) << k.knl_name << ": the row should read " << cells;
        const size_t at = size_t(it - lines.begin());
        EXPECT_GT(at, last) << k.knl_name << ": the table lists the rows in manifest (priority) order";
        last = at;
    }
}

TEST(Sm90Policy, BuiltManifestRowsMatchTheirFamily) {
    F4GEMM_BUILT_MANIFEST_OR_SKIP(m);
    int pab = -1, pp = -1, promoted = 0;
    for (size_t i = 0; i < m.kernels.size(); ++i) {
        const KernelConfig& k = m.kernels[i];
        const auto has = [&](const char* s) { return k.knl_name.find(s) != std::string::npos; };
        EXPECT_EQ(k.arch, "sm_90a") << k.knl_name;
        EXPECT_EQ(k.b_layout, BLayout::Frag16S)
            << k.knl_name << ": every shipped kernel reads the packed weight";
        const bool exact = k.accum == Accum::Exact;
        promoted += !exact;
        if (has("_pab_")) {
            EXPECT_EQ(k.abi, KernelAbi::Sm90pa1) << k.knl_name;
            if (exact && k.tile_m == 128) {
                pab = int(i);
                EXPECT_EQ(k.max_m, 768) << k.knl_name;  // session 32's H200 re-time (PERF.md entry 72)
            }
            if (!exact && k.tile_m == 128) {
                EXPECT_EQ(k.max_m, 512) << k.knl_name;
            }
            if (k.tile_m == 64) {  // batched decode (M = 33..64), both modes
                EXPECT_EQ(k.max_m, 64) << k.knl_name;
                EXPECT_EQ(k.min_m, 33) << k.knl_name;
            }
        } else if (has("_cv_")) {  // converter warpgroups, both modes since session 26 (EXACT 1): batched
                                   // decode (M = 33..64) with 64 activation rows per CTA, M = 128..256 with
                                   // 128
            EXPECT_EQ(k.abi, KernelAbi::Sm90pa1) << k.knl_name;
            const bool named_p =
                k.knl_name.size() > 2 && k.knl_name.compare(k.knl_name.size() - 2, 2, "_p") == 0;
            EXPECT_EQ(k.accum, named_p ? Accum::Promoted : Accum::Exact)
                << k.knl_name << ": promoted ones end in _p";
            EXPECT_EQ(k.max_m, k.tile_m == 64 ? 64 : 256) << k.knl_name;
            EXPECT_EQ(k.min_m, k.tile_m == 64 ? 33 : 128) << k.knl_name;
            EXPECT_GT(k.cost_wave_k, 0.0) << k.knl_name << ": the time model chooses among the cv tiles";
        } else if (has("_pp_")) {
            if (exact) pp = int(i);
            EXPECT_EQ(k.abi, KernelAbi::Sm90pp1) << k.knl_name;
        } else {
            EXPECT_EQ(k.abi, KernelAbi::Sm90v1) << k.knl_name;
        }
        if (!has("_pab_") && !has("_cv_") &&
            exact) {  // the wgmma decode tiles serve M <= 64 (timed there in
                      // session 23); the 16-row split twin stops at its height
            EXPECT_EQ(k.max_m, has("_wg") ? (has("_wg12_s") ? 16 : 64) : 0) << k.knl_name;
        }
        if (exact && k.tile_m != 64 && !has("_cv_")) {
            EXPECT_EQ(k.min_m, 0) << k.knl_name;
        }
    }
    ASSERT_GE(pab, 0);
    ASSERT_GE(pp, 0);
    EXPECT_LT(m.kernels[size_t(pab)].priority, m.kernels[size_t(pp)].priority)
        << "pab must be preferred to its same-tile twin pp up to its max_m";
    EXPECT_EQ(pick(m, 128, 16384, 16384), "f4gemm_sm90a_pab_128x128");
    EXPECT_EQ(pick(m, 256, 16384, 16384), "f4gemm_sm90a_pab_128x128");
    // the A pre-pass tile up to M = 768 since session 32 (PERF.md entry 72: the best exact kernel of every
    // grid N x K at M = 384, 512 and of three at 768 on the H200), the pre-pass kernel from there; at 768 x
    // 28672 x 8192 the time model takes pp since session 33 (entry 76; measured 575.7 us against 579.9 for
    // pab)
    EXPECT_EQ(pick(m, 384, 16384, 16384), "f4gemm_sm90a_pab_128x128");
    EXPECT_EQ(pick(m, 768, 16384, 16384), "f4gemm_sm90a_pab_128x128");
    EXPECT_EQ(pick(m, 768, 28672, 8192), "f4gemm_sm90a_pp_128x128");
    EXPECT_EQ(pick(m, 1024, 28672, 8192), "f4gemm_sm90a_pp_128x128");
    EXPECT_EQ(pick(m, 8192, 8192, 8192), "f4gemm_sm90a_pp_128x128");
    // decode (the decode model, docs/HEURISTIC.md): the 128-row wgmma tile where its tiles fill the SMs in
    // one round (N = 16384: 128 tiles; it is the two-CTA 16 x 64 tile's twin and comes first), the 12-warp
    // one-CTA 16 x 64 tile where 64-row tiles do (N = 8192: 128 tiles on 132 SMs), the 16 x 32 tile where
    // even that leaves SMs idle (N = 4096: 16 x 64 tiles fill 64 SMs)
    EXPECT_EQ(pick(m, 1, 16384, 16384), "f4gemm_sm90a_dec_16x128_wg12");
    EXPECT_EQ(pick(m, 17, 16384, 16384), "f4gemm_sm90a_dec_32x128_wg12_c2");
    EXPECT_NE(pick(m, 33, 8192, 8192), "f4gemm_sm90a_dec_16x128_wg12") << "max_m 32";
    EXPECT_EQ(pick(m, 16, 8192, 8192), "f4gemm_sm90a_dec_16x64_w12");
    EXPECT_EQ(pick(m, 8, 4096, 11008), "f4gemm_sm90a_dec_16x32_m2");
    // tiles sized to the SM count: 128 tiles of 80 rows at N = 10240; at 28672 two rounds of 128-row wgmma
    // tiles (decode_speed 1.25) against two of the 112-row mma.sync tiles, and the 112-row tile from M = 17
    // (max_m 16)
    EXPECT_EQ(pick(m, 1, 10240, 8192), "f4gemm_sm90a_dec_16x80_w12");
    EXPECT_EQ(pick(m, 16, 28672, 8192), "f4gemm_sm90a_dec_16x128_wg12");
    // the decode model's split (decode_split): where the wgmma tile's 64 tiles leave half of the SMs idle and
    // K keeps 8192 per split, its split twin in 2 (128 CTAs; PERF.md entry 48: 46.3 us against 51.1 for the
    // best unsplit kernel at 16 x 8192 x 28672); not at K = 8192, nor where its tiles already fill the SMs
    Selection ds;
    EXPECT_EQ(pick(m, 16, 8192, 28672, true, &ds), "f4gemm_sm90a_dec_16x128_wg12_s");
    EXPECT_EQ(ds.log2_k_split, 1);
    EXPECT_TRUE(std::any_of(ds.heuristic.steps.begin(), ds.heuristic.steps.end(),
                            [](const HeuristicStep& st) {
                                return st.accepted && st.reason.find("in 2 splits of K") != std::string::npos;
                            }))
        << "--explain names the split";
    EXPECT_EQ(pick(m, 16, 8192, 8192, false, &ds), "f4gemm_sm90a_dec_16x64_w12");
    EXPECT_EQ(ds.log2_k_split, 0);
    EXPECT_EQ(pick(m, 1, 16384, 16384, false, &ds), "f4gemm_sm90a_dec_16x128_wg12");
    EXPECT_EQ(ds.log2_k_split, 0);
    // M = 17..32: the dec kernels where the 128-row tiles' CTAs fill at most two thirds of the SMs (64 tiles
    // at N = 8192, K too short to split: the 16-row wgmma tile over two row tiles, 128 CTAs, PERF.md entry
    // 54; 80 at N = 10240), the 32-row ones where their tiles fill the SMs in one round, the 32-row wgmma
    // decode tile from 108 tiles up, its split twin where K >= 14336 and its tiles leave SMs idle
    EXPECT_EQ(pick(m, 32, 8192, 8192), "f4gemm_sm90a_dec_16x128_wg12");
    EXPECT_EQ(pick(m, 32, 4096, 4096).rfind("f4gemm_sm90a_dec_16x", 0), 0u);
    EXPECT_EQ(pick(m, 17, 1024, 4096).rfind("f4gemm_sm90a_dec_16x", 0), 0u);
    EXPECT_EQ(pick(m, 32, 10240, 8192), "f4gemm_sm90a_dec_32x80_w8");
    EXPECT_EQ(pick(m, 32, 13824, 5120), "f4gemm_sm90a_dec_32x128_wg12_c2");
    // 2 splits: 128 CTAs (64.3 us against 75.2 for the swap kernel in 2 at M = 32, entry 54); 4 at N = 4096
    EXPECT_EQ(pick(m, 32, 8192, 28672, false, &ds), "f4gemm_sm90a_dec_32x128_wg12_c2_s");
    EXPECT_EQ(ds.log2_k_split, 1);
    EXPECT_EQ(pick(m, 25, 8192, 28672), "f4gemm_sm90a_dec_32x128_wg12_c2_s");
    EXPECT_EQ(pick(m, 24, 4096, 14336, false, &ds), "f4gemm_sm90a_dec_32x128_wg12_c2_s");
    EXPECT_EQ(ds.log2_k_split, 2);
    EXPECT_EQ(pick(m, 32, 8192, 8192, false, &ds), "f4gemm_sm90a_dec_16x128_wg12") << "K < 14336: no split";
    EXPECT_EQ(ds.log2_k_split, 0);
    // M = 17..24: the 32-row wgmma decode tile where 128-row tiles fill the SMs (0.83-0.89x the swap kernel,
    // PERF.md entries 48, 49), the 32-row mma.sync tile where they do not (no yield to the swap kernel: wgmma
    // N 24)
    EXPECT_EQ(pick(m, 24, 16384, 16384), "f4gemm_sm90a_dec_32x128_wg12_c2");
    EXPECT_EQ(pick(m, 17, 28672, 8192), "f4gemm_sm90a_dec_32x128_wg12_c2");
    EXPECT_EQ(pick(m, 24, 8192, 28672), "f4gemm_sm90a_dec_32x128_wg12_c2_s");
    EXPECT_EQ(pick(m, 25, 16384, 16384), "f4gemm_sm90a_dec_32x128_wg12_c2");
    EXPECT_EQ(pick(m, 32, 28672, 8192), "f4gemm_sm90a_dec_32x128_wg12_c2");
    // M = 33..64: the exact converter tiles (session 26, PERF.md entry 61; the A pre-pass tile before) where
    // their 128-row tiles fill more than half of the SMs, the 80-row one at N = 10240 by the time model; the
    // wgmma decode tiles where their CTAs, row tiles weighed by their rows, fill more than half of the SMs in
    // one wave (the one with the most CTAs: the 16-row tile at N = 4096, the 32-row tile at N = 5120..8192
    // and at 33..48 x 10240, PERF.md entry 57)
    // Since session 32 (PERF.md entry 73: the 64-row A pre-pass tiles' 256-K stages and a time model) the
    // exact A pre-pass tile where the time model predicts it faster (77.0 us against 91.1 for cv_64x128;
    // measured 76.5 against 81.6)
    EXPECT_EQ(pick(m, 64, 16384, 16384), "f4gemm_sm90a_pab_64x128");
    EXPECT_EQ(pick(m, 64, 10240, 8192), "f4gemm_sm90a_cv_64x80");  // 160 CTAs of the 32-row tile: 2 waves
    // Since session 27 (PERF.md entry 62: the A pre-pass split over K) an exact A pre-pass tile that fills
    // more than half of the SMs in one wave keeps its cell as the promoted ones did (48 x 10240 x 8192:
    // cv_64x80 37.1 us against 43.8 for the 32-row wgmma tile), and the 64-row A pre-pass tile competes with
    // the wgmma decode tiles in its split (64 x 8192 x 28672: 82.3 us in 2 splits against 93.0)
    EXPECT_EQ(pick(m, 33, 10240, 8192), "f4gemm_sm90a_cv_64x80");
    Selection pa;
    EXPECT_EQ(pick(m, 64, 8192, 28672, false, &pa), "f4gemm_sm90a_pab_64x128");
    EXPECT_EQ(pa.log2_k_split, 1);
    // since session 32 in 2 splits of 4096 (3584 of K per split allowed; measured 29.8 us against 33.0 for
    // dec_32x128_wg12_c2)
    Selection pa2;
    EXPECT_EQ(pick(m, 64, 8192, 8192, false, &pa2), "f4gemm_sm90a_pab_64x128");
    EXPECT_EQ(pa2.log2_k_split, 1);
    EXPECT_EQ(pick(m, 64, 4096, 4096), "f4gemm_sm90a_dec_16x128_wg12");
    EXPECT_EQ(pick(m, 64, 5120, 5120), "f4gemm_sm90a_dec_32x128_wg12_c2");  // the 16-row tile: 160 CTAs
    EXPECT_EQ(pick(m, 64, 1024, 4096), "f4gemm_sm90a_dec_16x32_m2");  // 32 CTAs fill a quarter: no switch
    Selection hh;
    // 2 row tiles of 32 x 32 weight tiles in 2 splits, 128 CTAs, against the 64-row A pre-pass tile's 32
    // tiles in 4 splits of 3584, 128 CTAs: the taller tile (since session 32; 28.8 us measured against 31.3)
    pick(m, 64, 4096, 14336, false, &hh);
    EXPECT_EQ(m.kernels[size_t(hh.index)].knl_name, "f4gemm_sm90a_pab_64x128");
    EXPECT_EQ(hh.log2_k_split, 2);
    // --explain names the decode model's choice and the split rule's split.
    const auto steps_of = [&](int mm, int n, int k, Accum accum, Selection* out) {
        *out = select(m, "", HeuristicQuery{mm, n, k, 132, 0, 0}, true, nullptr, accum);
        std::string all;
        for (const HeuristicStep& st : out->heuristic.steps) all += st.reason + "\n";
        return all;
    };
    Selection why_sel;
    EXPECT_NE(steps_of(32, 8192, 8192, Accum::Exact, &why_sel).find("decode model: 86289 against 103765"),
              std::string::npos);
    EXPECT_EQ(why_sel.log2_k_split, 0);
    EXPECT_NE(steps_of(1, 8192, 8192, Accum::Exact, &why_sel).find("decode model: "), std::string::npos);
    EXPECT_EQ(m.kernels[size_t(why_sel.index)].knl_name, "f4gemm_sm90a_dec_16x64_w12");
    EXPECT_EQ(why_sel.log2_k_split, 0);
    // The decode model's split of the 32-row wgmma tile: 64 tiles at N = 8192 split K = 28672 in two. The
    // unsplit tile does not yield to the split-capable swap kernel of its tile (as it did before its split
    // twin shipped), at M = 32 nor at M = 24.
    const std::string split = steps_of(32, 8192, 28672, Accum::Exact, &why_sel);
    EXPECT_NE(split.find("decode model: 169301 in 2 splits of K against 322219"), std::string::npos) << split;
    EXPECT_EQ(m.kernels[size_t(why_sel.index)].knl_name, "f4gemm_sm90a_dec_32x128_wg12_c2_s");
    EXPECT_EQ(why_sel.log2_k_split, 1);
    EXPECT_EQ(split.find("it cannot split K"), std::string::npos) << split;
    const std::string no_yield = steps_of(24, 8192, 28672, Accum::Exact, &why_sel);
    EXPECT_EQ(no_yield.find("it cannot split K"), std::string::npos) << no_yield;
    EXPECT_EQ(m.kernels[size_t(why_sel.index)].knl_name, "f4gemm_sm90a_dec_32x128_wg12_c2_s");
    // Exact, N = 8192, as promoted below since session 26: the A pre-pass tile and the swap kernel give way
    // to the exact converter tile of their 64 x 128 tile (priority), which does not yield to the swap kernel,
    // since the 80-row converter tile's 103 CTAs fill more than half of the SMs; aiter's rule then takes the
    // 32-row wgmma decode tile (33.0 us measured against 48.7 for cv_64x128, docs/results/2026-12-02e/call4).
    const std::string half = steps_of(64, 8192, 8192, Accum::Exact, &why_sel);
    EXPECT_NE(half.find("skip: same tile as f4gemm_sm90a_cv_64x128.cubin"), std::string::npos) << half;
    EXPECT_EQ(half.find("fill at most half"), std::string::npos) << half;
    // The wgmma decode tiles' rule names its switch; an A pre-pass tile that fills the SMs is not switched.
    const std::string wg = steps_of(64, 8192, 28672, Accum::Exact, &why_sel);
    EXPECT_NE(
        wg.find("wgmma decode tiles and the 64-row A pre-pass tile: 128 CTAs weighed by their rows in 2 "
                "splits of K fill more than half of 132 CTA slots in one wave; f4gemm_sm90a_pab_64x128.cubin "
                "runs instead of f4gemm_sm90a_dec_32x128_wg12_c2.cubin"),
        std::string::npos)
        << wg;
    const std::string keep = steps_of(48, 10240, 8192, Accum::Exact, &why_sel);
    EXPECT_EQ(keep.find("wgmma decode tiles"), std::string::npos) << keep;
    EXPECT_EQ(m.kernels[size_t(why_sel.index)].knl_name, "f4gemm_sm90a_cv_64x80");
    steps_of(64, 8192, 8192, Accum::Exact, &why_sel);
    EXPECT_EQ(m.kernels[size_t(why_sel.index)].knl_name, "f4gemm_sm90a_pab_64x128");
    EXPECT_EQ(why_sel.log2_k_split, 1);
    if (promoted) {
        // Promoted, N = 8192: the converter kernel's 64-row tiles fill the SMs (128 tiles), so the A pre-pass
        // tiles stay and the time model chooses among them (cv_64x64_p until session 32: 93.3 us against
        // 104.4 for the swap kernel in 2 splits, PERF.md entry 37; since, pab_64x128_p in 2 splits, 85.5 us
        // predicted against 89.5, measured 68.5 against 76.8, entry 73); at N = 4096 they fill half and yield
        // as in the exact mode.
        const std::string cv = steps_of(64, 8192, 28672, Accum::Promoted, &why_sel);
        EXPECT_EQ(m.kernels[size_t(why_sel.index)].knl_name, "f4gemm_sm90a_pab_64x128_p");
        EXPECT_EQ(why_sel.log2_k_split, 1);
        EXPECT_NE(cv.find("time model: "), std::string::npos) << cv;
        EXPECT_EQ(cv.find("it cannot split K"), std::string::npos) << cv;
        steps_of(64, 8192, 8192, Accum::Promoted, &why_sel);
        EXPECT_EQ(m.kernels[size_t(why_sel.index)].knl_name, "f4gemm_sm90a_cv_64x64_p");
        const std::string small = steps_of(64, 4096, 4096, Accum::Promoted, &why_sel);
        EXPECT_NE(
            small.find("64 tiles fill at most half of the 132 CTA slots and it cannot split K; a swap kernel "
                       "of its height can"),
            std::string::npos)
            << small;
        EXPECT_NE(small.find("half-height tiles: 32 CTAs of f4gemm_sm90a_ws_swap_64x128_fs_p"),
                  std::string::npos)
            << small;
        EXPECT_EQ(m.kernels[size_t(why_sel.index)].knl_name, "f4gemm_sm90a_dec_16x128_wg12");
        // the converter-warpgroup kernel ahead of its same-tile twin pab_64x128_p (priority) in the rules;
        // the time model then takes pab_64x128_p (since session 32; session 33's per-wave model: 70.4 us
        // predicted against 71.4, measured 72.1 against 73.0)
        const std::string tm = steps_of(64, 16384, 16384, Accum::Promoted, &why_sel);
        EXPECT_NE(tm.find("skip: same tile as f4gemm_sm90a_cv_64x128_p.cubin"), std::string::npos) << tm;
        EXPECT_NE(tm.find("time model: 70.4 us predicted against 71.4 for f4gemm_sm90a_cv_64x128_p.cubin"),
                  std::string::npos)
            << tm;
        EXPECT_EQ(m.kernels[size_t(why_sel.index)].knl_name, "f4gemm_sm90a_pab_64x128_p");
        // the time model between the two converter tiles: the 80-row one where both take one round (N =
        // 10240: 128 tiles against 80), a 128-row one where the 80-row tiles take a round more (16384,
        // 28672; the A pre-pass tile since session 32, measured 76.9 us against 77.4 for cv_64x128_p)
        const std::string wide = steps_of(48, 10240, 8192, Accum::Promoted, &why_sel);
        EXPECT_EQ(m.kernels[size_t(why_sel.index)].knl_name, "f4gemm_sm90a_cv_64x80_p");
        EXPECT_NE(wide.find("time model: "), std::string::npos) << wide;
        steps_of(64, 28672, 8192, Accum::Promoted, &why_sel);
        EXPECT_EQ(m.kernels[size_t(why_sel.index)].knl_name, "f4gemm_sm90a_pab_64x128_p");
    }
    // The promoted kernels (accum column), when the build has them: a promoted request runs one where the
    // policy offers it, and falls back to the exact decode kernels below their min_m; exact requests above
    // never see them.
    if (promoted) {
        const auto pick_promoted = [&](int mm, int n, int k) {
            const Selection s =
                select(m, "", HeuristicQuery{mm, n, k, 132, 0, 0}, false, nullptr, Accum::Promoted);
            return m.kernels[size_t(s.index)];
        };
        EXPECT_EQ(pick_promoted(8192, 8192, 8192).accum, Accum::Promoted);
        EXPECT_EQ(pick_promoted(1, 16384, 16384).knl_name, "f4gemm_sm90a_dec_16x128_wg12");
    }

    // The shipped tuned table (copied beside the manifest by the build): every row names a kernel of this
    // manifest that its mode allows, with a split only where the kernel can split, on the H200's 132 SMs, no
    // shape twice per mode.
    const TunedTable t =
        load_tuned(std::string(F4GEMM_SM90A_BUILD_DIR) + "/f4gemm_bf16_per1x32Fp4_tuned.csv");
    ASSERT_FALSE(t.entries.empty());
    std::set<std::tuple<int, int, int, int, int>> shapes;
    for (const TunedEntry& e : t.entries) {
        const int i = find_kernel(m, e.kernel);
        ASSERT_GE(i, 0) << e.kernel << " is in the tuned table but not in the manifest";
        EXPECT_TRUE(accum_allows(e.accum, m.kernels[size_t(i)].accum)) << e.kernel;
        if (!m.kernels[size_t(i)].split_k) {
            EXPECT_EQ(e.log2_k_split, 0) << e.kernel;
        }
        EXPECT_EQ(e.cu_num, 132) << e.kernel;
        EXPECT_GT(e.us, 0.0) << e.kernel;
        EXPECT_TRUE(shapes.insert({e.cu_num, e.m, e.n, e.k, int(e.accum)}).second)
            << e.m << "x" << e.n << "x" << e.k;
    }
    // Selection takes the table's kernel for a listed shape.
    const TunedEntry& e = t.entries.front();
    const Selection sel = select(m, "", HeuristicQuery{e.m, e.n, e.k, 132, 0, 0}, false, &t, e.accum);
    EXPECT_TRUE(sel.tuned);
    EXPECT_EQ(m.kernels[size_t(sel.index)].co_name, e.kernel);
}
#endif

TEST(Sm90Policy, AiterManifestsKeepTheExactPort) {
    const std::string csv = F4GEMM_AITER_CSV;
    const Manifest m = load_manifest(csv.substr(0, csv.rfind('/')));
    for (int mm : {1, 17, 128, 300, 8192}) {
        const HeuristicQuery q{mm, 4096, 2048, 256, 0, 1};
        EXPECT_EQ(select(m, "", q, false).index, select_kernel(m, q).index) << mm;
    }
}

// CTAs per SM from shared memory (228 KB, 1 KB reserved per CTA) and threads (2048), for the shipped decode
// configs and the corner cases.
TEST(Sm90Policy, CtasPerSmFollowSharedMemoryAndThreads) {
    KernelConfig kc;
    const auto occ = [&](int smem, int threads) {
        kc.smem_bytes = smem;
        kc.threads = threads;
        return sm90_ctas_per_sm(kc);
    };
    EXPECT_EQ(occ(91936, 256), 2);   // dec_16x64_m2
    EXPECT_EQ(occ(85088, 256), 2);   // dec_16x32_m2
    EXPECT_EQ(occ(183200, 512), 1);  // dec_16x64_w16
    EXPECT_EQ(occ(200016, 384), 1);  // ws_swap_16x128_bp
    EXPECT_EQ(occ(95008, 256), 2);   // ws_swap_16x64_m2bp
    EXPECT_EQ(occ(17920, 256), 8);   // simple_64x64: threads limit it
    EXPECT_EQ(occ(115712, 128), 2);  // 2 x (115712 + 1024) = 228 KB exactly
    EXPECT_EQ(occ(115713, 128), 1);
    EXPECT_EQ(occ(0, 0), 32);         // unknown: the hardware's CTA limit
    EXPECT_EQ(occ(300000, 1024), 1);  // never below one
    // reg_ctas: a kernel that pins its launch register budget (setmaxnreg) caps the count. The 4-stage A
    // pre-pass tile (session 28) fits twice by shared memory, once by its 384 x 168 registers.
    kc.reg_ctas = 1;
    EXPECT_EQ(occ(102768, 384), 1);  // the 128-K, 4-stage pab_128x128(_p) of sessions 28-30
    kc.reg_ctas = 2;
    EXPECT_EQ(occ(102768, 384), 2);
    EXPECT_EQ(occ(183200, 512), 1);  // the smaller of the three limits
    kc.reg_ctas = 0;
    EXPECT_EQ(occ(102768, 384), 2);  // not pinned: shared memory and threads only
}

// Every shipped kernel that pins its registers (the setmaxnreg families ws, cv, pp) says so in the built
// manifest, and the decode kernels (no setmaxnreg) do not; every shipped promoted kernel chains 128 K
// (promote_k 128), the exact ones carry none; the dev ladder's pp_128x128_p2 chains 256 K.
TEST(Sm90Policy, BuiltManifestCarriesRegCtasAndPromoteK) {
    F4GEMM_BUILT_MANIFEST_OR_SKIP(m);
    for (const KernelConfig& kc : m.kernels) {
        const bool dec = kc.knl_name.find("_dec_") != std::string::npos;
        EXPECT_EQ(kc.reg_ctas, dec ? 0 : 1) << kc.knl_name;
        EXPECT_EQ(kc.promote_k, kc.accum == Accum::Promoted ? 128 : 0) << kc.knl_name;
        EXPECT_EQ(chain_k(kc), 128u) << kc.knl_name;
    }
    const std::string dev = m.dir + "/dev";
    if (!std::ifstream(dev + "/" + kManifestFile).good()) return;
    const Manifest ladder = load_manifest(dev);
    int p2 = 0;
    for (const KernelConfig& kc : ladder.kernels)
        if (kc.knl_name == "f4gemm_sm90a_pp_128x128_p2") {
            ++p2;
            EXPECT_EQ(kc.promote_k, 256);
            EXPECT_EQ(chain_k(kc), 256u);
        }
    EXPECT_EQ(p2, 1) << "the dev ladder lists pp_128x128_p2";
}

// A two-CTA 16 x 64 tile fills the SMs as a one-CTA 16 x 128 tile does, so the policy treats them as twins
// and keeps the one listed first (the dec kernel): aiter's rule alone took the 16 x 128 wgmma kernel for
// every decode shape, 1.2-1.5x slower (docs/HEURISTIC.md).
TEST(Sm90Policy, TwoCtaTilesAreTwinsOfTilesTwiceAsWide) {
    const Manifest m = parse_manifest(
        "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,scale_"
        "layout\n"
        "16,64,0,0,dec_m2,dec_m2.cubin,sm_90a,256,91936,sm90v1,frag16s,plain\n"
        "16,64,0,0,dec_w16,dec_w16.cubin,sm_90a,512,183200,sm90v1,frag16s,plain\n"
        "16,32,0,0,dec_32m2,dec_32m2.cubin,sm_90a,256,85088,sm90v1,frag16s,plain\n"
        "16,128,1,0,swap16bp,swap16bp.cubin,sm_90a,384,200016,sm90v1,bitplane,plain\n"
        "32,128,1,0,swap32,swap32.cubin,sm_90a,384,220088,sm90v1,plain,plain\n",
        "occ.csv");
    // aiter's rule on the 16-row tiles alone (what the covering-tile step leaves at M <= 16): the 16 x 128
    // tile, one round with fewer idle CUs
    Manifest rows16 = m;
    rows16.kernels.pop_back();
    EXPECT_EQ(rows16.kernels[size_t(select_kernel(rows16, HeuristicQuery{1, 16384, 16384, 132, 0, 0}).index)]
                  .knl_name,
              "swap16bp");
    Selection s;
    EXPECT_EQ(pick(m, 1, 16384, 16384, true, &s), "dec_m2");
    EXPECT_EQ(pick(m, 16, 8192, 8192), "dec_m2");
    EXPECT_EQ(pick(m, 8, 4096, 11008), "dec_m2");
    int covers = 0, same = 0;
    for (const HeuristicStep& st : s.heuristic.steps) {
        covers += st.reason.find("16x128 x 1 CTA/SM covers what dec_m2.cubin (16x64 x 2 CTA/SM)") !=
                  std::string::npos;
        same +=
            st.reason.find("same tile as dec_w16.cubin") != std::string::npos;  // dec_32m2: 16 x 64 per wave
    }
    EXPECT_EQ(covers, 1);
    EXPECT_EQ(same, 0);
    // M = 32 still covers with the 32-row tile (tile_M 16 kernels stay candidates; the rule takes swap32)
    EXPECT_EQ(pick(m, 32, 8192, 8192), "swap32");
}

TEST(Sm90Policy, SameTileVariantsKeepTheOneListedFirst) {
    // Bit-plane and plain decode twins: aiter's rule alone is non-transitive over exact ties, so with
    // both pairs present it ended on the plain 16x64 kernel for 8 x 4096 x 11008; the policy keeps the
    // first-listed variant of each tile before the rule runs.
    const Manifest m = parse_manifest(
        "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,scale_"
        "layout\n"
        "16,128,1,0,swap16bp,swap16bp.cubin,sm_90a,384,1,sm90v1,bitplane,plain\n"
        "16,64,1,0,swap16x64bp,swap16x64bp.cubin,sm_90a,256,1,sm90v1,bitplane,plain\n"
        "16,128,1,0,swap16,swap16.cubin,sm_90a,384,1,sm90v1,plain,plain\n"
        "16,64,1,0,swap16x64,swap16x64.cubin,sm_90a,256,1,sm90v1,plain,plain\n",
        "twins.csv");
    EXPECT_EQ(m.kernels[size_t(select_kernel(m, HeuristicQuery{8, 4096, 11008, 132, 0, 0}).index)].knl_name,
              "swap16x64");
    Selection s;
    EXPECT_EQ(pick(m, 8, 4096, 11008, true, &s), "swap16x64bp");
    EXPECT_EQ(pick(m, 16, 16384, 16384), "swap16bp");
    int twins = 0;
    for (const HeuristicStep& st : s.heuristic.steps)
        twins += st.reason.find("same tile as swap16") != std::string::npos;
    EXPECT_EQ(twins, 2);
}
