// ParseNpy: NumPy .npy files (format versions 1.0, 2.0, 3.0) holding a dense 2-D little-endian
// float array ('<f4', '<f2' or '<f8'), C or Fortran order. Zeros are not stored.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "common/dtype.h"
#include "common/status_macros.h"
#include "matrix/matrix_file.h"
#include "matrix/text_scanner.h"

namespace sparseditto {
namespace {

static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";

// What the header dictionary says, as far as this reader needs it.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  int item_bytes = 0;  // from descr
};

absl::Status NpyError(const std::string& name, std::string_view message) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", name, message));
}

// Parses the Python dict literal of the header: {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
class HeaderDictParser {
 public:
  HeaderDictParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  absl::Status Parse(NpyHeader* h) {
    bool has_descr = false, has_order = false, has_shape = false;
    SD_RETURN_IF_ERROR(Expect('{'));
    while (!Consume('}')) {
      std::string key;
      SD_RETURN_IF_ERROR(ParseString(&key));
      SD_RETURN_IF_ERROR(Expect(':'));
      if (key == "descr" && !has_descr) {
        SD_RETURN_IF_ERROR(ParseString(&h->descr));
        has_descr = true;
      } else if (key == "fortran_order" && !has_order) {
        SD_RETURN_IF_ERROR(ParseBool(&h->fortran_order));
        has_order = true;
      } else if (key == "shape" && !has_shape) {
        SD_RETURN_IF_ERROR(ParseTuple(&h->shape));
        has_shape = true;
      } else {
        return Error(fmt::format("unexpected or repeated key {}", QuoteToken(key)));
      }
      if (!Consume(',') && !NextIs('}')) return Error("expected ',' or '}' after a value");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the dictionary");
    if (!has_descr || !has_order || !has_shape) {
      return Error("the dictionary needs the keys 'descr', 'fortran_order' and 'shape'");
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Error(std::string_view message) const {
    return NpyError(name_, fmt::format(".npy header: {} (at byte {} of the header)", message, pos_));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t')) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool NextIs(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  absl::Status Expect(char c) {
    if (Consume(c)) return absl::OkStatus();
    return Error(fmt::format("expected '{}'", c));
  }
  absl::Status ParseString(std::string* out) {
    SkipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return Error("expected a string");
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return Error("unterminated string");
    *out = std::string(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return absl::OkStatus();
  }
  absl::Status ParseBool(bool* out) {
    SkipSpace();
    const std::string_view rest = text_.substr(pos_);
    if (rest.starts_with("True")) *out = true;
    else if (rest.starts_with("False")) *out = false;
    else return Error("expected True or False");
    pos_ += *out ? 4 : 5;
    return absl::OkStatus();
  }
  absl::Status ParseTuple(std::vector<int64_t>* out) {
    SD_RETURN_IF_ERROR(Expect('('));
    while (!Consume(')')) {
      SkipSpace();
      size_t end = pos_;
      while (end < text_.size() && text_[end] >= '0' && text_[end] <= '9') ++end;
      int64_t dim = 0;
      bool too_large = false;
      if (!ParseCount(text_.substr(pos_, end - pos_), &dim, &too_large)) {
        return Error(too_large ? "a dimension is too large" : "expected a non-negative integer dimension");
      }
      out->push_back(dim);
      pos_ = end;
      if (out->size() > 32) return Error("too many dimensions");
      if (!Consume(',') && !NextIs(')')) return Error("expected ',' or ')' in the shape");
    }
    return absl::OkStatus();
  }

  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
};

// Reads the magic, version and header from `contents`, the first bytes of a file of `file_bytes` bytes
// (all of it, or its head); *data_offset is where the array's bytes start.
absl::Status ReadHeader(std::string_view contents, uint64_t file_bytes, const std::string& name, NpyHeader* h,
                        size_t* data_offset) {
  if (!contents.starts_with(kMagic)) return NpyError(name, "not a .npy file (missing the \\x93NUMPY magic)");
  if (contents.size() < 10) return NpyError(name, ".npy preamble truncated (file truncated?)");
  const int major = static_cast<unsigned char>(contents[6]), minor = static_cast<unsigned char>(contents[7]);
  if ((major < 1 || major > 3) || minor != 0) {
    return NpyError(name, fmt::format("unsupported .npy version {}.{} (supported: 1.0, 2.0, 3.0)", major, minor));
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (contents.size() < 8 + length_bytes) return NpyError(name, ".npy preamble truncated (file truncated?)");
  uint32_t header_length = 0;
  for (size_t i = 0; i < length_bytes; ++i) {
    header_length |= static_cast<uint32_t>(static_cast<unsigned char>(contents[8 + i])) << (8 * i);
  }
  const size_t header_start = 8 + length_bytes;
  if (header_length > file_bytes - header_start) {
    return NpyError(name, fmt::format(".npy header of {} bytes does not fit in the file's remaining {} bytes "
                                      "(file truncated?)", header_length, file_bytes - header_start));
  }
  if (header_length > contents.size() - header_start) {
    return NpyError(name, fmt::format(".npy header of {} bytes is longer than the {} bytes read to check it "
                                      "(NumPy writes headers of a few hundred bytes)", header_length,
                                      contents.size() - header_start));
  }
  *data_offset = header_start + header_length;
  SD_RETURN_IF_ERROR(HeaderDictParser(contents.substr(header_start, header_length), name).Parse(h));
  if (h->descr == "<f4") h->item_bytes = 4;
  else if (h->descr == "<f2") h->item_bytes = 2;
  else if (h->descr == "<f8") h->item_bytes = 8;
  else return NpyError(name, fmt::format(".npy dtype {} unsupported (expected '<f4', '<f2' or '<f8')",
                                         QuoteToken(h->descr)));
  if (h->shape.size() != 2) {
    return NpyError(name, fmt::format(".npy array has {} dimensions; a matrix needs 2", h->shape.size()));
  }
  if (h->shape[0] > kMaxMatrixDim || h->shape[1] > kMaxMatrixDim) {
    return NpyError(name, fmt::format(".npy shape {}x{} exceeds the limit of {} rows or columns", h->shape[0],
                                      h->shape[1], kMaxMatrixDim));
  }
  return absl::OkStatus();
}

double LoadElement(const char* p, int item_bytes) {
  if (item_bytes == 2) {
    uint16_t bits;
    std::memcpy(&bits, p, sizeof(bits));
    return HalfBitsToFloat(bits);
  }
  if (item_bytes == 4) {
    float value;
    std::memcpy(&value, p, sizeof(value));
    return value;
  }
  double value;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

// Calls visit(row, col, value) for every element in storage order; stops when visit returns false.
template <typename Visit>
void ForEachElement(const NpyHeader& h, const char* data, Visit visit) {
  const int64_t rows = h.shape[0], cols = h.shape[1];
  const int64_t outer = h.fortran_order ? cols : rows, inner = h.fortran_order ? rows : cols;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i, data += h.item_bytes) {
      const int64_t row = h.fortran_order ? i : o, col = h.fortran_order ? o : i;
      if (!visit(row, col, LoadElement(data, h.item_bytes))) return;
    }
  }
}

// First pass: checks every element is finite and fits fp32, and counts the nonzeros of each row
// into offsets[row + 1].
absl::Status CountRowNonzeros(const NpyHeader& h, const char* data, const std::string& name,
                              std::vector<int32_t>* offsets) {
  absl::Status status;
  ForEachElement(h, data, [&](int64_t row, int64_t col, double value) {
    if (std::isnan(value) || std::isinf(value) || std::fabs(value) > std::numeric_limits<float>::max()) {
      const char* what = std::isnan(value) ? "is NaN" : std::isinf(value) ? "is infinite" : "overflows fp32";
      status = NpyError(name, fmt::format("element at row {}, column {} {}", row, col, what));
      return false;
    }
    if (static_cast<float>(value) != 0.0f) ++(*offsets)[row + 1];
    return true;
  });
  return status;
}

}  // namespace

absl::StatusOr<int64_t> NpyFileBytes(std::string_view head, uint64_t file_bytes, const std::string& name) {
  NpyHeader h;
  size_t data_offset = 0;
  SD_RETURN_IF_ERROR(ReadHeader(head, file_bytes, name, &h, &data_offset));
  return static_cast<int64_t>(data_offset) + h.shape[0] * h.shape[1] * h.item_bytes;  // < 2^51
}

absl::StatusOr<CsrMatrix> ParseNpy(std::string_view contents, const std::string& name) {
  NpyHeader h;
  size_t data_offset = 0;
  SD_RETURN_IF_ERROR(ReadHeader(contents, contents.size(), name, &h, &data_offset));
  const int64_t rows = h.shape[0], cols = h.shape[1];
  const int64_t expected_bytes = rows * cols * h.item_bytes;  // < 2^51: both dims are <= 2^24
  const int64_t found_bytes = static_cast<int64_t>(contents.size() - data_offset);
  if (found_bytes != expected_bytes) {
    return NpyError(name, fmt::format(".npy data: expected {} bytes for a {}x{} '{}' array, found {}{}",
                                      expected_bytes, rows, cols, h.descr, found_bytes,
                                      found_bytes < expected_bytes ? " (file truncated?)" : ""));
  }
  const char* data = contents.data() + data_offset;
  CsrMatrix m;
  m.rows = rows;
  m.cols = cols;
  m.row_offsets.assign(rows + 1, 0);
  SD_RETURN_IF_ERROR(CountRowNonzeros(h, data, name, &m.row_offsets));
  for (int64_t r = 0; r < rows; ++r) {
    if (int64_t{m.row_offsets[r]} + m.row_offsets[r + 1] > kMaxMatrixNnz) {
      return NpyError(name, fmt::format(".npy array has more than {} nonzeros", kMaxMatrixNnz));
    }
    m.row_offsets[r + 1] += m.row_offsets[r];
  }
  m.col_indices.resize(m.row_offsets.back());
  m.values.resize(m.row_offsets.back());
  std::vector<int32_t> next(m.row_offsets.begin(), m.row_offsets.end() - 1);  // next free slot of each row
  ForEachElement(h, data, [&](int64_t row, int64_t col, double value) {
    const float stored = static_cast<float>(value);
    if (stored != 0.0f) {
      m.col_indices[next[row]] = static_cast<int32_t>(col);
      m.values[next[row]++] = stored;
    }
    return true;
  });
  return m;
}

}  // namespace sparseditto
