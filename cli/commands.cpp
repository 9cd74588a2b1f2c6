// The f4gemm subcommands: run (the original's main flow plus backends, real data and JSON),
// pack and quantize. Output lines of `run` follow asm_f4gemm main.cpp (seed spec section 1).
#include "commands.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "f4gemm/codeobject.hpp"
#include "f4gemm/driver.hpp"
#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"
#include "f4gemm/layout.hpp"
#include "f4gemm/npy.hpp"
#include "f4gemm/tuned.hpp"

namespace f4gemm::cli {

namespace {

template <typename... Args>
void say(fmt::format_string<Args...> f, Args&&... args) {
    std::fputs(("[f4gemm] " + fmt::format(f, std::forward<Args>(args)...) + "\n").c_str(), stdout);
    std::fflush(stdout);
}

int fail(const std::string& msg) {
    std::fflush(stdout);
    std::fprintf(stderr, "[f4gemm] %s\n", msg.c_str());
    return 1;
}

void write_json_atomic(const std::string& path, const nlohmann::json& j) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp);
        if (!f)
            throw Error(Errc::Io,
                        "cannot write --json " + path + ": check the folder exists and is writable");
        f << j.dump(2) << "\n";
        if (!f) throw Error(Errc::Io, "cannot write --json " + path + ": disk full?");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw Error(Errc::Io, "cannot write --json " + path + ": check the folder is writable");
    }
}

// Real operands from .npy files (plain layouts), shapes cross-checked; M, N, K come from them.
Problem load_problem(const RunOptions& o) {
    if (o.a.empty() || o.a_scale.empty() || o.b.empty() || o.b_scale.empty())
        throw Error(Errc::InvalidArgument,
                    "real data needs all of --a --a-scale --b --b-scale: pass the missing ones");
    if (o.out.empty())
        throw Error(Errc::InvalidArgument, "real data needs --out D.npy for the result: pass --out");
    const NpyArray a = npy_read_2d(o.a, NpyDtype::U8, "--a");
    const NpyArray sa = npy_read_2d(o.a_scale, NpyDtype::U8, "--a-scale");
    const NpyArray b = npy_read_2d(o.b, NpyDtype::U8, "--b");
    const NpyArray sb = npy_read_2d(o.b_scale, NpyDtype::U8, "--b-scale");
    const size_t m = a.shape[0], n = b.shape[0], k = a.shape[1] * 2;
    auto need = [](bool ok, const std::string& msg) {
        if (!ok) throw Error(Errc::BadInput, msg);
    };
    need(b.shape[1] * 2 == k, fmt::format("--b {} has shape [{}, {}] but --a implies K/2 = {}: both must be "
                                          "[rows, K/2] with the same K",
                                          o.b, b.shape[0], b.shape[1], k / 2));
    need(sa.shape[0] == m && sa.shape[1] * 32 == k,
         fmt::format("--a-scale {} has shape [{}, {}], expected [{}, {}] (= [M, K/32])", o.a_scale,
                     sa.shape[0], sa.shape[1], m, k / 32));
    need(sb.shape[0] == n && sb.shape[1] * 32 == k,
         fmt::format("--b-scale {} has shape [{}, {}], expected [{}, {}] (= [N, K/32])", o.b_scale,
                     sb.shape[0], sb.shape[1], n, k / 32));
    if (m > (1u << 30) || n > (1u << 30) || k > (1u << 30))
        throw Error(Errc::BadInput, "operand too large for 32-bit kernel arguments: split the problem");
    check_shape(int(m), int(n), int(k));
    Problem p;
    p.m = int(m);
    p.n = int(n);
    p.k = int(k);
    p.alpha = o.alpha;
    p.beta = o.beta;
    p.a = MxOperand{m, k, a.bytes, sa.bytes};
    p.b = MxOperand{n, k, b.bytes, sb.bytes};
    if (!o.c.empty()) {
        const NpyArray c = npy_read_2d(o.c, NpyDtype::F32, "--c");
        need(c.shape[0] == m && c.shape[1] == n,
             fmt::format("--c {} has shape [{}, {}], expected [{}, {}] (= [M, N])", o.c, c.shape[0],
                         c.shape[1], m, n));
        p.c.resize(m * n);
        for (size_t i = 0; i < m * n; ++i) p.c[i] = float_to_bf16(c.f32()[i]);
    }
    return p;
}

// MemAvailable from /proc/meminfo in bytes; 0 when unknown.
double host_bytes_available() {
    std::ifstream f("/proc/meminfo");
    std::string key;
    double kb = 0;
    std::string unit;
    while (f >> key >> kb >> unit)
        if (key == "MemAvailable:") return kb * 1024.0;
    return 0;
}

// Refuses a run whose host buffers cannot fit (a crash by the OOM killer is not an error message),
// and warns when the float64 CPU reference will take long.
void check_host_budget(int m, int n, int k, bool verify, bool gpu) {
    const double mk = double(m) + double(n);
    double bytes = mk * k / 2 + mk * k / 32 + 6.0 * m * n;  // operands, D (bf16), C (bf16), output
    if (gpu) bytes += mk * k / 2 + mk * k / 32;             // images in the kernel's layout
    if (verify) bytes += mk * k * 8 + 4.0 * m * n;          // float64 dequantized operands, reference
    const double avail = host_bytes_available();
    if (avail > 0 && bytes > 0.9 * avail)
        throw Error(
            Errc::InvalidArgument,
            fmt::format("M={} N={} K={} needs about {:.1f} GB of host memory{}, {:.1f} GB are available: "
                        "use a smaller shape{}",
                        m, n, k, bytes / 1e9, verify ? " (the float64 reference included)" : "", avail / 1e9,
                        verify ? " or --no-verify" : ""));
    if (verify && double(m) * n * k > 17179869184.0)
        say("note: the float64 CPU reference for this shape is {:.0f} G multiply-adds and may take minutes; "
            "--no-verify skips it",
            double(m) * n * k / 1e9);
}

}  // namespace

int run(const RunOptions& o) try {
    const bool real_data = !o.a.empty() || !o.a_scale.empty() || !o.b.empty() || !o.b_scale.empty();
    const BackendKind requested = parse_backend(o.backend);
    if (o.bpreshuffle != -1 && o.bpreshuffle != 0 && o.bpreshuffle != 1)
        return fail(fmt::format("--bpreshuffle must be 0 or 1 (got {}): pass 0 or 1", o.bpreshuffle));
    if (o.splitk < -1 || o.splitk > 4)
        return fail(
            fmt::format("--splitk must be -1..4 (got {}): log2 of the split, -1 = heuristic", o.splitk));
    if (o.num_cu < 0) return fail(fmt::format("--num-cu must be positive (got {})", o.num_cu));
    if (o.iters < 0 || o.warmup < 0)
        return fail(fmt::format("--iters/--warmup must be >= 0 (got {}/{})", o.iters, o.warmup));
    const DataKind data_kind = parse_data_kind(o.data);
    if (!std::isfinite(o.alpha) || !std::isfinite(o.beta))
        return fail(fmt::format("--alpha/--beta must be finite (got {}/{})", o.alpha, o.beta));
    if (!real_data && (!o.out.empty() || !o.c.empty()))
        return fail(
            "--out/--c go with real data (--a --a-scale --b --b-scale): pass them too or drop --out/--c");
    if (o.seed < 0 || o.seed > 0xFFFFFFFFll)
        return fail(fmt::format("--seed must be 0..2^32-1 (got {})", o.seed));

    // Which backend runs. --list and --dry-run touch no device.
    const bool no_device = o.list || o.dry_run;
    const BackendKind backend = no_device ? requested : resolve_backend(requested);
    const bool gpu = backend == BackendKind::Cuda || backend == BackendKind::Hip;

    // Manifest: always for --list/--dry-run and the GPU backends.
    Manifest manifest;
    if (gpu || no_device) {
        const CoDirChoice co = resolve_co_dir(o.co_dir, backend != BackendKind::Hip);
        if (co.dir.empty()) return fail("no code-object directory: pass --co-dir or set AITER_ASM_DIR");
        manifest = load_manifest(co.dir);
        say("manifest {}: {} kernels", manifest.path, manifest.kernels.size());
    }
    if (o.list) {
        // The table rows carry no "[f4gemm] " prefix, as in the original (run_tests.sh reads field 5).
        std::printf("%s", fmt::format("{:<6} {:<6} {:<7} {:<12} {}\n", "tileM", "tileN", "splitK",
                                      "bpreshuffle", "co_name")
                              .c_str());
        for (const KernelConfig& kc : manifest.kernels)
            std::printf("%s", fmt::format("{:<6} {:<6} {:<7} {:<12} {}\n", kc.tile_m, kc.tile_n, kc.split_k,
                                          kc.bpreshuffle, kc.co_name)
                                  .c_str());
        return 0;
    }

    std::unique_ptr<Device> dev;
    if (backend == BackendKind::Cuda) dev = make_cuda_device(o.device);
    if (backend == BackendKind::Hip) dev = make_hip_device(o.device);
    if (dev) {
        const DeviceProps& p = dev->props();
        if (backend == BackendKind::Hip) {
            say("device: {} ({}, {} CUs)", p.name, p.arch, p.num_cu);
            if (p.arch != "gfx950") say("WARNING: these code objects are gfx950-only");
        } else {
            say("device: {} ({}, {} SMs)", p.name, p.arch, p.num_cu);
        }
        manifest = filter_for_device(manifest, backend, p.arch);
    } else if (!no_device) {
        say("device: CPU ({} threads), no GPU backend in use",
            std::max(1u, std::thread::hardware_concurrency()));
    }

    Problem problem;
    if (real_data) {
        problem = load_problem(o);
    } else {
        check_shape(o.m, o.n, o.k);
    }
    const int m = real_data ? problem.m : o.m, n = real_data ? problem.n : o.n,
              k = real_data ? problem.k : o.k;

    // Kernel selection (GPU and dry-run).
    int kernel_index = -1, log2_split = 0;
    LaunchPlan plan;
    if (gpu || o.dry_run) {
        HeuristicQuery q;
        q.m = m;
        q.n = n;
        q.k = k;
        q.num_cu = o.num_cu > 0 ? o.num_cu : dev ? dev->props().num_cu : default_num_cu(manifest);
        q.log2_k_split = o.splitk;
        q.bpreshuffle = o.bpreshuffle >= 0 ? o.bpreshuffle : default_bpreshuffle(manifest);
        const TunedTable tuned = load_tuned_for(manifest.dir, o.tuned);
        const Selection s = select(manifest, o.kernel, q, o.explain, &tuned);
        if (s.tuned) say("tuned: {} lists this shape on {} CUs", tuned.path, q.num_cu);
        if (o.explain) {
            say("heuristic on {} CUs, splitk {}, bpreshuffle {}:", q.num_cu, q.log2_k_split, q.bpreshuffle);
            for (const HeuristicStep& st : s.heuristic.steps)
                say("  {:<48} split {:<2} {}", manifest.kernels[size_t(st.index)].co_name, st.split,
                    st.reason);
        }
        kernel_index = s.index;
        log2_split = s.log2_k_split;
        const KernelConfig& kc = manifest.kernels[size_t(kernel_index)];
        plan = make_launch_plan(kc, m, n, k, log2_split, false);
        say("shape M={} N={} K={}, kernel {} (tile {}x{}, splitK={}, bpreshuffle={})", m, n, k, kc.co_name,
            kc.tile_m, kc.tile_n, kc.split_k, kc.bpreshuffle);
        say("grid = ({}, {}, {}) x {} threads, log2_k_split={}", plan.grid.x, plan.grid.y, plan.grid.z,
            plan.block.x, plan.log2_k_split);
        if (plan.pre_grid.x)
            say("pre-pass {}{}: grid = ({}, 1, 1) x {} threads, workspace {} bytes", kc.knl_name,
                kPrepassSuffix, plan.pre_grid.x, plan.pre_block.x, plan.workspace_bytes);
        if (o.dry_run) return 0;
    } else {
        log2_split = std::max(o.splitk, 0);
        say("shape M={} N={} K={}, kernel cpu (blocked fp32, splitK log2={})", m, n, k, log2_split);
    }

    check_host_budget(m, n, k, o.verify, gpu);
    if (!real_data)
        problem = make_problem(m, n, k, o.alpha, o.beta, data_kind, uint32_t(o.seed), uint32_t(o.seed + 4444),
                               o.beta != 0.f);

    std::vector<uint16_t> d;
    std::unique_ptr<GpuGemm> g;
    if (dev) {
        g = std::make_unique<GpuGemm>(*dev, manifest, kernel_index, log2_split, problem);
        // Which file ran, so a hand-edited object can be confirmed as the one launched.
        const std::string co_path = manifest.dir + "/" + g->kernel().co_name;
        const CodeObjectInfo info = inspect_code_object(co_path);
        say("code object: {} ({} bytes, {}, symbol {})", co_path, std::filesystem::file_size(co_path),
            info.kind == CodeObjectKind::Ptx ? "PTX, JIT-compiled by the driver" : info.target,
            g->kernel().knl_name);
        d = g->run_and_fetch();
    } else {
        d = cpu_run(problem, log2_split);
    }

    nlohmann::json j;
    j["shape"] = {{"M", m}, {"N", n}, {"K", k}};
    j["alpha"] = o.alpha;
    j["beta"] = o.beta;
    j["backend"] = to_string(backend);
    j["device"] = dev ? dev->props().name : "cpu";
    if (g) {
        j["kernel"] = g->kernel().co_name;
        j["tile"] = {g->kernel().tile_m, g->kernel().tile_n};
        j["log2_k_split"] = g->plan().log2_k_split;
        j["gdz"] = g->plan().gdz;
    } else {
        j["kernel"] = "cpu";
        j["log2_k_split"] = log2_split;
    }

    int rc = 0;
    if (o.verify) {
        const bool bf16_split = g && g->plan().gdz > 1 && g->kernel().abi == KernelAbi::Aiter;
        const Tolerance tol = default_tolerance(bf16_split);
        if (bf16_split)
            say("note: {}-way splitK reduces in bf16 (buffer_atomic_pk_add_bf16), using abs tol {:.4g}",
                g->plan().gdz, tol.atol_frac);
        else if (g && g->plan().gdz > 1)
            say("note: {}-way splitK reduces in fp32 (workspace), tolerances unchanged", g->plan().gdz);
        const std::vector<float> ref = reference_for(problem);
        const VerifyResult v = verify_bf16(d.data(), size_t(n), ref.data(), size_t(m), size_t(n), tol);
        say("verify: max|ref|={:.4g}  max_abs_err={:.4g}  max_rel_err={:.4g}  mismatches={}/{}", v.max_ref,
            v.max_abs_err, v.max_rel_err, v.mismatches, v.total);
        j["verify"] = {{"max_ref", v.max_ref},
                       {"max_abs_err", v.max_abs_err},
                       {"max_rel_err", v.max_rel_err},
                       {"mismatches", v.mismatches},
                       {"total", v.total},
                       {"nan_outputs", v.nan_outputs},
                       {"passed", v.passed()}};
        if (!v.passed()) {
            say("  first mismatch at (m={}, n={}): got {:.6g}, want {:.6g}", v.first_m, v.first_n,
                v.first_got, v.first_want);
            say("FAILED");
            rc = 1;
        } else {
            say("PASSED");
        }
    }
    if (!o.out.empty()) {
        std::vector<float> df(d.size());
        for (size_t i = 0; i < d.size(); ++i) df[i] = bf16_to_float(d[i]);
        npy_write(o.out, NpyDtype::F32, {size_t(m), size_t(n)}, df.data());
    }
    if (o.iters > 0) {
        const double us = g ? g->time_us(o.iters, o.warmup)
                            : cpu_time_us(problem, log2_split, o.iters, std::min(o.warmup, 1));
        const double flops = 2.0 * m * n * double(k);
        const double bytes = double(m) * k / 2 + double(n) * k / 2 + double(m) * n * 2;
        say("{:8.2f} us   {:8.2f} TFLOP/s   {:7.2f} TB/s", us, flops / us / 1e6, bytes / us / 1e6);
        j["timing"] = {
            {"us", us}, {"tflops", flops / us / 1e6}, {"tbs", bytes / us / 1e6}, {"iters", o.iters}};
    }
    j["passed"] = rc == 0;
    if (!o.json.empty()) write_json_atomic(o.json, j);
    return rc;
} catch (const Error& e) {
    return fail(e.what());
} catch (const std::bad_alloc&) {
    return fail("out of host memory: try a smaller shape");
}

int pack(const PackOptions& o) try {
    const NpyArray x = npy_read_2d(o.in, NpyDtype::U8, "--in");
    const size_t rows = x.shape[0], cols = x.shape[1];
    if (o.layout == "aiter-b") {
        const size_t k = cols * 2;
        if (rows % 16 || cols % 32)
            throw Error(Errc::BadInput,
                        fmt::format("--in {} has shape [{}, {}]: aiter-b needs rows % 16 == 0 and "
                                    "K/2 % 32 == 0 (K % 64): pad the operand",
                                    o.in, rows, cols));
        std::vector<uint8_t> y(x.bytes.size());
        if (o.inverse)
            aiter_b_unshuffle(x.u8(), y.data(), rows, k);
        else
            aiter_b_shuffle(x.u8(), y.data(), rows, k);
        npy_write(o.out, NpyDtype::U8, {rows, cols}, y.data());
    } else if (o.layout == "bitplane") {
        if (cols % 4)
            throw Error(Errc::BadInput, fmt::format("--in {} has shape [{}, {}]: bitplane needs K/2 % 4 == 0 "
                                                    "(K % 8): pad the operand",
                                                    o.in, rows, cols));
        std::vector<uint8_t> y(x.bytes.size());
        if (o.inverse)
            bitplane_unpack(x.u8(), y.data(), y.size());
        else
            bitplane_pack(x.u8(), y.data(), y.size());
        npy_write(o.out, NpyDtype::U8, {rows, cols}, y.data());
    } else if (o.layout == "frag16") {
        if (rows % 16 || cols % 64)
            throw Error(Errc::BadInput,
                        fmt::format("--in {} has shape [{}, {}]: frag16 needs rows % 16 == 0 and "
                                    "K/2 % 64 == 0 (K % 128): pad the operand",
                                    o.in, rows, cols));
        std::vector<uint8_t> y(x.bytes.size());
        if (o.inverse)
            frag16_unpack(x.u8(), y.data(), rows, cols * 2);
        else
            frag16_pack(x.u8(), y.data(), rows, cols * 2);
        npy_write(o.out, NpyDtype::U8, {rows, cols}, y.data());
    } else if (o.layout == "frag16s") {
        // Forward: --in B [rows, K/2] + --scales [rows, K/32] -> --out [rows, K/2 + K/32 + 4];
        // inverse: --in [rows, K/2 + K/32 + 4] -> --out B [rows, K/2] + --scales [rows, K/32].
        if (o.scales.empty())
            throw Error(Errc::InvalidArgument,
                        "--layout frag16s needs --scales (the plain scales .npy; written with --inverse)");
        const size_t kh = o.inverse ? (cols >= 4 ? (cols - 4) / 17 * 16 : 0) : cols;  // K/2
        if (rows % 16 || kh == 0 || kh % 64 || (o.inverse && (cols - 4) % 17))
            throw Error(
                Errc::BadInput,
                fmt::format("--in {} has shape [{}, {}]: frag16s needs rows % 16 == 0 and {} (K % 128): "
                            "pad the operand",
                            o.in, rows, cols,
                            o.inverse ? "columns = K/2 + K/32 + 4 with K/2 % 64 == 0" : "K/2 % 64 == 0"));
        const size_t k = kh * 2;
        if (o.inverse) {
            std::vector<uint8_t> b(rows * kh), s(rows * (k / 32));
            frag16s_unpack(x.u8(), b.data(), s.data(), rows, k);
            npy_write(o.out, NpyDtype::U8, {rows, kh}, b.data());
            npy_write(o.scales, NpyDtype::U8, {rows, k / 32}, s.data());
        } else {
            const NpyArray sc = npy_read_2d(o.scales, NpyDtype::U8, "--scales");
            if (sc.shape[0] != rows || sc.shape[1] != k / 32)
                throw Error(Errc::BadInput, fmt::format("--scales {} has shape [{}, {}]: it must be [{}, {}] "
                                                        "(rows of --in, K/32)",
                                                        o.scales, sc.shape[0], sc.shape[1], rows, k / 32));
            std::vector<uint8_t> y(frag16s_bytes(rows, k));
            frag16s_pack(x.u8(), sc.u8(), y.data(), rows, k);
            npy_write(o.out, NpyDtype::U8, {rows, kh + k / 32 + 4}, y.data());
        }
    } else if (o.layout == "aiter-scale") {
        if (o.inverse) {
            if (rows % 256 || cols % 8)
                throw Error(Errc::BadInput, fmt::format("--in {} has shape [{}, {}]: an aiter-scale array is "
                                                        "[round_up(rows,256), round_up(K/32,8)]",
                                                        o.in, rows, cols));
            std::vector<uint8_t> y(x.bytes.size());
            aiter_scale_unshuffle(x.u8(), y.data(), rows, cols);
            npy_write(o.out, NpyDtype::U8, {rows, cols}, y.data());
        } else {
            const std::vector<uint8_t> y = aiter_scale_pack(x.u8(), rows, cols * 32);
            const ScaleShape s = aiter_scale_shape(rows, cols * 32);
            npy_write(o.out, NpyDtype::U8, {s.rows, s.cols}, y.data());
        }
    } else {
        throw Error(Errc::InvalidArgument, "unknown --layout '" + o.layout +
                                               "': use aiter-b, aiter-scale, bitplane, frag16 or frag16s");
    }
    return 0;
} catch (const Error& e) {
    return fail(e.what());
}

int quantize(const QuantizeOptions& o) try {
    const NpyArray x = npy_read_2d(o.in, NpyDtype::F32, "--in");
    const size_t rows = x.shape[0], k = x.shape[1];
    if (k % 32)
        throw Error(Errc::BadInput,
                    fmt::format("--in {} has K = {} columns: MXFP4 needs K % 32 == 0; pad K", o.in, k));
    std::vector<uint8_t> packed(rows * k / 2), scales(rows * k / 32);
    quantize_mxfp4(x.f32(), rows, k, packed.data(), scales.data());
    npy_write(o.out, NpyDtype::U8, {rows, k / 2}, packed.data());
    try {
        npy_write(o.scale_out, NpyDtype::U8, {rows, k / 32}, scales.data());
    } catch (...) {
        std::remove(o.out.c_str());  // no half-finished output pair
        throw;
    }
    return 0;
} catch (const Error& e) {
    return fail(e.what());
}

}  // namespace f4gemm::cli

namespace f4gemm::cli {

int tune(const TuneOptions& o) try {
    std::vector<std::array<int, 3>> shapes;
    static const std::regex shape_re(R"(^(\d+)x(\d+)x(\d+)$)");
    for (const std::string& s : o.shapes) {
        std::smatch mm;
        if (!std::regex_match(s, mm, shape_re))
            throw Error(Errc::InvalidArgument, "--shape '" + s + "' is not MxNxK: write e.g. 4096x4096x4096");
        const std::array<int, 3> sh{std::stoi(mm[1]), std::stoi(mm[2]), std::stoi(mm[3])};
        check_shape(sh[0], sh[1], sh[2]);
        shapes.push_back(sh);
    }
    if (o.iters <= 0 || o.reps <= 0)
        throw Error(Errc::InvalidArgument, "--iters and --reps must be positive");
    if (cuda_device_count() == 0)
        throw Error(Errc::Device,
                    "f4gemm tune measures on the GPU and found none: run it on the machine you tune for");
    std::unique_ptr<Device> dev = make_cuda_device(o.device);
    const GpuGemm::Timing timing = o.timing == "graph" ? GpuGemm::Timing::Graph : GpuGemm::Timing::Loop;
    const CoDirChoice co = resolve_co_dir(o.co_dir, true);
    if (co.dir.empty()) throw Error(Errc::Manifest, "no code-object directory: pass --co-dir");
    Launcher launcher(*dev, filter_for_device(load_manifest(co.dir), BackendKind::Cuda, dev->props().arch));
    const Manifest& man = launcher.manifest();
    const int sms = dev->props().num_cu;
    say("tuning {} shapes over {} kernels on {} ({} SMs); timing: {}, candidates alternated in each of {} "
        "repetitions",
        shapes.size(), man.kernels.size(), dev->props().name, sms,
        timing == GpuGemm::Timing::Graph ? "CUDA graph replays" : "host launch loops", o.reps);
    TunedTable table;
    // Every candidate of a shape uploads the same problems: pack each operand image once per layout.
    launcher.set_image_cache(true);
    for (const auto& sh : shapes) {
        const int m = sh[0], n = sh[1], k = sh[2];
        // Operand sets generated once per shape; rotated past 2x the 60 MB L2 so that small
        // shapes are not timed out of the cache.
        const double set_bytes = double(m) * k / 2 + double(n) * k / 2 + double(m + n) * k / 32 + 2.0 * m * n;
        const int nsets = int(std::clamp(std::ceil(120e6 / set_bytes), 1.0, 8.0));
        std::vector<Problem> problems;
        for (int s = 0; s < nsets; ++s)
            problems.push_back(make_problem(m, n, k, 1.f, 0.f, DataKind::Seed, kSeedA + 7919u * uint32_t(s),
                                            kSeedB + 7919u * uint32_t(s), false));
        const bool verify = o.verify && double(m) * n * k <= o.verify_max_macs;
        if (o.verify && !verify)
            say("  {}x{}x{}: too large for the CPU reference here, candidates not verified (bench/ verifies "
                "on the GPU)",
                m, n, k);
        const std::vector<float> ref = verify ? reference_for(problems[0]) : std::vector<float>{};
        struct ClearImages {
            Launcher& l;
            ~ClearImages() { l.clear_image_cache(); }  // before `problems` (the cache's keys) goes away
        } clear_images{launcher};
        // Screening: one timed launch per candidate (kernel x split); candidates more than 1.5x
        // slower than the best screen are dropped before the full measurement.
        struct Candidate {
            int index, l;
            double screen_us;
        };
        std::vector<Candidate> cands;
        for (size_t i = 0; i < man.kernels.size(); ++i) {
            for (int l = 0; l <= (man.kernels[i].split_k ? 4 : 0); ++l) {
                if (k % (1 << l)) continue;
                const LaunchPlan plan = make_launch_plan(man.kernels[i], m, n, k, l, false);
                if (l > 0 && plan.gdz == 1) continue;  // the same launch as split 0
                GpuGemm g(launcher, int(i), l, problems[0]);
                if (verify) {
                    const std::vector<uint16_t> d = g.run_and_fetch();
                    const VerifyResult v = verify_bf16(d.data(), size_t(n), ref.data(), size_t(m), size_t(n),
                                                       default_tolerance(false));
                    if (!v.passed()) {
                        say("  {:<40} split {}: FAILED verification, skipped", man.kernels[i].co_name, l);
                        continue;
                    }
                }
                cands.push_back({int(i), l, g.time_us(1, 1)});
            }
        }
        if (cands.empty()) throw Error(Errc::NotFound, fmt::format("no kernel passed for {}x{}x{}", m, n, k));
        double best_screen = 1e30;
        for (const Candidate& c : cands) best_screen = std::min(best_screen, c.screen_us);
        TunedEntry best;
        best.us = 1e30;
        // The candidates that pass the screen are measured alternately: each repetition times every one
        // of them once, in turn, so that a clock or power drift during the shape falls on all alike.
        struct Measured {
            const Candidate* c;
            std::unique_ptr<GpuGemm> g;
            int iters;
            std::vector<double> t;
        };
        std::vector<Measured> live;
        for (const Candidate& c : cands) {
            const KernelConfig& kc = man.kernels[size_t(c.index)];
            if (c.screen_us > 1.5 * best_screen) {
                say("  {}x{}x{} {:<40} split {}: {:9.2f} us screen, dropped", m, n, k, kc.co_name, c.l,
                    c.screen_us);
                continue;
            }
            auto g = std::make_unique<GpuGemm>(launcher, c.index, c.l, problems[0]);
            for (size_t s = 1; s < problems.size(); ++s) g->add_rotation_set(problems[s]);
            const int iters = int(std::clamp(50000.0 / c.screen_us, 3.0, double(o.iters)));
            live.push_back({&c, std::move(g), iters, {}});
        }
        for (int r = 0; r < o.reps; ++r)
            for (Measured& x : live) x.t.push_back(x.g->time_us(x.iters, r == 0 ? o.warmup : 1, timing));
        for (Measured& x : live) {
            const KernelConfig& kc = man.kernels[size_t(x.c->index)];
            std::sort(x.t.begin(), x.t.end());
            const double us = x.t[x.t.size() / 2];
            const double tf = 2.0 * m * n * double(k) / us / 1e6;
            say("  {}x{}x{} {:<40} split {}: {:9.2f} us {:8.1f} TF/s (spread {:.1f}%, {} sets)", m, n, k,
                kc.co_name, x.c->l, us, tf, 100.0 * (x.t.back() - x.t.front()) / us, x.g->sets());
            if (us < best.us) best = TunedEntry{sms, m, n, k, kc.co_name, x.c->l, us, tf};
        }
        say("best {}x{}x{}: {} split {} ({:.2f} us); operand images packed {}, reused {}", m, n, k, best.kernel,
            best.log2_k_split, best.us, launcher.image_cache_size(), launcher.image_cache_hits());
        table.entries.push_back(best);
    }
    const std::string tmp = o.out + ".tmp";
    {
        std::ofstream f(tmp);
        f << format_tuned(table);
        if (!f) throw Error(Errc::Io, "cannot write " + o.out + ": check the folder is writable");
    }
    if (std::rename(tmp.c_str(), o.out.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw Error(Errc::Io, "cannot write " + o.out + ": check the folder is writable");
    }
    say("wrote {} ({} shapes); pass it with --tuned or put it beside the manifest as {}", o.out,
        table.entries.size(), kTunedFile);
    return 0;
} catch (const Error& e) {
    return fail(e.what());
}

}  // namespace f4gemm::cli
