// `co2asm FILE.co`: loads the code object, asks LLVM for instruction text, descriptor directives
// and metadata YAML, renders the .s, and -- when clang-22 is available -- verifies its own output
// by reassembling it and running the four checks, emitting any instruction or descriptor that does
// not come back identical as bytes instead (a few rounds at most). Writes the .s atomically.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "asm_writer.hpp"

namespace co2asm {

struct ConvertOptions {
    std::string input;
    std::string output;  // empty: default_output_path(input)
    std::optional<std::string> llvm_bin;
    std::optional<std::string> mcpu;
    bool verify = true;
};

enum class Verification { Passed, Skipped, Failed };

struct ConvertResult {
    std::string output;
    std::string target_id;
    int code_object_version = 0;
    std::vector<std::string> kernels;
    std::vector<std::string> reassemble_argv;  // the clang command that rebuilds the object
    Verification verification = Verification::Skipped;
    std::string verification_detail;
    std::vector<std::string> check_lines;                // the four checks of the final verification round
    std::map<std::string, std::string> raw_descriptors;  // kernel -> why it is emitted as bytes
    size_t instructions = 0;
    size_t raw_instructions = 0;
    std::vector<UndecodedRegion> undecoded;  // words LLVM 22 could not decode, kept as raw `.long`
    size_t undecoded_words = 0;
    std::vector<std::string> warnings;
};

ConvertResult convert_code_object(const ConvertOptions& options);

// FILE.co -> FILE.s (extension replaced, or .s appended when there is none).
std::string default_output_path(const std::string& input);
// OUT.s -> OUT.rebuilt.co: where the printed command puts the rebuilt object.
std::string rebuilt_path(const std::string& output);
std::vector<std::string> reassemble_argv(const std::string& clang, const std::string& target_id,
                                         int code_object_version, const std::string& source,
                                         const std::string& object);

}  // namespace co2asm
