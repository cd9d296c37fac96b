// ParseSmtx: the DLMC CSR pattern format. Line 1 "M, K, nnz"; line 2 the M+1 row offsets; line 3
// the nnz column indices, row by row. No values.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status_macros.h"
#include "matrix/matrix_file.h"
#include "matrix/text_scanner.h"

namespace sparseditto {
namespace {

struct SmtxHeader {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
};

// Line 1 and the limits on what it declares.
absl::StatusOr<SmtxHeader> ParseHeaderLine(TextScanner& in) {
  if (!in.NextLine()) return in.ErrorAtLine(1, "empty file (expected 'rows, cols, nnz')");
  in.set_comma_separates(true);
  SmtxHeader h;
  SD_RETURN_IF_ERROR(in.ReadCount("row count", &h.rows));
  SD_RETURN_IF_ERROR(in.ReadCount("column count", &h.cols));
  SD_RETURN_IF_ERROR(in.ReadCount("nonzero count", &h.nnz));
  if (!in.LineExhausted()) {
    return in.Error("unexpected {} after 'rows, cols, nnz'", QuoteToken(in.NextToken()));
  }
  in.set_comma_separates(false);
  if (h.rows > kMaxMatrixDim || h.cols > kMaxMatrixDim) {
    return in.Error("shape {}x{} exceeds the limit of {} rows or columns", h.rows, h.cols, kMaxMatrixDim);
  }
  if (h.nnz > kMaxMatrixNnz) return in.Error("{} nonzeros exceed the limit {}", h.nnz, kMaxMatrixNnz);
  if (h.nnz > h.rows * h.cols) {
    return in.Error("{} nonzeros do not fit in a {}x{} matrix", h.nnz, h.rows, h.cols);
  }
  return h;
}

absl::StatusOr<SmtxHeader> ReadHeader(TextScanner& in) {
  SD_ASSIGN_OR_RETURN(const SmtxHeader h, ParseHeaderLine(in));
  // Every number takes at least one digit and one separator; check before allocating anything.
  const int64_t min_bytes = 2 * (h.rows + 1 + h.nnz) - 1;
  if (in.BytesAfterLine() < min_bytes) {
    return in.Error(
        "header declares {} rows and {} nonzeros, which need at least {} more bytes, but only {} follow "
        "(file truncated?)",
        h.rows, h.nnz, min_bytes, in.BytesAfterLine());
  }
  return h;
}

absl::Status ReadRowOffsets(TextScanner& in, const SmtxHeader& h, std::vector<int32_t>* offsets) {
  const int64_t expected = h.rows + 1;
  if (!in.NextLine()) return in.Error("expected {} row offsets on line 2, found none (file truncated?)", expected);
  offsets->reserve(expected);
  for (int64_t i = 0; i < expected; ++i) {
    if (in.LineExhausted()) {
      return in.Error("expected {} row offsets, found {}{}", expected, i, in.TruncationHint());
    }
    int64_t offset = 0;
    SD_RETURN_IF_ERROR(in.ReadCount("row offset", &offset));
    if (i == 0 && offset != 0) return in.Error("first row offset is {}, not 0", offset);
    if (offset > h.nnz) return in.Error("row offset {} (row {}) exceeds nnz {}", offset, i, h.nnz);
    if (i > 0 && offset < offsets->back()) {
      return in.Error("row offsets decrease at row {} ({} then {})", i - 1, offsets->back(), offset);
    }
    offsets->push_back(static_cast<int32_t>(offset));
  }
  if (!in.LineExhausted()) return in.Error("more than {} row offsets", expected);
  if (offsets->back() != h.nnz) {
    return in.Error("last row offset is {}, but the header declares {} nonzeros", offsets->back(), h.nnz);
  }
  return absl::OkStatus();
}

absl::Status ReadColumnIndices(TextScanner& in, const SmtxHeader& h, const std::vector<int32_t>& offsets,
                               std::vector<int32_t>* cols) {
  if (!in.NextLine()) {
    if (h.nnz == 0) return absl::OkStatus();
    return in.Error("expected {} column indices on line 3, found none (file truncated?)", h.nnz);
  }
  cols->reserve(h.nnz);
  for (int64_t row = 0; row < h.rows; ++row) {
    for (int64_t k = offsets[row]; k < offsets[row + 1]; ++k) {
      if (in.LineExhausted()) {
        return in.Error("expected {} column indices, found {}{}", h.nnz, k, in.TruncationHint());
      }
      int64_t col = 0;
      SD_RETURN_IF_ERROR(in.ReadCount("column index", &col));
      if (col >= h.cols) return in.Error("row {}: column index {} out of range [0, {})", row, col, h.cols);
      if (k > offsets[row] && col <= cols->back()) {
        return in.Error("row {}: column indices not strictly increasing ({} then {}, {})", row, cols->back(), col,
                        col == cols->back() ? "a duplicate" : "unsorted");
      }
      cols->push_back(static_cast<int32_t>(col));
    }
  }
  if (!in.LineExhausted()) return in.Error("more than {} column indices", h.nnz);
  return absl::OkStatus();
}

absl::Status ExpectOnlyBlankLines(TextScanner& in) {
  while (in.NextLine()) {
    if (!in.LineExhausted()) {
      return in.Error("unexpected {} after the column indices (a .smtx file has 3 lines)",
                      QuoteToken(in.NextToken()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int64_t> SmtxFileBytesBound(std::string_view head, const std::string& name) {
  TextScanner in(head, name);
  SD_ASSIGN_OR_RETURN(const SmtxHeader h, ParseHeaderLine(in));
  const int64_t header_bytes = static_cast<int64_t>(head.size()) - in.BytesAfterLine();
  return header_bytes + (h.rows + 1 + h.nnz) * kMaxTextBytesPerNumber + kTextSlackBytes;
}

absl::StatusOr<CsrMatrix> ParseSmtx(std::string_view contents, const std::string& name) {
  TextScanner in(contents, name);
  SD_ASSIGN_OR_RETURN(const SmtxHeader header, ReadHeader(in));
  CsrMatrix m;
  m.rows = header.rows;
  m.cols = header.cols;
  SD_RETURN_IF_ERROR(ReadRowOffsets(in, header, &m.row_offsets));
  SD_RETURN_IF_ERROR(ReadColumnIndices(in, header, m.row_offsets, &m.col_indices));
  SD_RETURN_IF_ERROR(ExpectOnlyBlankLines(in));
  return m;
}

}  // namespace sparseditto
