// Tests of npy.hpp: round trips, headers byte-identical to what numpy 1.24's np.save writes
// (fixtures spelled out below), v2/v3 and older 16-aligned headers, a cross-check with real numpy
// when /usr/bin/python3 has it, and every error naming the file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "f4gemm/error.hpp"
#include "f4gemm/npy.hpp"

using namespace f4gemm;
namespace fs = std::filesystem;

namespace {

const std::string kV1Prefix("\x93NUMPY\x01\x00\x76\x00", 10);  // v1.0, header length 118

// np.save(np.arange(6, dtype=np.uint8).reshape(2, 3)): 10-byte prefix, the dict, 58 spaces (21 - 1
// growth-axis spaces plus alignment), '\n' -> data at offset 128.
std::string numpy_u8_2x3() {
    return kV1Prefix + "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }" + std::string(58, ' ') +
           "\n" + std::string("\x00\x01\x02\x03\x04\x05", 6);
}
// np.save(np.array([[1.5, -2], [0.25, 3]], dtype=np.float32))
std::string numpy_f32_2x2() {
    return kV1Prefix + "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }" + std::string(58, ' ') +
           "\n" + std::string("\x00\x00\xc0\x3f\x00\x00\x00\xc0\x00\x00\x80\x3e\x00\x00\x40\x40", 16);
}
// np.save(np.arange(5, dtype=np.uint8)) and np.save(np.float32(2.5).reshape(()))
std::string numpy_u8_5() {
    return kV1Prefix + "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }" + std::string(60, ' ') +
           "\n" + std::string("\x00\x01\x02\x03\x04", 5);
}
std::string numpy_f32_scalar() {
    return kV1Prefix + "{'descr': '<f4', 'fortran_order': False, 'shape': (), }" + std::string(62, ' ') +
           "\n" + std::string("\x00\x00\x20\x40", 4);
}

// A header of any version around `dict`, padded to 16 bytes (what numpy < 1.24 did).
std::string with_header(int major, const std::string& dict, const std::string& data) {
    const size_t len_bytes = major == 1 ? 2 : 4;
    std::string h = dict;
    while ((6 + 2 + len_bytes + h.size() + 1) % 16 != 0) h += ' ';
    h += '\n';
    std::string s("\x93NUMPY", 6);
    s += char(major);
    s += char(0);
    for (size_t i = 0; i < len_bytes; ++i) s += char((h.size() >> (8 * i)) & 0xFF);
    return s + h + data;
}

class Npy : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() / ("f4gemm_npy_" + std::to_string(::getpid()) + "_" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    std::string put(const std::string& name, const std::string& bytes) const {
        std::ofstream(path(name), std::ios::binary) << bytes;
        return path(name);
    }
    static std::string slurp(const std::string& p) {
        std::ifstream f(p, std::ios::binary);
        std::stringstream ss;
        ss << f.rdbuf();
        return ss.str();
    }
    // The call must throw `code` with a message naming the file and containing `needle`.
    template <class F>
    static void expect_error(F&& f, Errc code, const std::string& file, const std::string& needle) {
        try {
            f();
            ADD_FAILURE() << "no throw for " << file;
        } catch (const Error& e) {
            const std::string msg = e.what();
            EXPECT_EQ(e.code(), code) << msg;
            EXPECT_NE(msg.find(file), std::string::npos) << "message does not name the file: " << msg;
            EXPECT_NE(msg.find(needle), std::string::npos) << msg;
            EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
        }
    }

    fs::path dir_;
};

}  // namespace

TEST_F(Npy, RoundTripU8AndF32) {
    std::vector<uint8_t> u(3 * 5);
    for (size_t i = 0; i < u.size(); ++i) u[i] = uint8_t(i * 17);
    npy_write(path("u.npy"), NpyDtype::U8, {3, 5}, u.data());
    const NpyArray a = npy_read(path("u.npy"));
    EXPECT_EQ(a.dtype, NpyDtype::U8);
    EXPECT_EQ(a.shape, (std::vector<size_t>{3, 5}));
    EXPECT_EQ(a.size(), 15u);
    EXPECT_EQ(a.bytes, u);

    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> f = {1.5f,   -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                                  1e-40f, 3.0f};
    npy_write(path("f.npy"), NpyDtype::F32, {1, 7}, f.data());
    const NpyArray b = npy_read_2d(path("f.npy"), NpyDtype::F32, "--c");
    EXPECT_EQ(b.shape, (std::vector<size_t>{1, 7}));
    ASSERT_EQ(b.bytes.size(), 28u);
    EXPECT_EQ(std::memcmp(b.f32(), f.data(), 28), 0);

    // Overwriting an existing file works and leaves no temp file behind.
    npy_write(path("u.npy"), NpyDtype::U8, {1, 1}, u.data());
    EXPECT_EQ(npy_read(path("u.npy")).size(), 1u);
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);
}

TEST_F(Npy, WritesExactlyWhatNumpyWrites) {
    const uint8_t u[6] = {0, 1, 2, 3, 4, 5};
    npy_write(path("a.npy"), NpyDtype::U8, {2, 3}, u);
    EXPECT_EQ(slurp(path("a.npy")), numpy_u8_2x3());
    const float f[4] = {1.5f, -2.0f, 0.25f, 3.0f};
    npy_write(path("b.npy"), NpyDtype::F32, {2, 2}, f);
    EXPECT_EQ(slurp(path("b.npy")), numpy_f32_2x2());
    npy_write(path("c.npy"), NpyDtype::U8, {5}, u);
    EXPECT_EQ(slurp(path("c.npy")), numpy_u8_5());
    const float s = 2.5f;
    npy_write(path("d.npy"), NpyDtype::F32, {}, &s);
    EXPECT_EQ(slurp(path("d.npy")), numpy_f32_scalar());
    npy_write(path("e.npy"), NpyDtype::F32, {0, 4}, nullptr);
    EXPECT_EQ(npy_read(path("e.npy")).size(), 0u);
}

TEST_F(Npy, ReadsNumpyFixtures) {
    const NpyArray a = npy_read_2d(put("a.npy", numpy_u8_2x3()), NpyDtype::U8, "--a");
    EXPECT_EQ(a.shape, (std::vector<size_t>{2, 3}));
    EXPECT_EQ(a.bytes, (std::vector<uint8_t>{0, 1, 2, 3, 4, 5}));
    const NpyArray b = npy_read(put("b.npy", numpy_f32_2x2()));
    EXPECT_EQ(b.dtype, NpyDtype::F32);
    EXPECT_EQ(b.f32()[0], 1.5f);
    EXPECT_EQ(b.f32()[1], -2.0f);
    EXPECT_EQ(b.f32()[2], 0.25f);
    EXPECT_EQ(b.f32()[3], 3.0f);
    const NpyArray c = npy_read(put("c.npy", numpy_u8_5()));
    EXPECT_EQ(c.shape, (std::vector<size_t>{5}));
    const NpyArray d = npy_read(put("d.npy", numpy_f32_scalar()));
    EXPECT_TRUE(d.shape.empty());
    EXPECT_EQ(d.size(), 1u);
    EXPECT_EQ(d.f32()[0], 2.5f);
}

TEST_F(Npy, ReadsOtherVersionsAndSpellings) {
    const std::string data("\x07\x08\x09\x0a", 4);
    // numpy < 1.24 (16-byte alignment, no growth spaces), versions 2.0 and 3.0, other key order,
    // double quotes, '<u1' and 'u1' spellings, Python 2 long suffixes, no trailing comma.
    const std::string dicts[] = {
        "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }",
        "{'shape': (2, 2), 'fortran_order': False, 'descr': '<u1'}",
        "{\"descr\": \"u1\", \"fortran_order\": False, \"shape\": (2L, 2L)}",
    };
    for (int major : {1, 2, 3})
        for (const std::string& dict : dicts) {
            const std::string p = put("v.npy", with_header(major, dict, data));
            const NpyArray a = npy_read(p);
            EXPECT_EQ(a.dtype, NpyDtype::U8) << major << " " << dict;
            EXPECT_EQ(a.shape, (std::vector<size_t>{2, 2})) << major << " " << dict;
            EXPECT_EQ(a.bytes, (std::vector<uint8_t>{7, 8, 9, 10})) << major << " " << dict;
        }
}

TEST_F(Npy, WrongDtypeNamesFileAndDtypes) {
    for (const char* descr : {"<i4", "<f8", ">f4", "|b1", "<f2"}) {
        const std::string dict =
            std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (1, 1), }";
        const std::string p = put("dt.npy", with_header(1, dict, std::string(8, '\0')));
        expect_error([&] { npy_read(p); }, Errc::BadInput, p, std::string("'") + descr + "'");
        expect_error([&] { npy_read(p); }, Errc::BadInput, p, "'<f4'");
    }
    const std::string s = put("st.npy", with_header(1,
                                                    "{'descr': [('a', '<f4')], 'fortran_order': False, "
                                                    "'shape': (1,), }",
                                                    std::string(4, '\0')));
    expect_error([&] { npy_read(s); }, Errc::BadInput, s, "structured");
    // npy_read_2d: a supported dtype that is not the one wanted, and a wrong rank.
    const std::string f = put("f.npy", numpy_f32_2x2());
    expect_error([&] { npy_read_2d(f, NpyDtype::U8, "--a"); }, Errc::BadInput, f, "'<f4'");
    expect_error([&] { npy_read_2d(f, NpyDtype::U8, "--a"); }, Errc::BadInput, f, "want '|u1'");
    expect_error([&] { npy_read_2d(f, NpyDtype::U8, "--a"); }, Errc::BadInput, f, "--a");
    const std::string v = put("v.npy", numpy_u8_5());
    expect_error([&] { npy_read_2d(v, NpyDtype::U8, "--b"); }, Errc::BadInput, v, "(5,)");
}

TEST_F(Npy, FortranOrderIsRejected) {
    const std::string p = put(
        "fo.npy",
        with_header(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", std::string(24, '\0')));
    expect_error([&] { npy_read(p); }, Errc::BadInput, p, "fortran_order");
}

TEST_F(Npy, TruncatedAndCorruptFiles) {
    const std::string full = numpy_f32_2x2();
    const std::string t = put("t.npy", full.substr(0, full.size() - 3));
    expect_error([&] { npy_read(t); }, Errc::BadInput, t, "truncated data");
    const std::string h = put("h.npy", full.substr(0, 40));
    expect_error([&] { npy_read(h); }, Errc::BadInput, h, "truncated header");
    const std::string x = put("x.npy", full + "zz");
    expect_error([&] { npy_read(x); }, Errc::BadInput, x, "extra bytes");
    const std::string m = put("m.npy", "PK\x03\x04 this is a zip, not an npy file");
    expect_error([&] { npy_read(m); }, Errc::BadInput, m, "bad magic");
    const std::string e = put("e.npy", "");
    expect_error([&] { npy_read(e); }, Errc::BadInput, e, "bad magic");
    std::string v4 = full;
    v4[6] = 4;
    const std::string v = put("v4.npy", v4);
    expect_error([&] { npy_read(v); }, Errc::BadInput, v, "version 4.0");
    const std::string g = put(
        "g.npy",
        with_header(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", std::string(16, '\0')));
    expect_error([&] { npy_read(g); }, Errc::BadInput, g, "malformed header");
    const std::string k =
        put("k.npy", with_header(1, "{'descr': '<f4', 'shape': (1,), }", std::string(4, '\0')));
    expect_error([&] { npy_read(k); }, Errc::BadInput, k, "missing key");
}

TEST_F(Npy, MissingFileAndUnwritablePath) {
    const std::string missing = path("nope.npy");
    expect_error([&] { npy_read(missing); }, Errc::NotFound, missing, "cannot open");
    const uint8_t u[1] = {1};
    const std::string no_dir = path("no/such/dir/out.npy");
    expect_error([&] { npy_write(no_dir, NpyDtype::U8, {1, 1}, u); }, Errc::Io, no_dir, "cannot create");
    // The rename onto a directory fails after the temp file was written: the temp must go.
    fs::create_directories(path("adir.npy"));
    const std::string onto_dir = path("adir.npy");
    expect_error([&] { npy_write(onto_dir, NpyDtype::U8, {1, 1}, u); }, Errc::Io, onto_dir, "cannot write");
    for (const auto& entry : fs::directory_iterator(dir_))
        EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
}

TEST_F(Npy, CrossCheckWithRealNumpy) {
    if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "/usr/bin/python3 has no numpy";
    // numpy writes, we read; we write, numpy reads and compares bytes with its own np.save.
    const std::vector<float> ours_f = {0.5f, -1.0f, 6.0f, -0.0f, 1e-40f, 3.25f};
    const std::vector<uint8_t> ours_u = {0, 127, 128, 255};
    npy_write(path("ours_f.npy"), NpyDtype::F32, {2, 3}, ours_f.data());
    npy_write(path("ours_u.npy"), NpyDtype::U8, {4, 1}, ours_u.data());
    const std::string script = R"PY(
import io, sys, numpy as np
d = sys.argv[1]
u = (np.arange(12, dtype=np.uint32) * 37 % 256).astype(np.uint8).reshape(3, 4)
f = np.array([[0.5, -1.0, np.inf], [-np.inf, np.nan, 1e-40]], dtype=np.float32)
np.save(d + '/np_u.npy', u)
np.save(d + '/np_f.npy', f)
with open(d + '/np_v2.npy', 'wb') as fp:
    np.lib.format.write_array(fp, f, version=(2, 0))
with open(d + '/np_v3.npy', 'wb') as fp:
    np.lib.format.write_array(fp, f, version=(3, 0))
np.save(d + '/np_fortran.npy', np.asfortranarray(f))
np.save(d + '/np_i4.npy', u.astype(np.int32))
np.save(d + '/np_be.npy', f.astype('>f4'))
for name, want in (('ours_f', np.array([[0.5, -1.0, 6.0], [-0.0, 1e-40, 3.25]], dtype=np.float32)),
                   ('ours_u', np.array([[0], [127], [128], [255]], dtype=np.uint8))):
    got = np.load(d + '/' + name + '.npy')
    assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, got.shape)
    assert got.tobytes() == want.tobytes(), name
    b = io.BytesIO(); np.save(b, want)
    assert open(d + '/' + name + '.npy', 'rb').read() == b.getvalue(), name + ' differs from np.save'
)PY";
    std::ofstream(path("check.py")) << script;
    const std::string cmd = "/usr/bin/python3 " + path("check.py") + " " + dir_.string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

    const NpyArray u = npy_read_2d(path("np_u.npy"), NpyDtype::U8, "u");
    EXPECT_EQ(u.shape, (std::vector<size_t>{3, 4}));
    for (size_t i = 0; i < 12; ++i) EXPECT_EQ(u.u8()[i], uint8_t(i * 37 % 256)) << i;
    for (const char* name : {"np_f.npy", "np_v2.npy", "np_v3.npy"}) {
        const NpyArray f = npy_read_2d(path(name), NpyDtype::F32, "f");
        EXPECT_EQ(f.shape, (std::vector<size_t>{2, 3})) << name;
        EXPECT_EQ(f.f32()[0], 0.5f) << name;
        EXPECT_EQ(f.f32()[1], -1.0f) << name;
        EXPECT_TRUE(std::isinf(f.f32()[2])) << name;
        EXPECT_TRUE(std::isinf(f.f32()[3]) && f.f32()[3] < 0) << name;
        EXPECT_TRUE(std::isnan(f.f32()[4])) << name;
        EXPECT_EQ(f.f32()[5], 1e-40f) << name;
    }
    expect_error([&] { npy_read(path("np_fortran.npy")); }, Errc::BadInput, path("np_fortran.npy"),
                 "fortran_order");
    expect_error([&] { npy_read(path("np_i4.npy")); }, Errc::BadInput, path("np_i4.npy"), "'<i4'");
    expect_error([&] { npy_read(path("np_be.npy")); }, Errc::BadInput, path("np_be.npy"), "'>f4'");
}

// Found by fuzz/core: a header length or a shape larger than the file must be refused before
// anything of that size is allocated.
TEST(NpyHostile, DeclaredSizesLargerThanTheFileAreRefusedWithoutAllocating) {
    const std::string dir = ::testing::TempDir();
    {
        // v2.0 header claiming a 3.6 GB header.
        std::ofstream f(dir + "/hostile_header.npy", std::ios::binary);
        const unsigned char head[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0x77, 0x77, 0x77, 0xd8};
        f.write(reinterpret_cast<const char*>(head), 12);
        f << "{'descr'";
    }
    try {
        f4gemm::npy_read(dir + "/hostile_header.npy");
        FAIL();
    } catch (const f4gemm::Error& e) {
        EXPECT_NE(std::string(e.what()).find("truncated header"), std::string::npos) << e.what();
    }
    {
        // A valid header whose shape claims ~10^12 float32 values in a tiny file.
        std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }";
        while ((10 + header.size() + 1) % 64) header += ' ';
        header += '\n';
        std::ofstream f(dir + "/hostile_shape.npy", std::ios::binary);
        const unsigned char head[10] = {0x93,
                                        'N',
                                        'U',
                                        'M',
                                        'P',
                                        'Y',
                                        1,
                                        0,
                                        (unsigned char)(header.size() & 0xff),
                                        (unsigned char)(header.size() >> 8)};
        f.write(reinterpret_cast<const char*>(head), 10);
        f << header << "abcd";
    }
    try {
        f4gemm::npy_read(dir + "/hostile_shape.npy");
        FAIL();
    } catch (const f4gemm::Error& e) {
        EXPECT_NE(std::string(e.what()).find("truncated data"), std::string::npos) << e.what();
    }
}
