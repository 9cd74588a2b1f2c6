// f4gemm command line: the original asm_f4gemm's flags, defaults and output lines, plus our
// backends, real-data I/O, dry-run/explain, and the offline pack/quantize subcommands.
// Parse errors become one line naming the flag and the fix, exit 1 (as the original).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <regex>
#include <string>

#include "commands.hpp"
#include "f4gemm/runtime.hpp"

namespace {

std::string backends_compiled() {
    std::string s = "cpu";
    if (f4gemm::cuda_compiled()) s += ", cuda";
    if (f4gemm::hip_compiled()) s += ", hip";
    return s;
}

// CLI11's messages reworded to the original's "[f4gemm] ..." one-liners.
int report_parse_error(const CLI::ParseError& e) {
    const std::string what = e.what();
    std::smatch m;
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
        static const std::regex extra_re(R"(not expected: (\S+))");
        std::string opt = std::regex_search(what, m, extra_re) ? m[1].str() : what;
        std::fprintf(stderr, "[f4gemm] unknown option %s: see f4gemm --help for the options\n", opt.c_str());
    } else if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
        static const std::regex flag_re(R"(^(\S+?):)");
        std::string flag = std::regex_search(what, m, flag_re) ? m[1].str() : what;
        std::fprintf(stderr, "[f4gemm] missing value for %s: pass %s <value>\n", flag.c_str(), flag.c_str());
    } else if (dynamic_cast<const CLI::ConversionError*>(&e) ||
               dynamic_cast<const CLI::ValidationError*>(&e)) {
        std::fprintf(stderr, "[f4gemm] bad value: %s: see f4gemm --help\n", what.c_str());
    } else {
        std::fprintf(stderr, "[f4gemm] %s: see f4gemm --help\n", what.c_str());
    }
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace f4gemm::cli;
    CLI::App app{
        "f4gemm: MXFP4 GEMM D = alpha * A * B^T + beta * C, verified against a float64 CPU reference"};
    app.set_help_flag("-h,--help", "print this help and exit");
    // The original reads options in order, so a repeated flag's last value wins.
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.footer(
        "Environment: AITER_F4GEMM_DIR (the f4gemm code-object folder), AITER_ASM_DIR (aiter's hsa/ "
        "root; gfx950/f4gemm is appended), F4GEMM_CO_DIR (our kernels' folder).");
    RunOptions ro;
    bool version = false;
    app.add_option("-m", ro.m, "M (rows of A and D); default 512");
    app.add_option("-n", ro.n,
                   "N (rows of B, columns of D), any N >= 1 (aiter kernels: a multiple of 16); default 1024");
    app.add_option("-k", ro.k, "K (reduction), a multiple of 32 (aiter kernels: of 256); default 2048");
    app.add_option("--co-dir", ro.co_dir, "folder holding the code objects and f4gemm_bf16_per1x32Fp4.csv");
    app.add_option("--kernel", ro.kernel, "force a kernel by mangled name (knl_name) or file name (co_name)");
    app.add_option("--bpreshuffle", ro.bpreshuffle,
                   "0|1: heuristic filter on the B layout (default 1 when the "
                   "manifest has preshuffled kernels)");
    app.add_option("--splitk", ro.splitk, "log2 of the K split; -1 lets the heuristic try 2/4/8/16");
    app.add_option("--iters", ro.iters, "timed iterations (0 = no benchmark); default 20")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--warmup", ro.warmup, "warm-up runs before timing; default 5")
        ->check(CLI::NonNegativeNumber);
    app.add_flag_callback(
        "--no-verify", [&] { ro.verify = false; }, "skip the CPU reference check");
    app.add_flag("--list", ro.list, "print the manifest and exit");
    app.add_flag("--dry-run", ro.dry_run, "select the kernel, print the shape/kernel and grid lines, exit");
    app.add_flag("--explain", ro.explain, "print why each heuristic candidate won or lost");
    app.add_option("--backend", ro.backend, "auto|cuda|hip|cpu; default auto (CUDA, then HIP, then CPU)");
    app.add_option("--device", ro.device, "GPU ordinal; default 0");
    app.add_option("--num-cu", ro.num_cu, "CU/SM count for the heuristic; default the device's");
    app.add_option("--seed", ro.seed, "operand seed: A uses S, B uses S+4444 (default 1234 -> 1234/5678)");
    app.add_option("--data", ro.data, "seed|wide|gaussian|zero|nan: generated operand kind; default seed");
    app.add_option("--alpha", ro.alpha, "alpha; default 1");
    app.add_option("--beta", ro.beta, "beta; default 0 (beta != 0 without --c generates a C)");
    app.add_option("--json", ro.json, "write the result as JSON to this file");
    app.add_option("--a", ro.a, "A.npy: uint8 [M, K/2] packed e2m1");
    app.add_option("--a-scale", ro.a_scale, "SA.npy: uint8 [M, K/32] E8M0");
    app.add_option("--b", ro.b, "B.npy: uint8 [N, K/2] packed e2m1 (plain, not preshuffled)");
    app.add_option("--b-scale", ro.b_scale, "SB.npy: uint8 [N, K/32] E8M0");
    app.add_option("--c", ro.c, "C.npy: float32 [M, N] (rounded to bf16)");
    app.add_option("--out", ro.out, "D.npy: float32 [M, N], the bf16 results widened exactly");
    app.add_option("--tuned", ro.tuned,
                   "tuned table CSV (f4gemm tune); default $F4GEMM_TUNED, else "
                   "f4gemm_bf16_per1x32Fp4_tuned.csv in the code-object folder");
    app.add_option(
        "--accum", ro.accum,
        "exact|promoted: the accumulation mode (default exact: every result the nearest bf16 of "
        "the exact sum; promoted: FP8 partial sums promoted into fp32 every 128 K, faster, bounded "
        "error, docs/VERIFY.md)");
    app.add_flag("--version", version, "print the version and the backends compiled in");

    PackOptions po;
    CLI::App* pack_cmd = app.add_subcommand("pack", "offline layout transforms of .npy operands");
    pack_cmd
        ->add_option("--layout", po.layout,
                     "weight (the packed weight W every shipped kernel reads) | aiter-b | aiter-scale | "
                     "bitplane | frag16 | frag16s")
        ->required();
    pack_cmd->add_option(
        "--scales", po.scales,
        "weight, frag16s: the plain scales .npy [rows, K/32] (input; the output with --inverse)");
    pack_cmd->add_flag("--inverse", po.inverse, "undo the transform");
    pack_cmd->add_option("--in", po.in, "input .npy (uint8)")->required();
    pack_cmd->add_option("--out", po.out, "output .npy")->required();

    QuantizeOptions qo;
    CLI::App* quant_cmd = app.add_subcommand("quantize", "float32 [rows, K] .npy to MXFP4 (OCP MX v1.0)");
    quant_cmd->add_option("--in", qo.in, "float32 [rows, K] .npy, K % 32 == 0")->required();
    quant_cmd->add_option("--out", qo.out, "uint8 [rows, K/2] packed e2m1 .npy")->required();
    quant_cmd->add_option("--scale-out", qo.scale_out, "uint8 [rows, K/32] E8M0 .npy")->required();

    TuneOptions to;
    CLI::App* tune_cmd = app.add_subcommand("tune",
                                            "measure every kernel and split for given shapes on the GPU "
                                            "and write a tuned table the driver then prefers");
    tune_cmd->add_option("--shape", to.shapes, "MxNxK (repeatable)")->required();
    tune_cmd->add_option("--out", to.out, "tuned CSV to write")->required();
    tune_cmd->add_option("--co-dir", to.co_dir, "code-object folder (default: as for a run)");
    tune_cmd->add_option("--device", to.device, "GPU ordinal");
    tune_cmd->add_option("--iters", to.iters, "timed iterations per repetition; default 20")
        ->check(CLI::PositiveNumber);
    tune_cmd->add_option("--warmup", to.warmup, "warm-up runs; default 5")->check(CLI::NonNegativeNumber);
    tune_cmd->add_option("--reps", to.reps, "repetitions (median taken); default 3")
        ->check(CLI::PositiveNumber);
    tune_cmd->add_flag_callback(
        "--no-verify", [&] { to.verify = false; }, "skip the CPU check of each candidate");
    tune_cmd->add_option("--verify-max-macs", to.verify_max_macs,
                         "largest M*N*K checked against the CPU reference; default 2^34");
    tune_cmd
        ->add_option("--timing", to.timing,
                     "graph: time replays of CUDA graphs of the launches, as bench/ does (default); loop: "
                     "launch from the host one by one, as a plain run's --iters")
        ->check(CLI::IsMember({"graph", "loop"}));
    tune_cmd->add_option("--accum", to.accum,
                         "exact|promoted: the mode to tune for (default exact: the exact kernels; promoted: "
                         "every kernel), written in each row");

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return report_parse_error(e);
    }
    if (version) {
        std::printf("f4gemm %s (backends: %s)\n", F4GEMM_VERSION, backends_compiled().c_str());
        return 0;
    }
    if (*pack_cmd) return pack(po);
    if (*quant_cmd) return quantize(qo);
    if (*tune_cmd) return tune(to);
    return run(ro);
}
