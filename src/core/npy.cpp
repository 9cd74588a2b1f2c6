// .npy I/O for the command's real-data paths: reads format 1.0/2.0/3.0 headers (C order, uint8
// or float32), writes format 1.0 byte-identical to numpy 1.24's np.save, atomically (temp file +
// rename). Format per numpy/lib/format.py; every error names the file.
#include "f4gemm/npy.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

#include <unistd.h>

#include "f4gemm/error.hpp"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.cpp stores '<f4' data as raw host bytes: it needs a little-endian host"
#endif

namespace f4gemm {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kArrayAlign = 64;        // numpy's ARRAY_ALIGN
constexpr size_t kGrowthAxisDigits = 21;  // numpy's GROWTH_AXIS_MAX_DIGITS

std::string quoted(const std::string& path) {
    return "'" + path + "'";
}

[[noreturn]] void bad(const std::string& path, const std::string& what) {
    throw Error(Errc::BadInput, "npy file " + quoted(path) + ": " + what);
}

const char* descr_of(NpyDtype d) {
    return d == NpyDtype::U8 ? "|u1" : "<f4";
}
const char* name_of(NpyDtype d) {
    return d == NpyDtype::U8 ? "uint8" : "float32";
}
size_t itemsize(NpyDtype d) {
    return d == NpyDtype::U8 ? 1 : 4;
}

std::string shape_repr(const std::vector<size_t>& shape) {  // Python's repr of the tuple
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

// The header is a Python dict literal with exactly the keys descr, fortran_order and shape,
// e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }. This parser accepts what
// numpy writes (any key order, either quote, trailing commas, spaces, Python 2 'L' suffixes).
class HeaderParser {
public:
    HeaderParser(const std::string& text, const std::string& path) : t_(text), path_(path) {}

    void parse(std::string& descr, bool& fortran, std::vector<size_t>& shape) {
        bool have_descr = false, have_order = false, have_shape = false;
        expect('{');
        for (;;) {
            ws();
            if (peek() == '}') break;
            const std::string key = string_lit("a quoted key");
            ws();
            expect(':');
            ws();
            if (key == "descr") {
                if (peek() != '\'' && peek() != '"')
                    bad(path_,
                        "dtype (got a structured or non-string descr) is not supported: "
                        "want a plain '|u1' (uint8) or '<f4' (float32) array");
                descr = string_lit("the descr string");
                have_descr = true;
            } else if (key == "fortran_order") {
                fortran = boolean();
                have_order = true;
            } else if (key == "shape") {
                shape = tuple();
                have_shape = true;
            } else {
                fail("unexpected key '" + key + "'");
            }
            ws();
            if (peek() == ',')
                ++i_;
            else if (peek() != '}')
                fail("expected ',' or '}'");
        }
        ++i_;
        ws();
        if (i_ != t_.size()) fail("text after the closing '}'");
        if (!have_descr || !have_order || !have_shape)
            fail("missing key (want descr, fortran_order and shape)");
    }

private:
    [[noreturn]] void fail(const std::string& what) {
        bad(path_, "malformed header (" + what + " at offset " + std::to_string(i_) +
                       "): rewrite the file with numpy.save");
    }
    char peek() const { return i_ < t_.size() ? t_[i_] : '\0'; }
    void ws() {
        while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
    }
    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++i_;
    }
    std::string string_lit(const char* what) {
        const char q = peek();
        if (q != '\'' && q != '"') fail(std::string("expected ") + what);
        const size_t end = t_.find(q, i_ + 1);
        if (end == std::string::npos) fail("unterminated string");
        std::string s = t_.substr(i_ + 1, end - i_ - 1);
        i_ = end + 1;
        return s;
    }
    bool boolean() {
        if (t_.compare(i_, 4, "True") == 0) return i_ += 4, true;
        if (t_.compare(i_, 5, "False") == 0) return i_ += 5, false;
        fail("expected True or False");
    }
    std::vector<size_t> tuple() {
        std::vector<size_t> dims;
        expect('(');
        for (;;) {
            ws();
            if (peek() == ')') break;
            if (peek() < '0' || peek() > '9') fail("expected a non-negative integer dimension");
            size_t v = 0;
            while (peek() >= '0' && peek() <= '9') {
                const size_t d = size_t(peek() - '0');
                if (v > (std::numeric_limits<size_t>::max() - d) / 10) fail("dimension too large");
                v = v * 10 + d;
                ++i_;
            }
            if (peek() == 'L') ++i_;
            dims.push_back(v);
            ws();
            if (peek() == ',')
                ++i_;
            else if (peek() != ')')
                fail("expected ',' or ')' in shape");
        }
        ++i_;
        return dims;
    }

    const std::string& t_;
    const std::string& path_;
    size_t i_ = 0;
};

}  // namespace

size_t NpyArray::size() const {
    size_t n = 1;
    for (size_t d : shape) n *= d;
    return n;
}

NpyArray npy_read(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        const int err = errno;
        throw Error(err == ENOENT ? Errc::NotFound : Errc::Io, "cannot open npy file " + quoted(path) + " (" +
                                                                   std::strerror(err) +
                                                                   "): check the path and its permissions");
    }
    // The file's size bounds every length it declares: nothing is allocated from an unchecked
    // header field (a fuzzed v2 header asked for 3.6 GB).
    f.seekg(0, std::ios::end);
    const size_t file_size = size_t(std::max<std::streamoff>(0, f.tellg()));
    f.seekg(0, std::ios::beg);
    char prefix[12];
    if (!f.read(prefix, 8) || std::memcmp(prefix, kMagic, kMagicLen) != 0)
        bad(path, "bad magic (not a .npy file): write it with numpy.save");
    const int major = static_cast<unsigned char>(prefix[6]);
    if (major < 1 || major > 3)
        bad(path, "format version " + std::to_string(major) + "." +
                      std::to_string(static_cast<unsigned char>(prefix[7])) +
                      " is not supported (want 1.0, 2.0 or 3.0): write it with numpy.save");
    const size_t len_bytes = major == 1 ? 2 : 4;
    if (!f.read(prefix + 8, std::streamsize(len_bytes))) bad(path, "truncated header length");
    size_t header_len = 0;
    for (size_t i = 0; i < len_bytes; ++i)
        header_len |= size_t(static_cast<unsigned char>(prefix[8 + i])) << (8 * i);
    if (header_len > file_size - std::min(file_size, 8 + len_bytes))
        bad(path, "truncated header (want " + std::to_string(header_len) + " bytes, the file has " +
                      std::to_string(file_size) + " in all)");
    std::string header(header_len, '\0');
    if (!f.read(&header[0], std::streamsize(header_len)))
        bad(path, "truncated header (want " + std::to_string(header_len) + " bytes)");

    std::string descr;
    bool fortran = false;
    NpyArray a;
    HeaderParser(header, path).parse(descr, fortran, a.shape);
    if (descr == "|u1" || descr == "<u1" || descr == "u1")
        a.dtype = NpyDtype::U8;
    else if (descr == "<f4")
        a.dtype = NpyDtype::F32;
    else
        bad(path, "dtype '" + descr + "' is not supported (want '|u1' uint8 or '<f4' float32): " +
                      "convert with arr.astype(numpy.uint8) or arr.astype('<f4')");
    if (fortran)
        bad(path,
            "fortran_order True is not supported (want C order): save "
            "numpy.ascontiguousarray(arr) instead");

    size_t count = 1;
    for (size_t d : a.shape) {
        if (d != 0 && count > std::numeric_limits<size_t>::max() / 4 / d)
            bad(path, "shape " + shape_repr(a.shape) + " is too large");
        count *= d;
    }
    const size_t nbytes = count * itemsize(a.dtype);
    const size_t data_at = 8 + len_bytes + header_len;
    const size_t have = file_size - std::min(file_size, data_at);
    if (nbytes > have)
        bad(path, "truncated data (shape " + shape_repr(a.shape) + " " + name_of(a.dtype) + " needs " +
                      std::to_string(nbytes) + " bytes, the file has " + std::to_string(have) +
                      "): the file is incomplete, write it again");
    a.bytes.resize(nbytes);
    f.read(reinterpret_cast<char*>(a.bytes.data()), std::streamsize(nbytes));
    const size_t got = size_t(f.gcount());
    if (got != nbytes)
        bad(path, "truncated data (shape " + shape_repr(a.shape) + " " + name_of(a.dtype) + " needs " +
                      std::to_string(nbytes) + " bytes, the file has " + std::to_string(got) +
                      "): the file is incomplete, write it again");
    if (f.peek() != std::char_traits<char>::eof())
        bad(path, "extra bytes after the data of shape " + shape_repr(a.shape) +
                      ": the file is corrupt or holds several arrays, write one array with numpy.save");
    return a;
}

NpyArray npy_read_2d(const std::string& path, NpyDtype want, const char* what) {
    NpyArray a = npy_read(path);
    if (a.dtype != want)
        throw Error(Errc::BadInput, std::string(what) + " " + quoted(path) + " has dtype '" +
                                        descr_of(a.dtype) + "' (" + name_of(a.dtype) + "), want '" +
                                        descr_of(want) + "' (" + name_of(want) +
                                        "): convert it with arr.astype(numpy." + name_of(want) + ")");
    if (a.shape.size() != 2)
        throw Error(Errc::BadInput, std::string(what) + " " + quoted(path) + " has shape " +
                                        shape_repr(a.shape) + ", want a 2-D " + name_of(want) +
                                        " array: reshape it to [rows, cols]");
    return a;
}

void npy_write(const std::string& path, NpyDtype dtype, const std::vector<size_t>& shape, const void* data) {
    // numpy 1.24's _write_array_header: sorted keys, spare spaces after the dict for growing the
    // first axis in place, then spaces and '\n' up to a 64-byte boundary.
    std::string header = std::string("{'descr': '") + descr_of(dtype) +
                         "', 'fortran_order': False, 'shape': " + shape_repr(shape) + ", }";
    if (!shape.empty()) header.append(kGrowthAxisDigits - std::to_string(shape[0]).size(), ' ');
    const size_t hlen = header.size() + 1;
    const size_t padlen = kArrayAlign - (kMagicLen + 4 + hlen) % kArrayAlign;
    header.append(padlen, ' ');
    header += '\n';
    if (header.size() > 0xFFFF)
        throw Error(Errc::InvalidArgument, "npy file " + quoted(path) + ": shape " + shape_repr(shape) +
                                               " makes a header too long for format 1.0");
    size_t count = 1;
    for (size_t d : shape) count *= d;
    const size_t nbytes = count * itemsize(dtype);

    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    std::FILE* fp = std::fopen(tmp.c_str(), "wb");
    if (!fp)
        throw Error(Errc::Io, "cannot create npy file " + quoted(path) + " (temp " + quoted(tmp) + ": " +
                                  std::strerror(errno) + "): check that the folder exists and is writable");
    std::string prefix(kMagic, kMagicLen);  // magic, version 1.0, little-endian uint16 length
    prefix += {char(1), char(0), char(header.size() & 0xFF), char(header.size() >> 8)};
    bool ok = std::fwrite(prefix.data(), 1, prefix.size(), fp) == prefix.size() &&
              std::fwrite(header.data(), 1, header.size(), fp) == header.size() &&
              (nbytes == 0 || std::fwrite(data, 1, nbytes, fp) == nbytes);
    int err = ok ? 0 : errno;
    if (std::fclose(fp) != 0 && ok) ok = false, err = errno;
    if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) ok = false, err = errno;
    if (!ok) {
        std::remove(tmp.c_str());
        throw Error(Errc::Io, "cannot write npy file " + quoted(path) + " (" + std::strerror(err) +
                                  "): check free space and permissions");
    }
}

}  // namespace f4gemm
