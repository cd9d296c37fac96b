// ParseMatrixMarket: MatrixMarket coordinate files (field real, double, integer or pattern; symmetry
// general, symmetric or skew-symmetric). Indices are 1-based; entries may come in any order.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "common/status_macros.h"
#include "matrix/matrix_file.h"
#include "matrix/text_scanner.h"

namespace sparseditto {
namespace {

enum class Field { kReal, kInteger, kPattern };
enum class Symmetry { kGeneral, kSymmetric, kSkewSymmetric };

struct MtxHeader {
  Field field = Field::kReal;
  Symmetry symmetry = Symmetry::kGeneral;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t entries = 0;  // entries stored in the file, before mirroring
};

// Entries as read, mirrored where the symmetry asks; line numbers kept for duplicate messages.
struct Coordinates {
  std::vector<int64_t> rows, cols;
  std::vector<float> values;  // empty for pattern files
  std::vector<int64_t> lines;
};

std::string Lowercase(std::string_view s) {
  std::string lower(s);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

bool IsBlankOrComment(TextScanner& in) { return in.LineExhausted() || in.RestOfLine().front() == '%'; }

absl::Status ReadBanner(TextScanner& in, MtxHeader* h) {
  if (!in.NextLine() || Lowercase(in.NextToken()) != "%%matrixmarket") {
    return in.ErrorAtLine(1, "missing the '%%MatrixMarket' banner");
  }
  const std::string object = Lowercase(in.NextToken());
  const std::string format = Lowercase(in.NextToken());
  const std::string field = Lowercase(in.NextToken());
  const std::string symmetry = Lowercase(in.NextToken());
  if (object != "matrix") return in.Error("unsupported object {} (expected 'matrix')", QuoteToken(object));
  if (format != "coordinate") {
    return in.Error("unsupported format {} (only 'coordinate' is supported)", QuoteToken(format));
  }
  if (field == "real" || field == "double") {
    h->field = Field::kReal;
  } else if (field == "integer") {
    h->field = Field::kInteger;
  } else if (field == "pattern") {
    h->field = Field::kPattern;
  } else {
    return in.Error("unsupported field {} (supported: real, integer, pattern)", QuoteToken(field));
  }
  if (symmetry == "general") {
    h->symmetry = Symmetry::kGeneral;
  } else if (symmetry == "symmetric") {
    h->symmetry = Symmetry::kSymmetric;
  } else if (symmetry == "skew-symmetric") {
    h->symmetry = Symmetry::kSkewSymmetric;
  } else {
    return in.Error("unsupported symmetry {} (supported: general, symmetric, skew-symmetric)",
                    QuoteToken(symmetry));
  }
  if (!in.LineExhausted()) return in.Error("unexpected {} in the banner", QuoteToken(in.NextToken()));
  return absl::OkStatus();
}

// Most entries the declared shape can hold without duplicates, given the symmetry.
int64_t EntryCapacity(const MtxHeader& h) {
  switch (h.symmetry) {
    case Symmetry::kSymmetric: return h.rows * (h.rows + 1) / 2;
    case Symmetry::kSkewSymmetric: return h.rows * (h.rows - 1) / 2;
    default: return h.rows * h.cols;
  }
}

// The size line (after blank and comment lines) and the limits on what it declares.
absl::Status ParseSizeLine(TextScanner& in, MtxHeader* h) {
  do {
    if (!in.NextLine()) return in.Error("missing the size line 'rows cols entries' (file truncated?)");
  } while (IsBlankOrComment(in));
  SD_RETURN_IF_ERROR(in.ReadCount("row count", &h->rows));
  SD_RETURN_IF_ERROR(in.ReadCount("column count", &h->cols));
  SD_RETURN_IF_ERROR(in.ReadCount("entry count", &h->entries));
  if (!in.LineExhausted()) return in.Error("unexpected {} after 'rows cols entries'", QuoteToken(in.NextToken()));
  if (h->rows > kMaxMatrixDim || h->cols > kMaxMatrixDim) {
    return in.Error("shape {}x{} exceeds the limit of {} rows or columns", h->rows, h->cols, kMaxMatrixDim);
  }
  if (h->symmetry != Symmetry::kGeneral && h->rows != h->cols) {
    return in.Error("a symmetric or skew-symmetric matrix must be square, not {}x{}", h->rows, h->cols);
  }
  if (h->entries > kMaxMatrixNnz) return in.Error("{} entries exceed the limit {}", h->entries, kMaxMatrixNnz);
  if (h->entries > EntryCapacity(*h)) {
    return in.Error("{} entries do not fit in a {}x{} matrix of this symmetry", h->entries, h->rows, h->cols);
  }
  return absl::OkStatus();
}

absl::Status ReadSizeLine(TextScanner& in, MtxHeader* h) {
  SD_RETURN_IF_ERROR(ParseSizeLine(in, h));
  // An entry line holds at least "i j\n" (4 bytes), or "i j v\n" (6); check before allocating.
  const int64_t min_entry_bytes = h->field == Field::kPattern ? 4 : 6;
  const int64_t min_bytes = h->entries * min_entry_bytes - 1;
  if (in.BytesAfterLine() < min_bytes) {
    return in.Error("{} entries need at least {} more bytes, but only {} follow (file truncated?)", h->entries,
                    min_bytes, in.BytesAfterLine());
  }
  return absl::OkStatus();
}

absl::Status ReadIndex(TextScanner& in, std::string_view what, int64_t limit, int64_t* index) {
  SD_RETURN_IF_ERROR(in.ReadCount(what, index));
  if (*index < 1 || *index > limit) return in.Error("{} {} out of range [1, {}]", what, *index, limit);
  return absl::OkStatus();
}

absl::Status ReadValue(TextScanner& in, Field field, float* value) {
  std::string_view token = in.NextToken();
  if (token.empty()) return in.Error("expected a value, found end of line");
  const std::string_view original = token;
  if (token.size() > 1 && token.front() == '+') token.remove_prefix(1);
  double parsed = 0;
  std::from_chars_result result;
  if (field == Field::kInteger) {
    int64_t integer = 0;
    result = std::from_chars(token.data(), token.data() + token.size(), integer);
    parsed = static_cast<double>(integer);
  } else {
    result = std::from_chars(token.data(), token.data() + token.size(), parsed);
  }
  const char* kind = field == Field::kInteger ? "an integer" : "a number";
  if (result.ec == std::errc::result_out_of_range) return in.Error("value {} is out of range", QuoteToken(original));
  if (result.ec != std::errc() || result.ptr != token.data() + token.size()) {
    return in.Error("value {} is not {}", QuoteToken(original), kind);
  }
  if (!std::isfinite(parsed)) return in.Error("value {} is not finite", QuoteToken(original));
  if (std::fabs(parsed) > std::numeric_limits<float>::max()) {
    return in.Error("value {} overflows fp32", QuoteToken(original));
  }
  *value = static_cast<float>(parsed);
  return absl::OkStatus();
}

void Add(Coordinates* c, int64_t row, int64_t col, const float* value, int64_t line) {
  c->rows.push_back(row);
  c->cols.push_back(col);
  if (value != nullptr) c->values.push_back(*value);
  c->lines.push_back(line);
}

absl::Status ReadEntry(TextScanner& in, const MtxHeader& h, Coordinates* c) {
  int64_t row = 0, col = 0;
  float value = 0.0f;
  SD_RETURN_IF_ERROR(ReadIndex(in, "row index", h.rows, &row));
  SD_RETURN_IF_ERROR(ReadIndex(in, "column index", h.cols, &col));
  if (h.field != Field::kPattern) SD_RETURN_IF_ERROR(ReadValue(in, h.field, &value));
  if (!in.LineExhausted()) return in.Error("unexpected {} after the entry", QuoteToken(in.NextToken()));
  if (h.symmetry == Symmetry::kSkewSymmetric && row == col) {
    return in.Error("diagonal entry ({}, {}) in a skew-symmetric matrix", row, col);
  }
  const float* stored = h.field == Field::kPattern ? nullptr : &value;
  Add(c, row - 1, col - 1, stored, in.line_number());
  if (h.symmetry != Symmetry::kGeneral && row != col) {
    const float mirrored = h.symmetry == Symmetry::kSkewSymmetric ? -value : value;
    Add(c, col - 1, row - 1, stored == nullptr ? nullptr : &mirrored, in.line_number());
  }
  return absl::OkStatus();
}

absl::Status ReadEntries(TextScanner& in, const MtxHeader& h, Coordinates* c) {
  c->rows.reserve(h.entries);
  c->cols.reserve(h.entries);
  c->lines.reserve(h.entries);
  if (h.field != Field::kPattern) c->values.reserve(h.entries);
  for (int64_t read = 0; read < h.entries; ++read) {
    do {
      if (!in.NextLine()) return in.Error("expected {} entries, found {} (file truncated?)", h.entries, read);
    } while (IsBlankOrComment(in));
    SD_RETURN_IF_ERROR(ReadEntry(in, h, c));
  }
  while (in.NextLine()) {
    if (!IsBlankOrComment(in)) return in.Error("more than the {} entries the size line declares", h.entries);
  }
  return absl::OkStatus();
}

// After CsrFromCoordinates refused the entries: the message for the first duplicate, with its lines.
absl::Status DuplicateError(const Coordinates& c, const MtxHeader& h, const std::string& name,
                            absl::Status original) {
  std::vector<size_t> order(c.rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return c.rows[a] != c.rows[b] ? c.rows[a] < c.rows[b] : c.cols[a] < c.cols[b];
  });
  for (size_t i = 1; i < order.size(); ++i) {
    const size_t a = order[i - 1], b = order[i];
    if (c.rows[a] == c.rows[b] && c.cols[a] == c.cols[b]) {
      const int64_t first = std::min(c.lines[a], c.lines[b]), second = std::max(c.lines[a], c.lines[b]);
      const std::string_view hint = h.symmetry == Symmetry::kGeneral ? "" : " (each off-diagonal entry is mirrored)";
      return absl::InvalidArgumentError(fmt::format("{}: line {}: duplicate entry ({}, {}), also on line {}{}", name,
                                                    second, c.rows[a] + 1, c.cols[a] + 1, first, hint));
    }
  }
  return original;
}

}  // namespace

absl::StatusOr<int64_t> MatrixMarketFileBytesBound(std::string_view head, const std::string& name) {
  TextScanner in(head, name);
  MtxHeader header;
  SD_RETURN_IF_ERROR(ReadBanner(in, &header));
  SD_RETURN_IF_ERROR(ParseSizeLine(in, &header));
  const int64_t header_bytes = static_cast<int64_t>(head.size()) - in.BytesAfterLine();
  return header_bytes + header.entries * 3 * kMaxTextBytesPerNumber + kTextSlackBytes;
}

absl::StatusOr<CsrMatrix> ParseMatrixMarket(std::string_view contents, const std::string& name) {
  TextScanner in(contents, name);
  MtxHeader header;
  SD_RETURN_IF_ERROR(ReadBanner(in, &header));
  SD_RETURN_IF_ERROR(ReadSizeLine(in, &header));
  Coordinates c;
  SD_RETURN_IF_ERROR(ReadEntries(in, header, &c));
  CsrMatrix m;
  absl::Status built = CsrFromCoordinates(header.rows, header.cols, c.rows, c.cols, c.values, name, &m);
  if (!built.ok()) return DuplicateError(c, header, name, std::move(built));
  return m;
}

}  // namespace sparseditto
