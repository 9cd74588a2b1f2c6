// The GPU tests' shared fixture: one CUDA device and the built sm_90a manifest per test file, and the skip
// that every GPU test starts with. Each file keeps its own instance (its own gpu()), since the exact-mode
// tests see only the kernels that implement accum exact.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "f4gemm/accum.hpp"
#include "launcher.hpp"

namespace f4gemm {
namespace gputest {

struct Gpu {
    std::unique_ptr<Device> dev;  // null: no NVIDIA GPU or no built kernels
    Manifest manifest;
};

// Opens device 0 and the build's manifest (filtered for the device); exact_only drops the kernels that
// implement accum promoted. A Gpu without a device when there is nothing to test.
inline Gpu* open_gpu(bool exact_only) {
    auto* s = new Gpu;
    if (cuda_device_count() == 0) return s;
    const std::string dir = builtin_co_dir();
    if (dir.empty()) return s;
    s->dev = make_cuda_device(0);
    s->manifest = filter_for_device(load_manifest(dir), BackendKind::Cuda, s->dev->props().arch);
    if (exact_only) {
        auto& ks = s->manifest.kernels;
        ks.erase(std::remove_if(ks.begin(), ks.end(),
                                [](const KernelConfig& c) { return c.accum == Accum::Promoted; }),
                 ks.end());
    }
    return s;
}

}  // namespace gputest
}  // namespace f4gemm

// In a file that defines gpu(): skips the test without a device.
#define REQUIRE_GPU()                                                                     \
    do {                                                                                  \
        if (!gpu()->dev) GTEST_SKIP() << "no NVIDIA GPU or no built sm_90a kernels here"; \
    } while (0)
