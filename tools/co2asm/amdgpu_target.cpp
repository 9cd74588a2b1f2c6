// AMDGPU target, descriptor and SGPR-accounting facts (see amdgpu_target.hpp). The processor table
// is LLVM's EF_AMDGPU_MACH list (llvm/BinaryFormat/ELF.h); tests check it against llvm-readelf-22.
#include "amdgpu_target.hpp"

#include <algorithm>
#include <cstring>

namespace co2asm {
namespace {

struct MachEntry {
    uint32_t mach;
    const char* processor;
    int major;
    bool architected_flat_scratch;
};

constexpr MachEntry kMachTable[] = {
    {0x020, "gfx600", 6, false},
    {0x021, "gfx601", 6, false},
    {0x03a, "gfx602", 6, false},
    {0x022, "gfx700", 7, false},
    {0x023, "gfx701", 7, false},
    {0x024, "gfx702", 7, false},
    {0x025, "gfx703", 7, false},
    {0x026, "gfx704", 7, false},
    {0x03b, "gfx705", 7, false},
    {0x028, "gfx801", 8, false},
    {0x029, "gfx802", 8, false},
    {0x02a, "gfx803", 8, false},
    {0x03c, "gfx805", 8, false},
    {0x02b, "gfx810", 8, false},
    {0x02c, "gfx900", 9, false},
    {0x02d, "gfx902", 9, false},
    {0x02e, "gfx904", 9, false},
    {0x02f, "gfx906", 9, false},
    {0x030, "gfx908", 9, false},
    {0x031, "gfx909", 9, false},
    {0x03f, "gfx90a", 9, false},
    {0x032, "gfx90c", 9, false},
    {0x040, "gfx940", 9, true},
    {0x04b, "gfx941", 9, true},
    {0x04c, "gfx942", 9, true},
    {0x04f, "gfx950", 9, true},
    {0x033, "gfx1010", 10, false},
    {0x034, "gfx1011", 10, false},
    {0x035, "gfx1012", 10, false},
    {0x042, "gfx1013", 10, false},
    {0x036, "gfx1030", 10, false},
    {0x037, "gfx1031", 10, false},
    {0x038, "gfx1032", 10, false},
    {0x039, "gfx1033", 10, false},
    {0x03e, "gfx1034", 10, false},
    {0x03d, "gfx1035", 10, false},
    {0x045, "gfx1036", 10, false},
    {0x041, "gfx1100", 11, false},
    {0x046, "gfx1101", 11, false},
    {0x047, "gfx1102", 11, false},
    {0x044, "gfx1103", 11, false},
    {0x043, "gfx1150", 11, false},
    {0x04a, "gfx1151", 11, false},
    {0x055, "gfx1152", 11, false},
    {0x058, "gfx1153", 11, false},
    {0x048, "gfx1200", 12, false},
    {0x04e, "gfx1201", 12, false},
    {0x049, "gfx1250", 12, false},
    {0x05a, "gfx1251", 12, false},
    {0x051, "gfx9-generic", 9, false},
    {0x05f, "gfx9-4-generic", 9, true},
    {0x052, "gfx10-1-generic", 10, false},
    {0x053, "gfx10-3-generic", 10, false},
    {0x054, "gfx11-generic", 11, false},
    {0x059, "gfx12-generic", 12, false},
};

constexpr uint32_t kMachMask = 0x0ff;
constexpr uint32_t kXnackMask = 0x300;
constexpr uint32_t kSrameccMask = 0xc00;

FeatureSetting decode_setting(uint32_t bits) {
    switch (bits) {
        case 1:
            return FeatureSetting::Any;
        case 2:
            return FeatureSetting::Off;
        case 3:
            return FeatureSetting::On;
        default:
            return FeatureSetting::Unsupported;
    }
}

const char* setting_suffix(FeatureSetting s) {
    switch (s) {
        case FeatureSetting::Off:
            return "-";
        case FeatureSetting::On:
            return "+";
        default:
            return nullptr;
    }
}

}  // namespace

std::string AmdgpuTarget::target_id() const {
    std::string id = processor;
    if (const char* s = setting_suffix(sramecc)) id += std::string(":sramecc") + s;
    if (const char* s = setting_suffix(xnack)) id += std::string(":xnack") + s;
    return id;
}

std::optional<AmdgpuTarget> decode_target(uint32_t e_flags) {
    const uint32_t mach = e_flags & kMachMask;
    for (const auto& e : kMachTable) {
        if (e.mach != mach) continue;
        AmdgpuTarget t;
        t.processor = e.processor;
        t.mach = mach;
        t.major = e.major;
        t.architected_flat_scratch = e.architected_flat_scratch;
        t.xnack = decode_setting((e_flags & kXnackMask) >> 8);
        t.sramecc = decode_setting((e_flags & kSrameccMask) >> 10);
        return t;
    }
    return std::nullopt;
}

std::vector<std::pair<uint32_t, std::string>> known_processors() {
    std::vector<std::pair<uint32_t, std::string>> out;
    for (const auto& e : kMachTable) out.emplace_back(e.mach, e.processor);
    return out;
}

std::optional<AmdgpuTarget> parse_target_id(const std::string& target_id) {
    const size_t colon = target_id.find(':');
    const std::string processor = target_id.substr(0, colon);
    std::optional<AmdgpuTarget> target;
    for (const auto& e : kMachTable) {
        if (processor == e.processor) target = decode_target(e.mach);
    }
    if (!target) return std::nullopt;
    std::string rest = colon == std::string::npos ? "" : target_id.substr(colon);
    while (!rest.empty()) {
        const size_t next = rest.find(':', 1);
        const std::string feature = rest.substr(1, next == std::string::npos ? std::string::npos : next - 1);
        rest = next == std::string::npos ? "" : rest.substr(next);
        if (feature.size() < 2) return std::nullopt;
        const char sign = feature.back();
        const std::string name = feature.substr(0, feature.size() - 1);
        if (sign != '+' && sign != '-') return std::nullopt;
        const FeatureSetting s = sign == '+' ? FeatureSetting::On : FeatureSetting::Off;
        if (name == "xnack")
            target->xnack = s;
        else if (name == "sramecc")
            target->sramecc = s;
        else
            return std::nullopt;
    }
    return target;
}

std::optional<int> code_object_version(uint8_t abi_version) {
    if (abi_version >= 2 && abi_version <= 4) return abi_version + 2;
    return std::nullopt;
}

KernelDescriptorFields decode_kernel_descriptor(const uint8_t* kd) {
    auto u32 = [kd](unsigned off) {
        uint32_t v;
        std::memcpy(&v, kd + off, 4);  // little-endian host (x86-64, aarch64)
        return v;
    };
    KernelDescriptorFields f;
    f.rsrc1 = u32(kKdRsrc1);
    f.rsrc2 = u32(kKdRsrc2);
    f.rsrc3 = u32(kKdRsrc3);
    std::memcpy(&f.entry_offset, kd + kKdEntryOffset, 8);
    return f;
}

const char* kernel_descriptor_field(unsigned off) {
    if (off < 4) return "GROUP_SEGMENT_FIXED_SIZE";
    if (off < 8) return "PRIVATE_SEGMENT_FIXED_SIZE";
    if (off < 12) return "KERNARG_SIZE";
    if (off < 16) return "reserved";
    if (off < 24) return "KERNEL_CODE_ENTRY_BYTE_OFFSET";
    if (off < 44) return "reserved";
    if (off < 48) return "COMPUTE_PGM_RSRC3";
    if (off < 52) return "COMPUTE_PGM_RSRC1";
    if (off < 56) return "COMPUTE_PGM_RSRC2";
    if (off < 58) return "KERNEL_CODE_PROPERTIES";
    if (off < 60) return "KERNARG_PRELOAD";
    return "reserved";
}

unsigned extra_sgprs(const AmdgpuTarget& target, bool vcc, bool flat_scratch, bool xnack_mask) {
    if (target.major >= 10) return 0;
    unsigned extra = vcc ? 2 : 0;
    if (target.major < 8) {
        if (flat_scratch) extra = 4;
        return extra;
    }
    if (xnack_mask) extra = 4;
    if (flat_scratch || target.architected_flat_scratch) extra = 6;
    return extra;
}

unsigned granulate_sgprs(unsigned sgprs) {
    const unsigned blocks = std::max(1u, (sgprs + 7) / 8);
    return blocks - 1;
}

unsigned addressable_sgprs(const AmdgpuTarget& target) {
    if (target.major >= 10) return 106;
    if (target.major >= 8) return 102;
    return 104;
}

std::optional<SgprDirectives> fix_next_free_sgpr(const AmdgpuTarget& target, unsigned granule, bool vcc,
                                                 bool flat_scratch, bool flat_scratch_directive,
                                                 unsigned printed_next_free_sgpr) {
    if (target.major >= 10) {
        SgprDirectives d{std::min(printed_next_free_sgpr, addressable_sgprs(target)), vcc, flat_scratch};
        return granule == 0 ? std::optional<SgprDirectives>(d) : std::nullopt;
    }
    const bool xnack_mask = target.xnack == FeatureSetting::Any || target.xnack == FeatureSetting::On;
    struct Choice {
        bool vcc, flat;
    };
    const Choice choices[] = {{vcc, flat_scratch}, {true, flat_scratch}, {vcc, true}, {true, true}};
    for (const auto& c : choices) {
        if (c.flat && !flat_scratch && !flat_scratch_directive) continue;
        const unsigned extra = extra_sgprs(target, c.vcc, c.flat, xnack_mask);
        for (int n = static_cast<int>(addressable_sgprs(target)); n >= 0; --n) {
            if (granulate_sgprs(static_cast<unsigned>(n) + extra) == granule) {
                return SgprDirectives{static_cast<unsigned>(n), c.vcc, c.flat};
            }
        }
    }
    return std::nullopt;
}

}  // namespace co2asm
