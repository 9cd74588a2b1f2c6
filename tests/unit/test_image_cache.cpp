// Launcher's operand-image cache (used by `f4gemm tune`), on a host-memory stand-in for a GPU: the
// device bytes a GpuGemm uploads are the same with and without the cache, the cache packs each image
// once per (operand buffers, shape, layout), and turning it off or clearing it drops the images.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

#include "launcher.hpp"
#include "test_util.hpp"

using namespace f4gemm;
namespace fs = std::filesystem;

namespace {
// Device memory is host memory; modules and launches are no-ops (nothing here runs a kernel).
class HostDevice final : public Device {
public:
    const DeviceProps& props() const override { return props_; }
    void* load_module(const std::string&) override { return this; }
    void* get_function(void*, const std::string&) override { return this; }
    void set_dynamic_smem(void*, unsigned) override {}
    DevPtr alloc(size_t bytes) override {
        auto buf = std::make_unique<std::vector<uint8_t>>(bytes ? bytes : 1);
        const DevPtr p = reinterpret_cast<DevPtr>(buf->data());
        mem_[p] = std::move(buf);
        return p;
    }
    void free(DevPtr p) override { mem_.erase(p); }
    void copy_to_device(DevPtr dst, const void* src, size_t bytes) override {
        std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
    }
    void copy_to_host(void* dst, DevPtr src, size_t bytes) override {
        std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
    }
    void memset(DevPtr dst, uint8_t value, size_t bytes) override {
        std::memset(reinterpret_cast<void*>(dst), value, bytes);
    }
    void launch(void*, Dim3, Dim3, unsigned, const void*, size_t, bool) override {}
    void synchronize() override {}
    void* event_create() override { return this; }
    void event_record(void*) override {}
    float event_elapsed_ms(void*, void*) override { return 0.f; }
    void event_destroy(void*) override {}
    // Every live allocation's bytes, as a multiset (their host addresses say nothing).
    std::multiset<std::vector<uint8_t>> buffers() const {
        std::multiset<std::vector<uint8_t>> out;
        for (const auto& kv : mem_) out.insert(*kv.second);
        return out;
    }

private:
    DeviceProps props_;
    std::map<DevPtr, std::unique_ptr<std::vector<uint8_t>>> mem_;
};

// A manifest of one sm_90a kernel with the given B layout; the code object is an empty file.
Manifest one_kernel(const fs::path& dir, const std::string& b_layout) {
    return test::one_kernel_manifest(dir, "16,64,0,0,k,k.cubin,sm_90a,256,0,sm90v1," + b_layout + ",plain");
}

std::vector<uint8_t> image_bytes(const OperandImage& i) {
    std::vector<uint8_t> v = i.data;
    v.insert(v.end(), i.scales.begin(), i.scales.end());
    return v;
}
}  // namespace

TEST(ImageCache, PacksEachImageOnceAndUploadsTheSameBytes) {
    const fs::path dir = fs::temp_directory_path() / "f4gemm_image_cache";
    Manifest m = one_kernel(dir, "frag16s");
    m.dir = dir.string();
    HostDevice dev;
    Launcher l(dev, m);
    const Problem p = make_problem(17, 64, 512, 1.f, 0.f, DataKind::Seed, 1u, 2u, false);
    const Problem q = make_problem(17, 64, 512, 1.f, 0.f, DataKind::Seed, 3u, 4u, false);

    // Off (the default): nothing is kept.
    const auto b_off = l.image(p, true, BLayout::Frag16S, ScaleLayout::Plain);
    EXPECT_EQ(l.image_cache_size(), 0u);
    const OperandImage want =
        make_b_image(p.b.packed.data(), p.b.scales.data(), 64, 512, BLayout::Frag16S, ScaleLayout::Plain);
    EXPECT_EQ(image_bytes(*b_off), image_bytes(want));

    l.set_image_cache(true);
    {
        GpuGemm g1(l, 0, 0, p);
        GpuGemm g2(l, 0, 0, p);  // same problem: A and B from the cache
        EXPECT_EQ(l.image_cache_size(), 2u);
        EXPECT_EQ(l.image_cache_hits(), 2u);
        g2.add_rotation_set(q);  // another problem: two more images
        EXPECT_EQ(l.image_cache_size(), 4u);
        EXPECT_EQ(l.image_cache_hits(), 2u);
    }
    // Other layouts of the same buffers are other images; the same layout is a hit.
    const auto b_plain = l.image(p, true, BLayout::Plain, ScaleLayout::Plain);
    EXPECT_EQ(l.image_cache_size(), 5u);
    EXPECT_EQ(image_bytes(*b_plain), image_bytes(make_b_image(p.b.packed.data(), p.b.scales.data(), 64, 512,
                                                              BLayout::Plain, ScaleLayout::Plain)));
    const auto b_hit = l.image(p, true, BLayout::Frag16S, ScaleLayout::Plain);
    EXPECT_EQ(image_bytes(*b_hit), image_bytes(want));
    EXPECT_EQ(l.image_cache_hits(), 3u);
    // A's key includes the B layout: the packed-weight kernels pad A's K as W's (round_up(K, 256)).
    l.image(p, false, BLayout::Frag16S, ScaleLayout::Plain);
    EXPECT_EQ(l.image_cache_hits(), 4u);
    l.image(p, false, BLayout::Plain, ScaleLayout::Plain);
    EXPECT_EQ(l.image_cache_hits(), 4u);
    EXPECT_EQ(l.image_cache_size(), 6u);

    l.clear_image_cache();
    EXPECT_EQ(l.image_cache_size(), 0u);
    EXPECT_EQ(l.image_cache_hits(), 0u);
    l.image(p, true, BLayout::Frag16S, ScaleLayout::Plain);
    EXPECT_EQ(l.image_cache_size(), 1u);
    l.set_image_cache(false);
    EXPECT_EQ(l.image_cache_size(), 0u);
    fs::remove_all(dir);
}

TEST(ImageCache, UploadedBytesMatchWithAndWithoutTheCache) {
    const fs::path dir = fs::temp_directory_path() / "f4gemm_image_cache2";
    Manifest m = one_kernel(dir, "frag16s");
    m.dir = dir.string();
    const Problem p = make_problem(33, 128, 1024, 1.f, 0.f, DataKind::Seed, 5u, 6u, false);
    auto uploaded = [&](bool cache) {
        HostDevice dev;
        Launcher l(dev, m);
        l.set_image_cache(cache);
        GpuGemm warm(l, 0, 0, p);  // with the cache on, the next one is served from it
        const std::multiset<std::vector<uint8_t>> before = dev.buffers();
        GpuGemm g(l, 0, 0, p);
        // The buffers g added: the multiset difference (sizes and bytes, order-free).
        std::multiset<std::vector<uint8_t>> added = dev.buffers();
        for (const auto& b : before) added.erase(added.find(b));
        return added;
    };
    const auto with = uploaded(true), without = uploaded(false);
    EXPECT_EQ(with.size(), 4u);  // A, A scales, W's body (it carries B's scales), D
    EXPECT_EQ(with, without);
    fs::remove_all(dir);
}

// A GpuGemm built on a device and a manifest owns its launcher; one built on a launcher shares it. Both
// upload the same operand bytes and plan the same launch (the two public constructors share one body).
TEST(ImageCache, GpuGemmOnItsOwnLauncherUploadsWhatASharedOneDoes) {
    const fs::path dir = fs::temp_directory_path() / "f4gemm_image_cache_own";
    Manifest m = one_kernel(dir, "frag16s");
    m.dir = dir.string();
    const Problem p = make_problem(17, 64, 512, 1.f, 0.f, DataKind::Seed, 7u, 8u, false);
    HostDevice own_dev, shared_dev;
    GpuGemm own(own_dev, m, 0, 0, p);
    Launcher l(shared_dev, m);
    GpuGemm shared(l, 0, 0, p);
    EXPECT_EQ(own.kernel().co_name, "k.cubin");
    EXPECT_EQ(own.kernel().co_name, shared.kernel().co_name);
    EXPECT_EQ(own.launch_k(), 512);
    EXPECT_EQ(own.launch_k(), shared.launch_k());
    EXPECT_EQ(own.plan().grid.x, 1u);  // N = 64: one 64-wide tile
    EXPECT_EQ(own.plan().grid.y, 2u);  // M = 17: two 16-row tiles
    EXPECT_EQ(own.plan().grid.x, shared.plan().grid.x);
    EXPECT_EQ(own.plan().grid.y, shared.plan().grid.y);
    EXPECT_EQ(own.plan().b_bytes, shared.plan().b_bytes);
    EXPECT_EQ(own_dev.buffers(), shared_dev.buffers());
    EXPECT_EQ(own.sets(), 1);
    fs::remove_all(dir);
}
