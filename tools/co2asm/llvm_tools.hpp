// Finding and running LLVM's tools (llvm-objdump, llvm-readelf, clang) as subprocesses: co2asm
// uses LLVM's own disassembler and YAML printer rather than linking libLLVM (docs/CO2ASM.md says
// why). Processes are spawned without a shell; stdout and stderr are captured.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace co2asm {

struct LlvmTools {
    std::string objdump;   // required
    std::string readelf;   // required
    std::string clang;     // optional: reassembly (self-verification, printed command); empty if absent
    std::string searched;  // where we looked, for messages
};

// With `llvm_bin`, looks only there for `<tool>-22` then `<tool>`. Without it, looks for
// `<tool>-22` on PATH, then in /usr/lib/llvm-22/bin. Throws Co2asmError when objdump or readelf
// is missing.
LlvmTools find_llvm_tools(const std::optional<std::string>& llvm_bin);

struct ProcessResult {
    int exit_code = -1;  // 128 + signal when killed by a signal
    std::string out;
    std::string err;
};

// Runs argv[0] (a path) with the arguments; throws Co2asmError when it cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv);

// Runs a tool and returns its stdout; throws Co2asmError with its first stderr line on failure.
std::string run_tool(const std::vector<std::string>& argv, const std::string& purpose);

// Quotes an argument for a POSIX shell when it needs it (for printed commands).
std::string shell_quote(const std::string& arg);

}  // namespace co2asm
