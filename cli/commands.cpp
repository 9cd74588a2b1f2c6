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

#include <unistd.h>

#include "f4gemm/codeobject.hpp"
#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"
#include "f4gemm/layout.hpp"
#include "f4gemm/npy.hpp"
#include "f4gemm/session.hpp"
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

// Refuses an output path that cannot be created, before any work: the folder must exist and be writable.
void check_writable(const std::string& path, const char* flag) {
    const std::filesystem::path p(path);
    const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw Error(Errc::Io,
                    fmt::format("cannot write {} {}: the folder {} does not exist; create it or pass "
                                "another path",
                                flag, path, dir.string()));
    if (std::filesystem::is_directory(p, ec))
        throw Error(Errc::Io,
                    fmt::format("cannot write {} {}: it is a folder; pass a file path", flag, path));
    if (access(dir.c_str(), W_OK) != 0)
        throw Error(Errc::Io,
                    fmt::format("cannot write {} {}: the folder {} is not writable; pass another path", flag,
                                path, dir.string()));
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
    if (k == 0 || m == 0 || n == 0)
        throw Error(
            Errc::BadInput,
            fmt::format("--a/--b hold no elements (M={} N={} K={}): pass non-empty operands", m, n, k));
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
    if (o.bpreshuffle != -1 && o.bpreshuffle != 0 && o.bpreshuffle != 1)
        return fail(fmt::format("--bpreshuffle must be 0 or 1 (got {}): pass 0 or 1", o.bpreshuffle));
    if (o.splitk < -1 || o.splitk > 4)
        return fail(
            fmt::format("--splitk must be -1..4 (got {}): log2 of the split, -1 = heuristic", o.splitk));
    if (o.num_cu < 0) return fail(fmt::format("--num-cu must be positive (got {})", o.num_cu));
    if (o.iters < 0 || o.warmup < 0)
        return fail(fmt::format("--iters/--warmup must be >= 0 (got {}/{}): pass a count of 0 or more",
                                o.iters, o.warmup));
    const DataKind data_kind = parse_data_kind(o.data);
    const Accum accum = parse_accum(o.accum);
    if (!std::isfinite(o.alpha) || !std::isfinite(o.beta))
        return fail(fmt::format("--alpha/--beta must be finite (got {}/{})", o.alpha, o.beta));
    if (!real_data && (!o.out.empty() || !o.c.empty()))
        return fail(
            "--out/--c go with real data (--a --a-scale --b --b-scale): pass them too or drop --out/--c");
    if (o.seed < 0 || o.seed > 0xFFFFFFFFll)
        return fail(fmt::format("--seed must be 0..2^32-1 (got {})", o.seed));
    // Every output path is checked before the work, so a failure leaves no file behind.
    if (!o.out.empty()) check_writable(o.out, "--out");
    if (!o.json.empty()) check_writable(o.json, "--json");

    // The session: backend, device, manifest, tuned table. --list and --dry-run touch no device.
    SessionOptions so;
    so.backend = parse_backend(o.backend);
    so.device = o.device;
    so.co_dir = o.co_dir;
    so.tuned = o.tuned;
    so.num_cu = o.num_cu;
    so.open_device = !(o.list || o.dry_run);
    Session session(so);
    const Manifest& manifest = session.manifest();
    if (!manifest.path.empty()) say("manifest {}: {} kernels", manifest.path, manifest.kernels.size());
    if (o.list) {
        // The table rows carry no "[f4gemm] " prefix, as in the original (run_tests.sh reads field 5). A
        // manifest with an accum column gets a sixth, the kernel's mode (aiter's keep the original's five,
        // whose last field scripts read).
        const bool with_accum =
            std::find(manifest.columns.begin(), manifest.columns.end(), "accum") != manifest.columns.end();
        std::printf("%s", fmt::format("{:<6} {:<6} {:<7} {:<12} {}{}\n", "tileM", "tileN", "splitK",
                                      "bpreshuffle", "co_name", with_accum ? " accum" : "")
                              .c_str());
        for (const KernelConfig& kc : manifest.kernels)
            std::printf("%s", fmt::format("{:<6} {:<6} {:<7} {:<12} {}{}\n", kc.tile_m, kc.tile_n, kc.split_k,
                                          kc.bpreshuffle, kc.co_name,
                                          with_accum ? std::string(" ") + accum_name(kc.accum) : "")
                                  .c_str());
        return 0;
    }
    if (const DeviceProps* p = session.device_props()) {
        if (session.backend() == BackendKind::Hip) {
            say("device: {} ({}, {} CUs)", p->name, p->arch, p->num_cu);
            if (p->arch != "gfx950") say("WARNING: these code objects are gfx950-only");
        } else {
            say("device: {} ({}, {} SMs)", p->name, p->arch, p->num_cu);
        }
    } else if (!o.dry_run) {
        say("device: CPU ({} threads), no GPU backend in use",
            std::max(1u, std::thread::hardware_concurrency()));
    }

    Problem problem;
    if (real_data) problem = load_problem(o);
    const int m = real_data ? problem.m : o.m, n = real_data ? problem.n : o.n,
              k = real_data ? problem.k : o.k;

    GemmRequest req;
    req.m = m;
    req.n = n;
    req.k = k;
    req.kernel = o.kernel;
    req.splitk = o.splitk;
    req.bpreshuffle = o.bpreshuffle;
    req.explain = o.explain;
    req.accum = accum;
    const Choice choice = session.select(req);
    const bool gpu = session.gpu();
    const Accum kernel_accum = session.kernel_accum(choice);
    if (o.explain && choice.index < 0)
        for (const HeuristicStep& st : choice.steps) say("  {:<48} {}", "(policy)", st.reason);
    if (o.explain || accum != Accum::Exact)
        say("accum: requested {}, {} {}", accum_name(accum), choice.index >= 0 ? "kernel" : "cpu backend",
            accum_name(kernel_accum));
    if (choice.index >= 0) {
        if (choice.tuned)
            say("tuned: {} lists this shape on {} CUs (accum {})", session.tuned().path, choice.num_cu,
                accum_name(accum));
        if (o.explain) {
            say("heuristic on {} CUs, splitk {}, bpreshuffle {}, accum {}:", choice.num_cu, choice.splitk,
                choice.bpreshuffle, accum_name(accum));
            for (const HeuristicStep& st : choice.steps) {
                if (st.index < 0)  // a note of the policy (the accumulation mode's pools), no one kernel
                    say("  {:<48} {}", "(policy)", st.reason);
                else
                    say("  {:<48} split {:<2} {}", manifest.kernels[size_t(st.index)].co_name, st.split,
                        st.reason);
            }
        }
        const KernelConfig& kc = manifest.kernels[size_t(choice.index)];
        const LaunchPlan& plan = choice.plan;
        say("shape M={} N={} K={}, kernel {} (tile {}x{}, splitK={}, bpreshuffle={})", m, n, k, kc.co_name,
            kc.tile_m, kc.tile_n, kc.split_k, kc.bpreshuffle);
        say("grid = ({}, {}, {}) x {} threads, log2_k_split={}", plan.grid.x, plan.grid.y, plan.grid.z,
            plan.block.x, plan.log2_k_split);
        if (choice.launch_k != k)
            say("packed weight: K padded to {} inside W and the A operand (zero blocks add exactly 0)",
                choice.launch_k);
        if (plan.pre_grid.x)
            say("pre-pass {}{}: grid = ({}, {}, {}) x {} threads, workspace {} bytes", kc.knl_name,
                kPrepassSuffix, plan.pre_grid.x, plan.pre_grid.y, plan.pre_grid.z, plan.pre_block.x,
                plan.workspace_bytes);
        if (const int w = choice.slab_n)
            say("N slabs: {} of {} columns{}, each its pre-pass and its GEMM (docs/ABI_SM90.md \"N slabs\")",
                (n + w - 1) / w, w, n % w ? fmt::format(" (the last {})", n % w) : std::string());
        if (o.dry_run) return 0;
    } else {
        if (o.dry_run) return 0;
        say("shape M={} N={} K={}, kernel cpu (blocked fp32, splitK log2={})", m, n, k, choice.log2_k_split);
    }

    check_host_budget(m, n, k, o.verify, gpu);
    if (!real_data)
        problem = make_problem(m, n, k, o.alpha, o.beta, data_kind, uint32_t(o.seed), uint32_t(o.seed + 4444),
                               o.beta != 0.f);

    std::unique_ptr<Job> job = session.prepare(choice, problem);
    const KernelConfig* kc = choice.index >= 0 ? &manifest.kernels[size_t(choice.index)] : nullptr;
    if (kc) {
        // Which file ran, so a hand-edited object can be confirmed as the one launched.
        const std::string co_path = manifest.dir + "/" + kc->co_name;
        const CodeObjectInfo info = inspect_code_object(co_path);
        say("code object: {} ({} bytes, {}, symbol {})", co_path, std::filesystem::file_size(co_path),
            info.kind == CodeObjectKind::Ptx ? "PTX, JIT-compiled by the driver" : info.target, kc->knl_name);
    }
    const std::vector<uint16_t> d = job->run_and_fetch();

    nlohmann::json j;
    j["shape"] = {{"M", m}, {"N", n}, {"K", k}};
    j["alpha"] = o.alpha;
    j["beta"] = o.beta;
    j["backend"] = to_string(session.backend());
    j["device"] = session.device_props() ? session.device_props()->name : "cpu";
    j["accum"] = accum_name(accum);                // the mode asked for
    j["kernel_accum"] = accum_name(kernel_accum);  // what ran: the kernel's mode (the CPU computes exactly)
    if (kc) {
        j["kernel"] = kc->co_name;
        j["tile"] = {kc->tile_m, kc->tile_n};
        j["log2_k_split"] = choice.plan.log2_k_split;
        j["gdz"] = choice.plan.gdz;
        j["launch_k"] = choice.launch_k;
    } else {
        j["kernel"] = "cpu";
        j["log2_k_split"] = choice.log2_k_split;
    }

    int rc = 0;
    if (o.verify) {
        const bool bf16_split = kc && choice.plan.gdz > 1 && kc->abi == KernelAbi::Aiter;
        const Tolerance tol = default_tolerance(bf16_split);
        // The request's contract: the promoted bound for a promoted request (whichever kernel served it), the
        // exact one otherwise; aiter's bf16 split-K keeps its own tolerance in both modes.
        const Accum judge = bf16_split ? Accum::Exact : accum;
        if (bf16_split)
            say("note: {}-way splitK reduces in bf16 (buffer_atomic_pk_add_bf16), using abs tol {:.4g}",
                choice.plan.gdz, tol.atol_frac);
        else if (kc && choice.plan.gdz > 1)
            say("note: {}-way splitK reduces in fp32 (workspace), tolerances unchanged", choice.plan.gdz);
        const VerifyResult v =
            verify_result(problem, d, judge, choice.launch_k, bf16_split, kc ? chain_k(*kc) : 128);
        say("verify: max|ref|={:.4g}  max_abs_err={:.4g}  max_rel_err={:.4g}  mismatches={}/{}", v.max_ref,
            v.max_abs_err, v.max_rel_err, v.mismatches, v.total);
        j["verify"] = {{"accum", accum_name(judge)},   {"max_ref", v.max_ref},
                       {"max_abs_err", v.max_abs_err}, {"max_rel_err", v.max_rel_err},
                       {"mismatches", v.mismatches},   {"total", v.total},
                       {"nan_outputs", v.nan_outputs}, {"passed", v.passed()}};
        if (v.promoted) {
            // |d - ref| <= 2^-8 |ref| + c_w |alpha| S (docs/VERIFY.md): the constant judged with and the
            // observed one (log2 -inf when every output is within the bf16 rounding).
            say("promoted bound: |d - ref| <= 2^-8 |ref| + c_w |alpha| S, c_w={:.4g} (log2 {:.2f}); observed "
                "c={:.4g} (log2 {:.2f})",
                v.cw, std::log2(v.cw), v.observed_c, std::log2(v.observed_c));
            j["verify"]["c_w"] = v.cw;
            j["verify"]["c_w_log2"] = std::log2(v.cw);
            j["verify"]["observed_c"] = v.observed_c;
            // null when c = 0 (log2 -inf: every output within the bf16 rounding)
            j["verify"]["observed_c_log2"] =
                v.observed_c > 0 ? nlohmann::json(std::log2(v.observed_c)) : nlohmann::json(nullptr);
        }
        if (!v.passed()) {
            say("  first mismatch at (m={}, n={}): got {:.6g}, want {:.6g}", v.first_m, v.first_n,
                v.first_got, v.first_want);
            say("FAILED");
            rc = 1;
        } else {
            say("PASSED");
        }
    }
    if (o.iters > 0) {
        const double us = job->time_us(o.iters, o.warmup);
        const double flops = 2.0 * m * n * double(k);
        const double bytes = double(m) * k / 2 + double(n) * k / 2 + double(m) * n * 2;
        say("{:8.2f} us   {:8.2f} TFLOP/s   {:7.2f} TB/s", us, flops / us / 1e6, bytes / us / 1e6);
        j["timing"] = {
            {"us", us}, {"tflops", flops / us / 1e6}, {"tbs", bytes / us / 1e6}, {"iters", o.iters}};
    }
    j["passed"] = rc == 0;
    // Outputs last, each written whole (temp file + rename); if the second fails the first is removed.
    if (!o.out.empty()) {
        std::vector<float> df(d.size());
        for (size_t i = 0; i < d.size(); ++i) df[i] = bf16_to_float(d[i]);
        npy_write(o.out, NpyDtype::F32, {size_t(m), size_t(n)}, df.data());
    }
    if (!o.json.empty()) {
        try {
            write_json_atomic(o.json, j);
        } catch (...) {
            if (!o.out.empty()) std::remove(o.out.c_str());
            throw;
        }
    }
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
    } else if (o.layout == "weight") {
        // The packed weight W (docs/LAYOUTS_SM90.md): --in B [N, K/2] + --scales [N, K/32] -> --out uint8
        // [bytes] (header + body); --inverse: --in W -> --out B and --scales.
        if (o.scales.empty())
            throw Error(Errc::InvalidArgument,
                        "--layout weight needs --scales (the plain scales .npy; written with --inverse)");
        if (o.inverse) {
            std::vector<uint8_t> b, sc;
            int n = 0, k = 0;
            Session::unpack_weight_host(x.u8(), x.bytes.size(), b, sc, &n, &k);
            npy_write(o.out, NpyDtype::U8, {size_t(n), size_t(k) / 2}, b.data());
            try {
                npy_write(o.scales, NpyDtype::U8, {size_t(n), size_t(k) / 32}, sc.data());
            } catch (...) {
                std::remove(o.out.c_str());
                throw;
            }
        } else {
            const NpyArray sc = npy_read_2d(o.scales, NpyDtype::U8, "--scales");
            const size_t k = cols * 2;
            if (sc.shape[0] != rows || sc.shape[1] * 32 != k)
                throw Error(Errc::BadInput, fmt::format("--scales {} has shape [{}, {}]: it must be [{}, {}] "
                                                        "(rows of --in, K/32)",
                                                        o.scales, sc.shape[0], sc.shape[1], rows, k / 32));
            if (rows > (1u << 30) || k > (1u << 30))
                throw Error(Errc::BadInput,
                            fmt::format("--in {} has shape [{}, {}]: too large for a packed weight "
                                        "(32-bit sizes); split it",
                                        o.in, rows, cols));
            const std::vector<uint8_t> w = Session::pack_weight_host(x.u8(), sc.u8(), int(rows), int(k));
            npy_write(o.out, NpyDtype::U8, {1, w.size()}, w.data());
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
        throw Error(Errc::InvalidArgument,
                    "unknown --layout '" + o.layout +
                        "': use weight, aiter-b, aiter-scale, bitplane, frag16 or frag16s");
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
    Session::quantize_host(x.f32(), rows, k, packed.data(), scales.data());
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
    Session::TuneSpec spec;
    static const std::regex shape_re(R"(^(\d+)x(\d+)x(\d+)$)");
    for (const std::string& s : o.shapes) {
        std::smatch mm;
        if (!std::regex_match(s, mm, shape_re))
            throw Error(Errc::InvalidArgument, "--shape '" + s + "' is not MxNxK: write e.g. 4096x4096x4096");
        spec.shapes.push_back({std::stoi(mm[1]), std::stoi(mm[2]), std::stoi(mm[3])});
    }
    spec.accum = parse_accum(o.accum);
    if (o.iters <= 0 || o.reps <= 0)
        throw Error(Errc::InvalidArgument,
                    fmt::format("--iters and --reps must be positive (got {}/{})", o.iters, o.reps));
    if (o.warmup < 0)
        throw Error(Errc::InvalidArgument, fmt::format("--warmup must be >= 0 (got {})", o.warmup));
    check_writable(o.out, "--out");
    if (cuda_device_count() == 0)
        throw Error(Errc::Device,
                    "f4gemm tune measures on the GPU and found none: run it on the machine you tune for");
    SessionOptions so;
    so.backend = BackendKind::Cuda;
    so.device = o.device;
    so.co_dir = o.co_dir;
    Session session(so);
    spec.iters = o.iters;
    spec.warmup = o.warmup;
    spec.reps = o.reps;
    spec.verify = o.verify;
    spec.verify_max_macs = o.verify_max_macs;
    spec.timing = o.timing == "graph" ? Timing::Graph : Timing::Loop;
    const TunedTable table = session.tune(spec, [](const std::string& line) { say("{}", line); });
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
