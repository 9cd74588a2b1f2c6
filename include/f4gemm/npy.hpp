// .npy read/write (format 1.0/2.0/3.0 read, 1.0 written), C order, dtypes uint8 ('|u1') and
// float32 ('<f4'). Errors name the file and what is wrong (dtype, order, shape, truncation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace f4gemm {

enum class NpyDtype { U8, F32 };

struct NpyArray {
    NpyDtype dtype = NpyDtype::U8;
    std::vector<size_t> shape;
    std::vector<uint8_t> bytes;  // raw little-endian data, C order
    size_t size() const;         // product of shape (1 for a 0-d array)
    const float* f32() const { return reinterpret_cast<const float*>(bytes.data()); }
    const uint8_t* u8() const { return bytes.data(); }
};

NpyArray npy_read(const std::string& path);
// Reads and checks dtype and rank 2; throws BadInput naming `what` (e.g. "--a"), the file, the
// dtype/shape found and what was expected.
NpyArray npy_read_2d(const std::string& path, NpyDtype want, const char* what);
// Writes atomically (temp file + rename): no half-written file is ever left behind.
void npy_write(const std::string& path, NpyDtype dtype, const std::vector<size_t>& shape, const void* data);

}  // namespace f4gemm
