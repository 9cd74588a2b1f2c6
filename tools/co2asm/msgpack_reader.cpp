// MessagePack decoding for the AMDGPU metadata note (see msgpack_reader.hpp). Format reference:
// the MessagePack specification (msgpack/msgpack spec.md), all big-endian.
#include "msgpack_reader.hpp"

#include <cstring>

#include <fmt/format.h>

#include "co2asm_error.hpp"

namespace co2asm {
namespace {

// The metadata documents LLVM writes nest 4-5 levels; 64 leaves room and bounds recursion.
constexpr int kMaxDepth = 64;
// A decoded value takes ~150 bytes for one input byte at worst; capping the count bounds memory at
// a few hundred MB whatever the note claims (real metadata has a few thousand values).
constexpr size_t kMaxValues = size_t{1} << 21;

class Reader {
public:
    Reader(const uint8_t* data, size_t size, const std::string& label)
        : data_(data), size_(size), label_(label) {}

    MsgValue value(int depth) {
        if (depth > kMaxDepth) fail("nesting deeper than 64 levels");
        if (++values_ > kMaxValues) fail("more than 2M values");
        const uint8_t tag = byte();
        MsgValue v;
        if (tag <= 0x7f) return integer(tag);
        if (tag >= 0xe0) return integer(static_cast<int8_t>(tag));
        if ((tag & 0xf0) == 0x80) return map(tag & 0x0f, depth);
        if ((tag & 0xf0) == 0x90) return array(tag & 0x0f, depth);
        if ((tag & 0xe0) == 0xa0) return bytes(MsgValue::Kind::Str, tag & 0x1f);
        switch (tag) {
            case 0xc0:
                return v;
            case 0xc2:
            case 0xc3:
                v.kind = MsgValue::Kind::Bool;
                v.int_value = tag == 0xc3;
                return v;
            case 0xc4:
                return bytes(MsgValue::Kind::Bin, big(1));
            case 0xc5:
                return bytes(MsgValue::Kind::Bin, big(2));
            case 0xc6:
                return bytes(MsgValue::Kind::Bin, big(4));
            case 0xc7: {
                const uint64_t n = big(1);
                big(1);
                return bytes(MsgValue::Kind::Ext, n);
            }
            case 0xc8: {
                const uint64_t n = big(2);
                big(1);
                return bytes(MsgValue::Kind::Ext, n);
            }
            case 0xc9: {
                const uint64_t n = big(4);
                big(1);
                return bytes(MsgValue::Kind::Ext, n);
            }
            case 0xca: {
                const auto bits = static_cast<uint32_t>(big(4));
                float f;
                static_assert(sizeof f == sizeof bits, "float32");
                std::memcpy(&f, &bits, sizeof f);
                v.kind = MsgValue::Kind::Float;
                v.float_value = f;
                return v;
            }
            case 0xcb: {
                const uint64_t bits = big(8);
                double d;
                std::memcpy(&d, &bits, sizeof d);
                v.kind = MsgValue::Kind::Float;
                v.float_value = d;
                return v;
            }
            case 0xcc:
                return integer(static_cast<int64_t>(big(1)));
            case 0xcd:
                return integer(static_cast<int64_t>(big(2)));
            case 0xce:
                return integer(static_cast<int64_t>(big(4)));
            case 0xcf: {
                const uint64_t u = big(8);
                return integer(u > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(u));
            }
            case 0xd0:
                return integer(static_cast<int8_t>(big(1)));
            case 0xd1:
                return integer(static_cast<int16_t>(big(2)));
            case 0xd2:
                return integer(static_cast<int32_t>(big(4)));
            case 0xd3:
                return integer(static_cast<int64_t>(big(8)));
            case 0xd4:
                big(1);
                return bytes(MsgValue::Kind::Ext, 1);
            case 0xd5:
                big(1);
                return bytes(MsgValue::Kind::Ext, 2);
            case 0xd6:
                big(1);
                return bytes(MsgValue::Kind::Ext, 4);
            case 0xd7:
                big(1);
                return bytes(MsgValue::Kind::Ext, 8);
            case 0xd8:
                big(1);
                return bytes(MsgValue::Kind::Ext, 16);
            case 0xd9:
                return bytes(MsgValue::Kind::Str, big(1));
            case 0xda:
                return bytes(MsgValue::Kind::Str, big(2));
            case 0xdb:
                return bytes(MsgValue::Kind::Str, big(4));
            case 0xdc:
                return array(big(2), depth);
            case 0xdd:
                return array(big(4), depth);
            case 0xde:
                return map(big(2), depth);
            case 0xdf:
                return map(big(4), depth);
            default:
                fail(fmt::format("reserved type byte {:#04x} at offset {}", tag, pos_ - 1));
        }
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw Co2asmError(fmt::format("{}: AMDGPU metadata note is not valid MessagePack: {}", label_, why),
                          "the metadata note is damaged; rebuild or copy the code object again");
    }

    uint8_t byte() {
        if (pos_ >= size_) fail("ends in the middle of a value");
        return data_[pos_++];
    }

    uint64_t big(int count) {
        uint64_t v = 0;
        for (int i = 0; i < count; ++i) v = (v << 8) | byte();
        return v;
    }

    static MsgValue integer(int64_t value) {
        MsgValue v;
        v.kind = MsgValue::Kind::Int;
        v.int_value = value;
        return v;
    }

    MsgValue bytes(MsgValue::Kind kind, uint64_t count) {
        if (count > size_ - pos_) fail("a string runs past the end of the note");
        MsgValue v;
        v.kind = kind;
        v.str.assign(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(count));
        pos_ += static_cast<size_t>(count);
        return v;
    }

    // Every element takes at least one byte, so a count above the bytes left is malformed; checking
    // first keeps reserve() bounded by the input size.
    void check_count(uint64_t elements) const {
        if (elements > size_ - pos_) fail("a container claims more elements than bytes remain");
    }

    MsgValue array(uint64_t count, int depth) {
        check_count(count);
        MsgValue v;
        v.kind = MsgValue::Kind::Array;
        v.items.reserve(static_cast<size_t>(count));
        for (uint64_t i = 0; i < count; ++i) v.items.push_back(value(depth + 1));
        return v;
    }

    MsgValue map(uint64_t count, int depth) {
        check_count(count);
        MsgValue v;
        v.kind = MsgValue::Kind::Map;
        v.entries.reserve(static_cast<size_t>(count));
        for (uint64_t i = 0; i < count; ++i) {
            MsgValue key = value(depth + 1);
            MsgValue val = value(depth + 1);
            v.entries.emplace_back(std::move(key), std::move(val));
        }
        return v;
    }

    const uint8_t* data_;
    size_t size_;
    size_t pos_ = 0;
    size_t values_ = 0;
    const std::string& label_;
};

}  // namespace

const MsgValue* MsgValue::find(const std::string& key) const {
    if (kind != Kind::Map) return nullptr;
    for (const auto& [k, v] : entries) {
        if (k.kind == Kind::Str && k.str == key) return &v;
    }
    return nullptr;
}

MsgValue parse_msgpack(const uint8_t* data, size_t size, const std::string& label) {
    Reader reader(data, size, label);
    return reader.value(0);
}

AmdgpuMetadata read_amdgpu_metadata(const MsgValue& root) {
    AmdgpuMetadata meta;
    if (const MsgValue* target = root.find("amdhsa.target"); target && target->kind == MsgValue::Kind::Str) {
        meta.target = target->str;
    }
    const MsgValue* kernels = root.find("amdhsa.kernels");
    if (kernels == nullptr || kernels->kind != MsgValue::Kind::Array) return meta;
    for (const auto& k : kernels->items) {
        KernelMetadata km;
        if (const MsgValue* name = k.find(".name"); name && name->kind == MsgValue::Kind::Str)
            km.name = name->str;
        if (const MsgValue* sym = k.find(".symbol"); sym && sym->kind == MsgValue::Kind::Str)
            km.symbol = sym->str;
        if (!km.name.empty() || !km.symbol.empty()) meta.kernels.push_back(std::move(km));
    }
    return meta;
}

}  // namespace co2asm
