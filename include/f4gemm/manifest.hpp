// The kernel manifest: aiter's CSV (tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name) parsed by
// header name, extra columns allowed. aiter's own file loads unchanged; a malformed row is an
// error naming file:line (a departure from asm_f4gemm, which skipped such rows silently).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "f4gemm/accum.hpp"
#include "f4gemm/layout.hpp"

namespace f4gemm {

constexpr const char* kManifestFile = "f4gemm_bf16_per1x32Fp4.csv";

enum class KernelAbi {
    Aiter,    // the 0x174-byte prefix only (aiter gfx950 code objects)
    Sm90v1,   // F4gemmSm90Args (prefix + workspace extension)
    Sm90pp1,  // F4gemmSm90Args, two launches: <knl_name>_prepass, then <knl_name>; the workspace holds
              // the pre-pass's e5m2 image of A and B (docs/ABI_SM90.md)
    Sm90pa1,  // as Sm90pp1, but the pre-pass converts A only (workspace: the image of A)
    Sm90pp2,  // as Sm90pp1, three launches: <knl_name>_prepass (A, B's row words, ready counters zeroed),
              // then <knl_name>_bconv (B, a few persistent CTAs) and <knl_name> running at once
              // (docs/ABI_SM90.md)
};
// The manifest's spelling of each abi (the "abi" column), and the accepted names as the fix in an error.
constexpr const char* kAbiChoices = "aiter, sm90v1, sm90pp1, sm90pa1 or sm90pp2";
const char* to_string(KernelAbi a);

struct KernelConfig {
    int tile_m = 0;
    int tile_n = 0;
    int split_k = 0;       // 1 = split-K capable
    int bpreshuffle = 0;   // 1 = B in aiter's 16x16 preshuffle
    std::string knl_name;  // symbol to look up in the code object
    std::string co_name;   // file name inside the code-object folder
    // Our extra columns (defaults describe aiter's gfx950 kernels):
    std::string arch = "gfx950";             // "arch": gfx950 | sm_90a | ...
    int threads = 256;                       // "threads"
    int smem_bytes = 0;                      // "smem_bytes": dynamic shared memory
    KernelAbi abi = KernelAbi::Aiter;        // "abi": aiter | sm90v1 | sm90pp1 | sm90pa1 | sm90pp2
    BLayout b_layout = BLayout::Aiter16x16;  // "b_layout", default from bpreshuffle
    ScaleLayout scale_layout = ScaleLayout::AiterShuffled;  // "scale_layout"
    int max_m = 0;  // "max_m": our sm_90a selection policy offers this kernel only for M <= max_m (0: any M)
    int min_m = 0;  // "min_m": ... and only for M >= min_m (0: any M)
    // "priority": our selection policy keeps, of two candidates covering the same tile (docs/HEURISTIC.md),
    // the one with the lower value, then the one listed first (aiter's manifests: all 0, row order).
    int priority = 0;
    // "cost_wave_k", "cost_prepass", "cost_wave_us": our sm_90a policy's time model for kernels that carry
    // it (cost_wave_k 0: none), fitted to measured times (kernels/sm90a/kernels.json, docs/HEURISTIC.md):
    // predicted us = waves * (cost_wave_us + cost_wave_k * K_launch) + cost_prepass * (rows the pre-pass
    // converts) * K_launch, waves = ceil(tiles / (CUs x CTAs per CU)); cost_wave_us is a CTA's time that does
    // not grow with K (its start-up and epilogue), paid once per wave.
    double cost_wave_k = 0, cost_prepass = 0, cost_wave_us = 0;
    // "decode_round", "decode_warps": the policy's decode model for kernels that carry it (0: none;
    // docs/HEURISTIC.md "Decode model"): the busiest SM runs rounds = ceil(tiles / CUs) CTAs and streams
    // rounds x tile_N x K elements at a rate proportional to its warps in flight, up to decode_warps;
    // decode_round is each CTA's fixed cost (start-up, epilogue) in the same element-per-warp units.
    double decode_round = 0;
    int decode_warps = 0;
    // "decode_speed": the decode model's element rate per warp in flight, relative to the mma.sync dec
    // kernels (1, also when the column is absent or empty): the wgmma decode tile streams each warp's
    // elements faster.
    double decode_speed = 1;
    // "accum": the accumulation mode the kernel implements (exact | promoted; include/f4gemm/accum.hpp). A
    // manifest without the column (aiter's, older builds) lists exact kernels only.
    Accum accum = Accum::Exact;
    // "promote_k": a promoted kernel's FP8 chain between promotions, in K (128 or 256; a multiple of 32); 0
    // (empty, or the column absent) means 128 for a promoted kernel and nothing for an exact one. The
    // promoted bound's constant grows with it (promoted_cw, docs/VERIFY.md section 7): chain_k() below.
    int promote_k = 0;
    // "reg_ctas": the CTAs per SM the kernel's launch register budget allows where the kernel pins it (our
    // setmaxnreg kernels: their __launch_bounds__ minimum blocks); 0 (empty, or the column absent): not
    // pinned, sm90_ctas_per_sm counts shared memory and threads only.
    int reg_ctas = 0;
    std::map<std::string, std::string> extra;  // any other column, verbatim
    int line = 0;                              // 1-based line in the CSV, for messages
};

// The K of kernel kc's FP8 chains for the promoted bound (promoted_cw(k_launch, chain_k(kc))): its promote_k,
// or 128 (the exact kernels, whose results meet any promoted bound, and manifests without the column).
inline size_t chain_k(const KernelConfig& kc) {
    return kc.promote_k > 0 ? size_t(kc.promote_k) : 128;
}

struct Manifest {
    std::string path;                   // the CSV that was read
    std::string dir;                    // its folder (the code-object folder)
    std::vector<std::string> columns;   // header, in file order
    std::vector<KernelConfig> kernels;  // CSV order (it matters for heuristic ties)
};

// Parses CSV text; `source` names the file in errors ("<source>:<line>: <what>: <fix>").
// Rules: cells split on ',', trimmed of space/tab/CR/LF; blank lines skipped; required columns
// tile_M, tile_N, splitK, bpreshuffle, knl_name, co_name; integers must parse fully; a row
// with a different cell count, an empty knl_name/co_name, or a bad value is an error.
Manifest parse_manifest(const std::string& text, const std::string& source);
// Reads <dir>/f4gemm_bf16_per1x32Fp4.csv. Missing file -> Errc::Manifest naming the path.
Manifest load_manifest(const std::string& dir);

// --kernel NAME matches knl_name or co_name; the whole list is scanned and the last match wins
// (asm_f4gemm's rule). Returns -1 if none.
int find_kernel(const Manifest& m, const std::string& name);

}  // namespace f4gemm
