// readfloor: how fast can any kernel on this GPU read the bytes of a decode GEMM? (docs/BENCH.md "Read
// floor")
//
// Decode (M <= 16) is a stream over B. The issue's decode target is stated against the copy bandwidth; this
// program measures what a kernel that does nothing but read the same number of bytes achieves, with the
// same method as bench/bench.py (CUDA graphs of `calls` launches rotating over input sets past 2x L2,
// warm-up, systems alternating inside each repetition, median and spread of the repetitions):
//   ldg_u<U>_c<C>    every thread loads 16 B with U loads in flight, grid-stride, C CTAs of 512 threads per
//   SM bulk_<S>k_s<T>_c<C>  one warp per CTA streams its contiguous share with 1D bulk copies (TMA engine) of
//                    S KiB into a ring of T slots; C CTAs per SM
//   dec_r<R>_w<W>_s<T>  the memory path of the dec kernels, without A, the start-up or the math: a CTA per
//                    R 16-row groups of frag16s B, W warps splitting K, each with a ring of T slots of R
//                    1088-byte bulk copies (one per group and 128-K chunk); the shared memory of the real
//                    config (A's slot included, unused), so as many CTAs per SM as the kernel gets
//   empty_c<C>       an empty kernel of C CTAs per SM: the per-launch floor of a graph
// A linear fit of time against bytes over the sizes gives each pattern's fixed cost and steady bandwidth.
//
// Usage: readfloor [--check] [--reps R] [--shapes NxK,...]   (default: the frag16s B bytes of the four decode
// N x K; --check: only the self-check that the read kernel visits every word once, exit 1 if not)
// Build: kernels/sm90a/CMakeLists.txt (target f4gemm_readfloor, -> build/bench/readfloor).
#include "f4gemm/frag16s.h"
#include "read_floor.cuh"
#include "sm90_ptx.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

using namespace f4gemm::sm90;
using f4gemm_bench::keep;

#define CK(x)                                                                               \
    do {                                                                                    \
        cudaError_t e_ = (x);                                                               \
        if (e_ != cudaSuccess) {                                                            \
            std::fprintf(stderr, "readfloor: %s failed: %s\n", #x, cudaGetErrorString(e_)); \
            std::exit(2);                                                                   \
        }                                                                                   \
    } while (0)

namespace {

constexpr size_t kL2 = 60u << 20;

__host__ __device__ __forceinline__ size_t min_sz(size_t a, size_t b) {
    return a < b ? a : b;
}

template <int U>
__global__ void __launch_bounds__(512) k_ldg(const uint4* __restrict__ p, size_t n16, uint32_t* sink) {
    f4gemm_bench::read_stream<U>(p, n16, sink);
}
template <int U>
__global__ void __launch_bounds__(512)
    k_ldg_sum(const uint4* __restrict__ p, size_t n16, uint32_t* sink, unsigned long long* sum) {
    f4gemm_bench::read_stream<U>(p, n16, sink, sum);
}

// --check: the read kernel visits every 16-byte word exactly once (sum of the words against the host's), for
// sizes whose word count is not a multiple of the grid or of the unroll, and both grids of the patterns.
int self_check(int sms, uint32_t* sink) {
    int bad = 0;
    for (size_t n16 :
         {size_t(1), size_t(1000), size_t(sms) * 512 * 4 * 3 + 17, size_t(1) << 20, (size_t(1) << 22) + 5}) {
        std::vector<uint32_t> h(n16 * 4);
        uint64_t x = 0x9E3779B97F4A7C15ull ^ n16, want = 0;
        for (auto& w : h) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            w = (uint32_t)x;
            want += w;
        }
        uint4* d = nullptr;
        unsigned long long* sum = nullptr;
        CK(cudaMalloc(&d, n16 * 16));
        CK(cudaMalloc(&sum, 8));
        CK(cudaMemcpy(d, h.data(), n16 * 16, cudaMemcpyHostToDevice));
        for (int cps : {2, 4})
            for (int u : {4, 8}) {
                CK(cudaMemset(sum, 0, 8));
                if (u == 4)
                    k_ldg_sum<4><<<sms * cps, 512>>>(d, n16, sink, sum);
                else
                    k_ldg_sum<8><<<sms * cps, 512>>>(d, n16, sink, sum);
                CK(cudaGetLastError());
                unsigned long long got = 0;
                CK(cudaMemcpy(&got, sum, 8, cudaMemcpyDeviceToHost));
                const bool ok = got == want;
                bad += !ok;
                std::printf("check ldg_u%d_c%d n16=%zu: sum %llu, want %llu: %s\n", u, cps, n16, got,
                            (unsigned long long)want, ok ? "ok" : "MISMATCH");
            }
        CK(cudaFree(d));
        CK(cudaFree(sum));
    }
    std::printf("%s\n", bad ? "readfloor check FAILED" : "readfloor check passed");
    return bad ? 1 : 0;
}

// One warp per CTA; its contiguous share [b0, b1) of the buffer in copies of `chunk` bytes, `stages` in
// flight.
__global__ void __launch_bounds__(32)
    k_bulk(const uint8_t* __restrict__ p, size_t bytes, int chunk, int stages, uint32_t* sink) {
    extern __shared__ __align__(128) uint8_t smem[];
    uint64_t* bars = reinterpret_cast<uint64_t*>(smem + (size_t)stages * chunk);
    const size_t per = (bytes / gridDim.x + 15) / 16 * 16;
    const size_t b0 = min_sz(bytes, per * blockIdx.x), b1 = min_sz(bytes, b0 + per);
    const long n = (long)((b1 - b0 + chunk - 1) / chunk);
    const int lane = threadIdx.x;
    if (lane == 0) {
        for (int s = 0; s < stages; ++s) mbar_init(&bars[s], 1);
        fence_barrier_init();
    }
    __syncwarp();
    auto issue = [&](long c) {
        if (c >= n || lane != 0) return;
        const size_t off = b0 + (size_t)c * chunk;
        const uint32_t len = (uint32_t)min_sz(chunk, b1 - off);
        const int s = (int)(c % stages);
        mbar_arrive_expect_tx(&bars[s], len);
        bulk_copy_g2s(smem + (size_t)s * chunk, p + off, len, &bars[s]);
    };
    for (int s = 0; s < stages; ++s) issue(s);
    uint32_t acc = 0;
    for (long c = 0; c < n; ++c) {
        const int s = (int)(c % stages);
        mbar_wait(&bars[s], (uint32_t)((c / stages) & 1));
        acc ^= *reinterpret_cast<const uint32_t*>(smem + (size_t)s * chunk + 4 * lane);
        __syncwarp();
        issue(c + stages);
    }
    keep(acc, sink);
}

// The dec kernels' memory path (sm90_mxfp4_gemm_dec.cu, dec_loop's `issue`): B in frag16s, a group of 16 rows
// is 64 + (K/128) * 1088 bytes; CTA x reads groups [R x, R x + R), warp w its chunks [w nch/W, (w+1) nch/W).
__global__ void k_dec(const uint8_t* __restrict__ p, int K, int R, int stages, uint32_t* sink) {
    extern __shared__ __align__(128) uint8_t smem[];
    constexpr int kChunk = F4GEMM_FRAG16S_CHUNK;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, W = blockDim.x / 32;
    const int slot_bytes = R * kChunk;
    uint8_t* ring = smem + (size_t)warp * stages * slot_bytes;
    uint64_t* bars = reinterpret_cast<uint64_t*>(smem + (size_t)W * stages * slot_bytes) + warp * stages;
    const long grp = (long)f4gemm::frag16s_group_bytes(K);
    const uint8_t* g0 = p + (long)blockIdx.x * R * grp + F4GEMM_FRAG16S_HEAD;
    const int nch = K / 128, c0 = warp * nch / W, c1 = (warp + 1) * nch / W;
    if (lane == 0) {
        for (int s = 0; s < stages; ++s) mbar_init(&bars[s], 1);
        fence_barrier_init();
    }
    __syncwarp();
    auto issue = [&](int c) {
        if (c >= c1 || lane != 0) return;
        const int s = (c - c0) % stages;
        mbar_arrive_expect_tx(&bars[s], slot_bytes);
        for (int rg = 0; rg < R; ++rg)
            bulk_copy_g2s(ring + s * slot_bytes + rg * kChunk, g0 + rg * grp + (long)c * kChunk, kChunk,
                          &bars[s]);
    };
    for (int i = 0; i < stages; ++i) issue(c0 + i);
    uint32_t acc = 0;
    for (int c = c0; c < c1; ++c) {
        const int s = (c - c0) % stages;
        mbar_wait(&bars[s], (uint32_t)(((c - c0) / stages) & 1));
        acc ^= *reinterpret_cast<const uint32_t*>(ring + s * slot_bytes + 4 * lane);
        __syncwarp();
        issue(c + stages);
    }
    keep(acc, sink);
}

__global__ void k_empty(uint32_t* sink) {
    keep(threadIdx.x + 1, sink);
}

struct Pattern {
    std::string name;
    // launches the pattern on `buf` of `bytes` (a frag16s B image of n x k for the dec pattern) on `st`
    std::function<void(const uint8_t* buf, size_t bytes, long n, int k, cudaStream_t st)> launch;
    bool dec = false;  // needs the size to be a whole frag16s image (n, k)
    long tile_n = 0;   // runs only where it divides N (the dec pattern's tiles; 0: any N)
};

struct Size {  // a frag16s B of n x k
    long n;
    int k;
    size_t bytes() const { return (size_t)n / 16 * f4gemm::frag16s_group_bytes((size_t)k); }
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace

int main(int argc, char** argv) {
    int reps = 5;
    bool check = false;
    std::vector<Size> sizes;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--check") {
            check = true;
        } else if (a == "--reps" && i + 1 < argc) {
            reps = std::atoi(argv[++i]);
            if (reps < 1) {
                std::fprintf(stderr, "readfloor: --reps %s: need a positive count\n", argv[i]);
                return 2;
            }
        } else if (a == "--shapes" && i + 1 < argc) {  // NxK,NxK,...
            std::string s = argv[++i];
            size_t pos = 0;
            while (pos < s.size()) {
                size_t e = s.find(',', pos);
                if (e == std::string::npos) e = s.size();
                long n = 0;
                int k = 0;
                if (std::sscanf(s.substr(pos, e - pos).c_str(), "%ldx%d", &n, &k) != 2 || n <= 0 || n % 64 ||
                    k <= 0 || k % 1024) {
                    std::fprintf(stderr,
                                 "readfloor: --shapes %s: want NxK with N %% 64 == 0, K %% 1024 == 0\n",
                                 s.substr(pos, e - pos).c_str());
                    return 2;
                }
                sizes.push_back({n, k});
                pos = e + 1;
            }
        } else {
            std::fprintf(
                stderr,
                "readfloor: unknown argument %s (usage: readfloor [--check] [--reps R] [--shapes NxK,...])\n",
                a.c_str());
            return 2;
        }
    }
    if (sizes.empty())
        for (auto nk : {std::pair<long, int>{8192, 8192}, {8192, 28672}, {28672, 8192}, {16384, 16384}})
            sizes.push_back({nk.first, nk.second});

    int dev = 0, sms = 0, ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        std::printf("readfloor: no usable CUDA device (%s): skipped; run it on the GPU machine\n",
                    cudaGetErrorString(cudaGetLastError()));
        return 77;  // CTest's SKIP_RETURN_CODE
    }
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    std::printf("device %s, %d SMs\n", prop.name, sms);
    uint32_t* sink = nullptr;
    CK(cudaMalloc(&sink, 4));
    if (check) return self_check(sms, sink);
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));

    // Warm-up that brings the clocks up, then the copy bandwidth as bench.py measures it (2 GiB, read +
    // write).
    {
        const size_t cb = 2ull << 30;
        uint8_t *x, *y;
        CK(cudaMalloc(&x, cb));
        CK(cudaMalloc(&y, cb));
        CK(cudaMemsetAsync(x, 1, cb, st));
        cudaEvent_t b, e;
        CK(cudaEventCreate(&b));
        CK(cudaEventCreate(&e));
        for (int i = 0; i < 20; ++i) CK(cudaMemcpyAsync(y, x, cb, cudaMemcpyDeviceToDevice, st));
        std::vector<double> t;
        for (int i = 0; i < 10; ++i) {
            CK(cudaEventRecord(b, st));
            CK(cudaMemcpyAsync(y, x, cb, cudaMemcpyDeviceToDevice, st));
            CK(cudaEventRecord(e, st));
            CK(cudaEventSynchronize(e));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, b, e));
            t.push_back(ms * 1e3);
        }
        std::printf("copy bandwidth %.0f GB/s (read + write of 2 GiB, median of 10)\n",
                    2.0 * cb / median(t) / 1e3);
        CK(cudaFree(x));
        CK(cudaFree(y));
    }

    std::vector<Pattern> pats;
    auto ldg = [&](auto u, int cps) {
        constexpr int U = decltype(u)::value;
        pats.push_back({"ldg_u" + std::to_string(U) + "_c" + std::to_string(cps),
                        [=](const uint8_t* b, size_t bytes, long, int, cudaStream_t s) {
                            k_ldg<U><<<sms * cps, 512, 0, s>>>(reinterpret_cast<const uint4*>(b), bytes / 16,
                                                               sink);
                        }});
    };
    ldg(std::integral_constant<int, 4>{}, 2);
    ldg(std::integral_constant<int, 8>{}, 2);
    ldg(std::integral_constant<int, 4>{}, 4);
    for (const auto& cfg :
         {std::tuple<int, int, int>{16, 4, 2}, {16, 8, 1}, {32, 4, 1}, {8, 8, 2}, {4, 8, 4}}) {
        const int kib = std::get<0>(cfg), stages = std::get<1>(cfg), cps = std::get<2>(cfg);
        const int chunk = kib * 1024, smem = stages * chunk + 8 * stages;
        pats.push_back(
            {"bulk_" + std::to_string(kib) + "k_s" + std::to_string(stages) + "_c" + std::to_string(cps),
             [=](const uint8_t* b, size_t bytes, long, int, cudaStream_t s) {
                 k_bulk<<<sms * cps, 32, smem, s>>>(b, bytes, chunk, stages, sink);
             }});
    }
    CK(cudaFuncSetAttribute(k_bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
    CK(cudaFuncSetAttribute(k_dec, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
    // The shipped dec configs (R, warps, stages): dec_16x64_m2 (4, 8, 2), dec_16x32_m2 (2, 8, 3),
    // dec_16x64_w16 (4, 16, 2), dec_16x64_w12 (4, 12, 3), dec_16x80_w12 (5, 12, 2), dec_16x112_w12 (7, 12,
    // 2); then deeper rings. A config runs only on sizes whose N its tile divides.
    for (const auto& cfg : {std::tuple<int, int, int>{4, 8, 2},
                            {2, 8, 3},
                            {4, 16, 2},
                            {4, 12, 3},
                            {5, 12, 2},
                            {7, 12, 2},
                            {4, 8, 4},
                            {2, 8, 6}}) {
        const int R = std::get<0>(cfg), W = std::get<1>(cfg), T = std::get<2>(cfg);
        const int smem = W * T * (R * F4GEMM_FRAG16S_CHUNK + 16 * 80 + 64 + 8);  // the dec kernel's ring
        pats.push_back({"dec_r" + std::to_string(R) + "_w" + std::to_string(W) + "_s" + std::to_string(T),
                        [=](const uint8_t* b, size_t, long n, int k, cudaStream_t s) {
                            k_dec<<<(unsigned)(n / (16 * R)), 32 * W, smem, s>>>(b, k, R, T, sink);
                        },
                        true, 16L * R});
    }

    // empty kernels: the floor of a launch inside a graph
    std::vector<std::pair<int, double>> empties;
    std::printf("\n%-22s %12s %6s %9s %8s %9s\n", "pattern", "N x K", "MB", "us", "spread", "GB/s");
    std::vector<std::vector<double>> fit_x(pats.size()), fit_y(pats.size());
    for (const Size& sz : sizes) {
        const size_t bytes = (sz.bytes() + 255) / 256 * 256;
        const int nsets = (int)std::min<size_t>(8, std::max<size_t>(2, (2 * kL2 + bytes - 1) / bytes));
        std::vector<uint8_t*> bufs(nsets);
        for (auto& b : bufs) {
            CK(cudaMalloc(&b, bytes));
            CK(cudaMemsetAsync(b, 0x5A, bytes, st));
        }
        const double est_us = bytes / 4.0e6;
        const int calls = (int)std::min(200.0, std::max<double>(nsets, 2000.0 / std::max(est_us, 5.0)));
        std::vector<cudaGraphExec_t> execs;
        std::vector<std::string> names;
        std::vector<int> which;
        auto capture = [&](const std::function<void(int, cudaStream_t)>& one) {
            for (int i = 0; i < 3 * nsets; ++i) one(i % nsets, st);  // warm-up outside the graph
            CK(cudaStreamSynchronize(st));
            cudaGraph_t g;
            CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
            for (int i = 0; i < calls; ++i) one(i % nsets, st);
            CK(cudaStreamEndCapture(st, &g));
            cudaGraphExec_t ex;
            CK(cudaGraphInstantiate(&ex, g, 0));
            CK(cudaGraphDestroy(g));
            execs.push_back(ex);
        };
        for (size_t pi = 0; pi < pats.size(); ++pi) {
            const Pattern& pt = pats[pi];
            if (pt.tile_n && sz.n % pt.tile_n) continue;  // the tiles would not cover N
            capture([&](int i, cudaStream_t s) { pt.launch(bufs[i], bytes, sz.n, sz.k, s); });
            CK(cudaGetLastError());
            names.push_back(pt.name);
            which.push_back((int)pi);
        }
        for (int cps : {1, 2}) {
            capture([&](int, cudaStream_t s) { k_empty<<<sms * cps, 256, 0, s>>>(sink); });
            names.push_back("empty_c" + std::to_string(cps));
            which.push_back(-cps);
        }
        std::vector<std::vector<double>> t(execs.size());
        cudaEvent_t b, e;
        CK(cudaEventCreate(&b));
        CK(cudaEventCreate(&e));
        for (int r = 0; r < reps; ++r)
            for (size_t x = 0; x < execs.size(); ++x) {
                CK(cudaEventRecord(b, st));
                CK(cudaGraphLaunch(execs[x], st));
                CK(cudaEventRecord(e, st));
                CK(cudaEventSynchronize(e));
                float ms = 0;
                CK(cudaEventElapsedTime(&ms, b, e));
                t[x].push_back(ms * 1e3 / calls);
            }
        CK(cudaGetLastError());
        for (size_t x = 0; x < execs.size(); ++x) {
            const double med = median(t[x]);
            const double spread =
                (*std::max_element(t[x].begin(), t[x].end()) - *std::min_element(t[x].begin(), t[x].end())) /
                med;
            const bool empty = which[x] < 0;
            std::printf("%-22s %6ldx%-5d %6.1f %9.2f %7.1f%% %9.0f\n", names[x].c_str(), sz.n, sz.k,
                        bytes / 1e6, med, 100 * spread, empty ? 0.0 : bytes / med / 1e3);
            if (!empty) {
                fit_x[which[x]].push_back((double)bytes);
                fit_y[which[x]].push_back(med);
            }
            CK(cudaGraphExecDestroy(execs[x]));
        }
        for (auto bf : bufs) CK(cudaFree(bf));
        std::fflush(stdout);
    }
    // time = fixed + bytes / bw, least squares over the sizes
    std::printf("\n%-22s %10s %12s\n", "pattern", "fixed us", "steady GB/s");
    for (size_t pi = 0; pi < pats.size(); ++pi) {
        const auto &xs = fit_x[pi], &ys = fit_y[pi];
        const double n = (double)xs.size();
        if (n < 2) continue;
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (size_t i = 0; i < xs.size(); ++i) {
            sx += xs[i];
            sy += ys[i];
            sxx += xs[i] * xs[i];
            sxy += xs[i] * ys[i];
        }
        const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx), icept = (sy - slope * sx) / n;
        std::printf("%-22s %10.2f %12.0f\n", pats[pi].name.c_str(), icept, 1e-3 / slope);
    }
    return 0;
}
