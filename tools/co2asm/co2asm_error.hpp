// co2asm's one error type: what went wrong and how to fix it. The command line prints it as the
// single line `co2asm: <what>: <fix>` and exits non-zero; library code throws it and never prints
// or exits.
#pragma once

#include <stdexcept>
#include <string>

namespace co2asm {

class Co2asmError : public std::runtime_error {
public:
    Co2asmError(std::string what, std::string fix)
        : std::runtime_error(what + ": " + fix), what_(std::move(what)), fix_(std::move(fix)) {}

    const std::string& problem() const { return what_; }
    const std::string& fix() const { return fix_; }

private:
    std::string what_;
    std::string fix_;
};

}  // namespace co2asm
