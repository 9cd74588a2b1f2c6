// File output that never leaves a partial file behind (write a temp file beside the target, then
// rename), and a self-deleting scratch directory for reassembly during self-verification.
#pragma once

#include <string>

namespace co2asm {

// Writes `content` to `path` atomically; throws Co2asmError when the location is not writable.
void write_file_atomically(const std::string& path, const std::string& content);

// Throws the same error write_file_atomically would, before any work is done.
void check_writable(const std::string& path);

class ScratchDir {
public:
    ScratchDir();  // under $TMPDIR or /tmp; throws Co2asmError
    ~ScratchDir();
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

}  // namespace co2asm
