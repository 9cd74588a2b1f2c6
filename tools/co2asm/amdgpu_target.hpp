// AMDGPU facts co2asm decides with: e_flags -> processor and target id (xnack/sramecc), ELF ABI
// version -> code object version, the kernel descriptor layout, the SGPR accounting the assembler
// applies to `.amdhsa_next_free_sgpr`, and the MFMA-scale don't-care bits. Sources: LLVM's
// AMDGPUUsage ("ELF Header", "Kernel Descriptor") and ../shared/reference/amdgpu-roundtrip-llvm22.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace co2asm {

// EF_AMDGPU_FEATURE_{XNACK,SRAMECC}_V4 states (code object v4 and later).
enum class FeatureSetting { Unsupported, Any, Off, On };

struct AmdgpuTarget {
    std::string processor;  // "gfx950", "gfx9-4-generic", ...
    uint32_t mach = 0;      // EF_AMDGPU_MACH
    FeatureSetting xnack = FeatureSetting::Unsupported;
    FeatureSetting sramecc = FeatureSetting::Unsupported;
    int major = 0;                          // GFX major version: 9 for gfx950, 11 for gfx1100
    bool architected_flat_scratch = false;  // gfx940 family: flat scratch always on

    // The clang -mcpu value: processor, then ":sramecc±", then ":xnack±" (clang's order); ANY
    // settings are omitted.
    std::string target_id() const;
};

// Decodes e_flags; nullopt when EF_AMDGPU_MACH is not a known AMDGCN processor.
std::optional<AmdgpuTarget> decode_target(uint32_t e_flags);
// Every (EF_AMDGPU_MACH, processor) pair decode_target knows, in table order.
std::vector<std::pair<uint32_t, std::string>> known_processors();
// Parses a target id such as "gfx950:sramecc+:xnack-" (for --mcpu); nullopt when malformed.
std::optional<AmdgpuTarget> parse_target_id(const std::string& target_id);
// Code object version for an ELF EI_ABIVERSION of an ELFOSABI_AMDGPU_HSA object (ABI 2/3/4 =
// v4/v5/v6), or nullopt outside what clang-22 can produce.
std::optional<int> code_object_version(uint8_t abi_version);

// ---- kernel descriptor (64 bytes, AMDGPUUsage "Kernel Descriptor") -----------------------------
constexpr uint64_t kKernelDescriptorSize = 64;
constexpr unsigned kKdEntryOffset = 16;  // kernel_code_entry_byte_offset, int64, relative to the kd
constexpr unsigned kKdRsrc3 = 44;
constexpr unsigned kKdRsrc1 = 48;
constexpr unsigned kKdRsrc2 = 52;
constexpr unsigned kKdProperties = 56;

struct KernelDescriptorFields {
    uint32_t rsrc1 = 0;
    uint32_t rsrc2 = 0;
    uint32_t rsrc3 = 0;
    int64_t entry_offset = 0;
    // COMPUTE_PGM_RSRC1 bits 9:6.
    unsigned granulated_wavefront_sgpr_count() const { return (rsrc1 >> 6) & 0xf; }
    // COMPUTE_PGM_RSRC2 bits 5:1; objdump does not print it.
    unsigned user_sgpr_count() const { return (rsrc2 >> 1) & 0x1f; }
};

KernelDescriptorFields decode_kernel_descriptor(const uint8_t* kd64);
// Field name for a byte offset in the descriptor, for difference reports.
const char* kernel_descriptor_field(unsigned byte_offset);

// ---- .amdhsa_next_free_sgpr ------------------------------------------------------------------
// What the assembler adds to .amdhsa_next_free_sgpr before granulating (LLVM getNumExtraSGPRs):
// gfx8/9: 6 with flat scratch (always on gfx940+), else 4 with the xnack mask, else 2 with VCC;
// gfx6/7: 4 with flat scratch, else 2 with VCC; gfx10+: the field is not used.
unsigned extra_sgprs(const AmdgpuTarget& target, bool vcc, bool flat_scratch, bool xnack_mask);
// The encoded GRANULATED_WAVEFRONT_SGPR_COUNT for `sgprs` SGPRs (granule 8, at least one).
unsigned granulate_sgprs(unsigned sgprs);
// Highest SGPR count `.amdhsa_next_free_sgpr` accepts (LLVM getAddressableNumSGPRs).
unsigned addressable_sgprs(const AmdgpuTarget& target);

struct SgprDirectives {
    unsigned next_free_sgpr = 0;
    bool reserve_vcc = false;
    bool reserve_flat_scratch = false;
};

// Directive values that make the assembler reproduce granule `granule` when the xnack-mask
// directive is left out (it then follows the target id: ANY/ON reserve the mask). Starts from what
// objdump printed (`vcc`, `flat_scratch`) and turns the reservations on only when the granule is
// out of reach otherwise; nullopt when no combination reaches it. On gfx10+ the granule is always
// 0 and `printed_next_free_sgpr` is kept.
std::optional<SgprDirectives> fix_next_free_sgpr(const AmdgpuTarget& target, unsigned granule, bool vcc,
                                                 bool flat_scratch, bool flat_scratch_directive,
                                                 unsigned printed_next_free_sgpr);

// ---- MFMA-scale don't-care bits ----------------------------------------------------------------
// v_mfma_scale_* (gfx950) is a 16-byte VOP3PX2 pair whose first dword starts 0xD3AC; its bits 13
// and 14 (src2 op_sel/op_sel_hi of the scale op) are ignored by hardware and by the disassembler,
// and LLVM 22 always encodes them 0 (reference doc; seen as 508 differing bytes in aiter's
// 256x256 kernel). Returns the don't-care mask for a first dword, 0 when it has none.
inline uint32_t mfma_scale_dont_care_mask(uint32_t first_dword) {
    return (first_dword >> 16) == 0xD3AC ? 0x6000u : 0u;
}

}  // namespace co2asm
