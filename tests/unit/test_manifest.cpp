// Manifest parsing: aiter's real gfx950 CSV loads unchanged (seed spec section 2), reordered and
// extra columns work, and every malformed input is an Errc::Manifest error naming <file>:<line>.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "f4gemm/error.hpp"
#include "f4gemm/manifest.hpp"

using namespace f4gemm;

namespace {

std::string read_all(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::string dir_of(const std::string& p) {
    return p.substr(0, p.find_last_of('/'));
}

// Runs parse_manifest and returns the Errc::Manifest message, failing the test otherwise.
std::string manifest_error(const std::string& text, const std::string& source = "t.csv") {
    try {
        parse_manifest(text, source);
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::Manifest) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return "";
}

// The error of a one-row manifest whose only extra column `col` holds `v` (the six required cells valid).
std::string column_error(const char* col, const char* v) {
    return manifest_error(std::string("tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,") + col +
                          "\n256,256,0,1,k,k.co," + v + "\n");
}

const char* kHeader = "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name\n";

}  // namespace

TEST(Manifest, AiterCsvLoadsUnchanged) {
    const Manifest m = load_manifest(dir_of(F4GEMM_AITER_CSV));
    EXPECT_EQ(m.path, std::string(F4GEMM_AITER_CSV));
    EXPECT_EQ(m.dir, dir_of(F4GEMM_AITER_CSV));
    const std::vector<std::string> cols = {"tile_M",      "tile_N",   "splitK",
                                           "bpreshuffle", "knl_name", "co_name"};
    EXPECT_EQ(m.columns, cols);
    ASSERT_EQ(m.kernels.size(), 35u);

    // Seed spec section 2: row order of aiter's file.
    const int tiles[35][2] = {{256, 256}, {256, 256}, {128, 512}, {192, 256}, {224, 256}, {128, 128},
                              {128, 256}, {128, 384}, {160, 128}, {160, 256}, {160, 384}, {192, 128},
                              {224, 128}, {256, 128}, {32, 1024}, {32, 128},  {32, 256},  {32, 384},
                              {32, 512},  {32, 640},  {32, 768},  {32, 896},  {64, 1024}, {64, 128},
                              {64, 256},  {64, 384},  {64, 512},  {64, 640},  {64, 768},  {64, 896},
                              {96, 128},  {96, 256},  {96, 384},  {96, 512},  {96, 640}};
    for (int i = 0; i < 35; ++i) {
        const KernelConfig& k = m.kernels[i];
        SCOPED_TRACE(k.co_name);
        EXPECT_EQ(k.tile_m, tiles[i][0]);
        EXPECT_EQ(k.tile_n, tiles[i][1]);
        const std::string stem = std::string("f4gemm_bf16_per1x32Fp4_") +
                                 (i == 0 ? "noBpreShuffle_" : "BpreShuffle_") + std::to_string(tiles[i][0]) +
                                 "x" + std::to_string(tiles[i][1]);
        EXPECT_EQ(k.co_name, stem + ".co");
        EXPECT_EQ(k.knl_name, "_ZN5aiter" + std::to_string(stem.size()) + stem + "E");
        EXPECT_EQ(k.bpreshuffle, i == 0 ? 0 : 1);
        EXPECT_EQ(k.split_k, (i == 1 || i == 2) ? 1 : 0);  // only BpreShuffle 256x256 and 128x512
        EXPECT_EQ(k.line, i + 2);
        // Defaults for the columns aiter's file does not have.
        EXPECT_EQ(k.arch, "gfx950");
        EXPECT_EQ(k.threads, 256);
        EXPECT_EQ(k.smem_bytes, 0);
        EXPECT_EQ(k.abi, KernelAbi::Aiter);
        EXPECT_EQ(k.b_layout, i == 0 ? BLayout::Plain : BLayout::Aiter16x16);
        EXPECT_EQ(k.scale_layout, ScaleLayout::AiterShuffled);
        EXPECT_EQ(k.accum, Accum::Exact);
        EXPECT_TRUE(k.extra.empty());
    }
    EXPECT_EQ(m.kernels[0].knl_name, "_ZN5aiter44f4gemm_bf16_per1x32Fp4_noBpreShuffle_256x256E");
    EXPECT_EQ(m.kernels[1].knl_name, "_ZN5aiter42f4gemm_bf16_per1x32Fp4_BpreShuffle_256x256E");
}

TEST(Manifest, SharedReferenceCopyIsIdentical) {
    // The test data is a copy of ../shared/reference's file; when that is reachable, prove it.
    const std::string ref =
        std::string(F4GEMM_SOURCE_DIR) + "/../shared/reference/aiter-gfx950-f4gemm_bf16_per1x32Fp4.csv";
    const std::string a = read_all(ref);
    if (a.empty()) GTEST_SKIP() << "no " << ref;
    EXPECT_EQ(a, read_all(F4GEMM_AITER_CSV));
}

TEST(Manifest, ReorderedAndExtraColumns) {
    const std::string text =
        "co_name , "
        "knl_name,bpreshuffle,tile_N,tile_M,splitK,arch,threads,smem_bytes,abi,b_layout,scale_layout,note\r\n"
        "\r\n"
        "a.cubin,k_a,1,256,128,1,sm_90a,384,200704,sm90v1,plain,plain,fast\r\n"
        "b.co,k_b,0,128,64,0,,,,,,,\r\n"
        "   \n"
        "c.co,k_c,1,512,32,0,gfx950,256,0,aiter,aiter16x16,aiter,x";  // no trailing newline
    const Manifest m = parse_manifest(text, "/tmp/x/f4gemm_bf16_per1x32Fp4.csv");
    EXPECT_EQ(m.dir, "/tmp/x");
    ASSERT_EQ(m.kernels.size(), 3u);
    EXPECT_EQ(m.columns[0], "co_name");
    EXPECT_EQ(m.columns[1], "knl_name");

    const KernelConfig& a = m.kernels[0];
    EXPECT_EQ(a.co_name, "a.cubin");
    EXPECT_EQ(a.knl_name, "k_a");
    EXPECT_EQ(a.tile_m, 128);
    EXPECT_EQ(a.tile_n, 256);
    EXPECT_EQ(a.split_k, 1);
    EXPECT_EQ(a.bpreshuffle, 1);
    EXPECT_EQ(a.arch, "sm_90a");
    EXPECT_EQ(a.threads, 384);
    EXPECT_EQ(a.smem_bytes, 200704);
    EXPECT_EQ(a.abi, KernelAbi::Sm90v1);
    EXPECT_EQ(a.b_layout, BLayout::Plain);  // explicit column beats the bpreshuffle default
    EXPECT_EQ(a.scale_layout, ScaleLayout::Plain);
    ASSERT_EQ(a.extra.size(), 1u);
    EXPECT_EQ(a.extra.at("note"), "fast");
    EXPECT_EQ(a.line, 3);

    const KernelConfig& b = m.kernels[1];  // empty optional cells keep the defaults
    EXPECT_EQ(b.arch, "gfx950");
    EXPECT_EQ(b.threads, 256);
    EXPECT_EQ(b.smem_bytes, 0);
    EXPECT_EQ(b.abi, KernelAbi::Aiter);
    EXPECT_EQ(b.b_layout, BLayout::Plain);  // from bpreshuffle 0
    EXPECT_EQ(b.scale_layout, ScaleLayout::AiterShuffled);
    EXPECT_EQ(b.extra.at("note"), "");
    EXPECT_EQ(b.line, 4);

    const KernelConfig& c = m.kernels[2];
    EXPECT_EQ(c.b_layout, BLayout::Aiter16x16);
    EXPECT_EQ(c.line, 6);
}

TEST(Manifest, BLayoutColumnValues) {
    const Manifest m = parse_manifest(
        "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,b_layout\n"
        "16,128,1,0,a,a.cubin,bitplane\n"
        "16,128,1,0,b,b.cubin,frag16\n",
        "/tmp/x/t.csv");
    ASSERT_EQ(m.kernels.size(), 2u);
    EXPECT_EQ(m.kernels[0].b_layout, BLayout::Bitplane);
    EXPECT_EQ(m.kernels[1].b_layout, BLayout::Frag16);
}

// The policy's time model columns (kernels/sm90a/kernels.json cost_wave_k, cost_prepass, cost_wave_us):
// numbers, empty for none, anything else the file:line error naming the column and the rule.
TEST(Manifest, CostColumns) {
    const std::string head =
        "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,abi,cost_wave_k,cost_prepass,cost_wave_us\n";
    const Manifest m =
        parse_manifest(head +
                           "128,128,0,0,pp,pp.cubin,sm90pp1,0.0033899999999999998,4.73e-07,2.3\n"
                           "16,64,0,0,dec,dec.cubin,sm90v1,,,\n",
                       "t.csv");
    ASSERT_EQ(m.kernels.size(), 2u);
    EXPECT_DOUBLE_EQ(m.kernels[0].cost_wave_k, 0.00339);
    EXPECT_DOUBLE_EQ(m.kernels[0].cost_prepass, 4.73e-7);
    EXPECT_DOUBLE_EQ(m.kernels[0].cost_wave_us, 2.3);
    EXPECT_EQ(m.kernels[1].cost_wave_k, 0.0);
    EXPECT_EQ(m.kernels[1].cost_prepass, 0.0);
    EXPECT_EQ(m.kernels[1].cost_wave_us, 0.0);
    for (const char* bad : {"fast", "-1", "1e400", "nan", "3x"}) {
        std::string e = manifest_error(head + "128,128,0,0,pp,pp.cubin,sm90pp1," + bad + ",,\n");
        EXPECT_NE(e.find("t.csv:2: bad cost_wave_k (got '" + std::string(bad) +
                         "'): must be a non-negative number"),
                  std::string::npos)
            << e;
        e = manifest_error(head + "128,128,0,0,pp,pp.cubin,sm90pp1,0.005,," + bad + "\n");
        EXPECT_NE(e.find("t.csv:2: bad cost_wave_us (got '" + std::string(bad) +
                         "'): must be a non-negative number"),
                  std::string::npos)
            << e;
    }
}

// The decode model's columns (kernels.json decode_round, decode_warps, decode_speed): a number, an integer
// and a positive number; empty for none (decode_speed: 1).
TEST(Manifest, DecodeModelColumns) {
    const std::string head =
        "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,abi,decode_round,decode_warps,decode_speed\n";
    const Manifest m = parse_manifest(head +
                                          "16,64,0,0,dec,dec.cubin,sm90v1,16384,12,\n"
                                          "16,128,0,0,wg,wg.cubin,sm90v1,16384,12,1.25\n"
                                          "64,128,1,0,ws,ws.cubin,sm90v1,,,\n",
                                      "t.csv");
    ASSERT_EQ(m.kernels.size(), 3u);
    EXPECT_DOUBLE_EQ(m.kernels[0].decode_round, 16384.0);
    EXPECT_EQ(m.kernels[0].decode_warps, 12);
    EXPECT_DOUBLE_EQ(m.kernels[0].decode_speed, 1.0);
    EXPECT_DOUBLE_EQ(m.kernels[1].decode_speed, 1.25);
    EXPECT_EQ(m.kernels[2].decode_round, 0.0);
    EXPECT_EQ(m.kernels[2].decode_warps, 0);
    for (const auto& [cells, col] : {std::pair<std::string, std::string>{"-5,12,", "decode_round"},
                                     std::pair<std::string, std::string>{"16384,1.5,", "decode_warps"},
                                     std::pair<std::string, std::string>{"16384,12,0", "decode_speed"},
                                     std::pair<std::string, std::string>{"16384,12,fast", "decode_speed"}}) {
        const std::string e = manifest_error(head + "16,64,0,0,dec,dec.cubin,sm90v1," + cells + "\n");
        EXPECT_NE(e.find("t.csv:2: bad " + col), std::string::npos) << e;
    }
}

TEST(Manifest, AbiColumnValues) {
    // The pre-pass kernels' row as kernels/sm90a/CMakeLists.txt writes it, next to the other ABIs.
    const std::string text =
        "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,"
        "scale_layout\n"
        "128,128,0,0,f4gemm_sm90a_pp_128x128,f4gemm_sm90a_pp_128x128.cubin,sm_90a,384,198752,sm90pp1,plain,"
        "plain\n"
        "128,128,1,0,ws,ws.cubin,sm_90a,384,186504,sm90v1,plain,plain\n"
        "256,256,0,1,a,a.co,gfx950,256,0,aiter,aiter16x16,aiter\n"
        "256,256,0,1,b,b.co,gfx950,256,0,,aiter16x16,aiter\n"
        "128,128,0,0,o,o.cubin,sm_90a,384,198752,sm90pp2,plain,plain\n";
    const Manifest m = parse_manifest(text, "t.csv");
    ASSERT_EQ(m.kernels.size(), 5u);
    EXPECT_EQ(m.kernels[4].abi, KernelAbi::Sm90pp2);
    const KernelConfig& pp = m.kernels[0];
    EXPECT_EQ(pp.abi, KernelAbi::Sm90pp1);
    EXPECT_EQ(pp.knl_name, "f4gemm_sm90a_pp_128x128");
    EXPECT_EQ(pp.co_name, "f4gemm_sm90a_pp_128x128.cubin");
    EXPECT_EQ(pp.tile_m, 128);
    EXPECT_EQ(pp.tile_n, 128);
    EXPECT_EQ(pp.split_k, 0);
    EXPECT_EQ(pp.arch, "sm_90a");
    EXPECT_EQ(pp.threads, 384);
    EXPECT_EQ(pp.smem_bytes, 198752);
    EXPECT_EQ(pp.b_layout, BLayout::Plain);
    EXPECT_EQ(pp.scale_layout, ScaleLayout::Plain);
    EXPECT_TRUE(pp.extra.empty());
    EXPECT_EQ(m.kernels[1].abi, KernelAbi::Sm90v1);
    EXPECT_EQ(m.kernels[2].abi, KernelAbi::Aiter);
    EXPECT_EQ(m.kernels[3].abi, KernelAbi::Aiter);  // empty cell: the default
    EXPECT_EQ(find_kernel(m, "f4gemm_sm90a_pp_128x128"), 0);
}

TEST(Manifest, FindKernelLastMatchWins) {
    const std::string text = std::string(kHeader) +
                             "256,256,0,1,sym_a,a.co\n"
                             "128,128,0,1,sym_b,b.co\n"
                             "64,64,0,1,sym_a,c.co\n"
                             "32,32,0,1,sym_d,a.co\n";
    const Manifest m = parse_manifest(text, "t.csv");
    EXPECT_EQ(find_kernel(m, "sym_b"), 1);
    EXPECT_EQ(find_kernel(m, "b.co"), 1);
    EXPECT_EQ(find_kernel(m, "sym_a"), 2);  // knl_name in rows 0 and 2
    EXPECT_EQ(find_kernel(m, "a.co"), 3);   // co_name in rows 0 and 3
    EXPECT_EQ(find_kernel(m, "nope"), -1);
    EXPECT_EQ(find_kernel(m, ""), -1);

    const Manifest aiter = load_manifest(dir_of(F4GEMM_AITER_CSV));
    EXPECT_EQ(find_kernel(aiter, "f4gemm_bf16_per1x32Fp4_BpreShuffle_96x640.co"), 34);
    EXPECT_EQ(find_kernel(aiter, "_ZN5aiter44f4gemm_bf16_per1x32Fp4_noBpreShuffle_256x256E"), 0);
}

TEST(Manifest, MissingColumn) {
    const std::string e = manifest_error("tile_M,tile_N,splitK,knl_name,co_name\n256,256,0,k,k.co\n");
    EXPECT_NE(e.find("t.csv:1: missing column bpreshuffle"), std::string::npos) << e;
}

TEST(Manifest, DuplicateColumn) {
    const std::string e = manifest_error("tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,tile_M\n");
    EXPECT_NE(e.find("t.csv:1: duplicate column tile_M"), std::string::npos) << e;
}

TEST(Manifest, BadIntegers) {
    struct Case {
        const char* row;
        const char* want;
    } cases[] = {
        {"12abc,256,0,1,k,k.co", "t.csv:2: bad tile_M (got '12abc')"},
        {",256,0,1,k,k.co", "t.csv:2: bad tile_M (got '')"},
        {"256,-16,0,1,k,k.co", "t.csv:2: bad tile_N (got '-16')"},
        {"256,0,0,1,k,k.co", "t.csv:2: bad tile_N (got '0')"},
        {"256,256,2,1,k,k.co", "t.csv:2: bad splitK (got '2')"},
        {"256,256,0,1.0,k,k.co", "t.csv:2: bad bpreshuffle (got '1.0')"},
        {"256,256,0,99999999999999999999,k,k.co", "t.csv:2: bad bpreshuffle"},
    };
    for (const Case& c : cases) {
        const std::string e = manifest_error(std::string(kHeader) + c.row + "\n");
        EXPECT_NE(e.find(c.want), std::string::npos) << e;
    }
}

TEST(Manifest, BadExtraColumns) {
    const auto err = column_error;
    EXPECT_NE(err("abi", "sm100")
                  .find("t.csv:2: bad abi (got 'sm100'): use aiter, sm90v1, sm90pp1, sm90pa1 or sm90pp2"),
              std::string::npos)
        << err("abi", "sm100");
    EXPECT_NE(err("abi", "SM90PP1").find("t.csv:2: bad abi (got 'SM90PP1')"), std::string::npos);
    EXPECT_NE(err("b_layout", "weird").find("t.csv:2: bad b_layout (got 'weird')"), std::string::npos);
    EXPECT_NE(err("b_layout", "weird").find("use plain, aiter16x16, bitplane, frag16 or frag16s"),
              std::string::npos)
        << err("b_layout", "weird");
    EXPECT_NE(err("scale_layout", "x").find("t.csv:2: bad scale_layout (got 'x')"), std::string::npos);
    EXPECT_NE(err("threads", "0").find("t.csv:2: bad threads (got '0')"), std::string::npos);
    EXPECT_NE(err("smem_bytes", "-1").find("t.csv:2: bad smem_bytes (got '-1')"), std::string::npos);
    EXPECT_NE(err("max_m", "-5").find("t.csv:2: bad max_m (got '-5')"), std::string::npos)
        << err("max_m", "-5");
    EXPECT_NE(err("max_m", "256x").find("t.csv:2: bad max_m (got '256x')"), std::string::npos);
    EXPECT_NE(err("accum", "fast").find("t.csv:2: bad accum (got 'fast'): use exact or promoted"),
              std::string::npos)
        << err("accum", "fast");
    EXPECT_NE(err("accum", "Promoted").find("t.csv:2: bad accum (got 'Promoted')"), std::string::npos);
    EXPECT_NE(err("min_m", "-1").find("t.csv:2: bad min_m (got '-1')"), std::string::npos)
        << err("min_m", "-1");
}

TEST(Manifest, MaxMColumn) {
    const Manifest m = parse_manifest(
        "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,abi,max_m\n"
        "128,128,0,0,a,a.cubin,sm90pa1,256\n"
        "128,128,0,0,b,b.cubin,sm90pp1,\n"
        "128,128,0,0,c,c.cubin,sm90pp1,0\n",
        "t.csv");
    ASSERT_EQ(m.kernels.size(), 3u);
    EXPECT_EQ(m.kernels[0].max_m, 256);
    EXPECT_EQ(m.kernels[1].max_m, 0);  // empty cell: any M
    EXPECT_EQ(m.kernels[2].max_m, 0);
    EXPECT_TRUE(m.kernels[0].extra.empty());
    // min_m: the policy offers the kernel only from that M on (empty: any M).
    const Manifest lo = parse_manifest(
        "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,min_m\n128,128,0,0,a,a.cubin,128\n128,128,0,0,b,b."
        "cubin,\n",
        "t.csv");
    EXPECT_EQ(lo.kernels[0].min_m, 128);
    EXPECT_EQ(lo.kernels[1].min_m, 0);
    EXPECT_TRUE(lo.kernels[0].extra.empty());
}

// The accumulation mode each kernel implements, read by header name; an empty cell and a manifest without the
// column (aiter's, older builds) mean exact.
TEST(Manifest, AccumColumn) {
    const Manifest m = parse_manifest(
        "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,accum,abi\n"
        "128,128,0,0,pp,pp.cubin,exact,sm90pp1\n"
        "128,128,0,0,pp_p,pp_p.cubin,promoted,sm90pp1\n"
        "16,64,0,0,dec,dec.cubin,,sm90v1\n",
        "t.csv");
    ASSERT_EQ(m.kernels.size(), 3u);
    EXPECT_EQ(m.kernels[0].accum, Accum::Exact);
    EXPECT_EQ(m.kernels[1].accum, Accum::Promoted);
    EXPECT_EQ(m.kernels[2].accum, Accum::Exact);  // empty cell: the default
    EXPECT_TRUE(m.kernels[1].extra.empty()) << "accum is a known column, not an extra one";
    const Manifest old = parse_manifest(std::string(kHeader) + "256,256,0,1,k,k.co\n", "old.csv");
    EXPECT_EQ(old.kernels[0].accum, Accum::Exact);
}

// promote_k (a promoted kernel's FP8 chain in K) and reg_ctas (CTAs per SM its pinned registers allow): read
// by header name, empty or absent meaning 128 / not pinned; a bad value is a one-line error naming the fix.
TEST(Manifest, PromoteKAndRegCtasColumns) {
    const Manifest m = parse_manifest(
        "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,accum,promote_k,reg_ctas\n"
        "128,128,1,0,p3,p3.cubin,promoted,256,1\n"
        "128,64,0,0,cv,cv.cubin,promoted,,\n"
        "16,128,0,0,dec,dec.cubin,exact,0,0\n",
        "t.csv");
    ASSERT_EQ(m.kernels.size(), 3u);
    EXPECT_EQ(m.kernels[0].promote_k, 256);
    EXPECT_EQ(chain_k(m.kernels[0]), 256u);
    EXPECT_EQ(m.kernels[0].reg_ctas, 1);
    EXPECT_EQ(m.kernels[1].promote_k, 0);
    EXPECT_EQ(chain_k(m.kernels[1]), 128u);  // empty: 128
    EXPECT_EQ(m.kernels[1].reg_ctas, 0);
    EXPECT_EQ(chain_k(m.kernels[2]), 128u);
    EXPECT_TRUE(m.kernels[0].extra.empty()) << "known columns, not extra ones";
    const Manifest old = parse_manifest(std::string(kHeader) + "256,256,0,1,k,k.co\n", "old.csv");
    EXPECT_EQ(old.kernels[0].promote_k, 0);
    EXPECT_EQ(old.kernels[0].reg_ctas, 0);
    const auto err = column_error;
    EXPECT_NE(err("promote_k", "100").find("t.csv:2: bad promote_k (got '100'): must be a multiple of 32"),
              std::string::npos)
        << err("promote_k", "100");
    EXPECT_NE(err("promote_k", "-32").find("t.csv:2: bad promote_k (got '-32')"), std::string::npos);
    EXPECT_NE(err("reg_ctas", "x").find("t.csv:2: bad reg_ctas (got 'x'): must be 0..64"), std::string::npos)
        << err("reg_ctas", "x");
}

TEST(Manifest, WrongCellCount) {
    const std::string e = manifest_error(std::string(kHeader) + "256,256,0,1,k,k.co\n\n256,256,0,1,k\n");
    EXPECT_NE(e.find("t.csv:4: row has 5 cells, the header has 6"), std::string::npos) << e;
    const std::string e2 = manifest_error(std::string(kHeader) + "256,256,0,1,k,k.co,extra\n");
    EXPECT_NE(e2.find("t.csv:2: row has 7 cells"), std::string::npos) << e2;
}

TEST(Manifest, EmptyNames) {
    const std::string e = manifest_error(std::string(kHeader) + "256,256,0,1,  ,k.co\n");
    EXPECT_NE(e.find("t.csv:2: empty knl_name"), std::string::npos) << e;
    const std::string e2 = manifest_error(std::string(kHeader) + "256,256,0,1,k,\n");
    EXPECT_NE(e2.find("t.csv:2: empty co_name"), std::string::npos) << e2;
}

TEST(Manifest, EmptyFileAndHeaderOnly) {
    EXPECT_NE(manifest_error("").find("t.csv:1: empty manifest"), std::string::npos);
    EXPECT_NE(manifest_error("\n \n").find("t.csv:2: empty manifest"), std::string::npos);
    const std::string e = manifest_error(kHeader);
    EXPECT_NE(e.find("t.csv:1: empty manifest"), std::string::npos) << e;
    EXPECT_NE(e.find("no kernel rows"), std::string::npos) << e;
}

TEST(Manifest, MissingFile) {
    try {
        load_manifest("/nonexistent/f4gemm-dir");
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::Manifest);
        EXPECT_EQ(
            std::string(e.what()),
            "cannot open manifest /nonexistent/f4gemm-dir/f4gemm_bf16_per1x32Fp4.csv: pass --co-dir or set "
            "AITER_ASM_DIR/AITER_F4GEMM_DIR");
    }
}

TEST(Manifest, EmptyFileOnDiskNamesPath) {
    const std::string dir = ::testing::TempDir() + "f4gemm_manifest_empty";
    std::string cmd = "mkdir -p '" + dir + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    { std::ofstream(dir + "/" + kManifestFile); }
    try {
        load_manifest(dir);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::Manifest);
        EXPECT_NE(std::string(e.what()).find(dir + "/f4gemm_bf16_per1x32Fp4.csv:1: empty manifest"),
                  std::string::npos)
            << e.what();
    }
}

// The shipped sm_90a manifest (when the kernels were built here): every kernel reads B as the packed weight
// W (b_layout frag16s), carries an explicit priority, and the dev ladder beside it is a separate manifest.
TEST(Manifest, ShippedSm90aManifestNamesOneBFormat) {
    const std::string dir = F4GEMM_SM90A_BUILD_DIR;
    std::ifstream probe(dir + "/" + kManifestFile);
    if (!probe) GTEST_SKIP() << "sm_90a kernels not built here (no nvcc)";
    const Manifest m = load_manifest(dir);
    ASSERT_FALSE(m.kernels.empty());
    bool has_priority = false;
    for (const std::string& c : m.columns) has_priority |= c == "priority";
    EXPECT_TRUE(has_priority);
    for (const KernelConfig& kc : m.kernels) {
        EXPECT_EQ(kc.b_layout, BLayout::Frag16S) << kc.co_name << " reads B in " << to_string(kc.b_layout);
        EXPECT_EQ(kc.arch, "sm_90a") << kc.co_name;
        EXPECT_GT(kc.smem_bytes, 0) << kc.co_name;
        EXPECT_GT(kc.threads, 0) << kc.co_name;
    }
    EXPECT_LT(find_kernel(m, "f4gemm_sm90a_simple_64x64"), 0) << "simple_64x64 belongs to the dev ladder";
    std::ifstream ladder(dir + "/dev/" + kManifestFile);
    if (ladder) {
        EXPECT_GE(find_kernel(load_manifest(dir + "/dev"), "f4gemm_sm90a_simple_64x64"), 0);
    }
}
