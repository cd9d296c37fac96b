// The canonical host matrix: CSR with fp32 values (rounded to the task dtype by whoever builds it).
// Every reader and generator produces one; every kernel's prepare() receives one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace sparseditto {

// Limits that keep hostile inputs from asking for huge allocations. A matrix beyond them is refused.
inline constexpr int64_t kMaxMatrixDim = int64_t{1} << 24;     // rows or cols
inline constexpr int64_t kMaxMatrixNnz = (int64_t{1} << 31) - 1;  // int32 offsets in the kernel ABI

struct CsrMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<int32_t> row_offsets;  // rows + 1 entries, starts at 0, ends at nnz, non-decreasing
  std::vector<int32_t> col_indices;  // nnz entries, strictly increasing within a row, in [0, cols)
  std::vector<float> values;         // nnz entries, finite

  int64_t nnz() const { return static_cast<int64_t>(col_indices.size()); }
  int64_t RowLength(int64_t row) const { return row_offsets[row + 1] - row_offsets[row]; }
  double Density() const {
    return rows * cols == 0 ? 0.0 : static_cast<double>(nnz()) / (static_cast<double>(rows) * cols);
  }
};

// OK if `m` satisfies every invariant above (sizes, bounds, sorted, no duplicates, finite values).
// Otherwise InvalidArgument naming the first offending row/entry. `what` prefixes the message
// (e.g. the file name).
absl::Status ValidateCsr(const CsrMatrix& m, const std::string& what);

// Row-major dense copy (rows * cols floats). Caller ensures the size is reasonable.
std::vector<float> Densify(const CsrMatrix& m);

// Builds a CSR matrix from (row, col) pairs that may be in any order. Duplicates are an error
// (InvalidArgument naming the pair). Values are parallel to the pairs; pass empty to leave values empty.
absl::Status CsrFromCoordinates(int64_t rows, int64_t cols, std::vector<int64_t> row_idx,
                                std::vector<int64_t> col_idx, std::vector<float> vals,
                                const std::string& what, CsrMatrix* out);




}  // namespace sparseditto
