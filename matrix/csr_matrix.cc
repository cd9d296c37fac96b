#include "matrix/csr_matrix.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "fmt/format.h"

namespace sparseditto {

absl::Status ValidateCsr(const CsrMatrix& m, const std::string& what) {
  auto fail = [&](std::string_view format, auto&&... args) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {}", what, fmt::vformat(format, fmt::make_format_args(args...))));
  };
  if (m.rows < 0 || m.cols < 0 || m.rows > kMaxMatrixDim || m.cols > kMaxMatrixDim) {
    return fail("shape {}x{} outside [0, {}]", m.rows, m.cols, kMaxMatrixDim);
  }
  if (static_cast<int64_t>(m.row_offsets.size()) != m.rows + 1) {
    return fail("expected {} row offsets, have {}", m.rows + 1, m.row_offsets.size());
  }
  if (m.row_offsets.front() != 0) return fail("first row offset is {}, not 0", m.row_offsets.front());
  if (m.row_offsets.back() != m.nnz()) {
    return fail("last row offset is {} but there are {} column indices", m.row_offsets.back(), m.nnz());
  }
  if (!m.values.empty() && m.values.size() != m.col_indices.size()) {
    return fail("{} values for {} nonzeros", m.values.size(), m.nnz());
  }
  for (int64_t r = 0; r < m.rows; ++r) {
    const int32_t begin = m.row_offsets[r], end = m.row_offsets[r + 1];
    if (end < begin) return fail("row offsets decrease at row {} ({} then {})", r, begin, end);
    for (int32_t k = begin; k < end; ++k) {
      const int32_t c = m.col_indices[k];
      if (c < 0 || c >= m.cols) {
        return fail("row {}: column index {} out of range [0, {})", r, c, m.cols);
      }
      if (k > begin && c <= m.col_indices[k - 1]) {
        return fail("row {}: column indices not strictly increasing ({} then {}, {})", r,
                    m.col_indices[k - 1], c, c == m.col_indices[k - 1] ? "a duplicate" : "unsorted");
      }
      if (!m.values.empty() && !std::isfinite(m.values[k])) {
        return fail("row {}, column {}: value is not finite", r, c);
      }
    }
  }
  return absl::OkStatus();
}

std::vector<float> Densify(const CsrMatrix& m) {
  std::vector<float> dense(static_cast<size_t>(m.rows * m.cols), 0.0f);
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int32_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
      dense[r * m.cols + m.col_indices[k]] = m.values.empty() ? 1.0f : m.values[k];
    }
  }
  return dense;
}

absl::Status CsrFromCoordinates(int64_t rows, int64_t cols, std::vector<int64_t> row_idx,
                                std::vector<int64_t> col_idx, std::vector<float> vals,
                                const std::string& what, CsrMatrix* out) {
  const size_t nnz = row_idx.size();
  if (col_idx.size() != nnz || (!vals.empty() && vals.size() != nnz)) {
    return absl::InternalError(fmt::format("{}: coordinate arrays differ in length", what));
  }
  if (static_cast<int64_t>(nnz) > kMaxMatrixNnz) {
    return absl::InvalidArgumentError(fmt::format("{}: {} nonzeros exceed the limit {}", what, nnz, kMaxMatrixNnz));
  }
  for (size_t i = 0; i < nnz; ++i) {
    if (row_idx[i] < 0 || row_idx[i] >= rows || col_idx[i] < 0 || col_idx[i] >= cols) {
      return absl::InvalidArgumentError(fmt::format("{}: entry ({}, {}) outside the {}x{} matrix", what, row_idx[i],
                                                     col_idx[i], rows, cols));
    }
  }
  std::vector<size_t> order(nnz);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return row_idx[a] != row_idx[b] ? row_idx[a] < row_idx[b] : col_idx[a] < col_idx[b];
  });
  CsrMatrix m;
  m.rows = rows;
  m.cols = cols;
  m.row_offsets.assign(rows + 1, 0);
  m.col_indices.resize(nnz);
  if (!vals.empty()) m.values.resize(nnz);
  for (size_t i = 0; i < nnz; ++i) {
    const size_t j = order[i];
    if (i > 0 && row_idx[j] == row_idx[order[i - 1]] && col_idx[j] == col_idx[order[i - 1]]) {
      return absl::InvalidArgumentError(
          fmt::format("{}: duplicate entry ({}, {})", what, row_idx[j], col_idx[j]));
    }
    m.row_offsets[row_idx[j] + 1]++;
    m.col_indices[i] = static_cast<int32_t>(col_idx[j]);
    if (!vals.empty()) m.values[i] = vals[j];
  }
  for (int64_t r = 0; r < rows; ++r) m.row_offsets[r + 1] += m.row_offsets[r];
  *out = std::move(m);
  return absl::OkStatus();
}

}  // namespace sparseditto
