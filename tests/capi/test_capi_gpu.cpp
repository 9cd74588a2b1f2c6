// The C API end to end on the GPU (label gpu; skipped without one): W packed on the device by
// f4gemm_pack_weight is byte for byte the host packer's, and f4gemm_gemm on it computes the float64
// reference's nearest bf16 for shapes the old rules refused (K = 2880, N = 2880 and 1000); bad
// arguments get one line naming the value and the fix, and nothing is launched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "f4gemm/driver.hpp"
#include "f4gemm/f4gemm.h"
#include "f4gemm/formats.hpp"
#include "f4gemm/layout.hpp"
#include "f4gemm/verify.hpp"

using namespace f4gemm;

namespace {

struct Env {
    std::unique_ptr<Device> dev;  // for allocations and copies; the handle has its own context user
    f4gemm_handle* h = nullptr;
};

Env* env() {
    static Env* e = [] {
        auto* x = new Env;
        if (cuda_device_count() == 0) return x;
        x->dev = make_cuda_device(0);
        x->h = f4gemm_open(nullptr, 0);
        return x;
    }();
    return e;
}

#define REQUIRE_GPU()                                          \
    do {                                                       \
        if (!env()->dev) GTEST_SKIP() << "no NVIDIA GPU here"; \
        ASSERT_NE(env()->h, nullptr) << f4gemm_last_error();   \
    } while (0)

struct Buf {
    DevPtr p = 0;
    size_t n = 0;
    Buf(size_t bytes) : p(env()->dev->alloc(bytes)), n(bytes) { env()->dev->memset(p, 0, bytes); }
    ~Buf() { env()->dev->free(p); }
    void put(const std::vector<uint8_t>& v) { env()->dev->copy_to_device(p, v.data(), v.size()); }
    std::vector<uint8_t> get() {
        std::vector<uint8_t> v(n);
        env()->dev->copy_to_host(v.data(), p, n);
        return v;
    }
};

// One GEMM through the C API on fresh random operands; returns max_rel_err and checks every output.
void gemm_case(int m, int n, int k, DataKind kind, uint32_t seed) {
    f4gemm_handle* h = env()->h;
    const Problem p = make_problem(m, n, k, 1.f, 0.f, kind, seed, seed + 4444, false);
    Buf b(p.b.packed.size()), sb(p.b.scales.size());
    b.put(p.b.packed);
    sb.put(p.b.scales);
    const size_t wb = f4gemm_weight_bytes(h, n, k);
    ASSERT_GT(wb, 0u) << f4gemm_last_error();
    Buf w(wb);
    ASSERT_EQ(f4gemm_pack_weight(h, b.p, sb.p, n, k, w.p, 0), 0) << f4gemm_last_error();
    const std::vector<uint8_t> host = pack_weight(p.b.packed.data(), p.b.scales.data(), size_t(n), size_t(k));
    const std::vector<uint8_t> dev = w.get();
    ASSERT_EQ(host.size(), dev.size());
    size_t diff = 0;
    for (size_t i = 0; i < host.size(); ++i) diff += host[i] != dev[i];
    EXPECT_EQ(diff, 0u) << "device packer differs from the host packer in " << diff << " bytes at " << n
                        << "x" << k;

    size_t ab = 0, asb = 0;
    ASSERT_EQ(f4gemm_operand_bytes(h, m, k, &ab, &asb), 0) << f4gemm_last_error();
    const OperandImage a = make_a_image(p.a.packed.data(), p.a.scales.data(), size_t(m), size_t(k),
                                        ScaleLayout::Plain, w_k_pad(size_t(k)));
    ASSERT_EQ(a.data.size(), ab);
    ASSERT_EQ(a.scales.size(), asb);
    // The A operand padded on the device (f4gemm_pad_a) is the host's image byte for byte.
    Buf pa(p.a.packed.size()), psa(p.a.scales.size()), da(ab), dsa(asb), dd(size_t(m) * size_t(n) * 2);
    pa.put(p.a.packed);
    psa.put(p.a.scales);
    env()->dev->memset(da.p, 0xAB, ab);
    env()->dev->memset(dsa.p, 0xAB, asb);
    ASSERT_EQ(f4gemm_pad_a(h, pa.p, psa.p, m, k, da.p, dsa.p, 0), 0) << f4gemm_last_error();
    EXPECT_EQ(da.get(), a.data) << "f4gemm_pad_a data at " << m << "x" << k;
    EXPECT_EQ(dsa.get(), a.scales) << "f4gemm_pad_a scales at " << m << "x" << k;
    env()->dev->memset(dd.p, 0xFF, dd.n);  // poison: every output must be written
    ASSERT_EQ(f4gemm_gemm(h, -1, 0, F4GEMM_ACCUM_EXACT, m, n, k, 1.f, 0.f, da.p, dsa.p, w.p, 0, dd.p, 0), 0)
        << f4gemm_last_error();
    const std::vector<uint8_t> raw = dd.get();
    std::vector<uint16_t> d(size_t(m) * size_t(n));
    std::memcpy(d.data(), raw.data(), raw.size());
    const std::vector<float> ref = reference_for(p);
    const VerifyResult v =
        verify_bf16(d.data(), size_t(n), ref.data(), size_t(m), size_t(n), default_tolerance(false));
    EXPECT_TRUE(v.passed()) << m << "x" << n << "x" << k << ": max_rel_err " << v.max_rel_err
                            << " mismatches " << v.mismatches;
    EXPECT_LE(v.max_rel_err, 1.0 / 256) << m << "x" << n << "x" << k;
    int kern = -1, l2 = 0;
    ASSERT_EQ(f4gemm_select(h, m, n, k, 0, F4GEMM_ACCUM_EXACT, &kern, &l2), 0);
    std::printf("C API %dx%dx%d (%s): %s, max_rel_err %.6f, W %zu bytes\n", m, n, k, to_string(kind),
                f4gemm_kernel_name(h, kern), v.max_rel_err, wb);
}

}  // namespace

TEST(CApiGpu, PackAndGemmAnyModelShape) {
    REQUIRE_GPU();
    gemm_case(16, 2880, 2880, DataKind::Seed, 11);     // gpt-oss: K % 256 = 64
    gemm_case(1, 1000, 2880, DataKind::Gaussian, 12);  // N not a multiple of 16
    gemm_case(300, 2880, 2880, DataKind::Seed, 13);    // mid M
    gemm_case(600, 1000, 4096, DataKind::Seed, 14);    // the pre-pass kernel's M
    gemm_case(33, 4096, 8192, DataKind::WideScale, 15);
    gemm_case(2, 257, 96, DataKind::NanScale, 16);  // K below one 128-K chunk
}

TEST(CApiGpu, BadArgumentsAreOneLineAndLaunchNothing) {
    REQUIRE_GPU();
    f4gemm_handle* h = env()->h;
    EXPECT_EQ(f4gemm_weight_bytes(h, 256, 100), 0u);
    EXPECT_NE(std::string(f4gemm_last_error()).find("multiple of 32 (got 100)"), std::string::npos);
    EXPECT_EQ(f4gemm_weight_bytes(h, 0, 256), 0u);
    EXPECT_NE(std::string(f4gemm_last_error()).find("N must be positive (got 0)"), std::string::npos);
    const int n = 512, k = 512;
    Buf b(size_t(n) * k / 2), sb(size_t(n) * k / 32), w(f4gemm_weight_bytes(h, n, k));
    Buf small(1024);
    EXPECT_NE(f4gemm_pack_weight(h, b.p, sb.p, n, k, small.p, 0), 0);
    EXPECT_NE(std::string(f4gemm_last_error()).find("allocate f4gemm_weight_bytes"), std::string::npos)
        << f4gemm_last_error();
    EXPECT_NE(f4gemm_pack_weight(h, 0, sb.p, n, k, w.p, 0), 0);
    EXPECT_NE(std::string(f4gemm_last_error()).find("b is a null device pointer"), std::string::npos);
    std::vector<uint8_t> bs(sb.n, 127);
    sb.put(bs);
    ASSERT_EQ(f4gemm_pack_weight(h, b.p, sb.p, n, k, w.p, 0), 0) << f4gemm_last_error();
    size_t ab = 0, asb = 0;
    ASSERT_EQ(f4gemm_operand_bytes(h, 16, k, &ab, &asb), 0);
    Buf a(ab), sa(asb), d(16 * n * 2);
    // W packed for 512 x 512, used as 256 x 512 and 512 x 256: refused, naming both shapes.
    EXPECT_NE(f4gemm_gemm(h, -1, 0, F4GEMM_ACCUM_EXACT, 16, 256, k, 1.f, 0.f, a.p, sa.p, w.p, 0, d.p, 0), 0);
    EXPECT_NE(std::string(f4gemm_last_error()).find("packed for N=512 K=512, this GEMM has N=256 K=512"),
              std::string::npos)
        << f4gemm_last_error();
    EXPECT_NE(f4gemm_gemm(h, -1, 0, F4GEMM_ACCUM_EXACT, 16, n, 256, 1.f, 0.f, a.p, sa.p, w.p, 0, d.p, 0), 0);
    EXPECT_NE(f4gemm_gemm(h, -1, 0, F4GEMM_ACCUM_EXACT, 16, n, k, 1.f, 0.f, a.p, sa.p, 0, 0, d.p, 0), 0);
    EXPECT_NE(std::string(f4gemm_last_error()).find("w is a null device pointer"), std::string::npos);
    EXPECT_NE(f4gemm_gemm(h, -1, 0, F4GEMM_ACCUM_EXACT, 16, n, k, 1.f, 1.f, a.p, sa.p, w.p, 0, d.p, 0), 0);
    EXPECT_NE(std::string(f4gemm_last_error()).find("beta != 0 needs C"), std::string::npos);
    EXPECT_NE(f4gemm_gemm(h, -1, 0, F4GEMM_ACCUM_EXACT, 16, n, 100, 1.f, 0.f, a.p, sa.p, w.p, 0, d.p, 0), 0);
    EXPECT_NE(std::string(f4gemm_last_error()).find("K must be a positive multiple of 32 (got 100)"),
              std::string::npos);
    EXPECT_NE(f4gemm_gemm(h, -1, 0, F4GEMM_ACCUM_EXACT, 0, n, k, 1.f, 0.f, a.p, sa.p, w.p, 0, d.p, 0), 0);
    EXPECT_NE(std::string(f4gemm_last_error()).find("M must be positive (got 0)"), std::string::npos);
    Buf d_small(64);
    EXPECT_NE(f4gemm_gemm(h, -1, 0, F4GEMM_ACCUM_EXACT, 16, n, k, 1.f, 0.f, a.p, sa.p, w.p, 0, d_small.p, 0),
              0);
    EXPECT_NE(std::string(f4gemm_last_error()).find("d must hold m * n bf16 values"), std::string::npos);
    // A buffer that is no packed weight (no header), not packed by this handle: refused by its header.
    Buf other(f4gemm_weight_bytes(h, n, k));
    EXPECT_NE(f4gemm_gemm(h, -1, 0, F4GEMM_ACCUM_EXACT, 16, n, k, 1.f, 0.f, a.p, sa.p, other.p, 0, d.p, 0),
              0);
    EXPECT_NE(std::string(f4gemm_last_error()).find("not a packed weight"), std::string::npos)
        << f4gemm_last_error();
    // The accumulation mode: an unknown value, and a promoted kernel forced under an exact request.
    EXPECT_NE(f4gemm_gemm(h, -1, 0, 7, 16, n, k, 1.f, 0.f, a.p, sa.p, w.p, 0, d.p, 0), 0);
    EXPECT_NE(std::string(f4gemm_last_error()).find("accum 7: unknown mode"), std::string::npos)
        << f4gemm_last_error();
    for (int i = 0; i < f4gemm_num_kernels(h); ++i) {
        const int mode = f4gemm_kernel_accum(h, i);
        EXPECT_TRUE(mode == F4GEMM_ACCUM_EXACT || mode == F4GEMM_ACCUM_PROMOTED) << i;
        EXPECT_EQ(f4gemm_kernel_k(h, i, 2880), 3072) << i;  // every shipped kernel reads the packed weight
        EXPECT_EQ(f4gemm_kernel_k(h, i, 0), -1) << i;
        if (mode != F4GEMM_ACCUM_PROMOTED) continue;
        EXPECT_NE(f4gemm_gemm(h, i, 0, F4GEMM_ACCUM_EXACT, 256, n, k, 1.f, 0.f, a.p, sa.p, w.p, 0, d.p, 0),
                  0);
        EXPECT_NE(std::string(f4gemm_last_error()).find("implements promoted accumulation"),
                  std::string::npos)
            << f4gemm_last_error();
    }
    EXPECT_EQ(f4gemm_kernel_accum(h, f4gemm_num_kernels(h)), -1);
}

namespace {

// Quantizes x ([m, k] bf16 or fp32, its bytes in `raw`) on the device into 0xAB-filled outputs and expects
// every data and scale byte to be the host quantizer's for xv (x's values as float), in the operand layout.
void expect_quantize_matches_host(f4gemm_handle* h, const std::vector<uint8_t>& raw, bool bf16,
                                  const std::vector<float>& xv, int m, int k, const std::string& what) {
    std::vector<uint8_t> q(size_t(m) * size_t(k) / 2), sc(size_t(m) * size_t(k) / 32);
    quantize_mxfp4(xv.data(), size_t(m), size_t(k), q.data(), sc.data());
    const OperandImage want =
        make_a_image(q.data(), sc.data(), size_t(m), size_t(k), ScaleLayout::Plain, w_k_pad(size_t(k)));
    Buf dx(raw.size());
    dx.put(raw);
    size_t ab = 0, asb = 0;
    ASSERT_EQ(f4gemm_operand_bytes(h, m, k, &ab, &asb), 0);
    Buf da(ab), dsa(asb);
    env()->dev->memset(da.p, 0xAB, ab);
    env()->dev->memset(dsa.p, 0xAB, asb);
    ASSERT_EQ(f4gemm_quantize(h, dx.p, bf16 ? 1 : 0, m, k, k, da.p, dsa.p, 0), 0) << f4gemm_last_error();
    const std::vector<uint8_t> got = da.get(), got_s = dsa.get();
    size_t bad = 0, bad_s = 0;
    for (size_t i = 0; i < got.size(); ++i) bad += got[i] != want.data[i];
    for (size_t i = 0; i < got_s.size(); ++i) bad_s += got_s[i] != want.scales[i];
    EXPECT_EQ(bad, 0u) << what << ": data bytes differ";
    EXPECT_EQ(bad_s, 0u) << what << ": scale bytes differ";
}

}  // namespace

// The GPU quantizer: fp32 and bf16 activations (Gaussian with outliers, exact zeros of both signs, values
// past the e2m1 range, a NaN and an Inf block) give the host quantizer's bytes in the operand layout.
TEST(CApiGpu, QuantizeIsBitIdenticalToTheHost) {
    REQUIRE_GPU();
    f4gemm_handle* h = env()->h;
    for (const auto& mk : std::vector<std::pair<int, int>>{{1, 2880}, {17, 4096}, {300, 96}, {64, 8192}}) {
        const int m = mk.first, k = mk.second;
        std::mt19937 rng(uint32_t(m * 7919 + k));
        std::normal_distribution<float> g(0.f, 1.f);
        std::vector<float> x(size_t(m) * size_t(k));
        for (size_t i = 0; i < x.size(); ++i) x[i] = g(rng) * (i % 997 == 3 ? 4096.f : 1.f);
        x[0] = -0.f;
        x[1] = 0.f;
        if (x.size() > 100) x[64 + 5] = std::nanf("");
        if (x.size() > 200) x[160 + 7] = INFINITY;
        for (bool bf16 : {false, true}) {
            std::vector<float> xv = x;
            std::vector<uint16_t> xb(x.size());
            for (size_t i = 0; i < x.size(); ++i) {
                xb[i] = float_to_bf16(x[i]);
                if (bf16) xv[i] = bf16_to_float(xb[i]);
            }
            std::vector<uint8_t> raw(x.size() * (bf16 ? 2 : 4));
            std::memcpy(raw.data(),
                        bf16 ? static_cast<const void*>(xb.data()) : static_cast<const void*>(x.data()),
                        raw.size());
            expect_quantize_matches_host(
                h, raw, bf16, xv, m, k,
                std::to_string(m) + "x" + std::to_string(k) + (bf16 ? " bf16" : " fp32"));
        }
    }
    // bf16 over its whole range (the device converts bf16 with bf16x2 arithmetic, the host in fp32): per
    // 32-block a random base exponent 0..254 with elements within +-4 binades of it (subnormal, tiny-scale
    // and top-binade blocks), every fourth block raw random patterns (NaN, Inf), some exact zeros of both
    // signs.
    {
        const int m = 96, k = 4128;
        std::mt19937 rng(77u);
        std::vector<uint16_t> xb(size_t(m) * size_t(k));
        for (size_t blk = 0; blk < xb.size() / 32; ++blk) {
            const uint32_t mode = rng() % 4u, base = rng() % 255u;
            for (size_t i = 32 * blk; i < 32 * blk + 32; ++i) {
                const uint32_t r = rng();
                const int e = std::min(254, std::max(0, int(base) + int(r % 9u) - 4));
                xb[i] = mode == 0 ? uint16_t(r >> 8)
                                  : uint16_t(((r >> 31) << 15) | (uint32_t(e) << 7) | ((r >> 9) & 0x7Fu));
                if (mode == 3 && (r >> 24) < 40u) xb[i] = (r & 2u) ? 0x8000u : 0u;
            }
        }
        std::vector<float> xv(xb.size());
        for (size_t i = 0; i < xb.size(); ++i) xv[i] = bf16_to_float(xb[i]);
        std::vector<uint8_t> raw(xb.size() * 2);
        std::memcpy(raw.data(), xb.data(), raw.size());
        expect_quantize_matches_host(h, raw, true, xv, m, k, "wide-range bf16");
    }
    EXPECT_NE(f4gemm_quantize(h, 0, 1, 4, 64, 64, 1, 1, 0), 0);
    EXPECT_NE(std::string(f4gemm_last_error()).find("x is a null device pointer"), std::string::npos);
    EXPECT_NE(f4gemm_quantize(h, 1, 1, 4, 64, 32, 1, 1, 0), 0);
    EXPECT_NE(std::string(f4gemm_last_error()).find("ldx (32) is below K (64)"), std::string::npos);
}

// Programmatic dependent launch in a data-dependent chain: x_i -> GEMM 1 -> D1 (bf16) -> f4gemm_quantize
// (whose kernel lets the next one start early) -> GEMM 2 -> D2_i, eight chains back to back without a
// synchronisation, each with its own x_i. With f4gemm_set_pdl(h, 1) every GEMM is launched early and must
// wait for the kernel ahead: a GEMM 2 that read its A before the quantizer finished would see the previous
// chain's bytes, so every D2_i must equal the D2_i computed with plain launches, bit for bit. The M cover the
// kernel families (dec, swap, the A pre-pass tile and its own pre-pass, pp), exact and promoted.
TEST(CApiGpu, PdlChainsGiveThePlainLaunchesResults) {
    REQUIRE_GPU();
    f4gemm_handle* h = env()->h;
    EXPECT_NE(f4gemm_set_pdl(h, 2), 0);
    EXPECT_NE(std::string(f4gemm_last_error()).find("on is 2: pass 1"), std::string::npos)
        << f4gemm_last_error();
    EXPECT_NE(f4gemm_set_pdl(nullptr, 1), 0);
    const int n1 = 1024, k = 2048, n2 = 768, chains = 8;
    std::mt19937 rng(2024u);
    std::normal_distribution<float> g(0.f, 1.f);
    auto weight = [&](int n, int kk) {
        const Problem p = make_problem(1, n, kk, 1.f, 0.f, DataKind::Gaussian, rng(), rng(), false);
        Buf b(p.b.packed.size()), sb(p.b.scales.size());
        b.put(p.b.packed);
        sb.put(p.b.scales);
        auto w = std::make_unique<Buf>(f4gemm_weight_bytes(h, n, kk));
        EXPECT_EQ(f4gemm_pack_weight(h, b.p, sb.p, n, kk, w->p, 0), 0) << f4gemm_last_error();
        return w;
    };
    const std::unique_ptr<Buf> w1 = weight(n1, k), w2 = weight(n2, n1);
    for (int m : {1, 48, 128, 600})
        for (int accum : {F4GEMM_ACCUM_EXACT, F4GEMM_ACCUM_PROMOTED}) {
            size_t ab1 = 0, asb1 = 0, ab2 = 0, asb2 = 0;
            ASSERT_EQ(f4gemm_operand_bytes(h, m, k, &ab1, &asb1), 0);
            ASSERT_EQ(f4gemm_operand_bytes(h, m, n1, &ab2, &asb2), 0);
            std::vector<std::unique_ptr<Buf>> x, d2[2];
            for (int i = 0; i < chains; ++i) {
                std::vector<float> xv(size_t(m) * size_t(k));
                for (float& v : xv) v = g(rng) * (i + 1);
                std::vector<uint8_t> raw(xv.size() * 4);
                std::memcpy(raw.data(), xv.data(), raw.size());
                x.push_back(std::make_unique<Buf>(raw.size()));
                x.back()->put(raw);
            }
            Buf a1(ab1), sa1(asb1), d1(size_t(m) * n1 * 2), a2(ab2), sa2(asb2);
            for (int pdl : {0, 1}) {
                ASSERT_EQ(f4gemm_set_pdl(h, pdl), 0) << f4gemm_last_error();
                for (int i = 0; i < chains; ++i) {
                    d2[pdl].push_back(std::make_unique<Buf>(size_t(m) * n2 * 2));
                    ASSERT_EQ(f4gemm_quantize(h, x[size_t(i)]->p, 0, m, k, k, a1.p, sa1.p, 0), 0);
                    ASSERT_EQ(
                        f4gemm_gemm(h, -1, 0, accum, m, n1, k, 1.f, 0.f, a1.p, sa1.p, w1->p, 0, d1.p, 0), 0)
                        << f4gemm_last_error();
                    ASSERT_EQ(f4gemm_quantize(h, d1.p, 1, m, n1, n1, a2.p, sa2.p, 0), 0);
                    ASSERT_EQ(f4gemm_gemm(h, -1, 0, accum, m, n2, n1, 1.f, 0.f, a2.p, sa2.p, w2->p, 0,
                                          d2[pdl].back()->p, 0),
                              0)
                        << f4gemm_last_error();
                }
            }
            ASSERT_EQ(f4gemm_set_pdl(h, 0), 0);
            int k1 = -1, k2 = -1, l2 = 0;
            ASSERT_EQ(f4gemm_select(h, m, n1, k, 0, accum, &k1, &l2), 0);
            ASSERT_EQ(f4gemm_select(h, m, n2, n1, 0, accum, &k2, &l2), 0);
            size_t differ = 0, zero = 0;
            for (int i = 0; i < chains; ++i) {
                const std::vector<uint8_t> plain = d2[0][size_t(i)]->get(), early = d2[1][size_t(i)]->get();
                differ += plain != early;
                zero += std::all_of(plain.begin(), plain.end(), [](uint8_t v) { return v == 0; });
            }
            EXPECT_EQ(differ, 0u) << m << " rows, accum " << accum << ": chains whose D2 differs with pdl";
            EXPECT_EQ(zero, 0u) << "a D2 of all zeros: the chain computed nothing";
            std::printf("pdl chain M=%d accum %d: %s then %s, %d chains identical\n", m, accum,
                        f4gemm_kernel_name(h, k1), f4gemm_kernel_name(h, k2), chains - int(differ));
        }
}

// A weight another handle packed is checked by its header, read when first seen; when its buffer later holds
// a weight of another shape (repacked there, or freed and reused), the handle reads the header again instead
// of refusing the new weight by its old record, and refuses the old shape by the new header.
TEST(CApiGpu, AReusedWeightBufferIsCheckedByItsNewHeader) {
    REQUIRE_GPU();
    f4gemm_handle* h = env()->h;
    f4gemm_handle* other = f4gemm_open(nullptr, 0);
    ASSERT_NE(other, nullptr) << f4gemm_last_error();
    const int k = 512, m = 4;
    Buf b(size_t(512) * k / 2), sb(size_t(512) * k / 32), w(f4gemm_weight_bytes(h, 512, k));
    size_t ab = 0, asb = 0;
    ASSERT_EQ(f4gemm_operand_bytes(h, m, k, &ab, &asb), 0);
    Buf a(ab), sa(asb), d(size_t(m) * 512 * 2);
    for (int n : {512, 256, 512}) {  // packed by `other`, used by `h`
        ASSERT_EQ(f4gemm_pack_weight(other, b.p, sb.p, n, k, w.p, 0), 0) << f4gemm_last_error();
        EXPECT_EQ(f4gemm_gemm(h, -1, 0, F4GEMM_ACCUM_EXACT, m, n, k, 1.f, 0.f, a.p, sa.p, w.p, 0, d.p, 0), 0)
            << "N=" << n << ": " << f4gemm_last_error();
        const int wrong = n == 512 ? 256 : 512;
        EXPECT_NE(f4gemm_gemm(h, -1, 0, F4GEMM_ACCUM_EXACT, m, wrong, k, 1.f, 0.f, a.p, sa.p, w.p, 0, d.p, 0),
                  0);
        EXPECT_NE(std::string(f4gemm_last_error()).find("was packed for N=" + std::to_string(n) + " K=512"),
                  std::string::npos)
            << f4gemm_last_error();
    }
    f4gemm_close(other);
}
