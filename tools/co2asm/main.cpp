// co2asm command line: `co2asm FILE.co [-o OUT.s] ...` converts, `co2asm --check ORIG REBUILT`
// runs the four equivalence checks. The only place that prints and picks exit codes: 0 success,
// 1 --check found a difference, 2 bad input or usage (one line `co2asm: <what>: <fix>`),
// 3 the .s was written but its self-verification found a difference.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "co2asm_error.hpp"
#include "code_object.hpp"
#include "converter.hpp"
#include "equivalence.hpp"
#include "llvm_tools.hpp"

namespace {

constexpr int kExitDifferent = 1;
constexpr int kExitError = 2;
constexpr int kExitNotVerified = 3;

std::string one_line(std::string s) {
    for (char& c : s) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    return s;
}

int run_check(const std::string& original, const std::string& rebuilt,
              const std::optional<std::string>& llvm_bin) {
    using namespace co2asm;
    const CodeObject a = load_code_object(original, std::nullopt);
    const CodeObject b = load_code_object(rebuilt, std::nullopt);
    const LlvmTools tools = find_llvm_tools(llvm_bin);
    const EquivalenceReport report = check_equivalence(a, b, tools);
    int index = 0;
    for (const auto& c : report.checks) {
        fmt::print("[{}/4] {}: {}\n", ++index, c.name, c.detail);
    }
    if (report.all_pass()) {
        fmt::print("[co2asm] equivalent: {} and {} pass all four checks\n", original, rebuilt);
        return 0;
    }
    size_t failed = 0;
    for (const auto& c : report.checks) failed += !c.pass;
    fmt::print("[co2asm] NOT equivalent: {} of 4 checks differ\n", failed);
    return kExitDifferent;
}

int run_convert(const co2asm::ConvertOptions& options) {
    using namespace co2asm;
    const ConvertResult r = convert_code_object(options);
    for (const auto& w : r.warnings) fmt::print(stderr, "co2asm: warning: {}\n", one_line(w));
    fmt::print("[co2asm] {} -> {} (target {}, code object v{}, {} kernel(s): {})\n", options.input, r.output,
               r.target_id, r.code_object_version, r.kernels.size(), fmt::join(r.kernels, ", "));
    for (const auto& [kernel, why] : r.raw_descriptors) {
        fmt::print("[co2asm] kernel descriptor of {} emitted as data: {}\n", kernel, why);
    }
    for (const auto& u : r.undecoded) {
        // One line per section and function, on stderr beside the other warnings.
        fmt::print(stderr,
                   "co2asm: warning: {} word(s) in {}{} ({} {:#x}-{:#x}, {} run(s)) not decoded by LLVM 22: "
                   "kept as raw .long lines marked 'not decoded', not editable as instructions\n",
                   u.words, u.function.empty() ? "no function" : (u.kernel ? "kernel " : "function "),
                   u.function, u.section, u.begin, u.end, u.runs);
    }
    if (r.undecoded_words != 0) {
        fmt::print(
            "[co2asm] {} word(s) of code not decoded by LLVM 22, in {} region(s): raw .long lines "
            "(reassemble to the same bytes, not editable as instructions; regions on stderr)\n",
            r.undecoded_words, r.undecoded.size());
    }
    if (r.raw_instructions != 0) {
        fmt::print(
            "[co2asm] {} of {} instructions emitted as .long (their text does not reassemble to the same "
            "bytes)\n",
            r.raw_instructions, r.instructions);
    }
    fmt::print("[co2asm] {}\n", r.verification_detail);
    fmt::print("[co2asm] reassemble with:\n");
    std::vector<std::string> quoted;
    for (const auto& a : r.reassemble_argv) quoted.push_back(shell_quote(a));
    fmt::print("{}\n", fmt::join(quoted, " "));
    std::fflush(stdout);
    if (r.verification == Verification::Failed) {
        fmt::print(stderr,
                   "co2asm: {} was written but does not verify: {}: run co2asm --check on the rebuilt "
                   "object and report the difference\n",
                   r.output, one_line(r.verification_detail));
        return kExitNotVerified;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "co2asm: AMDGPU code object -> reassemblable assembly, and the round-trip equivalence check"};
    std::string input;
    std::string output;
    std::string llvm_bin;
    std::string mcpu;
    bool print_target_id = false;
    bool no_verify = false;
    std::vector<std::string> check;
    app.add_option("file", input, "the code object (.co/.hsaco) to disassemble");
    app.add_option("-o,--output", output, "output assembly (default: FILE with .s)");
    app.add_option("--llvm-bin", llvm_bin,
                   "directory with llvm-objdump, llvm-readelf, clang (default: <tool>-22 on PATH, then "
                   "/usr/lib/llvm-22/bin)");
    app.add_option("--mcpu", mcpu, "target id to assemble for, overriding e_flags (e.g. gfx950:xnack-)");
    app.add_flag("--print-target-id", print_target_id, "print the clang -mcpu target id and exit");
    app.add_flag("--no-verify", no_verify, "skip reassembling the output to verify it");
    app.add_option("--check", check, "ORIG.co REBUILT.co: run the four equivalence checks")->expected(2);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        fmt::print(stderr, "co2asm: {}: run co2asm --help for usage\n", one_line(e.what()));
        return kExitError;
    }
    const std::optional<std::string> bin =
        llvm_bin.empty() ? std::nullopt : std::optional<std::string>(llvm_bin);
    const std::optional<std::string> cpu = mcpu.empty() ? std::nullopt : std::optional<std::string>(mcpu);
    try {
        if (!check.empty()) {
            if (!input.empty()) {
                throw co2asm::Co2asmError("--check takes exactly two files",
                                          "run co2asm --check ORIG.co REBUILT.co");
            }
            return run_check(check[0], check[1], bin);
        }
        if (input.empty()) throw co2asm::Co2asmError("no input file", "run co2asm FILE.co [-o OUT.s]");
        if (print_target_id) {
            const auto elf = co2asm::ElfFile::read(input);
            fmt::print("{}\n", co2asm::read_amdgpu_header(elf, cpu).target_id);
            return 0;
        }
        co2asm::ConvertOptions options;
        options.input = input;
        options.output = output;
        options.llvm_bin = bin;
        options.mcpu = cpu;
        options.verify = !no_verify;
        return run_convert(options);
    } catch (const co2asm::Co2asmError& e) {
        fmt::print(stderr, "co2asm: {}: {}\n", one_line(e.problem()), one_line(e.fix()));
        return kExitError;
    } catch (const std::exception& e) {
        fmt::print(stderr, "co2asm: internal error: {}: please report it with the input file\n",
                   one_line(e.what()));
        return kExitError;
    }
}
