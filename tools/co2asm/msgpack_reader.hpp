// Minimal MessagePack decoder for the NT_AMDGPU_METADATA note: enough to read the kernel list
// (`amdhsa.kernels[].{.name,.symbol}`) and `amdhsa.target`. Nesting depth and element counts
// are bounded by the input size, so hostile notes fail with Co2asmError instead of recursing or
// allocating without limit (fuzzed: fuzz/co2asm/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace co2asm {

struct MsgValue {
    enum class Kind { Nil, Bool, Int, Float, Str, Bin, Array, Map, Ext };
    Kind kind = Kind::Nil;
    int64_t int_value = 0;  // Bool and Int (unsigned values above INT64_MAX are clamped)
    double float_value = 0.0;
    std::string str;                                     // Str, Bin, Ext payload
    std::vector<MsgValue> items;                         // Array
    std::vector<std::pair<MsgValue, MsgValue>> entries;  // Map, in file order

    // Map lookup by string key; nullptr when absent or not a map.
    const MsgValue* find(const std::string& key) const;
};

// Decodes one value from the start of `data`; throws Co2asmError naming `label` on bad input.
MsgValue parse_msgpack(const uint8_t* data, size_t size, const std::string& label);

struct KernelMetadata {
    std::string name;    // .name
    std::string symbol;  // .symbol, the kernel descriptor symbol (NAME.kd)
};

struct AmdgpuMetadata {
    std::string target;  // amdhsa.target, empty if absent
    std::vector<KernelMetadata> kernels;
};

// Reads the kernel list out of a decoded metadata document.
AmdgpuMetadata read_amdgpu_metadata(const MsgValue& root);

}  // namespace co2asm
