// f4gemm errors: the core never prints and never exits; it throws f4gemm::Error, whose message
// is one line naming the bad value and the fix ("<what> (got <value>): <fix>"). Only the CLI
// turns errors into exit codes.
#pragma once

#include <stdexcept>
#include <string>

namespace f4gemm {

enum class Errc {
    InvalidArgument,  // a shape, flag value or option that is out of range
    BadInput,         // an input file with the wrong dtype, shape or content
    Manifest,         // missing or malformed manifest
    NotFound,         // a kernel, code object or file that does not exist
    Io,               // a read or write that failed
    Device,           // a GPU runtime/driver call failed
    Unsupported,      // a backend that was not compiled in, or a device that cannot run a code object
};

class Error : public std::runtime_error {
public:
    Error(Errc code, const std::string& message) : std::runtime_error(message), code_(code) {}
    Errc code() const noexcept { return code_; }

private:
    Errc code_;
};

}  // namespace f4gemm
