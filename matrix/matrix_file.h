// Readers for matrix files: .smtx (DLMC CSR pattern), .mtx (MatrixMarket coordinate: real, integer
// or pattern; general, symmetric or skew-symmetric) and .npy (dense 2-D fp32 or fp16, C or Fortran
// order). All produce the canonical CsrMatrix (matrix/csr_matrix.h).
//
// Hostile input: every reader checks sizes against the file's length before allocating, so a header
// that claims absurd sizes is refused, never allocated; truncated, garbled, out-of-range, unsorted
// (.smtx) and duplicate entries are refused. Every error is InvalidArgument (or NotFound for a
// missing file) and its message starts with "<file>:" and, for text formats, "line <L>:", then says
// what is wrong. Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "matrix/csr_matrix.h"
#include "task.pb.h"

namespace sparseditto {

// Files larger than this are refused before reading.
inline constexpr int64_t kMaxMatrixFileBytes = int64_t{16} << 30;

// Reads `path` by its extension. Values come from the file where it has them (rounded to `dtype`;
// a non-finite value is an error) and from FillRandomValues(value_seed, dtype) where it has none
// (.smtx, pattern .mtx). Zeros in a .npy are not stored.
absl::StatusOr<CsrMatrix> ReadMatrixFile(const std::string& path, v1::Dtype dtype, uint64_t value_seed);

// The parsers behind ReadMatrixFile, over file contents already in memory. `name` is used in
// messages. Values are left empty where the format has none, and are not rounded.
absl::StatusOr<CsrMatrix> ParseSmtx(std::string_view contents, const std::string& name);
absl::StatusOr<CsrMatrix> ParseMatrixMarket(std::string_view contents, const std::string& name);
absl::StatusOr<CsrMatrix> ParseNpy(std::string_view contents, const std::string& name);

}  // namespace sparseditto
