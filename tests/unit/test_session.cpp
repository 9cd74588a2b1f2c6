// The Session on a machine without a GPU: the shape rules of each kind of manifest (aiter's original
// messages, the plain-B dev ladder, the packed-weight kernels and the CPU: any N, K % 32), the priority
// column deciding between kernels of one tile whatever their row order (the twin rule's one input besides
// the tile), the CPU backend's GEMM at a padded-K shape, and the host packer/quantizer statics.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "f4gemm/driver.hpp"
#include "f4gemm/error.hpp"
#include "f4gemm/session.hpp"

using namespace f4gemm;
namespace fs = std::filesystem;

namespace {

const char* kHeader =
    "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,scale_layout,"
    "max_m,priority\n";

// A manifest folder with `rows` (no code objects: nothing is launched).
std::string manifest_dir(const std::string& name, const std::string& rows) {
    const fs::path d = fs::temp_directory_path() / ("f4gemm_session_" + name);
    fs::create_directories(d);
    std::ofstream(d / kManifestFile) << kHeader << rows;
    return d.string();
}

Session manifest_only(const std::string& dir) {
    SessionOptions o;
    o.co_dir = dir;
    o.open_device = false;  // --dry-run: the manifest, no device
    o.backend = BackendKind::Cuda;
    o.num_cu = 132;
    return Session(o);
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(Session, ShapeRulesPerManifestKind) {
    // The packed-weight kernels: any N >= 1, K % 32.
    const std::string w =
        manifest_dir("w", "16,64,0,0,dec_a,dec_a.cubin,sm_90a,256,1000,sm90v1,frag16s,plain,,30\n");
    const Session sw = manifest_only(w);
    EXPECT_TRUE(sw.packed_weight());
    EXPECT_NO_THROW(sw.check_shape(16, 2880, 2880));
    EXPECT_NO_THROW(sw.check_shape(1, 1, 32));
    EXPECT_NE(error_of([&] { sw.check_shape(1, 16, 100); }).find("positive multiple of 32 (got 100)"),
              std::string::npos);
    EXPECT_NE(error_of([&] { sw.check_shape(0, 16, 256); }).find("M must be positive (got 0)"),
              std::string::npos);
    GemmRequest r;
    r.m = 16;
    r.n = 1000;
    r.k = 2880;
    const Choice c = sw.select(r);
    EXPECT_EQ(c.index, 0);
    EXPECT_EQ(c.launch_k, 3072) << "the packed weight pads K to 256";
    // The dev ladder (plain B): whole 256-K stages and 16-row groups, with its own message.
    const std::string plain =
        manifest_dir("plain", "64,64,1,0,simple,simple.cubin,sm_90a,256,17920,sm90v1,plain,plain,,10\n");
    const Session sp = manifest_only(plain);
    EXPECT_FALSE(sp.packed_weight());
    EXPECT_NE(error_of([&] { sp.check_shape(16, 2001, 256); }).find("need K % 256 == 0 and N % 16 == 0"),
              std::string::npos);
    EXPECT_NO_THROW(sp.check_shape(16, 2000, 256));
    // Both kinds in one manifest (the dev ladder's): the shape passes, and naming the plain-B kernel at a K
    // it cannot take is refused by name (the rule is kernel_takes_nk's, which the GPU tests skip by).
    const std::string mixed =
        manifest_dir("mixed",
                     "64,64,1,0,simple,simple.cubin,sm_90a,256,17920,sm90v1,plain,plain,,10\n"
                     "16,64,0,0,dec_a,dec_a.cubin,sm_90a,256,1000,sm90v1,frag16s,plain,,30\n");
    const Session sm = manifest_only(mixed);
    EXPECT_NO_THROW(sm.check_shape(130, 1040, 1184));
    EXPECT_FALSE(kernel_takes_nk(sm.manifest().kernels[0], 1040, 1184));
    EXPECT_TRUE(kernel_takes_nk(sm.manifest().kernels[0], 1040, 1024));
    EXPECT_FALSE(kernel_takes_nk(sm.manifest().kernels[0], 1000, 1024));
    EXPECT_TRUE(kernel_takes_nk(sm.manifest().kernels[1], 1000, 1184));
    GemmRequest named;
    named.m = 130;
    named.n = 1040;
    named.k = 1184;
    named.kernel = "simple";
    EXPECT_NE(
        error_of([&] { sm.select(named); }).find("kernel simple.cubin reads plain B and needs K % 256 == 0"),
        std::string::npos);
    // aiter's manifest: the original's rules and messages.
    const std::string aiter =
        std::string(F4GEMM_AITER_CSV).substr(0, std::string(F4GEMM_AITER_CSV).rfind('/'));
    const Session sa = manifest_only(aiter);
    EXPECT_NE(error_of([&] {
                  sa.check_shape(16, 100, 256);
              }).find("N must be a multiple of 16 for the B preshuffle"),
              std::string::npos);
    EXPECT_NE(error_of([&] { sa.check_shape(16, 128, 100); }).find("K must be a multiple of 256 (got 100)"),
              std::string::npos);
}

TEST(Session, PriorityDecidesBetweenKernelsOfOneTile) {
    // Two kernels of the same tile: the lower priority wins whatever the row order, and --explain says why.
    for (const bool low_first : {true, false}) {
        const std::string a = "16,64,0,0,dec_a,dec_a.cubin,sm_90a,256,1000,sm90v1,frag16s,plain,,31\n";
        const std::string b = "16,64,0,0,dec_b,dec_b.cubin,sm_90a,256,1000,sm90v1,frag16s,plain,,30\n";
        const std::string dir = manifest_dir(low_first ? "prio1" : "prio2", low_first ? b + a : a + b);
        const Session s = manifest_only(dir);
        GemmRequest r;
        r.m = 1;
        r.n = 8192;
        r.k = 8192;
        r.explain = true;
        const Choice c = s.select(r);
        EXPECT_EQ(s.manifest().kernels[size_t(c.index)].knl_name, "dec_b")
            << (low_first ? "b first" : "a first");
        bool said = false;
        for (const HeuristicStep& st : c.steps)
            said |= st.reason.find("preferred by priority") != std::string::npos &&
                    s.manifest().kernels[size_t(st.index)].knl_name == "dec_a";
        EXPECT_TRUE(said);
    }
}

TEST(Session, CpuGemmAtAPaddedKAndTheHostStatics) {
    SessionOptions o;
    o.backend = BackendKind::Cpu;
    Session s(o);
    EXPECT_FALSE(s.gpu());
    GemmRequest r;
    r.m = 5;
    r.n = 1000;
    r.k = 2880;
    const Choice c = s.select(r);
    EXPECT_EQ(c.index, -1);
    const Problem p = make_problem(r.m, r.n, r.k, 1.f, 0.f, DataKind::Gaussian, 3, 4, false);
    const std::vector<uint16_t> d = s.prepare(c, p)->run_and_fetch();
    const std::vector<float> ref = reference_for(p);
    const VerifyResult v = verify_bf16(d.data(), 1000, ref.data(), 5, 1000, default_tolerance(false));
    EXPECT_TRUE(v.passed()) << v.max_rel_err;
    // Host W and back.
    const std::vector<uint8_t> w =
        Session::pack_weight_host(p.b.packed.data(), p.b.scales.data(), 1000, 2880);
    EXPECT_EQ(w.size(), Session::weight_bytes(1000, 2880));
    std::vector<uint8_t> b, sb;
    int n = 0, k = 0;
    Session::unpack_weight_host(w.data(), w.size(), b, sb, &n, &k);
    EXPECT_EQ(n, 1000);
    EXPECT_EQ(k, 2880);
    EXPECT_EQ(b, p.b.packed);
    EXPECT_EQ(sb, p.b.scales);
    size_t db = 0, sbb = 0;
    Session::operand_bytes(5, 2880, &db, &sbb);
    EXPECT_EQ(db, 256u * 3072u / 2u);
    EXPECT_EQ(sbb, 256u * 3072u / 32u);
    EXPECT_THROW(Session::weight_bytes(1000, 2881), Error);
    std::vector<float> x(64, 1.f);
    std::vector<uint8_t> q(32), qs(2);
    EXPECT_NE(
        error_of([&] { Session::quantize_host(x.data(), 1, 48, q.data(), qs.data()); }).find("(got 48)"),
        std::string::npos);
}
