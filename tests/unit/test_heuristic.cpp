// The heuristic against a golden table on aiter's manifest at 256 CUs (run_tests.sh's shapes and
// the seed spec's simulated examples, section 3) and against a second, independent implementation
// written here from the spec text over a sweep of shapes, CU counts and --splitk values.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "f4gemm/error.hpp"
#include "f4gemm/heuristic.hpp"
#include "f4gemm/manifest.hpp"

using namespace f4gemm;

namespace {

const Manifest& aiter() {
    static const Manifest m = [] {
        std::string p = F4GEMM_AITER_CSV;
        return load_manifest(p.substr(0, p.find_last_of('/')));
    }();
    return m;
}

std::string co(const std::string& tile, bool pre = true) {
    return std::string("f4gemm_bf16_per1x32Fp4_") + (pre ? "BpreShuffle_" : "noBpreShuffle_") + tile + ".co";
}

HeuristicResult pick(int m, int n, int num_cu = 256, int splitk = 0, int bpre = 1, bool explain = false) {
    HeuristicQuery q;
    q.m = m;
    q.n = n;
    q.k = 4096;
    q.num_cu = num_cu;
    q.log2_k_split = splitk;
    q.bpreshuffle = bpre;
    return select_kernel(aiter(), q, explain);
}

// ---- an independent reading of seed spec section 3 -----------------------------------------
// Candidates are listed first (kernel, split), then folded with the spec's accept rule.
struct Cand {
    int index;
    int split;
    uint32_t tiles;
    float eff;
};

std::pair<int, int> spec_pick(const std::vector<KernelConfig>& ks, int M, int N, int cu, int L, int bpre) {
    std::vector<Cand> cands;
    for (int i = 0; i < (int)ks.size(); ++i) {
        const KernelConfig& c = ks[i];
        const bool bp = bpre != 0;
        const bool en = L > 0;
        if (c.bpreshuffle != (bp ? 1 : 0)) continue;
        if (c.split_k < (en ? 1 : 0)) continue;
        if (c.tile_m == 128 && c.tile_n == 512 && N % 512 != 0) continue;
        std::vector<int> splits{1};
        if (c.split_k && L >= 0) splits = {1 << L};
        if (c.split_k && L < 0) splits = {2, 4, 8, 16};
        for (int s : splits) {
            uint32_t tm = (uint32_t)((M + c.tile_m - 1) / c.tile_m);
            uint32_t tn = (uint32_t)((N + c.tile_n - 1) / c.tile_n);
            float le = float(c.tile_m * c.tile_n) / float(c.tile_m + c.tile_n);
            cands.push_back({i, s, tm * tn * (uint32_t)s, le});
        }
    }
    int best = -1, best_split = 1;
    uint32_t best_round = UINT32_MAX, best_idle = (uint32_t)cu;
    float best_eff = 1.0f;
    for (const Cand& c : cands) {
        uint32_t r = (c.tiles + (uint32_t)cu - 1) / (uint32_t)cu;
        uint32_t idle = r * (uint32_t)cu - c.tiles;
        bool take = false;
        if (r < best_round) take = true;
        if (r == best_round && idle < best_idle) take = true;
        if (r == best_round && c.eff > best_eff) take = true;
        if (take) {
            best = c.index;
            best_split = c.split;
            best_round = r;
            best_idle = idle;
            best_eff = c.eff;
        }
    }
    int lg = 0;
    for (int s = best_split; s > 1; s /= 2) ++lg;
    return {best, lg};
}

}  // namespace

TEST(Heuristic, GoldenTableAiter256Cus) {
    struct Row {
        int m, n, splitk, bpre;
        std::string kernel;
        int log2;
    } rows[] = {
        // run_tests.sh's heuristic section (K does not matter).
        {128, 1024, 0, 1, co("96x640"), 0},
        {256, 2048, 0, 1, co("96x640"), 0},
        {300, 2048, 0, 1, co("96x640"), 0},
        {1, 4096, 0, 1, co("256x128"), 0},
        {17, 512, 0, 1, co("256x128"), 0},
        {512, 1024, 0, 1, co("96x640"), 0},
        {2048, 8192, 0, 1, co("256x256"), 0},
        {4096, 4096, 0, 1, co("256x256"), 0},
        // The seed spec's further simulated examples.
        {8192, 8192, 0, 1, co("256x256"), 0},
        {128, 16384, 0, 1, co("96x640"), 0},
        {4096, 4096, 0, 0, co("256x256", false), 0},
        {1, 16, 0, 0, co("256x256", false), 0},
        {8192, 8192, -1, 1, co("64x1024"), 0},  // --splitk -1 never offers split 1 to 256x256
        {256, 1024, -1, 1, co("256x256"), 4},
        // --splitk L > 0 keeps only the split-capable kernels.
        {256, 1024, 1, 1, co("256x256"), 1},
        {256, 1024, 4, 1, co("256x256"), 4},
    };
    for (const Row& r : rows) {
        const HeuristicResult h = pick(r.m, r.n, 256, r.splitk, r.bpre);
        SCOPED_TRACE(std::to_string(r.m) + "x" + std::to_string(r.n) + " splitk " + std::to_string(r.splitk));
        ASSERT_GE(h.index, 0);
        EXPECT_EQ(aiter().kernels[h.index].co_name, r.kernel);
        EXPECT_EQ(h.log2_k_split, r.log2);
        EXPECT_TRUE(h.steps.empty());  // filled only in explain mode
    }
}

TEST(Heuristic, ExplainRecordsEveryCandidate) {
    const HeuristicResult plain = pick(300, 2048);
    const HeuristicResult h = pick(300, 2048, 256, 0, 1, true);
    EXPECT_EQ(h.index, plain.index);
    EXPECT_EQ(h.log2_k_split, plain.log2_k_split);
    ASSERT_EQ(h.steps.size(), 35u);  // one step per kernel: no split lists at --splitk 0
    EXPECT_EQ(h.steps[0].index, 0);
    EXPECT_EQ(h.steps[0].split, 0);
    EXPECT_FALSE(h.steps[0].accepted);
    EXPECT_EQ(h.steps[0].reason, "skip: bpreshuffle 0 != 1");
    // 256x256: 2 x 8 tiles = 16, 1 round, 240 idle, eff 128.
    EXPECT_EQ(h.steps[1].reason, "accept: first candidate, rounds 1, idle CUs 240, eff 128.0");
    EXPECT_TRUE(h.steps[1].accepted);
    EXPECT_EQ(h.steps[1].split, 1);
    // 128x512: 3 x 4 = 12 tiles leave more CUs idle, and eff 128*512/640 = 102.4 is worse.
    EXPECT_EQ(h.steps[2].reason, "reject: tie on rounds 1, idle CUs 244 >= 240 and eff 102.4 <= 128.0");
    EXPECT_FALSE(h.steps[2].accepted);
    int last_accept = -1;
    for (const HeuristicStep& s : h.steps) {
        EXPECT_FALSE(s.reason.empty());
        const bool says_accept = s.reason.rfind("accept: ", 0) == 0;
        EXPECT_EQ(says_accept, s.accepted) << s.reason;
        EXPECT_TRUE(says_accept || s.reason.rfind("reject: ", 0) == 0 || s.reason.rfind("skip: ", 0) == 0)
            << s.reason;
        if (s.accepted) last_accept = s.index;
    }
    EXPECT_EQ(last_accept, h.index);
}

TEST(Heuristic, ExplainReasonsForEachRule) {
    // N % 512 != 0 skips 128x512.
    const HeuristicResult a = pick(300, 2064, 256, 0, 1, true);
    EXPECT_EQ(a.steps[2].reason, "skip: 128x512 needs N % 512 == 0");
    // --splitk 1: non-split kernels are skipped.
    const HeuristicResult b = pick(256, 1024, 256, 1, 1, true);
    EXPECT_EQ(b.steps[3].reason.rfind("skip: splitK 0 < 1", 0), 0u) << b.steps[3].reason;
    EXPECT_EQ(b.steps[1].split, 2);
    // --splitk -1: 4 candidate steps per split-capable kernel.
    const HeuristicResult c = pick(8192, 8192, 256, -1, 1, true);
    int n256 = 0;
    for (const HeuristicStep& s : c.steps) n256 += s.index == 1;
    EXPECT_EQ(n256, 4);
    EXPECT_EQ(c.steps[1].split, 2);
    EXPECT_EQ(c.steps[4].split, 16);
    // 8192^3 at --splitk 0: 256x256 has 1024 tiles = 4 rounds; 32x128 needs 64 rounds.
    const HeuristicResult d = pick(8192, 8192, 256, 0, 1, true);
    EXPECT_EQ(d.steps[1].reason, "accept: first candidate, rounds 4, idle CUs 0, eff 128.0");
    EXPECT_EQ(d.steps[15].reason, "reject: rounds 64 > 4");  // row 15 is 32x128
    // 192x256 at 8192^3: ceil(8192/192) = 43 x 32 = 1376 tiles, 6 rounds.
    EXPECT_EQ(d.steps[3].reason, "reject: rounds 6 > 4");
    // 64x1024 (128 x 8 tiles) ties 256x256 on rounds and idle CUs and loses on eff (65536/1088).
    EXPECT_EQ(d.steps[22].reason, "reject: tie on rounds 4, idle CUs 0 >= 0 and eff 60.2 <= 128.0");
}

TEST(Heuristic, EffTieBreakAcceptsWithMoreIdleCus) {
    // Two kernels, 64 CUs, M=N=256: A (64x64) gives 16 tiles / 48 idle, B (128x128) 4 tiles / 60 idle.
    // Same round, more idle CUs, but better eff: the OR rule accepts B.
    Manifest m;
    KernelConfig a, b;
    a.tile_m = a.tile_n = 64;
    a.bpreshuffle = b.bpreshuffle = 1;
    b.tile_m = b.tile_n = 128;
    a.co_name = "a.co";
    b.co_name = "b.co";
    m.kernels = {a, b};
    HeuristicQuery q;
    q.m = q.n = 256;
    q.num_cu = 64;
    const HeuristicResult r = select_kernel(m, q, true);
    EXPECT_EQ(r.index, 1);
    EXPECT_EQ(r.steps[1].reason, "accept: tie on rounds 1, eff 64.0 > 32.0 (idle CUs 60 >= 48)");
    // In the other order, B then A: A has fewer idle CUs and wins despite worse eff (not transitive).
    std::swap(m.kernels[0], m.kernels[1]);
    const HeuristicResult r2 = select_kernel(m, q, true);
    EXPECT_EQ(m.kernels[r2.index].co_name, "a.co");
    EXPECT_EQ(r2.steps[1].reason, "accept: tie on rounds 1, idle CUs 48 < 60");
}

TEST(Heuristic, NoKernelAndArchNotFiltered) {
    Manifest m;
    KernelConfig k;
    k.tile_m = k.tile_n = 128;
    k.bpreshuffle = 1;
    k.arch = "sm_90a";  // the driver filters by arch, not the heuristic
    m.kernels = {k};
    HeuristicQuery q;
    q.m = q.n = 512;
    q.num_cu = 132;
    EXPECT_EQ(select_kernel(m, q).index, 0);
    q.bpreshuffle = 0;
    EXPECT_EQ(select_kernel(m, q).index, -1);
    q.bpreshuffle = 7;  // any non-zero value means 1
    EXPECT_EQ(select_kernel(m, q).index, 0);
    q.log2_k_split = 2;  // no split-capable kernel
    EXPECT_EQ(select_kernel(m, q).index, -1);
    EXPECT_EQ(select_kernel(Manifest{}, q).index, -1);
}

TEST(Heuristic, RejectsBadQueries) {
    HeuristicQuery q;
    q.m = 1;
    q.n = 16;
    q.num_cu = 0;
    try {
        select_kernel(aiter(), q);
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find("(got 0)"), std::string::npos);
    }
    q.num_cu = 256;
    q.m = 0;
    EXPECT_THROW(select_kernel(aiter(), q), Error);
    q.m = 1;
    q.log2_k_split = 31;
    EXPECT_THROW(select_kernel(aiter(), q), Error);
}

TEST(Heuristic, MatchesIndependentImplementationOverSweep) {
    const std::vector<KernelConfig>& ks = aiter().kernels;
    size_t checked = 0, differ = 0;
    for (int cu : {80, 132, 256, 304})
        for (int L : {-1, 0, 1, 2})
            for (int bpre : {0, 1})
                for (int M = 1; M <= 1024; M += 7)
                    for (int N = 16; N <= 16384; N += 272) {
                        const auto want = spec_pick(ks, M, N, cu, L, bpre);
                        const HeuristicResult got = pick(M, N, cu, L, bpre);
                        ++checked;
                        if (got.index != want.first || got.log2_k_split != want.second) {
                            if (++differ <= 10)
                                ADD_FAILURE()
                                    << "M=" << M << " N=" << N << " cu=" << cu << " L=" << L
                                    << " bpre=" << bpre << ": got " << got.index << "/" << got.log2_k_split
                                    << ", spec " << want.first << "/" << want.second;
                        }
                    }
    EXPECT_EQ(differ, 0u);
    EXPECT_EQ(checked, 4u * 4u * 2u * 147u * 61u);
}
