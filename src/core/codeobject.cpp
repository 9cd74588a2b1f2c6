// Code-object identification from the file's own bytes: ELF header fields for cubins and AMDGPU
// objects, the .target directive for PTX. Facts used (checked with nvcc 13.0 here): cubins have
// e_machine 190 (EM_CUDA); with EI_ABIVERSION >= 8 the SM number sits in e_flags bits 8..15
// (sm_90a -> 0x6005a04, sm_80 -> 0x6005004), older cubins keep it in bits 0..7.
#include "f4gemm/codeobject.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "f4gemm/error.hpp"

namespace f4gemm {

namespace {

constexpr uint16_t kEmCuda = 190;
constexpr uint16_t kEmAmdgpu = 224;

std::string amdgpu_mach_name(uint32_t mach) {
    // EF_AMDGPU_MACH values from LLVM's ELF.h, the ones f4gemm users meet.
    switch (mach) {
        case 0x02f:
            return "gfx906";
        case 0x030:
            return "gfx908";
        case 0x03f:
            return "gfx90a";
        case 0x04c:
            return "gfx942";
        case 0x04f:
            return "gfx950";
        case 0x041:
            return "gfx1100";
        case 0x048:
            return "gfx1200";
        default: {
            std::ostringstream s;
            s << "amdgcn-mach-0x" << std::hex << mach;
            return s.str();
        }
    }
}

}  // namespace

CodeObjectInfo inspect_code_object(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error(Errc::NotFound, "no such code object: " + path);
    std::vector<char> head(64, 0);
    f.read(head.data(), 64);
    const std::streamsize got = f.gcount();
    CodeObjectInfo info;
    if (got >= 4 && std::memcmp(head.data(),
                                "\x7f"
                                "ELF",
                                4) == 0) {
        if (got < 64 || head[4] != 2)
            throw Error(Errc::BadInput, "code object " + path + " is a truncated or 32-bit ELF: rebuild it");
        uint16_t machine;
        uint32_t flags;
        std::memcpy(&machine, head.data() + 18, 2);
        std::memcpy(&flags, head.data() + 48, 4);
        const int abi = static_cast<unsigned char>(head[8]);
        if (machine == kEmCuda) {
            info.kind = CodeObjectKind::Cubin;
            info.sm = abi >= 8 ? int((flags >> 8) & 0xff) : int(flags & 0xff);
            info.target = "sm_" + std::to_string(info.sm);
        } else if (machine == kEmAmdgpu) {
            info.kind = CodeObjectKind::Amdgpu;
            info.target = amdgpu_mach_name(flags & 0xff);
        }
        return info;
    }
    // PTX is text: find ".target sm_XX[a|f]".
    f.clear();
    f.seekg(0);
    std::string line;
    static const std::regex target_re(R"(^\s*\.target\s+sm_(\d+)([af]?))");
    for (int i = 0; i < 200 && std::getline(f, line); ++i) {
        std::smatch mm;
        if (std::regex_search(line, mm, target_re)) {
            info.kind = CodeObjectKind::Ptx;
            info.sm = std::stoi(mm[1].str());
            info.arch_specific = !mm[2].str().empty();
            info.target = "sm_" + mm[1].str() + mm[2].str();
            return info;
        }
    }
    return info;
}

bool cuda_can_run(const CodeObjectInfo& info, int cc_major, int cc_minor, std::string* why) {
    const int dev = cc_major * 10 + cc_minor;
    const std::string dev_name = "sm_" + std::to_string(dev);
    auto refuse = [&](const std::string& msg) {
        if (why) *why = msg;
        return false;
    };
    switch (info.kind) {
        case CodeObjectKind::Amdgpu:
            return refuse("code object is for AMDGPU " + info.target + ", the device is CUDA " + dev_name);
        case CodeObjectKind::Unknown:
            return refuse("code object is neither a cubin nor PTX");
        case CodeObjectKind::Cubin:
            // SASS runs only within its major version, on the same or a later minor. Our sm_90a
            // cubins carry arch-specific instructions (wgmma) and need exactly 9.0.
            if (info.sm / 10 != cc_major || info.sm % 10 > cc_minor)
                return refuse("cubin is built for " + info.target + ", the device is " + dev_name);
            return true;
        case CodeObjectKind::Ptx:
            if (info.arch_specific ? info.sm != dev : info.sm > dev)
                return refuse("PTX targets " + info.target + ", the device is " + dev_name);
            return true;
    }
    return refuse("unknown code object");
}

}  // namespace f4gemm
