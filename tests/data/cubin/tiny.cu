// A one-line kernel compiled at test time for two architectures, so the tests can check that a
// code object built for another architecture is identified and refused before launch.
extern "C" __global__ void f4gemm_tiny(int* p) {
    *p = 1;
}
