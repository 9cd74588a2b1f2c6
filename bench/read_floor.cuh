// The streaming-read kernel of the read floor (docs/BENCH.md "Read floor"): shared by bench/readfloor.cu,
// which explores read patterns, and bench/read_floor_kernel.cu, the cubin bench/bench.py launches beside the
// GEMMs. Plain CUDA, no f4gemm dependency.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace f4gemm_bench {

// Folds what was read into one word that is stored only if it equals a value no input produces here, so the
// loads cannot be dropped and nothing is written.
__device__ __forceinline__ void keep(uint32_t acc, uint32_t* sink) {
    if (acc == 0x9E3779B9u) *sink = acc;
}

// Every thread loads 16 bytes at a time with U loads in flight (ld.global.cs: streamed, not kept in L1),
// grid-stride over n16 16-byte words. Launched with 512 threads per CTA. With `sum` (the self-check of
// readfloor --check), every thread also adds the 32-bit words it read into *sum, so that a word skipped or
// read twice shows on random data.
template <int U>
__device__ __forceinline__ void read_stream(const uint4* __restrict__ p, size_t n16, uint32_t* sink,
                                            unsigned long long* sum = nullptr) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t acc = 0;
    unsigned long long total = 0;
    for (; i + (U - 1) * stride < n16; i += U * stride) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = __ldcs(p + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; ++u) {
            acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
            if (sum) total += (unsigned long long)v[u].x + v[u].y + v[u].z + v[u].w;
        }
    }
    for (; i < n16; i += stride) {
        const uint4 v = __ldcs(p + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
        if (sum) total += (unsigned long long)v.x + v.y + v.z + v.w;
    }
    if (sum) atomicAdd(sum, total);
    keep(acc, sink);
}

}  // namespace f4gemm_bench
