// Unit tests that need no LLVM tools: target ids from e_flags, code object versions, the
// next_free_sgpr fix-up against hand-computed granules, the objdump/readelf parsers on recorded
// LLVM 22 output, the MessagePack reader, the bounds-checked ELF reader on hostile bytes, and the
// don't-care classification of code byte differences.
#include <gtest/gtest.h>

#include <cstring>

#include "amdgpu_target.hpp"
#include "asm_writer.hpp"
#include "co2asm_error.hpp"
#include "elf_file.hpp"
#include "equivalence.hpp"
#include "msgpack_reader.hpp"
#include "objdump_parse.hpp"

using namespace co2asm;

TEST(TargetId, Gfx950FlagsFromReferenceDoc) {
    // e_flags observed with clang-22 for each -mcpu (amdgpu-roundtrip-llvm22.md).
    EXPECT_EQ(decode_target(0x54f)->target_id(), "gfx950");
    EXPECT_EQ(decode_target(0x64f)->target_id(), "gfx950:xnack-");
    EXPECT_EQ(decode_target(0x74f)->target_id(), "gfx950:xnack+");
    EXPECT_EQ(decode_target(0xd4f)->target_id(), "gfx950:sramecc+");
    EXPECT_EQ(decode_target(0xe4f)->target_id(), "gfx950:sramecc+:xnack-");
    EXPECT_EQ(decode_target(0x94f)->target_id(), "gfx950:sramecc-");  // sramecc OFF, xnack ANY
}

TEST(TargetId, OtherProcessorsAndUnsupportedFeatures) {
    EXPECT_EQ(decode_target(0x041)->target_id(), "gfx1100");  // RDNA3: no xnack/sramecc bits
    EXPECT_EQ(decode_target(0x048)->target_id(), "gfx1200");
    EXPECT_EQ(decode_target(0x73f)->target_id(), "gfx90a:xnack+");
    EXPECT_EQ(decode_target(0xe4c)->target_id(), "gfx942:sramecc+:xnack-");
    EXPECT_FALSE(decode_target(0x0ff).has_value());
    EXPECT_FALSE(decode_target(0x000).has_value());
    EXPECT_TRUE(decode_target(0x04f)->architected_flat_scratch);
    EXPECT_FALSE(decode_target(0x03f)->architected_flat_scratch);
    EXPECT_EQ(decode_target(0x041)->major, 11);
}

TEST(TargetId, ParseTargetIdRoundTrips) {
    for (const std::string id :
         {"gfx950", "gfx950:sramecc+:xnack-", "gfx90a:xnack+", "gfx1200", "gfx942:sramecc-"}) {
        auto t = parse_target_id(id);
        ASSERT_TRUE(t.has_value()) << id;
        EXPECT_EQ(t->target_id(), id);
    }
    EXPECT_FALSE(parse_target_id("gfx9999").has_value());
    EXPECT_FALSE(parse_target_id("gfx950:xnack").has_value());
    EXPECT_FALSE(parse_target_id("gfx950:foo+").has_value());
}

TEST(CodeObjectVersion, AbiVersionPlusTwo) {
    EXPECT_EQ(code_object_version(2), 4);
    EXPECT_EQ(code_object_version(3), 5);
    EXPECT_EQ(code_object_version(4), 6);
    EXPECT_FALSE(code_object_version(1).has_value());  // v3: clang-22 refuses -mcode-object-version=3
    EXPECT_FALSE(code_object_version(5).has_value());
}

TEST(NextFreeSgpr, Gfx950SubtractsArchitectedFlatScratch) {
    const AmdgpuTarget t = *decode_target(0x54f);
    // objdump prints (granule + 1) * 8 = 104 for granule 12; clang-22 rejects 104 and 102 lands in
    // granule 13 once the 6 flat-scratch SGPRs are added; 98 is the answer.
    auto d = fix_next_free_sgpr(t, 12, false, false, false, 104);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->next_free_sgpr, 98u);
    EXPECT_EQ(granulate_sgprs(d->next_free_sgpr + 6), 12u);
    EXPECT_EQ(fix_next_free_sgpr(t, 3, false, false, false, 32)->next_free_sgpr, 26u);
    // Granule 13 needs 105..112 SGPRs: 102 + 6 = 108 reaches it.
    EXPECT_EQ(fix_next_free_sgpr(t, 13, false, false, false, 112)->next_free_sgpr, 102u);
    EXPECT_EQ(fix_next_free_sgpr(t, 0, false, false, false, 8)->next_free_sgpr, 2u);
}

TEST(NextFreeSgpr, Gfx90aFollowsXnackAndTurnsOnFlatScratchWhenNeeded) {
    const AmdgpuTarget any = *decode_target(0x53f);  // xnack ANY: the mask (4 SGPRs) is reserved
    EXPECT_EQ(fix_next_free_sgpr(any, 5, false, false, true, 48)->next_free_sgpr, 44u);
    const AmdgpuTarget off = *decode_target(0x63f);  // xnack OFF: nothing is added
    auto d = fix_next_free_sgpr(off, 5, false, false, true, 48);
    EXPECT_EQ(d->next_free_sgpr, 48u);
    EXPECT_FALSE(d->reserve_flat_scratch);
    // Granule 13 without reservations would need 105+ SGPRs: only flat scratch (6) reaches it.
    d = fix_next_free_sgpr(off, 13, false, false, true, 112);
    ASSERT_TRUE(d.has_value());
    EXPECT_TRUE(d->reserve_flat_scratch);
    EXPECT_EQ(d->next_free_sgpr, 102u);
    // ...and without the directive (none printed) it cannot be reached.
    EXPECT_FALSE(fix_next_free_sgpr(off, 13, false, false, false, 112).has_value());
}

TEST(NextFreeSgpr, Gfx11KeepsPrintedValueAndNeedsGranuleZero) {
    const AmdgpuTarget t = *decode_target(0x041);
    EXPECT_EQ(fix_next_free_sgpr(t, 0, false, false, false, 8)->next_free_sgpr, 8u);
    EXPECT_FALSE(fix_next_free_sgpr(t, 2, false, false, false, 24).has_value());
}

TEST(ObjdumpParse, InstructionLinesIncludingGluedCommentAndLong) {
    const std::string out =
        "\nf.co:\tfile format elf64-amdgpu\n\nDisassembly of section .text:\n\n"
        "0000000000001600 <kern_a>:\n"
        "\ts_load_dwordx2 s[0:1], s[0:1], 0x0                         // 000000001600: C0060000 00000000\n"
        "\ts_cbranch_scc1 65533                                       // 000000001614: BF85FFFD "
        "<kern_a+0xc>\n"
        "\n0000000000001618 <mylocal>:\n"
        "\tv_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v20, v21 op_sel_hi:[0,0,0]// "
        "000000001618: D3AC0000 00022B14 D3AD0800 04021904\n"
        "\t.long 0xffffffff                                           // 000000001628: FFFFFFFF\n";
    const auto sections = parse_disassembly(out);
    ASSERT_EQ(sections.size(), 1u);
    EXPECT_EQ(sections[0].name, ".text");
    const auto& i = sections[0].instructions;
    ASSERT_EQ(i.size(), 4u);
    EXPECT_EQ(i[0].address, 0x1600u);
    EXPECT_EQ(i[0].size, 8u);
    EXPECT_EQ(i[1].text, "s_cbranch_scc1 65533");
    EXPECT_EQ(
        i[2].text,
        "v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v20, v21 op_sel_hi:[0,0,0]");
    EXPECT_EQ(i[2].size, 16u);
    EXPECT_EQ(i[3].text, ".long 0xffffffff");

    const auto normalized = normalize_disassembly(out);
    ASSERT_EQ(normalized.size(), 7u);
    EXPECT_EQ(normalized[0], "Disassembly of section .text:");
    EXPECT_EQ(normalized[1], "<kern_a>:");
    EXPECT_EQ(normalized[3], "\ts_cbranch_scc1 65533");  // address, encoding and <kern_a+0xc> gone
}

TEST(ObjdumpParse, DescriptorBlocksAndMetadataYaml) {
    const std::string kd =
        "Disassembly of section .rodata:\n\n0000000000000540 <k.kd>:\n.amdhsa_kernel k\n"
        "\t.amdhsa_next_free_sgpr 104\n\t; SHARED_VGPR_COUNT 0\n.end_amdhsa_kernel\n";
    const auto blocks = parse_kernel_descriptor_blocks(kd);
    ASSERT_EQ(blocks.count("k"), 1u);
    EXPECT_EQ(blocks.at("k"),
              (std::vector<std::string>{".amdhsa_next_free_sgpr 104", "; SHARED_VGPR_COUNT 0"}));

    const std::string notes =
        "Displaying notes found in: .note\n  Owner                Data size \tDescription\n"
        "  AMDGPU               0x0000022d\tNT_AMDGPU_METADATA (AMDGPU Metadata)\n    AMDGPU Metadata:\n"
        "        ---\namdhsa.kernels:\n  - .name:           k\namdhsa.version:\n  - 1\n  - 2\n...\n";
    EXPECT_EQ(extract_metadata_yaml(notes).value(),
              "---\namdhsa.kernels:\n  - .name:           k\namdhsa.version:\n  - 1\n  - 2\n...\n");
    EXPECT_FALSE(extract_metadata_yaml("Displaying notes found in: .note\n").has_value());
}

TEST(DescriptorFixups, DropsXnackMaskAddsUserSgprCountFixesSgprs) {
    const AmdgpuTarget t = *decode_target(0x54f);
    KernelDescriptorFields f;
    f.rsrc1 = 12u << 6;  // granulated SGPR count 12
    f.rsrc2 = 8u << 1;   // USER_SGPR_COUNT 8
    std::string why;
    const auto lines = fix_descriptor_block(
        {".amdhsa_reserve_vcc 0", ".amdhsa_reserve_xnack_mask 1", ".amdhsa_next_free_sgpr 104",
         "; IMAGE_OP 0", ".amdhsa_user_sgpr_kernarg_segment_ptr 1"},
        f, t, &why);
    EXPECT_TRUE(why.empty()) << why;
    EXPECT_EQ(lines, (std::vector<std::string>{".amdhsa_reserve_vcc 0", ".amdhsa_next_free_sgpr 98",
                                               ".amdhsa_user_sgpr_count 8",
                                               ".amdhsa_user_sgpr_kernarg_segment_ptr 1"}));
}

TEST(DescriptorFixups, FieldWithoutDirectiveFallsBackToBytes) {
    const AmdgpuTarget t = *decode_target(0x041);
    std::string why;
    const auto lines = fix_descriptor_block({".amdhsa_next_free_sgpr 8", "; TRAP_ON_START 1"}, {}, t, &why);
    EXPECT_TRUE(lines.empty());
    EXPECT_NE(why.find("TRAP_ON_START"), std::string::npos);
}

TEST(AsmSymbol, QuotesOnlyWhenNeeded) {
    EXPECT_EQ(asm_symbol("kern_a"), "kern_a");
    EXPECT_EQ(asm_symbol("_Z3fooPf.kd"), "_Z3fooPf.kd");
    EXPECT_EQ(asm_symbol("a b"), "\"a b\"");
    EXPECT_EQ(asm_symbol("9lives"), "\"9lives\"");
}

TEST(Msgpack, ReadsKernelList) {
    // {"amdhsa.kernels": [{".name": "k", ".symbol": "k.kd"}], "amdhsa.target": "t"}
    std::vector<uint8_t> b = {0x82, 0xae};
    const std::string key = "amdhsa.kernels";
    b.insert(b.end(), key.begin(), key.end());
    b.push_back(0x91);
    b.push_back(0x82);
    for (const std::string s : {".name", "k", ".symbol", "k.kd"}) {
        b.push_back(static_cast<uint8_t>(0xa0 | s.size()));
        b.insert(b.end(), s.begin(), s.end());
    }
    const std::string tkey = "amdhsa.target";
    b.push_back(static_cast<uint8_t>(0xa0 | tkey.size()));
    b.insert(b.end(), tkey.begin(), tkey.end());
    b.push_back(0xa1);
    b.push_back('t');
    const auto meta = read_amdgpu_metadata(parse_msgpack(b.data(), b.size(), "test"));
    EXPECT_EQ(meta.target, "t");
    ASSERT_EQ(meta.kernels.size(), 1u);
    EXPECT_EQ(meta.kernels[0].name, "k");
    EXPECT_EQ(meta.kernels[0].symbol, "k.kd");
}

TEST(Msgpack, RejectsHostileInput) {
    const std::vector<uint8_t> huge_array = {0xdd, 0xff, 0xff, 0xff, 0xff};  // 4G elements, no bytes
    EXPECT_THROW(parse_msgpack(huge_array.data(), huge_array.size(), "t"), Co2asmError);
    const std::vector<uint8_t> deep(100000, 0x91);  // [[[[...]]]]
    EXPECT_THROW(parse_msgpack(deep.data(), deep.size(), "t"), Co2asmError);
    const std::vector<uint8_t> cut = {0xdb, 0x00, 0x00, 0x10, 0x00, 'a'};
    EXPECT_THROW(parse_msgpack(cut.data(), cut.size(), "t"), Co2asmError);
    const std::vector<uint8_t> reserved = {0xc1};
    EXPECT_THROW(parse_msgpack(reserved.data(), reserved.size(), "t"), Co2asmError);
}

namespace {

// A minimal ELF64 header with `shnum` section headers at `shoff`.
std::vector<uint8_t> elf_header(uint16_t machine, uint64_t shoff, uint16_t shnum) {
    std::vector<uint8_t> b(64, 0);
    const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 64, 4};
    std::memcpy(b.data(), ident, sizeof ident);
    std::memcpy(&b[18], &machine, 2);
    std::memcpy(&b[40], &shoff, 8);
    const uint16_t shentsize = 64;
    std::memcpy(&b[58], &shentsize, 2);
    std::memcpy(&b[60], &shnum, 2);
    return b;
}

std::string error_of(const std::vector<uint8_t>& bytes) {
    try {
        ElfFile::parse(bytes, "x.co");
    } catch (const Co2asmError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(ElfReader, RejectsHostileHeadersWithOneLineErrors) {
    EXPECT_NE(error_of({}).find("not an ELF"), std::string::npos);
    EXPECT_NE(error_of({'h', 'e', 'l', 'l', 'o'}).find("not an ELF"), std::string::npos);
    EXPECT_NE(error_of({0x7f, 'E', 'L', 'F', 2, 1}).find("truncated"), std::string::npos);
    auto b = elf_header(kEmAmdgpu, 0, 0);
    b[4] = 1;  // ELFCLASS32
    EXPECT_NE(error_of(b).find("64-bit"), std::string::npos);
    EXPECT_NE(error_of(elf_header(kEmAmdgpu, 0, 0)).find("no section headers"), std::string::npos);
    EXPECT_NE(error_of(elf_header(kEmAmdgpu, 0xffffffffffffff00ull, 3)).find("truncated"), std::string::npos);
    EXPECT_NE(error_of(elf_header(kEmAmdgpu, 64, 60000)).find("truncated"), std::string::npos);
    // One section header whose name table index points nowhere.
    auto c = elf_header(kEmAmdgpu, 64, 1);
    c.resize(128, 0);
    c[62] = 5;  // e_shstrndx = 5 with one section
    EXPECT_NE(error_of(c).find("out of range"), std::string::npos);
    for (const std::string& msg : {error_of({}), error_of(c)}) EXPECT_EQ(msg.find('\n'), std::string::npos);
}

TEST(ElfReader, ReadsSectionsSymbolsAndNotesOfASyntheticFile) {
    // Layout: header | shstrtab @0x40 | note @0x80 | symtab @0xa0 | strtab @0xd0 | shdrs @0x100
    std::vector<uint8_t> b = elf_header(kEmAmdgpu, 0x100, 5);
    b.resize(0x100 + 5 * 64, 0);
    const char shstr[] = "\0.shstrtab\0.note\0.symtab\0.strtab";
    std::memcpy(&b[0x40], shstr, sizeof shstr);
    // note: namesz 7 ("AMDGPU\0"), descsz 2, type 32
    const uint32_t note_hdr[3] = {7, 2, 32};
    std::memcpy(&b[0x80], note_hdr, 12);
    std::memcpy(&b[0x8c], "AMDGPU", 7);
    b[0x94] = 0x80;  // fixmap {}
    b[0x95] = 0xc0;
    // symtab: null symbol + "k.kd" OBJECT GLOBAL at 0x540 size 64
    b[0xb8] = 1;  // st_name -> "k.kd"
    b[0xb8 + 4] = (kStbGlobal << 4) | kSttObject;
    const uint64_t value = 0x540;
    const uint64_t size = 64;
    std::memcpy(&b[0xb8 + 8], &value, 8);
    std::memcpy(&b[0xb8 + 16], &size, 8);
    std::memcpy(&b[0xd0], "\0k.kd", 6);
    auto shdr = [&](int i, uint32_t name, uint32_t type, uint64_t off, uint64_t sz, uint32_t link,
                    uint64_t entsize) {
        uint8_t* p = &b[0x100 + i * 64];
        std::memcpy(p, &name, 4);
        std::memcpy(p + 4, &type, 4);
        std::memcpy(p + 24, &off, 8);
        std::memcpy(p + 32, &sz, 8);
        std::memcpy(p + 40, &link, 4);
        const uint64_t align = 4;
        std::memcpy(p + 48, &align, 8);
        std::memcpy(p + 56, &entsize, 8);
    };
    shdr(1, 1, 3, 0x40, sizeof shstr, 0, 0);
    shdr(2, 11, kShtNote, 0x80, 0x18, 0, 0);
    shdr(3, 17, kShtSymtab, 0xa0, 48, 4, 24);
    shdr(4, 25, 3, 0xd0, 6, 0, 0);
    b[62] = 1;  // e_shstrndx
    const ElfFile elf = ElfFile::parse(b, "synthetic");
    ASSERT_EQ(elf.sections().size(), 5u);
    EXPECT_EQ(elf.sections()[2].name, ".note");
    ASSERT_EQ(elf.symbols().size(), 2u);
    EXPECT_EQ(elf.symbols()[1].name, "k.kd");
    EXPECT_EQ(elf.symbols()[1].value, 0x540u);
    ASSERT_EQ(elf.notes().size(), 1u);
    EXPECT_EQ(elf.notes()[0].owner, "AMDGPU");
    EXPECT_EQ(elf.notes()[0].type, 32u);
    EXPECT_EQ(elf.note_desc(elf.notes()[0]).size, 2u);
    // A note whose descriptor runs past its section is refused.
    const uint32_t bad_desc = 0x1000;
    std::memcpy(&b[0x84], &bad_desc, 4);
    EXPECT_NE(error_of(b).find("note descriptor"), std::string::npos);
}

TEST(CodeByteDiff, CountsOnlyMfmaScaleBits13And14AsDontCare) {
    ElfSection text;
    text.addr = 0x1000;
    text.size = 24;
    // v_mfma_scale (16 bytes, first dword D3AC0000) + s_nop 0 + s_endpgm
    const uint32_t orig_words[6] = {0xD3AC0000, 0x00022B14, 0xD3AD0800, 0x04021904, 0xBF800000, 0xBF810000};
    std::vector<DisasmInstruction> insns = {
        {0x1000, "v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v20, v21", 16},
        {0x1010, "s_nop 0", 4},
        {0x1014, "s_endpgm", 4}};
    uint32_t rebuilt_words[6];
    std::memcpy(rebuilt_words, orig_words, sizeof orig_words);
    rebuilt_words[0] |= 0x6000;  // bits 13 and 14
    ByteView a{reinterpret_cast<const uint8_t*>(orig_words), 24};
    ByteView b{reinterpret_cast<const uint8_t*>(rebuilt_words), 24};
    CodeByteDiff d = diff_code_bytes(text, a, b, insns);
    EXPECT_EQ(d.dont_care_bits, 2u);
    EXPECT_EQ(d.dont_care_instructions, 1u);
    EXPECT_EQ(d.other_bytes, 0u);

    rebuilt_words[0] |= 0x1000;  // bit 12 matters
    d = diff_code_bytes(text, a, b, insns);
    EXPECT_EQ(d.other_bytes, 1u);
    EXPECT_EQ(d.first_other_address, 0x1001u);

    std::memcpy(rebuilt_words, orig_words, sizeof orig_words);
    rebuilt_words[4] = 0xBF800001;  // s_nop 1: a real difference
    d = diff_code_bytes(text, a, b, insns);
    EXPECT_EQ(d.dont_care_bits, 0u);
    EXPECT_EQ(d.other_bytes, 1u);
    EXPECT_EQ(d.other_instructions, (std::set<uint64_t>{0x1010}));

    // The same bits in a dword that is not a v_mfma_scale first dword are real.
    std::memcpy(rebuilt_words, orig_words, sizeof orig_words);
    rebuilt_words[2] |= 0x6000;
    d = diff_code_bytes(text, a, b, insns);
    EXPECT_EQ(d.dont_care_bits, 0u);
    EXPECT_EQ(d.other_bytes, 1u);
}

TEST(ElfReader, ManySymbolsSharingOneLongNameAreRefused) {
    // shstrtab @0x40 | strtab (one 256 KiB name) @0x100 | symtab (200 symbols) | section headers
    const std::string long_name(256 * 1024, 'x');
    const uint64_t strtab_off = 0x100;
    const uint64_t strtab_size = long_name.size() + 2;
    const uint64_t symtab_off = (strtab_off + strtab_size + 7) / 8 * 8;
    const uint64_t symtab_size = 200 * 24;
    const uint64_t shoff = (symtab_off + symtab_size + 7) / 8 * 8;
    std::vector<uint8_t> b = elf_header(kEmAmdgpu, shoff, 4);
    b.resize(shoff + 4 * 64, 0);
    const char shstr[] = "\0.shstrtab\0.symtab\0.strtab";
    std::memcpy(&b[0x40], shstr, sizeof shstr);
    std::memcpy(&b[strtab_off + 1], long_name.data(), long_name.size());
    for (int i = 1; i < 200; ++i) b[symtab_off + i * 24] = 1;  // every symbol is named "xxx...x"
    auto shdr = [&](int i, uint32_t name, uint32_t type, uint64_t off, uint64_t sz, uint32_t link,
                    uint64_t entsize) {
        uint8_t* p = &b[shoff + i * 64];
        std::memcpy(p, &name, 4);
        std::memcpy(p + 4, &type, 4);
        std::memcpy(p + 24, &off, 8);
        std::memcpy(p + 32, &sz, 8);
        std::memcpy(p + 40, &link, 4);
        std::memcpy(p + 56, &entsize, 8);
    };
    shdr(1, 1, 3, 0x40, sizeof shstr, 0, 0);
    shdr(2, 11, kShtSymtab, symtab_off, symtab_size, 3, 24);
    shdr(3, 19, 3, strtab_off, strtab_size, 0, 0);
    b[62] = 1;
    // 199 x 256 KiB = 50 MiB of names from a 260 KiB file: refused, not allocated.
    EXPECT_NE(error_of(b).find("implausible size"), std::string::npos);
    // The same file with 10 such symbols is fine.
    for (int i = 11; i < 200; ++i) b[symtab_off + i * 24] = 0;
    const ElfFile elf = ElfFile::parse(b, "ten");
    EXPECT_EQ(elf.symbols()[10].name.size(), long_name.size());
}

TEST(Msgpack, BoundsTheNumberOfValues) {
    std::vector<uint8_t> b = {0xdd, 0x00, 0x30, 0x00, 0x00};  // array of 3M nils
    b.resize(b.size() + 0x300000, 0xc0);
    EXPECT_THROW(parse_msgpack(b.data(), b.size(), "t"), Co2asmError);
    b = {0xdc, 0x10, 0x00};  // 4096 nils: fine
    b.resize(b.size() + 0x1000, 0xc0);
    EXPECT_EQ(parse_msgpack(b.data(), b.size(), "t").items.size(), 4096u);
}
