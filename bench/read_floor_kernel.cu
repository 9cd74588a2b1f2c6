// The read-floor kernel bench/bench.py loads as a cubin (libcuda through ctypes) and launches on PyTorch's
// stream beside the GEMMs: 512 threads per CTA, 4 CTAs per SM, 4 loads of 16 bytes in flight per thread, the
// fastest of the read patterns bench/readfloor.cu measured on the H200 (docs/BENCH.md "Read floor").
#include "read_floor.cuh"

extern "C" __global__ void __launch_bounds__(512)
    f4gemm_read_floor(const uint4* __restrict__ p, unsigned long long n16, uint32_t* sink) {
    f4gemm_bench::read_stream<4>(p, (size_t)n16, sink);
}
