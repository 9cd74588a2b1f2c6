// The driver's public vocabulary, under the Session (session.hpp): where the code objects are, which
// backend runs, the kernel-choice policy's answer, a problem's host operands and its float64 reference.
// The launch machinery (Launcher, GpuGemm, the CPU run) is private to src/driver (launcher.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "f4gemm/abi.hpp"
#include "f4gemm/heuristic.hpp"
#include "f4gemm/layout.hpp"
#include "f4gemm/manifest.hpp"
#include "f4gemm/operands.hpp"
#include "f4gemm/reference.hpp"
#include "f4gemm/runtime.hpp"
#include "f4gemm/tuned.hpp"
#include "f4gemm/verify.hpp"

namespace f4gemm {

enum class BackendKind { Auto, Cpu, Cuda, Hip };
BackendKind parse_backend(const std::string& s);  // auto|cpu|cuda|hip; throws InvalidArgument
const char* to_string(BackendKind b);

// Where code objects come from, in the original's order: --co-dir, $AITER_F4GEMM_DIR,
// $AITER_ASM_DIR/gfx950/f4gemm; then ours: $F4GEMM_CO_DIR, the installed share/f4gemm/sm90a,
// the build tree's kernels/sm90a (both found relative to the running executable). "" if none.
struct CoDirChoice {
    std::string dir;
    std::string source;  // "--co-dir", "AITER_F4GEMM_DIR", ..., "built-in"
};
CoDirChoice resolve_co_dir(const std::string& flag, bool allow_builtin);
std::string builtin_co_dir();  // our sm_90a kernels folder, "" if not found

// Which backend runs: an explicit choice is checked (compiled in? device present?), auto picks
// CUDA, then HIP, then the CPU.
BackendKind resolve_backend(BackendKind requested);

// The manifest rows a device can run: CUDA takes arch "sm_*", HIP takes "gfx*". Returns the
// filtered manifest (same order); throws Errc::NotFound when nothing is left.
Manifest filter_for_device(const Manifest& m, BackendKind backend, const std::string& device_arch);

// --bpreshuffle default: 1 when the manifest holds a preshuffled-B kernel (always true for
// aiter's, which reproduces the original's default), else 0.
int default_bpreshuffle(const Manifest& m);
// --num-cu default without a device: 256 for gfx950 manifests (MI355X), 132 for sm_90a (H200).
int default_num_cu(const Manifest& m);

struct Selection {
    int index = -1;  // into the manifest
    int log2_k_split = 0;
    bool tuned = false;         // taken from the tuned table
    HeuristicResult heuristic;  // steps filled when explain was asked for (index -1: a note of the policy)
};
// The kernel-choice policy (src/driver/session.cpp, its one home; Session::select is how the faces reach
// it), for a request of accumulation mode `accum` (include/f4gemm/accum.hpp):
//   --kernel NAME (knl_name or co_name; forced split = max(L, 0)); a promoted kernel under an exact request
//     is an error naming the fix, an exact kernel under a promoted request runs;
//   else the tuned table's entry for (q.num_cu, M, N, K, accum) when it names a kernel of the manifest that
//     the mode allows (else an explain note and on);
//   else our sm_90a filters (max_m, smallest covering tile, one kernel per tile width by priority) and
//   aiter's
//     heuristic: an exact request over the exact kernels; a promoted request over the promoted kernels first
//     and, when none is offered for the shape, over the exact kernels (the exact contract is stricter, so it
//     meets the promoted bound), the fallback named in the explain steps.
Selection select(const Manifest& m, const std::string& kernel, const HeuristicQuery& q, bool explain,
                 const TunedTable* tuned = nullptr, Accum accum = Accum::Exact);

// The K a kernel is launched with: the packed-weight (frag16s) kernels read B and A padded to
// round_up(K, 256) (include/f4gemm/weight.h); the others take K as it is.
int kernel_k(const KernelConfig& kc, int k);
size_t kernel_k(BLayout b_layout, size_t k);  // the same rule by the kernel's B layout
// Whether a kernel takes an N x K weight: the packed-weight (frag16s) kernels take any N and K % 32; the
// plain-B ones (the dev ladder's reference rungs, aiter's kernels) read B and its scales unpadded and need
// K % 256 == 0 and N % 16 == 0.
bool kernel_takes_nk(const KernelConfig& kc, int n, int k);

// Host-side operands of one problem, plain layouts.
struct Problem {
    int m = 0, n = 0, k = 0;
    float alpha = 1.f, beta = 0.f;
    MxOperand a, b;
    std::vector<uint16_t> c;  // bf16 [m, n] or empty
};
// aiter's shape rules (the original's messages): K % 256, N % 16, all positive. Session::check_shape
// applies them to aiter's manifests; the packed-weight kernels and the CPU take any N and K % 32.
void check_shape_aiter(int m, int n, int k);
// The seed's operands (or another DataKind) for m x n x k.
Problem make_problem(int m, int n, int k, float alpha, float beta, DataKind kind, uint32_t seed_a,
                     uint32_t seed_b, bool with_c);

// The float64 reference for a problem (C taken as its bf16 values).
std::vector<float> reference_for(const Problem& p);
// The promoted mode's: the float64 reference kept in double and S = sum_k |a_k b_k| per output.
MxReferenceAbs reference_abs_for(const Problem& p);
// A result d (bf16 [m, n]) of problem p judged by the contract of mode `accum`: exact, verify_bf16 with
// default_tolerance(bf16_split_reduction); promoted, verify_promoted_bf16 against reference_abs_for(p) with
// c_w = promoted_cw(launch_k, chain_k) (the K the kernel saw, the K of its FP8 chains: chain_k(kc)). The
// float64 references are computed here.
VerifyResult verify_result(const Problem& p, const std::vector<uint16_t>& d, Accum accum, int launch_k,
                           bool bf16_split_reduction = false, size_t chain_k = 128);

// How repeated runs are issued when timing. Loop: one by one from the host (the original asm_f4gemm's
// method). Graph: recorded once into a graph that is then replayed (bench/bench.py's method), which leaves
// out the host's per-launch cost (docs/BENCH.md); needs Device::graphs_supported().
enum class Timing { Loop, Graph };

}  // namespace f4gemm
