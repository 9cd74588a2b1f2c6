// Dev harness for the sm_90a MXFP4 kernels (driver API only): loads the cubins a manifest lists,
// generates the seed's data, checks every (kernel, case) against a float64 CPU reference with the
// seed's metric plus NaN / out-of-bounds-write checks, and times with CUDA events. Iteration tool of
// kernels/sm90a only; the project's real driver lives elsewhere.
// Build: g++ -std=c++17 -O3 -march=x86-64-v3 -pthread -I/usr/local/cuda/include -Iinclude \
//        kernels/sm90a/dev/harness.cpp -L/usr/local/cuda/lib64/stubs -lcuda -o harness
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "f4gemm/kernarg.h"

#define CU_CHECK(call)                                                                                      \
    do {                                                                                                    \
        CUresult r_ = (call);                                                                               \
        if (r_ != CUDA_SUCCESS) {                                                                           \
            const char* n_ = nullptr;                                                                       \
            cuGetErrorName(r_, &n_);                                                                        \
            std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", n_ ? n_ : "?", __FILE__, __LINE__, #call); \
            std::exit(2);                                                                                   \
        }                                                                                                   \
    } while (0)

// ---------------------------------------------------------------------------------------------
// Manifest
// ---------------------------------------------------------------------------------------------
struct KernelInfo {
    int tile_m = 0, tile_n = 0, splitk = 0, threads = 0, smem = 0;
    std::string knl_name, co_name;
    CUmodule mod = nullptr;
    CUfunction fn = nullptr;
};

static std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) {
        size_t a = cell.find_first_not_of(" \t\r\n"), b = cell.find_last_not_of(" \t\r\n");
        out.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
    }
    return out;
}

static std::vector<KernelInfo> load_manifest(const std::string& path) {
    std::ifstream f(path);
    if (!f) {
        std::fprintf(stderr, "cannot open manifest %s\n", path.c_str());
        std::exit(2);
    }
    std::string line;
    std::getline(f, line);
    auto hdr = split_csv(line);
    std::map<std::string, int> col;
    for (size_t i = 0; i < hdr.size(); ++i) col[hdr[i]] = (int)i;
    std::vector<KernelInfo> ks;
    int lineno = 1;
    while (std::getline(f, line)) {
        ++lineno;
        if (line.find_first_not_of(" \t\r\n") == std::string::npos) continue;
        auto c = split_csv(line);
        if (c.size() != hdr.size()) {
            std::fprintf(stderr, "%s:%d: %zu cells, header has %zu\n", path.c_str(), lineno, c.size(),
                         hdr.size());
            std::exit(2);
        }
        KernelInfo k;
        k.tile_m = std::atoi(c[col["tile_M"]].c_str());
        k.tile_n = std::atoi(c[col["tile_N"]].c_str());
        k.splitk = std::atoi(c[col["splitK"]].c_str());
        k.threads = std::atoi(c[col["threads"]].c_str());
        k.smem = std::atoi(c[col["smem_bytes"]].c_str());
        k.knl_name = c[col["knl_name"]];
        k.co_name = c[col["co_name"]];
        ks.push_back(k);
    }
    return ks;
}

// ---------------------------------------------------------------------------------------------
// Data: the seed's generator, plus variants for NaN and wide-scale tests
// ---------------------------------------------------------------------------------------------
enum class Data { Seed, Nan, Wide, Window };
static const char* data_name(Data d) {
    switch (d) {
        case Data::Seed:
            return "seed";
        case Data::Nan:
            return "nan";
        case Data::Wide:
            return "wide";
        case Data::Window:
            return "window";
    }
    return "?";
}

struct Operand {
    int rows = 0, rows_pad = 0, K = 0;
    std::vector<uint8_t> q;  // (rows_pad, K/2) fp4x2
    std::vector<uint8_t> s;  // (rows_pad, K/32) e8m0, padding 0x7F
    std::vector<int8_t> v2;  // (rows, K): 2 * e2m1 value, for the reference
};

// Per row: K/2 bytes (low nibble, then high nibble, uniform 0..15), then K/32 scales uniform 124..130,
// all from one std::mt19937 per operand (seed 1234 for A, 5678 for B).
static Operand make_operand(int rows, int K, uint32_t seed, Data d, bool is_b) {
    Operand o;
    o.rows = rows;
    o.rows_pad = (rows + 255) / 256 * 256;
    o.K = K;
    o.q.assign((size_t)o.rows_pad * K / 2, 0);
    o.s.assign((size_t)o.rows_pad * K / 32, 0x7F);
    o.v2.assign((size_t)rows * K, 0);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> nib(0, 15), sc(124, 130);
    std::uniform_int_distribution<int> wide(127 - 40, 127 + 40), window(114, 140);
    static const int mag2[8] = {0, 1, 2, 3, 4, 6, 8, 12};
    for (int r = 0; r < rows; ++r) {
        for (int i = 0; i < K / 2; ++i) {
            int lo = nib(rng), hi = nib(rng);
            o.q[(size_t)r * K / 2 + i] = (uint8_t)(lo | (hi << 4));
            o.v2[(size_t)r * K + 2 * i] = (int8_t)((lo & 8) ? -mag2[lo & 7] : mag2[lo & 7]);
            o.v2[(size_t)r * K + 2 * i + 1] = (int8_t)((hi & 8) ? -mag2[hi & 7] : mag2[hi & 7]);
        }
        for (int b = 0; b < K / 32; ++b) {
            int e = sc(rng);
            if (d == Data::Wide && (r % 3 == 0)) e = wide(rng);  // some rows span > 26 binades
            if (d == Data::Window) e = window(rng);              // every row inside the e5m2 window
            o.s[(size_t)r * K / 32 + b] = (uint8_t)e;
        }
    }
    if (d == Data::Nan) {  // A row 5 block 1, B row (output column) 17 block K/32-1
        int r = is_b ? 17 : 5, b = is_b ? K / 32 - 1 : 1;
        if (r < rows) o.s[(size_t)r * K / 32 + b] = 0xFF;
    }
    return o;
}

// Operands are reused across kernels and cases (generating 16384^2 nibbles takes seconds).
static const Operand& cached_operand(int rows, int K, uint32_t seed, Data d, bool is_b) {
    static std::map<std::string, Operand> cache;
    char key[128];
    std::snprintf(key, sizeof(key), "%d/%d/%u/%d/%d", rows, K, seed, (int)d, (int)is_b);
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, make_operand(rows, K, seed, d, is_b)).first;
    return it->second;
}

// ---------------------------------------------------------------------------------------------
// float64 reference: block sums of 2*e2m1 products in int32 (exact), times 2^(ea-127) 2^(eb-127) / 4,
// accumulated in double. NaN where a scale is 0xFF.
// ---------------------------------------------------------------------------------------------
static void reference_rows(const Operand& A, const Operand& B, const std::vector<int>& rows, float alpha,
                           float beta, const std::vector<uint16_t>& C, bool use_c, std::vector<double>& ref) {
    const int K = A.K, N = B.rows, nb = K / 32;
    ref.assign(rows.size() * (size_t)N, 0.0);
    auto sc = [](uint8_t e) { return e == 0xFF ? NAN : std::ldexp(1.0, (int)e - 127); };
    std::vector<double> sa((size_t)A.rows * nb), sb((size_t)N * nb);
    for (int r = 0; r < A.rows; ++r)
        for (int b = 0; b < nb; ++b) sa[(size_t)r * nb + b] = sc(A.s[(size_t)r * nb + b]);
    for (int r = 0; r < N; ++r)
        for (int b = 0; b < nb; ++b) sb[(size_t)r * nb + b] = sc(B.s[(size_t)r * nb + b]);
    std::atomic<size_t> next{0};
    auto work = [&]() {
        for (;;) {
            size_t i = next++;
            if (i >= rows.size()) break;
            const int m = rows[i];
            const int8_t* a = &A.v2[(size_t)m * K];
            for (int n = 0; n < N; ++n) {
                const int8_t* bb = &B.v2[(size_t)n * K];
                double acc = 0.0;
                for (int blk = 0; blk < nb; ++blk) {
                    int32_t s = 0;
                    for (int k = 0; k < 32; ++k) s += (int32_t)a[blk * 32 + k] * (int32_t)bb[blk * 32 + k];
                    acc += (double)s * 0.25 * sa[(size_t)m * nb + blk] * sb[(size_t)n * nb + blk];
                }
                double v = (double)alpha * acc;
                if (use_c) {
                    uint32_t bits = (uint32_t)C[(size_t)m * N + n] << 16;
                    float cf;
                    std::memcpy(&cf, &bits, 4);
                    v += (double)beta * (double)cf;
                }
                ref[i * N + n] = v;
            }
        }
    };
    unsigned nt = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; ++t) th.emplace_back(work);
    for (auto& t : th) t.join();
}

static float bf16_to_float(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}
static uint16_t float_to_bf16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u += 0x7FFF + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

// ---------------------------------------------------------------------------------------------
// One case
// ---------------------------------------------------------------------------------------------
struct Case {
    int M, N, K, splits;
    Data data;
    bool beta;
    bool time;
    int check_rows;  // 0 = all rows
};

struct Result {
    double max_rel = 0, max_abs = 0, max_ref = 0;
    long mismatches = 0, checked = 0, nan_bad = 0, oob = 0;
    int bad_m = -1, bad_n = -1;
    double bad_got = 0, bad_ref = 0;
    double us = -1, us_min = -1, us_max = -1;
    bool pass = false;
};

static const uint16_t kPoison = 0xFFFF;  // bf16 NaN pattern; unwritten outputs show up as NaN

static Result run_case(KernelInfo& k, const Case& c, int reps) {
    Result res;
    const int M = c.M, N = c.N, K = c.K;
    const Operand& A = cached_operand(M, K, 1234, c.data, false);
    const Operand& B = cached_operand(N, K, 5678, c.data, true);
    const float alpha = c.beta ? 0.75f : 1.0f, beta = c.beta ? -0.5f : 0.0f;
    std::vector<uint16_t> Ch;
    if (c.beta) {
        Ch.resize((size_t)M * N);
        std::mt19937 rng(42);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        const float mag = std::sqrt((float)K) * 100.0f;  // comparable to |A B^T| on the seed's data
        for (auto& x : Ch) x = float_to_bf16(u(rng) * mag);
    }
    // D has 16 pad columns and one pad row: every pad element must stay poisoned.
    const int ldd = N + 16, d_rows = M + 1;

    // split geometry / workspace
    int splits = std::max(1, c.splits), kps = K;
    if (splits > 1) {
        kps = ((K + splits - 1) / splits + 255) / 256 * 256;
        splits = (K + kps - 1) / kps;
    }
    const int tiles_m = (M + k.tile_m - 1) / k.tile_m, tiles_n = (N + k.tile_n - 1) / k.tile_n;
    const size_t ws_bytes = splits > 1 ? (size_t)splits * tiles_m * k.tile_m * tiles_n * k.tile_n * 4 +
                                             (size_t)tiles_m * tiles_n * 4 + 16
                                       : 0;

    // device buffers; for timing, several copies rotate past 120 MB
    const size_t bytes_a = A.q.size() + A.s.size(), bytes_b = B.q.size() + B.s.size();
    const size_t bytes_set = bytes_a + bytes_b + (size_t)d_rows * ldd * 2;
    int nsets = 1;
    if (c.time) nsets = (int)std::min<size_t>(8, std::max<size_t>(1, (120u << 20) / bytes_set + 1));
    struct Set {
        CUdeviceptr a, sa, b, sb, d;
    };
    std::vector<Set> sets(nsets);
    for (auto& s : sets) {
        CU_CHECK(cuMemAlloc(&s.a, A.q.size()));
        CU_CHECK(cuMemAlloc(&s.sa, A.s.size()));
        CU_CHECK(cuMemAlloc(&s.b, B.q.size()));
        CU_CHECK(cuMemAlloc(&s.sb, B.s.size()));
        CU_CHECK(cuMemAlloc(&s.d, (size_t)d_rows * ldd * 2));
        CU_CHECK(cuMemcpyHtoD(s.a, A.q.data(), A.q.size()));
        CU_CHECK(cuMemcpyHtoD(s.sa, A.s.data(), A.s.size()));
        CU_CHECK(cuMemcpyHtoD(s.b, B.q.data(), B.q.size()));
        CU_CHECK(cuMemcpyHtoD(s.sb, B.s.data(), B.s.size()));
    }
    CUdeviceptr dC = 0, dW = 0;
    if (c.beta) {
        CU_CHECK(cuMemAlloc(&dC, Ch.size() * 2));
        CU_CHECK(cuMemcpyHtoD(dC, Ch.data(), Ch.size() * 2));
    }
    if (ws_bytes) CU_CHECK(cuMemAlloc(&dW, ws_bytes));

    auto make_args = [&](const Set& s) {
        F4gemmSm90Args a;
        std::memset(&a, 0, sizeof(a));
        a.base.ptr_D = s.d;
        a.base.ptr_C = dC;
        a.base.ptr_A = s.a;
        a.base.ptr_B = s.b;
        a.base.alpha = alpha;
        a.base.beta = beta;
        a.base.stride_D0 = ldd;
        a.base.stride_D1 = 1;
        a.base.stride_C0 = N;
        a.base.stride_C1 = 1;
        a.base.stride_A0 = K;
        a.base.stride_A1 = 1;
        a.base.stride_B0 = K;
        a.base.stride_B1 = 1;
        a.base.M = M;
        a.base.N = N;
        a.base.K = K;
        a.base.ptr_ScaleA = s.sa;
        a.base.ptr_ScaleB = s.sb;
        a.base.stride_ScaleA0 = K / 32;
        a.base.stride_ScaleA1 = 1;
        a.base.stride_ScaleB0 = K / 32;
        a.base.stride_ScaleB1 = 1;
        a.base.log2_k_split = 0;
        a.ptr_workspace = dW;
        a.workspace_bytes = ws_bytes;
        a.num_splits = splits;
        a.k_per_split = kps;
        return a;
    };
    auto launch = [&](const Set& s) {
        if (dW) CU_CHECK(cuMemsetD8Async(dW, 0, ws_bytes, 0));
        F4gemmSm90Args a = make_args(s);
        size_t sz = sizeof(a);
        void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &a, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz,
                         CU_LAUNCH_PARAM_END};
        CU_CHECK(cuLaunchKernel(k.fn, tiles_n, tiles_m, splits, k.threads, 1, 1, k.smem, 0, nullptr, extra));
    };

    // ---- verification launch
    CU_CHECK(cuMemsetD16(sets[0].d, kPoison, (size_t)d_rows * ldd));
    launch(sets[0]);
    CU_CHECK(cuCtxSynchronize());
    std::vector<uint16_t> D((size_t)d_rows * ldd);
    CU_CHECK(cuMemcpyDtoH(D.data(), sets[0].d, D.size() * 2));
    for (int m = 0; m < d_rows; ++m)
        for (int n = 0; n < ldd; ++n)
            if ((m >= M || n >= N) && D[(size_t)m * ldd + n] != kPoison) res.oob++;

    std::vector<int> rows;
    if (c.check_rows <= 0 || c.check_rows >= M) {
        for (int m = 0; m < M; ++m) rows.push_back(m);
    } else {
        std::mt19937 rng(7);
        rows = {0, M - 1};
        if (5 < M) rows.push_back(5);
        while ((int)rows.size() < c.check_rows) rows.push_back((int)(rng() % M));
    }
    std::vector<double> ref;
    reference_rows(A, B, rows, alpha, beta, Ch, c.beta, ref);
    for (double v : ref)
        if (std::isfinite(v)) res.max_ref = std::max(res.max_ref, std::fabs(v));
    const double atol = 2e-4 * res.max_ref, rtol = 2e-2;
    for (size_t i = 0; i < rows.size(); ++i) {
        for (int n = 0; n < N; ++n) {
            const double r = ref[i * N + n];
            const double got = bf16_to_float(D[(size_t)rows[i] * ldd + n]);
            res.checked++;
            if (std::isnan(r)) {
                if (!std::isnan(got)) res.nan_bad++;
                continue;
            }
            if (!std::isfinite(got)) {
                res.nan_bad++;
                res.mismatches++;
                continue;
            }
            const double err = std::fabs(got - r);
            res.max_abs = std::max(res.max_abs, err);
            if (std::fabs(r) > atol) res.max_rel = std::max(res.max_rel, err / std::fabs(r));
            if (err > atol + rtol * std::fabs(r) && res.mismatches++ == 0) {
                res.bad_m = rows[i];
                res.bad_n = n;
                res.bad_got = got;
                res.bad_ref = r;
            }
        }
    }
    const double bound = std::ldexp(1.0, -8);  // the contract: bf16 output rounding only
    res.pass = res.mismatches == 0 && res.nan_bad == 0 && res.oob == 0 && res.max_rel <= bound;

    // ---- timing
    if (c.time) {
        CUevent e0, e1;
        CU_CHECK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
        CU_CHECK(cuEventCreate(&e1, CU_EVENT_DEFAULT));
        for (int w = 0; w < 3; ++w) launch(sets[w % nsets]);
        std::vector<float> ts;
        for (int r = 0; r < reps; ++r) {
            const Set& s = sets[r % nsets];
            if (dW) CU_CHECK(cuMemsetD8Async(dW, 0, ws_bytes, 0));
            CU_CHECK(cuEventRecord(e0, 0));
            F4gemmSm90Args a = make_args(s);
            size_t sz = sizeof(a);
            void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &a, CU_LAUNCH_PARAM_BUFFER_SIZE, &sz,
                             CU_LAUNCH_PARAM_END};
            CU_CHECK(
                cuLaunchKernel(k.fn, tiles_n, tiles_m, splits, k.threads, 1, 1, k.smem, 0, nullptr, extra));
            CU_CHECK(cuEventRecord(e1, 0));
            CU_CHECK(cuEventSynchronize(e1));
            float ms = 0;
            CU_CHECK(cuEventElapsedTime(&ms, e0, e1));
            ts.push_back(ms * 1000.0f);
        }
        std::sort(ts.begin(), ts.end());
        res.us = ts[ts.size() / 2];
        res.us_min = ts.front();
        res.us_max = ts.back();
        CU_CHECK(cuEventDestroy(e0));
        CU_CHECK(cuEventDestroy(e1));
    }
    for (auto& s : sets) {
        cuMemFree(s.a);
        cuMemFree(s.sa);
        cuMemFree(s.b);
        cuMemFree(s.sb);
        cuMemFree(s.d);
    }
    if (dC) cuMemFree(dC);
    if (dW) cuMemFree(dW);
    return res;
}

// ---------------------------------------------------------------------------------------------
// Suites
// ---------------------------------------------------------------------------------------------
static bool is_swap(const KernelInfo& k) {
    return k.knl_name.find("swap") != std::string::npos;
}
static bool is_simple(const KernelInfo& k) {
    return k.knl_name.find("simple") != std::string::npos;
}

static std::vector<Case> correctness_cases(const KernelInfo& k) {
    std::vector<Case> cs = {
        {1, 16, 256, 1, Data::Seed, false, false, 0},       {17, 2000, 1024, 1, Data::Seed, false, false, 0},
        {300, 2000, 1024, 1, Data::Seed, true, false, 0},   {300, 2048, 1024, 1, Data::Seed, false, false, 0},
        {256, 1024, 4096, 2, Data::Seed, false, false, 0},  {256, 1024, 4096, 4, Data::Seed, true, false, 0},
        {129, 272, 8192, 1, Data::Seed, false, false, 0},   {1, 4096, 8192, 4, Data::Seed, false, false, 0},
        {64, 256, 512, 1, Data::Nan, false, false, 0},      {64, 256, 512, 2, Data::Nan, false, false, 0},
        {96, 256, 1024, 1, Data::Wide, false, false, 0},    {96, 256, 1024, 2, Data::Wide, true, false, 0},
        {128, 512, 2048, 1, Data::Window, false, false, 0},
    };
    (void)k;  // every kernel, rung 1 included, runs the same cases
    return cs;
}

static std::vector<Case> perf_cases(const KernelInfo& k) {
    std::vector<Case> cs;
    if (is_simple(k)) {
        cs.push_back({1024, 1024, 1024, 1, Data::Seed, false, true, 64});
    } else if (is_swap(k)) {
        cs.push_back({1, 16384, 16384, 1, Data::Seed, false, true, 1});
        cs.push_back({16, 16384, 16384, 1, Data::Seed, false, true, 16});
        cs.push_back({16, 8192, 8192, 2, Data::Seed, false, true, 16});
        cs.push_back({64, 16384, 16384, 1, Data::Seed, false, true, 16});
    } else {
        cs.push_back({4096, 4096, 4096, 1, Data::Seed, false, true, 48});
        cs.push_back({8192, 8192, 8192, 1, Data::Seed, false, true, 24});
        cs.push_back({128, 16384, 16384, 1, Data::Seed, false, true, 16});
        cs.push_back({300, 2048, 1024, 2, Data::Seed, false, true, 0});
    }
    return cs;
}

int main(int argc, char** argv) {
    std::string manifest, co_dir, only, suite = "all";
    int reps = 10;
    std::vector<Case> custom;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "missing value for %s\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--manifest")
            manifest = next();
        else if (a == "--co-dir")
            co_dir = next();
        else if (a == "--kernel")
            only = next();
        else if (a == "--suite")
            suite = next();
        else if (a == "--reps")
            reps = std::atoi(next().c_str());
        else if (a == "--shape") {  // M,N,K[,splits[,time]]
            int v[5] = {0, 0, 0, 1, 1};
            std::sscanf(next().c_str(), "%d,%d,%d,%d,%d", &v[0], &v[1], &v[2], &v[3], &v[4]);
            custom.push_back({v[0], v[1], v[2], v[3], Data::Seed, false, v[4] != 0, 32});
        } else {
            std::fprintf(stderr,
                         "usage: %s --manifest CSV [--co-dir DIR] [--kernel NAME] "
                         "[--suite correct|perf|all] [--shape M,N,K[,splits[,time]]] [--reps N]\n",
                         argv[0]);
            return 2;
        }
    }
    if (manifest.empty()) {
        std::fprintf(stderr, "--manifest is required\n");
        return 2;
    }
    if (co_dir.empty()) co_dir = manifest.substr(0, manifest.find_last_of('/'));
    auto ks = load_manifest(manifest);

    CU_CHECK(cuInit(0));
    CUdevice dev;
    CU_CHECK(cuDeviceGet(&dev, 0));
    char name[256];
    CU_CHECK(cuDeviceGetName(name, sizeof(name), dev));
    int sms = 0, cc_major = 0, cc_minor = 0;
    CU_CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CU_CHECK(cuDeviceGetAttribute(&cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CU_CHECK(cuDeviceGetAttribute(&cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    std::printf("device: %s, %d SMs, sm_%d%d\n", name, sms, cc_major, cc_minor);
    CUcontext ctx;
    CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU_CHECK(cuCtxSetCurrent(ctx));

    struct Row {
        std::string kernel;
        Case c;
        Result r;
    };
    std::vector<Row> table;
    int failed = 0, passed = 0;
    for (auto& k : ks) {
        if (!only.empty() && k.knl_name != only) continue;
        const std::string path = co_dir + "/" + k.co_name;
        CU_CHECK(cuModuleLoad(&k.mod, path.c_str()));
        CU_CHECK(cuModuleGetFunction(&k.fn, k.mod, k.knl_name.c_str()));
        CU_CHECK(cuFuncSetAttribute(k.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k.smem));
        int nregs = 0;
        CU_CHECK(cuFuncGetAttribute(&nregs, CU_FUNC_ATTRIBUTE_NUM_REGS, k.fn));
        std::printf("kernel %s: tile %dx%d, %d threads, %d B smem, %d regs\n", k.knl_name.c_str(), k.tile_m,
                    k.tile_n, k.threads, k.smem, nregs);
        std::fflush(stdout);
        std::vector<Case> cases = custom;
        if (custom.empty()) {
            if (suite == "correct" || suite == "all") cases = correctness_cases(k);
            if (suite == "perf" || suite == "all") {
                auto p = perf_cases(k);
                cases.insert(cases.end(), p.begin(), p.end());
            }
        }
        for (const auto& c : cases) {
            Result r = run_case(k, c, reps);
            const double flops = 2.0 * c.M * c.N * c.K;
            const double bytes = (double)c.M * c.K / 2 + (double)c.N * c.K / 2 +
                                 (double)(c.M + c.N) * c.K / 32 + 2.0 * c.M * c.N;
            std::printf(
                "RESULT %-30s M=%-5d N=%-5d K=%-5d splits=%d data=%-6s beta=%d max_rel_err=%.3e "
                "mismatches=%ld/%ld nan_bad=%ld oob=%ld",
                k.knl_name.c_str(), c.M, c.N, c.K, c.splits, data_name(c.data), (int)c.beta, r.max_rel,
                r.mismatches, r.checked, r.nan_bad, r.oob);
            if (r.us > 0)
                std::printf(" us=%.2f [%.2f,%.2f] TF/s=%.1f GB/s=%.0f", r.us, r.us_min, r.us_max,
                            flops / r.us * 1e-6, bytes / r.us * 1e-3);
            std::printf(" %s\n", r.pass ? "PASS" : "FAIL");
            if (r.bad_m >= 0)
                std::printf("  first mismatch at (m=%d, n=%d): got %.6g, want %.6g\n", r.bad_m, r.bad_n,
                            r.bad_got, r.bad_ref);
            std::fflush(stdout);
            (r.pass ? passed : failed)++;
            table.push_back({k.knl_name, c, r});
        }
        CU_CHECK(cuModuleUnload(k.mod));
    }
    // Short table last (the device tool returns the tail of the output).
    std::printf("\n%-28s %6s %6s %6s %3s %-6s %10s %9s %10s %8s %s\n", "kernel", "M", "N", "K", "spl", "data",
                "max_rel", "mism", "us", "TF/s", "ok");
    for (const auto& t : table) {
        const double flops = 2.0 * t.c.M * t.c.N * t.c.K;
        std::printf("%-28s %6d %6d %6d %3d %-6s %10.3e %9ld %10.2f %8.1f %s\n",
                    t.kernel.substr(std::min<size_t>(t.kernel.size(), 13)).c_str(), t.c.M, t.c.N, t.c.K,
                    t.c.splits, data_name(t.c.data), t.r.max_rel, t.r.mismatches + t.r.nan_bad + t.r.oob,
                    t.r.us, t.r.us > 0 ? flops / t.r.us * 1e-6 : 0.0, t.r.pass ? "PASS" : "FAIL");
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
