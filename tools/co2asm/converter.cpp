// Conversion and self-verification (see converter.hpp). The fallback exists for production code
// objects we have not seen: LLVM's disassembler and assembler round-trip almost everything, and
// whatever they do not is caught here -- by an assembler error traced to its .s line, or by a byte
// difference traced to its instruction or descriptor -- rather than by the user.
#include "converter.hpp"

#include <set>

#include <fmt/format.h>

#include "asm_writer.hpp"
#include "co2asm_error.hpp"
#include "code_object.hpp"
#include "equivalence.hpp"
#include "file_io.hpp"
#include "llvm_tools.hpp"

namespace co2asm {
namespace {

// Each round fixes every difference it can see; layout shifts can need a few.
constexpr int kMaxVerifyRounds = 8;

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// `PATH:LINE:COL: error: MESSAGE` lines of clang's output for `source`.
std::vector<std::pair<size_t, std::string>> assembler_errors(const std::string& stderr_text,
                                                             const std::string& source) {
    std::vector<std::pair<size_t, std::string>> errors;
    for (const auto& line : split_lines(stderr_text)) {
        if (line.compare(0, source.size() + 1, source + ":") != 0) continue;
        const std::string rest = line.substr(source.size() + 1);
        const size_t colon = rest.find(':');
        const size_t err = rest.find(": error: ");
        if (colon == std::string::npos || err == std::string::npos) continue;
        try {
            errors.emplace_back(std::stoul(rest.substr(0, colon)), rest.substr(err + 9));
        } catch (const std::exception&) {
        }
    }
    return errors;
}

}  // namespace

std::string default_output_path(const std::string& input) {
    const size_t slash = input.find_last_of('/');
    const size_t dot = input.find_last_of('.');
    if (dot != std::string::npos && (slash == std::string::npos || dot > slash + 1))
        return input.substr(0, dot) + ".s";
    return input + ".s";
}

std::string rebuilt_path(const std::string& output) {
    const std::string stem = ends_with(output, ".s") ? output.substr(0, output.size() - 2) : output;
    return stem + ".rebuilt.co";
}

std::vector<std::string> reassemble_argv(const std::string& clang, const std::string& target_id, int cov,
                                         const std::string& source, const std::string& object) {
    return {clang,
            "-x",
            "assembler",
            "-target",
            "amdgcn-amd-amdhsa",
            "-mcpu=" + target_id,
            fmt::format("-mcode-object-version={}", cov),
            source,
            "-o",
            object};
}

ConvertResult convert_code_object(const ConvertOptions& options) {
    ConvertResult result;
    result.output = options.output.empty() ? default_output_path(options.input) : options.output;
    if (result.output == options.input) {
        throw Co2asmError(fmt::format("output {} would overwrite the input", result.output), "pass -o OUT.s");
    }
    const CodeObject co = load_code_object(options.input, options.mcpu);
    check_writable(result.output);
    result.target_id = co.header.target_id;
    result.code_object_version = co.header.code_object_version;
    for (const auto& k : co.kernels) result.kernels.push_back(k.name);
    result.warnings = co.warnings;
    if (co.elf.find_section(".rela.dyn") != nullptr) {
        result.warnings.push_back("dynamic relocations (.rela.dyn) are not regenerated");
    }
    const LlvmTools tools = find_llvm_tools(options.llvm_bin);
    const auto file_target = decode_target(co.elf.flags());
    const bool own_target = !options.mcpu || (file_target && file_target->target_id() == *options.mcpu);

    RenderInput input;
    input.code_object = &co;
    input.source_label = options.input;
    std::vector<std::string> objdump = {tools.objdump, "-d", "-z"};
    if (options.mcpu) objdump.push_back("--mcpu=" + co.header.target.processor);
    objdump.push_back(options.input);
    input.disassembly = parse_disassembly(run_tool(objdump, "disassembling " + options.input));
    std::set<uint32_t> kd_sections;
    for (const auto& k : co.kernels) kd_sections.insert(k.kd_section);
    for (uint32_t index : kd_sections) {
        std::vector<std::string> argv = {tools.objdump, "-d", "-j", co.elf.section_at(index)->name};
        if (options.mcpu) argv.push_back("--mcpu=" + co.header.target.processor);
        argv.push_back(options.input);
        for (auto& [name, lines] :
             parse_kernel_descriptor_blocks(run_tool(argv, "decoding kernel descriptors"))) {
            input.descriptor_blocks[name] = std::move(lines);
        }
    }
    auto yaml =
        extract_metadata_yaml(run_tool({tools.readelf, "--notes", options.input}, "printing the metadata"));
    if (!yaml) {
        throw Co2asmError(
            fmt::format("{}: llvm-readelf printed no YAML for the metadata note", options.input),
            "check that --llvm-bin points at LLVM 22 and the note is intact");
    }
    input.metadata_yaml = *yaml;

    const std::string clang = tools.clang.empty() ? std::string("clang-22") : tools.clang;
    result.reassemble_argv = reassemble_argv(clang, co.header.target_id, co.header.code_object_version,
                                             result.output, rebuilt_path(result.output));

    RenderPlan plan;
    RenderedAssembly rendered = render_assembly(input, plan);
    if (!options.verify) {
        result.verification_detail = "not verified (--no-verify)";
    } else if (tools.clang.empty()) {
        result.verification_detail = fmt::format("not verified: clang not found in {}", tools.searched);
    } else {
        ScratchDir scratch;
        const std::string source = scratch.path() + "/roundtrip.s";
        const std::string object = scratch.path() + "/roundtrip.co";
        result.verification = Verification::Failed;
        for (int round = 0; round < kMaxVerifyRounds; ++round) {
            write_file_atomically(source, rendered.text);
            const auto argv = reassemble_argv(tools.clang, co.header.target_id, co.header.code_object_version,
                                              source, object);
            const ProcessResult assembled = run_process(argv);
            size_t new_items = 0;
            std::vector<std::string> unfixable;
            if (assembled.exit_code != 0) {
                const auto errors = assembler_errors(assembled.err, source);
                for (const auto& [line, message] : errors) {
                    const LineOwner owner =
                        line >= 1 && line <= rendered.owners.size() ? rendered.owners[line - 1] : LineOwner{};
                    if (owner.kind == LineOwner::Kind::Instruction) {
                        new_items += plan.raw_instructions.insert({owner.section, owner.address}).second;
                    } else if (owner.kind == LineOwner::Kind::Descriptor) {
                        new_items +=
                            plan.raw_descriptors.emplace(owner.kernel, "the assembler rejects: " + message)
                                .second;
                    } else {
                        unfixable.push_back(fmt::format("line {}: {}", line, message));
                    }
                }
                if (errors.empty()) {
                    unfixable.push_back(assembled.err.substr(0, assembled.err.find('\n')));
                }
            } else {
                const CodeObject rebuilt = load_code_object(object, std::nullopt);
                const auto rebuilt_code = parse_disassembly(disassemble_code(tools, object));
                ItemDifferences diffs = find_item_differences(co, input.disassembly, rebuilt, rebuilt_code);
                for (const auto& address : diffs.instructions)
                    new_items += plan.raw_instructions.insert(address).second;
                for (const auto& kernel : diffs.descriptors) {
                    new_items +=
                        plan.raw_descriptors.emplace(kernel, "the directives do not reproduce its bytes")
                            .second;
                }
                for (const auto& u : diffs.unfixable) {
                    if (!own_target && u.compare(0, 10, "ELF header") == 0)
                        continue;  // --mcpu chose another target
                    unfixable.push_back(u);
                }
                if (diffs.instructions.empty() && diffs.descriptors.empty() && unfixable.empty()) {
                    const EquivalenceReport report = check_equivalence(co, rebuilt, tools);
                    size_t passed = 0;
                    for (const auto& c : report.checks) {
                        result.check_lines.push_back(fmt::format("{}: {}", c.name, c.detail));
                        passed += c.pass || (!own_target && c.name == "ELF header");
                    }
                    if (passed == report.checks.size()) {
                        result.verification = Verification::Passed;
                        result.verification_detail = fmt::format(
                            "verified: reassembled with clang and compared, {}/4 checks pass{}{}", passed,
                            report.dont_care_bits
                                ? fmt::format(" ({} don't-care MFMA-scale bits)", report.dont_care_bits)
                                : "",
                            own_target
                                ? ""
                                : fmt::format(" (the ELF header follows --mcpu {}, not the object's {})",
                                              *options.mcpu,
                                              file_target ? file_target->target_id() : "target"));
                        break;
                    }
                    for (const auto& c : report.checks) {
                        if (!c.pass) unfixable.push_back(c.name + ": " + c.detail);
                    }
                }
            }
            if (!unfixable.empty() || new_items == 0) {
                result.verification_detail = fmt::format(
                    "the rebuilt object is not equivalent: {}",
                    unfixable.empty() ? std::string("differences remain after emitting them as bytes")
                                      : unfixable.front());
                break;
            }
            rendered = render_assembly(input, plan);
        }
        if (result.verification == Verification::Failed && result.verification_detail.empty()) {
            result.verification_detail = fmt::format("differences remain after {} rounds", kMaxVerifyRounds);
        }
    }
    result.raw_descriptors = rendered.raw_descriptors;
    result.instructions = rendered.instructions;
    result.raw_instructions = rendered.raw_instruction_count;
    result.undecoded = rendered.undecoded;
    result.undecoded_words = rendered.undecoded_words;
    if (result.undecoded_words != 0) {
        // The checks compare bytes, so they pass over these words; say what they do not cover.
        result.verification_detail +=
            fmt::format("; {} word(s) not decoded by LLVM 22 are raw .long, not editable instructions",
                        result.undecoded_words);
    }
    write_file_atomically(result.output, rendered.text);
    return result;
}

}  // namespace co2asm
