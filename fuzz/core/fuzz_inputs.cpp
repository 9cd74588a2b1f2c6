// libFuzzer target for the core's input parsers: the first byte picks the parser, the rest is the
// input. Parsers must either succeed or throw f4gemm::Error; anything else (crash, sanitizer
// report, another exception type) is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "f4gemm/error.hpp"
#include "f4gemm/manifest.hpp"
#include "f4gemm/npy.hpp"
#include "f4gemm/tuned.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        switch (data[0] % 3) {
            case 0:
                f4gemm::parse_manifest(text, "fuzz.csv");
                break;
            case 1:
                f4gemm::parse_tuned(text, "fuzz_tuned.csv");
                break;
            default: {
                // npy_read takes a path: write the bytes to a per-process temp file.
                static const std::string path = "/tmp/f4gemm_fuzz_" + std::to_string(getpid()) + ".npy";
                FILE* f = std::fopen(path.c_str(), "wb");
                if (!f) return 0;
                std::fwrite(text.data(), 1, text.size(), f);
                std::fclose(f);
                f4gemm::npy_read(path);
                break;
            }
        }
    } catch (const f4gemm::Error&) {
    }
    return 0;
}
