// Test support: the bytes of .npy files as NumPy writes them, for the reader's tests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"

namespace sparseditto::testing {

// A .npy file: preamble for `major_version`, then `dict` padded with spaces and '\n' to a multiple
// of 64 bytes, as NumPy writes it, then `data`.
inline std::string NpyFile(std::string dict, std::string_view data, int major_version = 1) {
  const size_t length_bytes = major_version == 1 ? 2 : 4;
  while ((8 + length_bytes + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major_version);
  out += '\0';
  for (size_t i = 0; i < length_bytes; ++i) out += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  return out + dict + std::string(data);
}

inline std::string NpyDict(std::string_view descr, bool fortran_order, int64_t rows, int64_t cols) {
  return fmt::format("{{'descr': '{}', 'fortran_order': {}, 'shape': ({}, {}), }}", descr,
                     fortran_order ? "True" : "False", rows, cols);
}

template <typename T>
std::string Bytes(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

}  // namespace sparseditto::testing
