// Throughput of PRMT, LOP3, SHF, IMAD per SM on the H200: N independent chains per thread, 4 warps x 8 per
// SM.
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
template <int OP>
__global__ void k(uint32_t* out, int iters, uint32_t seed) {
    uint32_t a[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) a[i] = seed * (threadIdx.x + 1) + i * 0x9E3779B9u;
    const uint32_t t0 = 0x3E3C3800u + seed, t1 = 0x46444240u ^ seed;
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int u = 0; u < 16; ++u) {
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                if (OP == 0) asm volatile("prmt.b32 %0, %1, %2, %0;" : "+r"(a[i]) : "r"(t0), "r"(t1));
                if (OP == 1) asm volatile("lop3.b32 %0, %0, %1, %2, 0x96;" : "+r"(a[i]) : "r"(t0), "r"(t1));
                if (OP == 2) asm volatile("shf.l.wrap.b32 %0, %0, %0, 3;" : "+r"(a[i]));
                if (OP == 3) asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(a[i]) : "r"(t0), "r"(t1));
            }
        }
    }
    uint32_t r = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) r ^= a[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = r;
}
template <int OP>
void run(const char* name, uint32_t* d, int blocks, int threads) {
    const int iters = 4096;
    k<OP><<<blocks, threads>>>(d, 16, 1);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0);
    k<OP><<<blocks, threads>>>(d, iters, 1);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    int clk;
    cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
    double warp_instr = double(blocks) * threads / 32 * iters * 16 * 8;
    double per_sm_cycle = warp_instr / 132 / (ms * 1e-3 * clk * 1e3);
    printf(
        "%-5s %4d threads/CTA x %d CTAs: %.3f ms, %.2f warp instr per SM per cycle (%.0f lanes) at %d MHz\n",
        name, threads, blocks, ms, per_sm_cycle, per_sm_cycle * 32, clk / 1000);
}
int main() {
    uint32_t* d;
    cudaMalloc(&d, 132 * 8 * 1024 * 4);
    for (int t : {256, 1024}) {
        run<0>("PRMT", d, 132 * 2, t);
        run<1>("LOP3", d, 132 * 2, t);
        run<2>("SHF", d, 132 * 2, t);
        run<3>("IMAD", d, 132 * 2, t);
    }
    return 0;
}
