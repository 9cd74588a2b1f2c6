// The f4gemm command's subcommands, each a function from parsed options to an exit code. They
// print; the core they call never does.
#pragma once

#include <string>
#include <vector>

namespace f4gemm::cli {

struct RunOptions {
    int m = 512, n = 1024, k = 2048;
    std::string co_dir;
    std::string kernel;
    int bpreshuffle = -1;  // -1: default (1 when the manifest has preshuffled kernels)
    int splitk = 0;
    int iters = 20;
    int warmup = 5;
    bool verify = true;
    bool list = false;
    bool dry_run = false;
    bool explain = false;
    std::string backend = "auto";
    int num_cu = 0;
    int device = 0;
    long long seed = 1234;
    std::string data = "seed";
    float alpha = 1.f, beta = 0.f;
    std::string json;
    std::string a, a_scale, b, b_scale, c, out;  // real data
    std::string tuned;                           // tuned table (--tuned)
    std::string accum = "exact";                 // --accum: exact | promoted
};
int run(const RunOptions& o);

struct PackOptions {
    std::string layout, in, out;
    std::string scales;  // frag16s: the plain scales (read; written with --inverse)
    bool inverse = false;
};
int pack(const PackOptions& o);

struct QuantizeOptions {
    std::string in, out, scale_out;
};
int quantize(const QuantizeOptions& o);

struct TuneOptions {
    std::vector<std::string> shapes;  // "MxNxK"
    std::string co_dir, out;
    int device = 0;
    int iters = 20, warmup = 5, reps = 3;
    bool verify = true;
    double verify_max_macs = 17179869184.0;  // 2^34: larger shapes are not checked on the CPU
    std::string timing = "graph";            // "graph" (replayed CUDA graphs, as bench/) or "loop";
                                             // the CLI admits only these two
    std::string accum = "exact";             // --accum: the mode tuned for, written in each row
};
int tune(const TuneOptions& o);

}  // namespace f4gemm::cli
