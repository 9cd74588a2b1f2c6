// The Session (include/f4gemm/session.hpp): the front door every face (command line, C API, Python) goes
// through, and the one home of the kernel-choice policy (select, below). Opened once: backend, device,
// code-object folder, manifest, device filter, tuned table, launcher; then select, prepare (host operands),
// pack_weight and gemm (device pointers) and tune.
#include "f4gemm/session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <utility>

#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"
#include "f4gemm/layout.hpp"
#include "f4gemm/util_args.h"
#include "f4gemm/weight.h"
#include "launcher.hpp"

namespace f4gemm {

// ---- the kernel-choice policy ------------------------------------------------------------------

namespace {

// One pass of our sm_90a filters and aiter's rule over the kernels `in_pool` admits (the others are not
// visited), `cover` the smallest tile_M covering M (0: none). Appends each candidate's step to `steps` (with
// explain) and returns the pick (manifest index, -1 when none) and its split.
// A kernel run by name or index (--kernel, DeviceGemm::kernel) must implement a mode the request allows: an
// exact request never runs a promoted kernel. `name` is how the caller named it.
void need_mode(const KernelConfig& kc, const std::string& name, Accum accum) {
    if (!accum_allows(accum, kc.accum))
        throw Error(Errc::InvalidArgument,
                    "kernel " + name +
                        " implements promoted accumulation; pass --accum promoted or choose an exact kernel");
}

// Whether our policy offers the kernel for M: its max_m and min_m columns (0: no limit). Not applied to
// --kernel or the tuned table.
bool offered_for_m(const KernelConfig& kc, int m) {
    return !(kc.max_m > 0 && m > kc.max_m) && !(kc.min_m > 0 && m < kc.min_m);
}

// Output tiles of the kernel for the query's M x N, and the CTAs of it that fit on the device at once.
long tiles_of(const KernelConfig& kc, const HeuristicQuery& q) {
    return long((q.m + kc.tile_m - 1) / kc.tile_m) * long((q.n + kc.tile_n - 1) / kc.tile_n);
}
long cta_slots(const KernelConfig& kc, const HeuristicQuery& q) {
    return long(q.num_cu) * sm90_ctas_per_sm(kc);
}
// Whether `ctas` CTAs fill more than half of `slots` CTA slots in one wave (the A pre-pass tiles' and the
// wgmma decode tiles' rules below; `ctas` may be weighed, hence a double).
bool fills_half_in_one_wave(double ctas, long slots) {
    return 2 * ctas > double(slots) && ctas <= double(slots);
}

// A split launch's cost beyond its CTAs' waves (the fp32 partials, the tile counters, the last CTA's sum):
// fitted with each split-capable tile's cost_wave_us and cost_wave_k to its measured splits (PERF.md entry
// 76: 6.0-7.7 us for pab_128x128(_p) and pab_64x128(_p) over the measured tables' splits; 21 us before, when
// the model had no per-wave term and this constant carried the split CTAs' extra wave start-ups, entry 59).
constexpr double kSplitUs = 7.0;

// The time model of a kernel that carries one (KernelConfig::cost_wave_k, fitted to measured times,
// docs/HEURISTIC.md "Time model"): waves of tiles x (cost_wave_us + cost_wave_k x K), plus the pre-pass's
// converted rows x K; in 2^log2_split splits of K, waves of the split CTAs x (cost_wave_us + cost_wave_k x K
// per split) plus kSplitUs. Negative when the kernel has none.
double predicted_us(const KernelConfig& kc, const HeuristicQuery& q, int log2_split = 0) {
    if (kc.cost_wave_k <= 0 || q.num_cu <= 0) return -1;
    const double kp = double(kernel_k(kc, q.k));
    const long tiles_m = (q.m + kc.tile_m - 1) / kc.tile_m, tiles_n = (q.n + kc.tile_n - 1) / kc.tile_n;
    const long slots = cta_slots(kc, q);
    const double waves = double(((tiles_of(kc, q) << log2_split) + slots - 1) / slots);
    double rows = 0;  // rows of the operands the pre-pass converts (padded to the tile)
    if (kc.abi == KernelAbi::Sm90pp1 || kc.abi == KernelAbi::Sm90pp2)
        rows = double(tiles_m * kc.tile_m + tiles_n * kc.tile_n);
    if (kc.abi == KernelAbi::Sm90pa1) rows = double(tiles_m * kc.tile_m);
    return waves * (kc.cost_wave_us + kc.cost_wave_k * kp / double(1 << log2_split)) +
           kc.cost_prepass * rows * kp + (log2_split > 0 ? kSplitUs : 0.0);
}

// The splits the time model weighs: for a split-capable A pre-pass tile (sm90pa1) that carries the model, the
// L in 1..2 whose 2^L splits keep at least 2048 of K each, the one predicted fastest; 0 for every other
// kernel, or where no split fits. Measured (PERF.md entry 59): 128 x 8192 x 28672 exact, pab_128x128 in 2
// splits 121.4 us against 174.8 for the swap kernel the rules pick; 128 x 4096 x 14336 promoted,
// pab_128x128_p in 4 splits 45.5 against 57.4 for cv_128x64_p. Splits past one wave since entry 76, whose
// per-wave term prices their extra waves (384 x 8192 x 28672: 192 tiles in two waves, in 2 splits three waves
// of half the K).
int model_split(const KernelConfig& kc, const HeuristicQuery& q) {
    if (!kc.split_k || kc.abi != KernelAbi::Sm90pa1 || kc.cost_wave_k <= 0 || q.num_cu <= 0) return 0;
    const int kk = kernel_k(kc, q.k);
    int best = 0;
    double best_us = predicted_us(kc, q);
    for (int l = 1; l <= 2; ++l) {
        if ((kk >> l) < 2048 || kk % (1 << l) != 0) break;
        const double us = predicted_us(kc, q, l);
        if (us < best_us) best = l, best_us = us;
    }
    return best;
}

// The decode model of a kernel that carries one (KernelConfig::decode_round, docs/HEURISTIC.md "Decode
// model"): the busiest SM runs rounds = ceil(tiles / CUs) of its CTAs and streams rounds x tile_N x K
// elements of B at a rate proportional to the warps it has in flight (CTAs resident at once x warps per CTA),
// which saturates at decode_warps, times decode_speed (the kernel's rate per warp against the mma.sync dec
// kernels'); each CTA costs decode_round more (its start-up scan, pipeline fill and
// epilogue). Relative units (element-warps), comparable between kernels that carry the model. Negative when
// the kernel has none. With a split of K into 2^log2_split (a split-capable kernel), each tile is that many
// CTAs, each streaming its share of K.
double decode_cost(const KernelConfig& kc, const HeuristicQuery& q, int log2_split = 0) {
    if (kc.decode_round <= 0 || kc.decode_warps <= 0 || q.num_cu <= 0) return -1;
    const long rounds = ((tiles_of(kc, q) << log2_split) + q.num_cu - 1) / q.num_cu;
    const long warps = std::min<long>(rounds, sm90_ctas_per_sm(kc)) * (kc.threads / 32);
    const double rate = double(std::min<long>(warps, kc.decode_warps)) * kc.decode_speed;
    return double(rounds) *
           (kc.decode_round + double(kc.tile_n) * double(kernel_k(kc, q.k) >> log2_split) / rate);
}

// The largest L <= max_l for which tiles x 2^L CTAs fit in `slots` and K splits evenly into 2^L parts of at
// least min_k each (0: no split). Both split rules below.
int largest_split(long tiles, long slots, int kk, int max_l, int min_k) {
    int l = 0;
    while (l < max_l && (tiles << (l + 1)) <= slots && (kk >> (l + 1)) >= min_k && kk % (1 << (l + 1)) == 0)
        ++l;
    return l;
}

// The splits the decode model weighs for a split-capable kernel that carries it: the largest 2^L (L <= 2)
// whose CTAs still fit one round on the SMs and whose splits keep at least 8192 of K each (0: no split). The
// split wgmma decode tile (dec_16x128_wg12_s, PERF.md entry 48): 16 x 8192 x 28672 in 2 splits 46.3 us
// against 51.1 for the best unsplit kernel, 1 x 8192 x 28672 41.3 against 40.5; at K = 8192 (1 x 8192^2) a
// split of it took 17.9 against 15.7, hence the 8192 per split.
// The 32-row tile (dec_32x128_wg12_c2_s, PERF.md entry 54) splits where K >= 14336, down to 3584 of K per
// split: measured 24 x 4096 x 14336 in 4 splits of 3584 24.1 us against 28.7 for the best unsplit kernel, 32
// x 4096 x 14336 27.9 against 28.9, 17..32 x 8192 x 28672 in 2 splits 51.3-64.3 against 66.3-67.0; at K =
// 8192 its split helps it (32 x 8192^2: 30.9 us against 34.2 unsplit) but the 16-row tiles over two row tiles
// are faster (24.1), which the decode model does not see.
// The least K per split of the tiles of 32 rows and more (the 32-row decode tile here; the 64-row A pre-pass
// tile in the wgmma decode tiles' rule below since session 32, PERF.md entry 73), and of the 16-row tiles.
constexpr int kMinSplitKTall = 3584;
constexpr int kMinSplitK16 = 8192;

int decode_split(const KernelConfig& kc, const HeuristicQuery& q) {
    if (!kc.split_k || kc.decode_round <= 0 || q.num_cu <= 0) return 0;
    const int kk = kernel_k(kc, q.k);
    const bool tall = kc.tile_m >= 32;
    if (tall && kk < 14336) return 0;
    return largest_split(tiles_of(kc, q), q.num_cu, kk, 2, tall ? kMinSplitKTall : kMinSplitK16);
}

HeuristicResult policy_pass(const Manifest& m, const HeuristicQuery& q, bool explain, bool ours, int cover,
                            const std::function<bool(const KernelConfig&)>& in_pool,
                            std::vector<HeuristicStep>& steps) {
    std::vector<int> keep;  // manifest indices that stay candidates
    // A kernel with max_m (manifest column) is offered only up to that M: listed before its same-tile twin,
    // it wins the twin rule below for M <= max_m and steps aside above (docs/HEURISTIC.md); one with min_m
    // only from that M on.
    const auto over_max_m = [&](const KernelConfig& kc) { return ours && kc.max_m > 0 && q.m > kc.max_m; };
    const auto under_min_m = [&](const KernelConfig& kc) { return ours && kc.min_m > 0 && q.m < kc.min_m; };
    // (the two halves of offered_for_m, kept apart for their explain lines)
    Manifest candidates = m;
    candidates.kernels.clear();
    // Candidates in priority order (the manifest's priority column, then row order): the twin rule below
    // keeps the first of two kernels covering the same tile width, and aiter's rule breaks exact ties by
    // the order it is given.
    std::vector<size_t> order;
    for (size_t i = 0; i < m.kernels.size(); ++i)
        if (in_pool(m.kernels[i])) order.push_back(i);
    if (ours)
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t x, size_t y) { return m.kernels[x].priority < m.kernels[y].priority; });
    // The converter-warpgroup tiles (cv_*, sm90pa1) cannot split K. The A pre-pass tiles (pab_*) can since
    // session 25, but at M = 33..64 their splits measured no faster than their swap twins' (PERF.md entry 59:
    // 64 x 8192 x 28672 in 2 splits, pab_64x128_p 91.8 us, ws_swap_64x128_fs_p 89.1), so the rules below
    // treat every sm90pa1 tile alike at M <= 64; from M = 65 the time model splits pab_128x128(_p)
    // (model_split). Where a narrower sm90pa1 tile of the same height (the cv kernels' 64- and 80-row tiles)
    // fills more than half of the CTA slots in one wave, the sm90pa1 tiles stay and the time model chooses
    // among them (measured, PERF.md entry 37: 64 x 8192 x 28672 promoted, cv_64x64_p 93.3 us against 104.4
    // for the swap kernel in 2 splits; 64 x 8192 x 8192 31.1 against 39.4 for the half-height swap tile);
    // where none does, they yield to a split-capable swap kernel of the same height (below).
    const auto offered = [&](const KernelConfig& c) { return in_pool(c) && offered_for_m(c, q.m); };
    const auto narrower_fills = [&](const KernelConfig& o) {
        for (const KernelConfig& c : m.kernels) {
            if (!offered(c) || c.abi != KernelAbi::Sm90pa1 || c.tile_m != o.tile_m || c.tile_n >= o.tile_n ||
                c.cost_wave_k <= 0)
                continue;
            if (fills_half_in_one_wave(double(tiles_of(c, q)), cta_slots(c, q))) return true;
        }
        return false;
    };
    const auto same_height = [&](const KernelConfig& o, auto&& pred) {
        return std::any_of(m.kernels.begin(), m.kernels.end(), [&](const KernelConfig& c) {
            return offered(c) && c.tile_m == o.tile_m && pred(c);
        });
    };
    for (const size_t i : order) {
        if (over_max_m(m.kernels[i])) {
            steps.push_back(
                {int(i), 0, false,
                 "skip: max_m " + std::to_string(m.kernels[i].max_m) + " < M (f4gemm sm_90a policy)"});
            continue;
        }
        if (under_min_m(m.kernels[i])) {
            steps.push_back(
                {int(i), 0, false,
                 "skip: min_m " + std::to_string(m.kernels[i].min_m) + " > M (f4gemm sm_90a policy)"});
            continue;
        }
        if (cover && m.kernels[i].tile_m > cover) {
            steps.push_back({int(i), 0, false,
                             "skip: tile_M " + std::to_string(m.kernels[i].tile_m) + " > " +
                                 std::to_string(cover) +
                                 ", the smallest tile covering M (f4gemm sm_90a policy)"});
            continue;
        }
        // A narrow sm90pa1 tile (a wider one of the same height exists) whose tiles fill at most half of the
        // CTA slots, where a split-capable swap kernel of its height is offered and no narrower sm90pa1 tile
        // fills more: not a candidate (the 128-row tile yields to its swap twin in the twin rule below).
        if (ours && q.num_cu > 0) {
            const KernelConfig& kc = m.kernels[i];
            const long tiles = tiles_of(kc, q), slots = cta_slots(kc, q);
            if (kc.abi == KernelAbi::Sm90pa1 && 2 * tiles <= slots &&
                same_height(kc,
                            [&](const KernelConfig& c) {
                                return c.abi == KernelAbi::Sm90pa1 && c.tile_n > kc.tile_n;
                            }) &&
                same_height(kc,
                            [&](const KernelConfig& c) { return c.abi == KernelAbi::Sm90v1 && c.split_k; }) &&
                !narrower_fills(kc)) {
                steps.push_back({int(i), 0, false,
                                 "skip: " + std::to_string(tiles) + " tiles fill at most half of the " +
                                     std::to_string(slots) +
                                     " CTA slots and it cannot split K; a swap kernel of its height can "
                                     "(f4gemm sm_90a policy)"});
                continue;
            }
        }
        // Variants of one tile (pre-pass vs on-the-fly, bit-plane vs plain B): aiter's rule sees exact
        // ties and, being non-transitive, would pick by list position in ways that change with the
        // other candidates. Our manifests list the preferred variant first (docs/HEURISTIC.md): keep it.
        // A tile that fits c CTAs per SM covers, per wave, what a tile c times as wide covers with one:
        // aiter's rule counts rounds on one CTA per CU, so it would take a one-CTA 16 x 128 tile over
        // two-CTA 16 x 64 ones that fill the same SMs (measured 1.2-1.4x slower, docs/PERF.md entry 19).
        // So the twin key is (tile_M, tile_N x CTAs per SM).
        if (ours) {
            const KernelConfig& kc = m.kernels[i];
            const auto width = [](const KernelConfig& c) { return long(c.tile_n) * sm90_ctas_per_sm(c); };
            const auto twin = std::find_if(keep.begin(), keep.end(), [&](int j) {
                const KernelConfig& o = m.kernels[size_t(j)];
                return o.tile_m == kc.tile_m && width(o) == width(kc);
            });
            if (twin != keep.end()) {
                const KernelConfig& o = m.kernels[size_t(*twin)];
                // A twin that cannot split K yields to a split-capable swap twin (outside the decode model)
                // where its tiles fill at most half of the CTA slots: the split rule below can then fill the
                // SMs. The twin: an A pre-pass tile (sm90pa1; measured, PERF.md entry 33: 64 x 8192 x 28672
                // promoted, pab_64x128_p 145 us, the swap kernel in 2 splits 104), or a wgmma decode tile
                // whose wgmma N, the CTA's rows in 8-row tiles, is its whole height (M = 25..32 for the
                // 32-row tile), so that it does the swap kernel's work (entry 50: 32 x 8192 x 28672, the swap
                // kernel in 2 splits 75.1 us against 79.5 for dec_32x64_w8, which the rules below take where
                // the wgmma tile's 64 CTAs stay). At M = 17..24 its N is 24 and the dec tiles win there
                // (66.4-66.6 us on dec_32x64_w8 against 71.1-73.2 for the swap kernel in 2 splits, entry 49).
                // Not where a narrower sm90pa1 tile of the same height fills more than half of the slots in
                // one wave (below): the time model then chooses among the sm90pa1 tiles.
                // Not a decode tile with a split-capable twin that carries the decode model (the 32-row tile
                // and dec_32x128_wg12_c2_s, entry 54): the decode model splits that one (32 x 8192 x 28672 in
                // 2 splits 64.3 us against 75.2 for the swap kernel in 2).
                const bool yields_to_split =
                    o.abi == KernelAbi::Sm90pa1 ||
                    (!o.split_k && o.decode_round > 0 && (q.m + 7) / 8 * 8 >= o.tile_m &&
                     !same_height(o, [&](const KernelConfig& c) {
                         return c.split_k && c.decode_round > 0 && c.tile_n == o.tile_n;
                     }));
                if (yields_to_split && kc.abi == KernelAbi::Sm90v1 && kc.split_k && kc.decode_round <= 0 &&
                    q.num_cu > 0 && 2 * tiles_of(o, q) <= cta_slots(o, q) && !narrower_fills(o)) {
                    steps.push_back(
                        {*twin, 0, false,
                         "skip: " + std::to_string(tiles_of(o, q)) + " tiles fill at most half of the " +
                             std::to_string(cta_slots(o, q)) + " CTA slots and " +
                             (o.split_k ? "its splits run no faster than those of " + kc.co_name +
                                              " (same tile), which the split rule splits (f4gemm sm_90a "
                                              "policy, PERF.md entry 59)"
                                        : "it cannot split K; " + kc.co_name +
                                              " (same tile) can (f4gemm sm_90a policy)")});
                    const size_t at = size_t(twin - keep.begin());
                    keep[at] = int(i);
                    candidates.kernels[at] = kc;
                    continue;
                }
                const bool same_tile = o.tile_n == kc.tile_n;
                steps.push_back(
                    {int(i), 0, false,
                     (same_tile
                          ? "skip: same tile as " + o.co_name
                          : "skip: " + std::to_string(kc.tile_m) + "x" + std::to_string(kc.tile_n) + " x " +
                                std::to_string(sm90_ctas_per_sm(kc)) + " CTA/SM covers what " + o.co_name +
                                " (" + std::to_string(o.tile_m) + "x" + std::to_string(o.tile_n) + " x " +
                                std::to_string(sm90_ctas_per_sm(o)) + " CTA/SM) does") +
                         ", preferred by priority (f4gemm sm_90a policy)"});
                continue;
            }
        }
        keep.push_back(int(i));
        candidates.kernels.push_back(m.kernels[i]);
    }
    HeuristicResult h = select_kernel(candidates, q, explain);
    for (HeuristicStep& st : h.steps) {
        st.index = keep[size_t(st.index)];
        steps.push_back(std::move(st));
    }
    h.steps.clear();
    h.index = h.index >= 0 ? keep[size_t(h.index)] : -1;
    // The time model: when the rules above picked a kernel that carries one, every kernel of the pool that
    // carries one and is offered for this M (max_m, min_m; any tile) is predicted, and the fastest runs
    // (unsplit, or an A pre-pass tile in the splits model_split weighs). Kernels without a model (decode)
    // keep the rules; so does a pick without one, and a query whose caller chose the split (--splitk L, or -1
    // for aiter's search): before session 25 the model's switch dropped that split.
    if (ours && h.index >= 0 && q.log2_k_split == 0) {
        const double picked = predicted_us(m.kernels[size_t(h.index)], q);
        if (picked > 0) {
            int best = h.index, best_l = 0;
            double best_us = picked;
            for (size_t i = 0; i < m.kernels.size(); ++i) {
                const KernelConfig& kc = m.kernels[i];
                if (!in_pool(kc) || !offered_for_m(kc, q.m)) continue;
                const int l = model_split(kc, q);
                const double us = predicted_us(kc, q, l);
                if (us <= 0) continue;
                if (explain)  // every prediction the model weighs, for whoever tunes it (--explain)
                    steps.push_back(
                        {int(i), 1 << l, false,
                         fmt::format("time model: {:.1f} us predicted{}", us,
                                     l > 0 ? fmt::format(" in {} splits of K", 1 << l) : std::string())});
                if (us < best_us) best = int(i), best_l = l, best_us = us;
            }
            if (best != h.index || best_l > 0) {
                steps.push_back(
                    {best, 1 << best_l, true,
                     fmt::format("time model: {:.1f} us predicted{} against {:.1f} for {} "
                                 "(f4gemm sm_90a policy, docs/HEURISTIC.md)",
                                 best_us,
                                 best_l > 0 ? fmt::format(" in {} splits of K", 1 << best_l) : std::string(),
                                 picked, m.kernels[size_t(h.index)].co_name)});
                h.index = best;
                h.log2_k_split = best_l;
            } else {
                steps.push_back({h.index, 1, true,
                                 fmt::format("time model: {:.1f} us predicted, the fastest of the modelled "
                                             "kernels (f4gemm sm_90a policy)",
                                             picked)});
            }
        }
    }
    // Kernels a rule below may switch to: the pool's, or exact ones (an exact kernel serves a promoted
    // request: a stricter contract).
    const auto servable = [&](const KernelConfig& kc) { return in_pool(kc) || kc.accum == Accum::Exact; };
    // The cheapest kernel by the decode model among the servable ones that carry it, are offered for this M
    // and were candidates (tile_M covering no more than needed), a split-capable one also in its split
    // (decode_split; not where the caller chose the split); on a tie the first in priority order, then in
    // manifest order. Index -1 when none carries it.
    struct DecodePick {
        int index = -1;
        double cost = 0;
        int log2_split = 0;
    };
    const auto cheapest_decode = [&]() {
        DecodePick best;
        for (size_t i = 0; i < m.kernels.size(); ++i) {
            const KernelConfig& kc = m.kernels[i];
            if (!servable(kc) || !offered_for_m(kc, q.m) || (cover && kc.tile_m > cover)) continue;
            const int l = q.log2_k_split == 0 ? decode_split(kc, q) : 0;
            const double c = decode_cost(kc, q, l);
            if (c > 0 && (best.index < 0 || c < best.cost ||
                          (c == best.cost && kc.priority < m.kernels[size_t(best.index)].priority)))
                best = {int(i), c, l};
        }
        return best;
    };
    // The decode model: when the rules picked a kernel that carries it, the cheapest such kernel runs; a tie
    // keeps the rules' pick.
    if (const double picked = ours && h.index >= 0 ? decode_cost(m.kernels[size_t(h.index)], q) : -1;
        picked > 0) {
        DecodePick best = cheapest_decode();
        if (best.index < 0 || best.cost >= picked) best = {h.index, picked, 0};
        const bool moved = best.index != h.index || best.log2_split > 0;
        steps.push_back(
            {best.index, 1 << best.log2_split, true,
             moved ? fmt::format("decode model: {:.0f}{} against {:.0f} for {} (f4gemm sm_90a policy, "
                                 "docs/HEURISTIC.md)",
                                 best.cost,
                                 best.log2_split > 0 ? fmt::format(" in {} splits of K", 1 << best.log2_split)
                                                     : std::string(),
                                 picked, m.kernels[size_t(h.index)].co_name)
                   : fmt::format("decode model: {:.0f}, the cheapest of the modelled kernels (f4gemm "
                                 "sm_90a policy)",
                                 picked)});
        if (moved) h.log2_k_split = best.log2_split;
        h.index = best.index;
    }
    // Split-K where the tiles leave SMs idle (the swap kernels of M = 17..64, one CTA per SM: N = 8192 gives
    // 64 tiles of 128 rows on 132 SMs): the largest 2^L (L <= 4) with tiles x 2^L within one wave, each split
    // keeping at least 8192 of K (4096 for a 32-row tile at M = 33..64, which runs two row tiles: half-height
    // tiles below). Measured: 64 x 8192 x 28672 promoted 162 us unsplit, 105 us in 2.
    const auto split_rule = [&]() {
        if (!(ours && h.index >= 0 && q.log2_k_split == 0 && h.log2_k_split == 0)) return;
        const KernelConfig& kc = m.kernels[size_t(h.index)];
        const int min_k = q.m > 32 && kc.tile_m == 32 ? 4096 : 8192;
        if (kc.split_k && kc.abi == KernelAbi::Sm90v1 && kc.tile_m > 16 && q.num_cu > 0) {
            const long tiles = tiles_of(kc, q), slots = cta_slots(kc, q);
            const int l = largest_split(tiles, slots, kernel_k(kc, q.k), 4, min_k);
            if (l > 0) {
                steps.push_back(
                    {h.index, 1 << l, true,
                     fmt::format("split-K {}: {} tiles fill {} of {} CTA slots, {} with the split "
                                 "(f4gemm sm_90a policy)",
                                 1 << l, tiles, tiles, slots, tiles << l)});
                h.log2_k_split = l;
            }
        }
    };
    split_rule();
    // Half-height swap tiles at M = 33..64, the reasoning of the decode-kernel rule below one tile up: where
    // the 64-row tile's CTAs (splits included) still fill at most half of the CTA slots, the 32-row swap
    // kernel of the same weight rows runs twice the CTAs (an exact kernel also serves a promoted request: a
    // stricter contract), and may split down to 4096 of K per split. Measured (PERF.md entry 34): 64 x 8192 x
    // 8192 39.4 us on ws_swap_32x128_fs against 47-50 on the 64-row kernels; 64 x 4096 x 14336 45.3 in 2
    // splits against 60.6 unsplit and 44.4 for the 64-row swap kernel in 4 (below the 8192 the first split
    // rule keeps).
    if (ours && h.index >= 0 && q.log2_k_split == 0 && q.num_cu > 0 && q.m > 32 && q.m <= 64) {
        const KernelConfig& kc = m.kernels[size_t(h.index)];
        const long ctas = tiles_of(kc, q) << h.log2_k_split, slots = cta_slots(kc, q);
        if (decode_cost(kc, q) <= 0 && kc.tile_m == 64 && 2 * ctas <= slots) {
            int half = -1;
            for (size_t i = 0; i < m.kernels.size(); ++i) {
                const KernelConfig& o = m.kernels[i];
                if (o.tile_m == 32 && o.tile_n == kc.tile_n && o.abi == KernelAbi::Sm90v1 &&
                    decode_cost(o, q) <= 0 && servable(o) && offered_for_m(o, q.m) &&
                    (half < 0 || o.priority < m.kernels[size_t(half)].priority))
                    half = int(i);
            }
            if (half >= 0) {
                steps.push_back(
                    {half, 1, true,
                     fmt::format("half-height tiles: {} CTAs of {} fill {} of {} CTA slots; {} runs "
                                 "{} (f4gemm sm_90a policy, docs/HEURISTIC.md)",
                                 ctas, kc.co_name, ctas, slots, m.kernels[size_t(half)].co_name,
                                 tiles_of(m.kernels[size_t(half)], q))});
                h.index = half;
                h.log2_k_split = 0;
                split_rule();
            }
        }
    }
    // Decode kernels where the swap kernel leaves many SMs idle (M <= 64; N <= 11264 unsplit: 88 tiles of 128
    // rows or fewer on 132 SMs): its CTAs, splits included, fill at most two thirds of the CTA slots, while
    // the dec kernels' tiles of the same rows (16 or 32 activation rows, 32 to 80 weight rows) fill them. The
    // decode model picks among them. Measured (PERF.md entries 32, 34, 37): 32 x 4096 x 4096 29.2 us on the
    // swap kernel, 12.7 on dec_16x64_m2; 32 x 8192 x 8192 39.1 unsplit (34.7 in 2) against 27.2 on
    // dec_32x64_w8; 64 x 4096 x 4096 22.0 on the half-height swap kernel against 16.9; 80 tiles (N = 10240):
    // 32 x 10240 x 8192 39.0 against 32.7 on dec_32x80_w8, and 64 x 5120 x 5120 25.7 on the half-height swap
    // kernel (80 CTAs) against 22.9; the swap kernel stays the best from 108 tiles (N = 13824) up.
    if (ours && h.index >= 0 && q.log2_k_split == 0 && q.num_cu > 0) {
        const KernelConfig& kc = m.kernels[size_t(h.index)];
        const long ctas = tiles_of(kc, q) << h.log2_k_split, slots = cta_slots(kc, q);
        if (q.m <= 64 && decode_cost(kc, q) <= 0 && kc.abi == KernelAbi::Sm90v1 && kc.tile_m > 16 &&
            3 * ctas <= 2 * slots) {
            if (const DecodePick best = cheapest_decode(); best.index >= 0) {
                steps.push_back({best.index, 1 << best.log2_split, true,
                                 fmt::format("decode kernels: {} CTAs of {} fill {} of {} CTA slots; decode "
                                             "model: {:.0f}, the cheapest (f4gemm sm_90a policy, "
                                             "docs/HEURISTIC.md)",
                                             ctas, kc.co_name, ctas, slots, best.cost)});
                h.index = best.index;
                h.log2_k_split = best.log2_split;
            }
        }
    }
    // The wgmma decode tiles at M = 33..64 (dec kernels of 128 weight rows: dec_16x128_wg12,
    // dec_32x128_wg12_c2), which run ceil(M / tile_M) row tiles, each streaming its weight rows once: where
    // their CTAs, a row tile weighed by its rows (M = 48 on 32-row tiles: 1.5 per weight tile), fill more
    // than half of the CTA slots in one wave, the one with the most such CTAs runs, unless the pick is an
    // A pre-pass tile (cv_64x64_p, cv_64x80_p: 31.4 and 39.8 us at 64 x 8192^2 and 48 x 10240 x 8192,
    // against 33.3 and 44.5; since session 27 the exact ones too, cv_64x80: 37.1 against 43.8 at 48 x 10240 x
    // 8192, PERF.md entry 62) that already fills more than half in one wave, its splits counted. Since
    // session 27 the 64-row A pre-pass tile of the request's mode competes on the same count in the
    // largest split that keeps one wave and (since session 32, its 256-K stages) 3584 of K per split, as the
    // 32-row split tile does (8192 before), and wins a tie as the taller tile: 64 x 8192 x 28672 exact
    // pab_64x128 in 2 splits 82.3 us against 93.0 for dec_32x128_wg12_c2 (128 CTAs each); since its 256-K
    // stages (PERF.md entry 73) 64 x 8192^2 exact in 2 splits of 4096 29.8 us against 33.0 for
    // dec_32x128_wg12_c2, 64 x 4096 x 14336 promoted in 4 splits of 3584 28.4 against 31.3 for
    // dec_32x128_wg12_c2_s in 2.
    // Measured (PERF.md entry 57, docs/results/2026-12-02b/call2/tune_m33_64.log): 64 x 8192 x 28672 93.2 us
    // on dec_32x128_wg12_c2 (128 CTAs) against 118.9 for the half-height swap kernel; 64 x 4096 x 14336 35.8
    // on dec_16x128_wg12 (128) against 42.2 for the swap kernel in 2 splits; 48 x 10240 x 8192 44.5 on the
    // 32-row tile (120 weighed) against 52.4 on pab_64x128; where they would take a second wave (64 x 10240 x
    // 8192, 160 CTAs: 62.0 against 52.4) or fill half or less (64 x 1024 x 4096) they lose.
    if (ours && h.index >= 0 && q.log2_k_split == 0 && q.num_cu > 0 && q.m > 32 && q.m <= 64) {
        const KernelConfig& pick = m.kernels[size_t(h.index)];
        const bool pick_fills =
            pick.abi == KernelAbi::Sm90pa1 &&
            fills_half_in_one_wave(double(tiles_of(pick, q) << h.log2_k_split), cta_slots(pick, q));
        const long rows = (q.m + 7) / 8 * 8;
        int best = -1, best_l = 0;
        double best_ctas = 0;
        for (size_t i = 0; i < m.kernels.size() && !pick_fills; ++i) {
            const KernelConfig& kc = m.kernels[i];
            // The 64-row A pre-pass tile of the request's mode (pab_64x128, pab_64x128_p) competes too, split
            // as far as one wave allows with at least kMinSplitKTall of K per split, as the 32-row tile.
            const bool prepass = kc.abi == KernelAbi::Sm90pa1 && kc.split_k && kc.tile_m == 64 &&
                                 kc.tile_n == 128 && in_pool(kc) && offered_for_m(kc, q.m);
            if (!prepass && (!servable(kc) || !offered_for_m(kc, q.m) || kc.decode_round <= 0 ||
                             kc.tile_n != 128 || kc.tile_m > 32))
                continue;
            const int l = prepass ? largest_split(tiles_of(kc, q), cta_slots(kc, q), kernel_k(kc, q.k), 2,
                                                  kMinSplitKTall)
                          : kc.split_k ? decode_split(kc, q)
                                       : 0;
            if (!prepass && kc.split_k && l == 0) continue;  // unsplit, the split twin is its unsplit twin
            const double ctas =
                double(rows) / kc.tile_m * double((q.n + kc.tile_n - 1) / kc.tile_n) * (1 << l);
            if (!fills_half_in_one_wave(ctas, cta_slots(kc, q))) continue;
            const KernelConfig* b = best >= 0 ? &m.kernels[size_t(best)] : nullptr;
            // Most CTAs; on a tie the taller tile (it streams each weight byte to fewer row tiles), then
            // priority.
            if (!b || ctas > best_ctas ||
                (ctas == best_ctas &&
                 (kc.tile_m > b->tile_m || (kc.tile_m == b->tile_m && kc.priority < b->priority))))
                best = int(i), best_ctas = ctas, best_l = l;
        }
        if (best >= 0 && (best != h.index || best_l != h.log2_k_split)) {
            steps.push_back(
                {best, 1 << best_l, true,
                 fmt::format("{}: {:.0f} CTAs weighed by their rows{} fill more than "
                             "half of {} CTA slots in one wave; {} runs instead of {} (f4gemm "
                             "sm_90a policy, docs/HEURISTIC.md)",
                             m.kernels[size_t(best)].abi == KernelAbi::Sm90pa1
                                 ? "wgmma decode tiles and the 64-row A pre-pass tile"
                                 : "wgmma decode tiles",
                             best_ctas, best_l ? fmt::format(" in {} splits of K", 1 << best_l) : "",
                             cta_slots(m.kernels[size_t(best)], q), m.kernels[size_t(best)].co_name,
                             pick.co_name)});
            h.index = best;
            h.log2_k_split = best_l;
        }
    }
    return h;
}

}  // namespace

Selection select(const Manifest& m, const std::string& kernel, const HeuristicQuery& q, bool explain,
                 const TunedTable* tuned, Accum accum) {
    Selection s;
    if (!kernel.empty()) {
        s.index = find_kernel(m, kernel);
        if (s.index < 0) {
            // A dev-ladder kernel (built beside the shipped ones, in dev/ with its own manifest) is named
            // with its folder: say so rather than only "not in the manifest".
            bool in_dev = false;
            const std::string dev = m.dir + "/dev";
            if (!m.dir.empty()) {
                try {
                    in_dev = find_kernel(load_manifest(dev), kernel) >= 0;
                } catch (const Error&) {  // no dev ladder there (an installed tree, aiter's folder)
                }
            }
            if (in_dev)
                throw Error(Errc::NotFound, "kernel '" + kernel + "' is in the dev ladder, not in " + m.dir +
                                                "'s manifest: pass --co-dir " + dev);
            throw Error(Errc::NotFound,
                        "kernel '" + kernel + "' not in the manifest: see f4gemm --list for the names");
        }
        need_mode(m.kernels[size_t(s.index)], kernel, accum);
        s.log2_k_split = q.log2_k_split > 0 ? q.log2_k_split : 0;
        return s;
    }
    std::vector<HeuristicStep> steps;
    if (tuned && q.log2_k_split == 0) {
        const TunedEntry* e = tuned->find(q.num_cu, q.m, q.n, q.k, accum);
        // A promoted request that no promoted kernel is offered for (M outside every promoted kernel's min_m
        // and max_m) is served by the exact kernels, so the exact mode's tuned row serves it too.
        const bool promoted_offered = std::any_of(
            m.kernels.begin(), m.kernels.end(),
            [&](const KernelConfig& kc) { return kc.accum == Accum::Promoted && offered_for_m(kc, q.m); });
        if (!e && accum == Accum::Promoted && !promoted_offered)
            e = tuned->find(q.num_cu, q.m, q.n, q.k, Accum::Exact);
        if (e) {
            const int idx = find_kernel(m, e->kernel);
            if (idx >= 0 && accum_allows(accum, m.kernels[size_t(idx)].accum)) {
                s.index = idx;
                s.log2_k_split = m.kernels[size_t(idx)].split_k ? e->log2_k_split : 0;
                s.tuned = true;
                return s;
            }
            if (idx >= 0)
                steps.push_back({idx, 0, false,
                                 "skip tuned row (" + tuned->path + "): the kernel implements " +
                                     accum_name(m.kernels[size_t(idx)].accum) +
                                     " accumulation, the request is " + accum_name(accum) +
                                     " (f4gemm accum policy)"});
        }
    }
    // Our sm_90a kernels: before aiter's rule, drop tiles taller than the smallest tile that covers
    // M in one row of tiles. aiter's rule counts rounds and then prefers the larger compute/memory
    // ratio, so for M = 1..16 it picked the 128-row tile, measured 2x slower than the 16-row decode
    // tile (docs/PERF.md entry 5). aiter manifests are left to the exact port.
    const bool ours =
        !m.kernels.empty() && std::all_of(m.kernels.begin(), m.kernels.end(),
                                          [](const KernelConfig& kc) { return kc.abi != KernelAbi::Aiter; });
    using Pool = std::function<bool(const KernelConfig&)>;
    const Pool exact = [](const KernelConfig& kc) { return kc.accum == Accum::Exact; };
    const Pool promoted = [](const KernelConfig& kc) { return kc.accum == Accum::Promoted; };
    const Pool any = [](const KernelConfig&) { return true; };
    // The smallest tile_M >= M among the kernels `pool` admits that max_m and min_m offer (0: none).
    const auto cover_of = [&](const Pool& pool) {
        int cover = 0;
        if (ours)
            for (const KernelConfig& kc : m.kernels)
                if (pool(kc) && offered_for_m(kc, q.m) && kc.tile_m >= q.m &&
                    (cover == 0 || kc.tile_m < cover))
                    cover = kc.tile_m;
        return cover;
    };
    const bool has_exact = std::any_of(m.kernels.begin(), m.kernels.end(), exact);
    const bool has_promoted = std::any_of(m.kernels.begin(), m.kernels.end(), promoted);
    if (accum == Accum::Exact) {
        if (!has_exact)
            throw Error(Errc::NotFound, "the manifest " + m.path +
                                            " offers only promoted kernels: pass --accum promoted, or point "
                                            "--co-dir at a manifest with exact kernels");
        for (size_t i = 0; i < m.kernels.size(); ++i)
            if (!exact(m.kernels[i]))
                steps.push_back({int(i), 0, false,
                                 "skip: implements promoted accumulation, the request is exact (f4gemm accum "
                                 "policy; --accum promoted allows it)"});
        s.heuristic = policy_pass(m, q, explain, ours, cover_of(exact), exact, steps);
    } else if (!has_promoted) {
        steps.push_back(
            {-1, 0, false,
             "promoted request: the manifest has no promoted kernel, the exact kernels serve it (a "
             "stricter contract, within the promoted bound)"});
        s.heuristic = policy_pass(m, q, explain, ours, cover_of(exact), exact, steps);
    } else {
        // The promoted kernels first, offered where their tile is the smallest covering M among all kernels
        // (a taller tile than needed gains nothing); then, when none is offered, the exact kernels.
        steps.push_back({-1, 0, false, "promoted request: the promoted kernels are considered first"});
        s.heuristic = policy_pass(m, q, explain, ours, cover_of(any), promoted, steps);
        if (s.heuristic.index < 0) {
            steps.push_back(
                {-1, 0, false,
                 "fallback: no promoted kernel is offered for M=" + std::to_string(q.m) +
                     " N=" + std::to_string(q.n) + " K=" + std::to_string(q.k) +
                     "; the exact kernels serve the promoted request (a stricter contract, within the "
                     "promoted bound)"});
            s.heuristic = policy_pass(m, q, explain, ours, cover_of(exact), exact, steps);
        }
    }
    s.index = s.heuristic.index;
    s.log2_k_split = s.heuristic.log2_k_split;
    if (explain) s.heuristic.steps = std::move(steps);
    if (s.index < 0 && q.log2_k_split > 0)
        throw Error(Errc::NotFound,
                    "heuristic found no kernel offered for M=" + std::to_string(q.m) +
                        " that splits K (--splitk " + std::to_string(q.log2_k_split) +
                        "): pass --splitk 0 or -1, or force a split-capable kernel with --kernel "
                        "(f4gemm --list, column splitK)");
    if (s.index < 0)
        throw Error(Errc::NotFound,
                    "heuristic found no kernel for this shape: force one with --kernel or check "
                    "--bpreshuffle");
    return s;
}

// ---- Session -------------------------------------------------------------------------------------

namespace {

std::string shape_str(int m, int n, int k) {
    return fmt::format("M={} N={} K={}", m, n, k);
}

bool all_packed_weight(const Manifest& m) {
    return !m.kernels.empty() && std::all_of(m.kernels.begin(), m.kernels.end(), [](const KernelConfig& kc) {
        return kc.b_layout == BLayout::Frag16S;
    });
}

// The one K rule of the packed-weight kernels, the CPU and the host statics: one E8M0 scale per 32 elements.
void need_k(long k, const char* what) {
    if (k <= 0 || k % 32)
        throw Error(Errc::InvalidArgument,
                    fmt::format("{} must be a positive multiple of 32 (got {}): MXFP4 has one scale per 32 "
                                "elements; pad K with zero blocks",
                                what, k));
}

// A GEMM on the CPU backend.
class CpuJob : public Job {
public:
    CpuJob(const Problem& p, int log2_k_split) : p_(p), l_(log2_k_split) {}
    std::vector<uint16_t> run_and_fetch() override { return cpu_run(p_, l_); }
    double time_us(int iters, int warmup) override { return cpu_time_us(p_, l_, iters, std::min(warmup, 1)); }

private:
    const Problem& p_;
    int l_;
};

class GpuJob : public Job {
public:
    GpuJob(Launcher& l, int index, int log2_k_split, const Problem& p) : g_(l, index, log2_k_split, p) {}
    std::vector<uint16_t> run_and_fetch() override { return g_.run_and_fetch(); }
    double time_us(int iters, int warmup) override { return g_.time_us(iters, warmup); }

private:
    GpuGemm g_;
};

}  // namespace

Session::Session(const SessionOptions& o) {
    backend_ = o.open_device ? resolve_backend(o.backend) : o.backend;
    const bool want_manifest = gpu() || !o.open_device;
    if (want_manifest) {
        co_ = resolve_co_dir(o.co_dir, backend_ != BackendKind::Hip);
        if (co_.dir.empty())
            throw Error(Errc::Manifest, "no code-object directory: pass --co-dir or set AITER_ASM_DIR");
        manifest_ = load_manifest(co_.dir);
    }
    if (o.open_device && backend_ == BackendKind::Cuda) dev_ = make_cuda_device(o.device);
    if (o.open_device && backend_ == BackendKind::Hip) dev_ = make_hip_device(o.device);
    if (dev_) manifest_ = filter_for_device(manifest_, backend_, dev_->props().arch);
    if (want_manifest) tuned_ = load_tuned_for(manifest_.dir, o.tuned);
    packed_weight_ = all_packed_weight(manifest_);
    if (o.num_cu < 0)
        throw Error(Errc::InvalidArgument, fmt::format("--num-cu must be positive (got {})", o.num_cu));
    num_cu_ = o.num_cu > 0    ? o.num_cu
              : dev_          ? dev_->props().num_cu
              : want_manifest ? default_num_cu(manifest_)
                              : 0;
    lab_slab_n_ = lab_pp_slab_n();
    if (dev_) launcher_ = std::make_unique<Launcher>(*dev_, manifest_);
}

Session::~Session() {
    launcher_.reset();  // frees the workspace before the device goes
}

void Session::check_shape(int m, int n, int k) const {
    const bool aiter = std::any_of(manifest_.kernels.begin(), manifest_.kernels.end(),
                                   [](const KernelConfig& kc) { return kc.abi == KernelAbi::Aiter; });
    if (aiter) return check_shape_aiter(m, n, k);  // the original's rules and messages

    if (m <= 0)
        throw Error(Errc::InvalidArgument,
                    fmt::format("M must be positive (got {}): pass -m N with N >= 1", m));
    if (n <= 0)
        throw Error(Errc::InvalidArgument,
                    fmt::format("N must be positive (got {}): pass -n N with N >= 1", n));
    need_k(k, "K");
    if (m > (1 << 30) || n > (1 << 30) || k > (1 << 30))
        throw Error(Errc::InvalidArgument,
                    fmt::format("{} is too large for 32-bit kernel arguments: split the problem",
                                shape_str(m, n, k)));
    const bool any_takes = std::any_of(manifest_.kernels.begin(), manifest_.kernels.end(),
                                       [&](const KernelConfig& kc) { return kernel_takes_nk(kc, n, k); });
    if (!any_takes && !manifest_.kernels.empty())
        // our plain-B kernels (the dev ladder): whole 256-K stages and 16-row groups, no padding
        throw Error(
            Errc::InvalidArgument,
            fmt::format("the plain-B kernels of {} need K % 256 == 0 and N % 16 == 0 (got K={} N={}): use "
                        "the shipped manifest (the packed weight), which takes any N and K % 32",
                        manifest_.path, k, n));
}

Choice Session::select(const GemmRequest& r) const {
    check_shape(r.m, r.n, r.k);
    Choice c;
    c.num_cu = num_cu_;
    c.splitk = r.splitk;
    c.launch_k = r.k;
    c.accum = r.accum;
    if (!gpu() && manifest_.kernels.empty()) {  // the CPU backend: no kernel to choose
        if (r.splitk < -1 || r.splitk > 4)
            throw Error(
                Errc::InvalidArgument,
                fmt::format("--splitk must be -1..4 (got {}): log2 of the split, -1 = heuristic", r.splitk));
        c.log2_k_split = std::max(r.splitk, 0);
        if (r.explain)
            c.steps.push_back({-1, 0, true,
                               fmt::format("cpu backend: no kernel to choose; it runs the exact mode (exact "
                                           "32-element blocks, fp32 across them) for every request{}",
                                           r.accum == Accum::Promoted ? ", within the promoted bound" : "")});
        return c;
    }
    HeuristicQuery q;
    q.m = r.m;
    q.n = r.n;
    q.k = r.k;
    q.num_cu = num_cu_;
    q.log2_k_split = r.splitk;
    q.bpreshuffle = r.bpreshuffle >= 0 ? r.bpreshuffle : default_bpreshuffle(manifest_);
    c.bpreshuffle = q.bpreshuffle;
    const Selection s = f4gemm::select(manifest_, r.kernel, q, r.explain, &tuned_, r.accum);
    c.index = s.index;
    c.log2_k_split = s.log2_k_split;
    c.tuned = s.tuned;
    c.steps = s.heuristic.steps;
    const KernelConfig& kc = manifest_.kernels[size_t(c.index)];
    if (kc.abi != KernelAbi::Aiter && !kernel_takes_nk(kc, r.n, r.k))
        throw Error(
            Errc::InvalidArgument,
            fmt::format("kernel {} reads plain B and needs K % 256 == 0 and N % 16 == 0 (got K={} N={}): "
                        "use a kernel of the shipped manifest (packed weight), which takes any N and K % 32",
                        kc.co_name, r.k, r.n));
    c.launch_k = kernel_k(kc, r.k);
    c.plan = make_launch_plan(kc, r.m, r.n, c.launch_k, c.log2_k_split, r.has_c);
    c.slab_n = pp_launch_slab_n(kc, r.m, r.n, c.launch_k, num_cu_, lab_slab_n_);
    return c;
}

Accum Session::kernel_accum(const Choice& c) const {
    if (c.index < 0 || c.index >= int(manifest_.kernels.size()))
        return Accum::Exact;  // the CPU computes exactly
    return manifest_.kernels[size_t(c.index)].accum;
}

std::unique_ptr<Job> Session::prepare(const Choice& c, const Problem& p) {
    if (!launcher_) return std::make_unique<CpuJob>(p, c.log2_k_split);
    if (c.index < 0) throw Error(Errc::InvalidArgument, "no kernel chosen: call Session::select first");
    return std::make_unique<GpuJob>(*launcher_, c.index, c.log2_k_split, p);
}

size_t Session::weight_bytes(int n, int k) {
    if (n <= 0)
        throw Error(Errc::InvalidArgument,
                    fmt::format("weight N must be positive (got {}): pass the weight's rows", n));
    need_k(k, "weight K");
    return weight_info(size_t(n), size_t(k)).bytes;
}

std::vector<uint8_t> Session::pack_weight_host(const uint8_t* b, const uint8_t* b_scale, int n, int k) {
    weight_bytes(n, k);  // names a bad n or k
    return f4gemm::pack_weight(b, b_scale, size_t(n), size_t(k));
}

void Session::unpack_weight_host(const uint8_t* w, size_t bytes, std::vector<uint8_t>& b,
                                 std::vector<uint8_t>& b_scale, int* n, int* k) {
    WeightInfo info;
    unpack_weight(w, bytes, b, b_scale, &info);
    if (n) *n = int(info.n);
    if (k) *k = int(info.k);
}

void Session::quantize_host(const float* x, size_t rows, size_t k, uint8_t* packed, uint8_t* scales) {
    need_k(long(k), "K");
    quantize_mxfp4(x, rows, k, packed, scales);
}

void Session::load_util() {
    if (util_pack_) return;
    if (!dev_ || backend_ != BackendKind::Cuda)
        throw Error(Errc::Unsupported,
                    "packing on the device needs the CUDA backend: pack on the host "
                    "(f4gemm pack --layout weight) or open the session on an NVIDIA GPU");
    const std::string path = manifest_.dir + "/" + kUtilCubin;
    void* module = dev_->load_module(path);  // a missing file is named (Errc::NotFound)
    util_pack_ = dev_->get_function(module, F4GEMM_UTIL_PACK_WEIGHT);
    util_pad_a_ = dev_->get_function(module, F4GEMM_UTIL_PAD_A);
    util_quantize_ = dev_->get_function(module, F4GEMM_UTIL_QUANTIZE);
}

void Session::launch_util(void* fn, size_t grid, const void* args, size_t bytes, uint64_t stream) {
    Dim3 g, b;
    b.x = F4GEMM_UTIL_THREADS;
    g.x = unsigned(std::max<size_t>(1, std::min<size_t>(grid, 1u << 20)));  // the kernels stride past it
    dev_->set_stream(stream);
    try {
        dev_->launch(fn, g, b, 0, args, bytes);
    } catch (...) {
        dev_->set_stream(0);
        throw;
    }
    dev_->set_stream(0);
}

namespace {
void need_ptr(uint64_t p, const char* name, const char* fix) {
    if (!p) throw Error(Errc::InvalidArgument, fmt::format("{} is a null device pointer: {}", name, fix));
}
void need_room(Device& dev, DevPtr p, size_t bytes, const char* name, const char* fix) {
    const size_t have = dev.bytes_from(p);
    if (have && have < bytes)
        throw Error(Errc::InvalidArgument,
                    fmt::format("{} at 0x{:x} has {} bytes to the end of its allocation, {} are needed: {}",
                                name, p, have, bytes, fix));
}
}  // namespace

void Session::pack_weight(DevPtr b, DevPtr b_scale, int n, int k, DevPtr w, uint64_t stream) {
    const size_t bytes = weight_bytes(n, k);
    need_ptr(b, "b", "pass the plain weight [n, k/2] on the device");
    need_ptr(b_scale, "b_scale", "pass the weight's scales [n, k/32] on the device");
    need_ptr(w, "w", "allocate f4gemm_weight_bytes(n, k) bytes for the packed weight");
    load_util();
    need_room(*dev_, w, bytes, "w", "allocate f4gemm_weight_bytes(n, k) bytes for the packed weight");
    need_room(*dev_, b, size_t(n) * size_t(k / 2), "b", "b must hold n * k/2 bytes (packed e2m1 [n, k/2])");
    need_room(*dev_, b_scale, size_t(n) * size_t(k / 32), "b_scale", "b_scale must hold n * k/32 bytes");
    F4gemmPackWeightArgs a;
    std::memset(&a, 0, sizeof a);
    a.b = b;
    a.b_scale = b_scale;
    a.w = w;
    a.n = uint32_t(n);
    a.k = uint32_t(k);
    a.ldb = uint32_t(k / 2);
    a.lds = uint32_t(k / 32);
    launch_util(util_pack_, util_pack_weight_grid(size_t(n), size_t(k)), &a, sizeof a, stream);
    if (WeightRecord* r = find_weight(w))
        *r = {w, n, k};
    else
        weights_.push_back({w, n, k});
}

Session::WeightRecord* Session::find_weight(DevPtr w) {
    const auto it =
        std::find_if(weights_.begin(), weights_.end(), [&](const WeightRecord& r) { return r.w == w; });
    return it == weights_.end() ? nullptr : &*it;
}

void Session::operand_bytes(int m, int k, size_t* data_bytes, size_t* scale_bytes) {
    if (m <= 0)
        throw Error(Errc::InvalidArgument, fmt::format("M must be positive (got {}): pass the rows of A", m));
    need_k(k, "K");
    const size_t rows = a_m_pad(size_t(m)), kp = w_k_pad(size_t(k));
    if (data_bytes) *data_bytes = rows * (kp / 2);
    if (scale_bytes) *scale_bytes = rows * (kp / 32);
}

void Session::pad_a(DevPtr a, DevPtr a_scale, int m, int k, DevPtr a_out, DevPtr a_scale_out,
                    uint64_t stream) {
    size_t db = 0, sb = 0;
    operand_bytes(m, k, &db, &sb);
    need_ptr(a, "a", "pass plain A [m, k/2] on the device");
    need_ptr(a_scale, "a_scale", "pass A's scales [m, k/32] on the device");
    need_ptr(a_out, "a_out", "allocate f4gemm_operand_bytes(m, k) data bytes");
    need_ptr(a_scale_out, "a_scale_out", "allocate f4gemm_operand_bytes(m, k) scale bytes");
    load_util();
    need_room(*dev_, a, size_t(m) * size_t(k / 2), "a", "a must hold m * k/2 bytes");
    need_room(*dev_, a_scale, size_t(m) * size_t(k / 32), "a_scale", "a_scale must hold m * k/32 bytes");
    need_room(*dev_, a_out, db, "a_out", "allocate f4gemm_operand_bytes(m, k) data bytes");
    need_room(*dev_, a_scale_out, sb, "a_scale_out", "allocate f4gemm_operand_bytes(m, k) scale bytes");
    F4gemmPadAArgs x;
    std::memset(&x, 0, sizeof x);
    x.a_out = a_out;
    x.a_scale_out = a_scale_out;
    x.a = a;
    x.a_scale = a_scale;
    x.m = uint32_t(m);
    x.k = uint32_t(k);
    x.lda = uint32_t(k / 2);
    x.lds = uint32_t(k / 32);
    launch_util(util_pad_a_, util_pad_a_grid(size_t(m), size_t(k)), &x, sizeof x, stream);
}

void Session::quantize(DevPtr x, bool is_bf16, int m, int k, int ldx, DevPtr a_out, DevPtr a_scale_out,
                       uint64_t stream) {
    size_t db = 0, sb = 0;
    operand_bytes(m, k, &db, &sb);
    if (ldx < k)
        throw Error(Errc::InvalidArgument,
                    fmt::format("row pitch ldx ({}) is below K ({}): pass the input's row stride in elements",
                                ldx, k));
    need_ptr(x, "x", "pass the activations [m, k] on the device");
    need_ptr(a_out, "a_out", "allocate f4gemm_operand_bytes(m, k) data bytes");
    need_ptr(a_scale_out, "a_scale_out", "allocate f4gemm_operand_bytes(m, k) scale bytes");
    load_util();
    const size_t elem = is_bf16 ? 2 : 4;
    need_room(*dev_, x, (size_t(m - 1) * size_t(ldx) + size_t(k)) * elem, "x",
              "x must hold m rows of ldx elements");
    need_room(*dev_, a_out, db, "a_out", "allocate f4gemm_operand_bytes(m, k) data bytes");
    need_room(*dev_, a_scale_out, sb, "a_scale_out", "allocate f4gemm_operand_bytes(m, k) scale bytes");
    F4gemmQuantizeArgs q;
    std::memset(&q, 0, sizeof q);
    q.a_out = a_out;
    q.a_scale_out = a_scale_out;
    q.x = x;
    q.m = uint32_t(m);
    q.k = uint32_t(k);
    q.ldx = uint32_t(ldx);
    q.dtype = is_bf16 ? F4GEMM_UTIL_DTYPE_BF16 : F4GEMM_UTIL_DTYPE_FP32;
    launch_util(util_quantize_, util_quantize_grid(size_t(m), size_t(k)), &q, sizeof q, stream);
}

void Session::check_weight(DevPtr w, int n, int k) {
    const auto packed_for = [&](long pn, long pk) {
        if (pn != n || pk != k)
            throw Error(
                Errc::InvalidArgument,
                fmt::format("the weight at 0x{:x} was packed for N={} K={}, this GEMM has N={} K={}: pass "
                            "the weight packed for this shape, or pack it again",
                            w, pn, pk, n, k));
    };
    WeightRecord* r = find_weight(w);
    if (r && r->n == n && r->k == k) return;
    // A weight this session did not pack (another handle, a file), or a record that disagrees (the buffer may
    // have been freed and another weight packed at its address, by another handle): read its header, when a
    // synchronous copy is allowed (not while the stream is captured into a graph).
    if (r && dev_->capturing()) return packed_for(r->n, r->k);
    if (dev_->capturing())
        throw Error(
            Errc::InvalidArgument,
            fmt::format("the weight at 0x{:x} was not packed by this session and the stream is being "
                        "captured: run one GEMM with it (or pack it with this session) before capture",
                        w));
    F4gemmWeightHeader h;
    dev_->copy_to_host(&h, w, sizeof h);
    if (h.magic != F4GEMM_W_MAGIC)
        throw Error(Errc::InvalidArgument,
                    fmt::format("the buffer at 0x{:x} is not a packed weight (no F4GW header): pack B with "
                                "f4gemm_pack_weight first",
                                w));
    packed_for(long(h.n), long(h.k));
    if (r)
        *r = {w, n, k};
    else
        weights_.push_back({w, n, k});
}

void Session::gemm(const DeviceGemm& g, uint64_t stream) {
    if (!launcher_)
        throw Error(Errc::Unsupported, "GEMMs on device pointers need a GPU session: open it on a GPU");
    need_ptr(g.a, "a", "pass the A operand on the device");
    need_ptr(g.a_scale, "a_scale", "pass A's scales on the device");
    need_ptr(g.w, "w", "pass the packed weight (f4gemm_pack_weight)");
    need_ptr(g.d, "d", "pass the bf16 output [m, n] on the device");
    if (g.beta != 0.f) need_ptr(g.c, "c", "beta != 0 needs C [m, n] bf16, or pass beta 0");
    if (!std::isfinite(g.alpha) || !std::isfinite(g.beta))
        throw Error(Errc::InvalidArgument,
                    fmt::format("alpha and beta must be finite (got {}, {})", g.alpha, g.beta));
    GemmRequest r;
    r.m = g.m;
    r.n = g.n;
    r.k = g.k;
    r.has_c = g.c != 0;
    r.accum = g.accum;
    Choice c;
    if (g.kernel < 0) {
        c = select(r);
    } else {
        check_shape(g.m, g.n, g.k);
        if (g.kernel >= int(manifest_.kernels.size()))
            throw Error(Errc::InvalidArgument,
                        fmt::format("kernel index {} out of range: the manifest has {} kernels", g.kernel,
                                    manifest_.kernels.size()));
        need_mode(manifest_.kernels[size_t(g.kernel)], manifest_.kernels[size_t(g.kernel)].co_name, g.accum);
        c.index = g.kernel;
        c.accum = g.accum;
        c.log2_k_split = g.log2_k_split;
        const KernelConfig& kc = manifest_.kernels[size_t(c.index)];
        c.launch_k = kernel_k(kc, g.k);
        c.plan = make_launch_plan(kc, g.m, g.n, c.launch_k, c.log2_k_split, r.has_c);
    }
    const KernelConfig& kc = manifest_.kernels[size_t(c.index)];
    if (kc.b_layout != BLayout::Frag16S)
        throw Error(Errc::Unsupported,
                    fmt::format("kernel {} does not read the packed weight: device-pointer GEMMs "
                                "run the packed-weight kernels of the shipped manifest",
                                kc.co_name));
    dev_->set_stream(stream);
    try {
        need_room(*dev_, g.w, weight_bytes(g.n, g.k), "w",
                  "pass the whole packed weight (f4gemm_weight_bytes)");
        need_room(*dev_, g.d, size_t(g.m) * size_t(g.n) * 2, "d", "d must hold m * n bf16 values");
        need_room(*dev_, g.a, c.plan.a_bytes, "a",
                  "A must hold round_up(M,256) rows of round_up(K,256)/2 bytes (f4gemm_operand_bytes)");
        need_room(*dev_, g.a_scale, c.plan.sa_bytes, "a_scale",
                  "A's scales must hold round_up(M,256) rows of round_up(K,256)/32 bytes");
        check_weight(g.w, g.n, g.k);
        DevicePointers ptr;
        ptr.a = g.a;
        ptr.scale_a = g.a_scale;
        ptr.b = g.w + F4GEMM_W_HEADER;  // the kernels read the body
        ptr.c = g.c;
        ptr.d = g.d;
        launcher_->launch(c.index, c.plan, ptr, g.m, g.n, c.launch_k, g.alpha, g.beta, g.pdl);
    } catch (...) {
        dev_->set_stream(0);
        throw;
    }
    dev_->set_stream(0);
}

TunedTable Session::tune(const TuneSpec& o, const std::function<void(const std::string&)>& log) {
    if (backend_ != BackendKind::Cuda || !launcher_)
        throw Error(Errc::Device,
                    "f4gemm tune measures on the GPU and found none: run it on the machine you tune for");
    if (o.iters <= 0 || o.reps <= 0)
        throw Error(Errc::InvalidArgument, "--iters and --reps must be positive");
    for (const auto& sh : o.shapes) check_shape(sh[0], sh[1], sh[2]);
    Launcher& launcher = *launcher_;
    const Manifest& man = manifest_;
    const int sms = dev_->props().num_cu;
    // The kernels the mode allows: exact tunes the exact kernels, promoted every kernel (an exact one meets
    // the promoted bound). The table's rows carry the mode.
    size_t allowed = 0;
    for (const KernelConfig& kc : man.kernels) allowed += accum_allows(o.accum, kc.accum);
    if (!allowed)
        throw Error(Errc::NotFound,
                    fmt::format("the manifest {} has no kernel for --accum {}: pass --accum promoted",
                                man.path, accum_name(o.accum)));
    log(
        fmt::format("tuning {} shapes over {} kernels (accum {}) on {} ({} SMs); timing: {}, candidates "
                    "alternated in each "
                    "of {} repetitions",
                    o.shapes.size(), allowed, accum_name(o.accum), dev_->props().name, sms,
                    o.timing == Timing::Graph ? "CUDA graph replays" : "host launch loops", o.reps));
    TunedTable table;
    // Every candidate of a shape uploads the same problems: pack each operand image once per layout.
    launcher.set_image_cache(true);
    struct CacheOff {
        Launcher& l;
        ~CacheOff() { l.set_image_cache(false); }
    } cache_off{launcher};
    for (const auto& sh : o.shapes) {
        const int m = sh[0], n = sh[1], k = sh[2];
        // Operand sets generated once per shape; rotated past 2x the 60 MB L2 so that small shapes are not
        // timed out of the cache.
        const double set_bytes = double(m) * k / 2 + double(n) * k / 2 + double(m + n) * k / 32 + 2.0 * m * n;
        const int nsets = int(std::clamp(std::ceil(120e6 / set_bytes), 1.0, 8.0));
        std::vector<Problem> problems;
        for (int s = 0; s < nsets; ++s)
            problems.push_back(make_problem(m, n, k, 1.f, 0.f, DataKind::Seed, kSeedA + 7919u * uint32_t(s),
                                            kSeedB + 7919u * uint32_t(s), false));
        const bool verify = o.verify && double(m) * n * k <= o.verify_max_macs;
        if (o.verify && !verify)
            log(fmt::format(
                "  {}x{}x{}: too large for the CPU reference here, candidates not verified (bench/ "
                "verifies on the GPU)",
                m, n, k));
        // The float64 references, each computed once per shape when a candidate needs it: exact kernels are
        // judged by the exact contract, promoted ones by the promoted bound (their own contract).
        std::vector<float> ref;
        MxReferenceAbs ref_abs;
        struct ClearImages {
            Launcher& l;
            ~ClearImages() { l.clear_image_cache(); }  // before `problems` (the cache's keys) goes away
        } clear_images{launcher};
        // Screening: one timed launch per candidate (kernel x split); candidates more than 1.5x slower than
        // the best screen are dropped before the full measurement.
        struct Candidate {
            int index, l;
            double screen_us;
        };
        std::vector<Candidate> cands;
        for (size_t i = 0; i < man.kernels.size(); ++i) {
            const KernelConfig& kc = man.kernels[i];
            if (!accum_allows(o.accum, kc.accum)) continue;  // not for this mode
            if (!kernel_takes_nk(kc, n, k)) continue;        // plain-B kernels
            const int kk = kernel_k(kc, k);
            for (int l = 0; l <= (kc.split_k ? 4 : 0); ++l) {
                if (kk % (1 << l)) continue;
                const LaunchPlan plan = make_launch_plan(kc, m, n, kk, l, false);
                if (l > 0 && plan.gdz == 1) continue;  // the same launch as split 0
                GpuGemm g(launcher, int(i), l, problems[0]);
                if (verify) {
                    const std::vector<uint16_t> d = g.run_and_fetch();
                    VerifyResult v;
                    if (kc.accum == Accum::Promoted) {
                        if (ref_abs.ref.empty()) ref_abs = reference_abs_for(problems[0]);
                        v = verify_promoted_bf16(d.data(), size_t(n), ref_abs.ref.data(),
                                                 ref_abs.abs_sum.data(), size_t(m), size_t(n),
                                                 problems[0].alpha, promoted_cw(size_t(kk), chain_k(kc)));
                    } else {
                        if (ref.empty()) ref = reference_for(problems[0]);
                        v = verify_bf16(d.data(), size_t(n), ref.data(), size_t(m), size_t(n),
                                        default_tolerance(false));
                    }
                    if (!v.passed()) {
                        log(fmt::format("  {:<40} split {}: FAILED verification ({}), skipped", kc.co_name, l,
                                        accum_name(kc.accum)));
                        continue;
                    }
                }
                cands.push_back({int(i), l, g.time_us(1, 1)});
            }
        }
        if (cands.empty()) throw Error(Errc::NotFound, fmt::format("no kernel passed for {}x{}x{}", m, n, k));
        double best_screen = 1e30;
        for (const Candidate& c : cands) best_screen = std::min(best_screen, c.screen_us);
        TunedEntry best;
        best.us = 1e30;
        // The candidates that pass the screen are measured alternately: each repetition times every one of
        // them once, in turn, so that a clock or power drift during the shape falls on all alike.
        struct Measured {
            const Candidate* c;
            std::unique_ptr<GpuGemm> g;
            int iters;
            std::vector<double> t;
        };
        std::vector<Measured> live;
        for (const Candidate& c : cands) {
            const KernelConfig& kc = man.kernels[size_t(c.index)];
            if (c.screen_us > 1.5 * best_screen) {
                log(fmt::format("  {}x{}x{} {:<40} split {}: {:9.2f} us screen, dropped", m, n, k, kc.co_name,
                                c.l, c.screen_us));
                continue;
            }
            auto g = std::make_unique<GpuGemm>(launcher, c.index, c.l, problems[0]);
            for (size_t s = 1; s < problems.size(); ++s) g->add_rotation_set(problems[s]);
            const int iters = int(std::clamp(50000.0 / c.screen_us, 3.0, double(o.iters)));
            live.push_back({&c, std::move(g), iters, {}});
        }
        for (int r = 0; r < o.reps; ++r)
            for (Measured& x : live) x.t.push_back(x.g->time_us(x.iters, r == 0 ? o.warmup : 1, o.timing));
        for (Measured& x : live) {
            const KernelConfig& kc = man.kernels[size_t(x.c->index)];
            std::sort(x.t.begin(), x.t.end());
            const double us = x.t[x.t.size() / 2];
            const double tf = 2.0 * m * n * double(k) / us / 1e6;
            log(fmt::format("  {}x{}x{} {:<40} split {}: {:9.2f} us {:8.1f} TF/s (spread {:.1f}%, {} sets)",
                            m, n, k, kc.co_name, x.c->l, us, tf, 100.0 * (x.t.back() - x.t.front()) / us,
                            x.g->sets()));
            if (us < best.us) best = TunedEntry{sms, m, n, k, o.accum, kc.co_name, x.c->l, us, tf};
        }
        log(fmt::format(
            "best {}x{}x{} (accum {}): {} split {} ({:.2f} us); operand images packed {}, reused {}", m, n, k,
            accum_name(o.accum), best.kernel, best.log2_k_split, best.us, launcher.image_cache_size(),
            launcher.image_cache_hits()));
        table.entries.push_back(best);
    }
    return table;
}

}  // namespace f4gemm
