// Readers for matrix files. All produce the canonical CsrMatrix (matrix/csr_matrix.h).
//
//   .smtx  DLMC CSR pattern, plain text, three lines: "M, K, nnz"; the M+1 row offsets (from 0 to
//          nnz, non-decreasing); the nnz column indices, strictly increasing within each row. No
//          values. Separators may be spaces, tabs or '\r'; blank lines may follow line 3.
//   .mtx   MatrixMarket "coordinate" with field real (or double), integer or pattern, and symmetry
//          general, symmetric (each off-diagonal entry is mirrored) or skew-symmetric (mirrored
//          negated; a diagonal entry is an error). '%' lines are comments; blank lines are skipped.
//          Indices are 1-based; entries may come in any order. Explicitly stored zeros are kept.
//          Unsupported, with a clear "unsupported" error: "array" format, complex field, hermitian.
//   .npy   NumPy format version 1.0, 2.0 or 3.0; 'descr' '<f4', '<f2' or '<f8'; 'fortran_order'
//          True or False; 'shape' 2-D. The data must have exactly shape * itemsize bytes. Elements
//          that are zero (after conversion to fp32) are not stored.
//
// Errors, all absl::Status, never exceptions: NotFound for a missing file; InvalidArgument for
// everything else, with a message that starts with "<file>: " (the path, or `name` for the Parse*
// functions); for the text formats it goes on with "line <L>: " (1-based) and then says what is
// wrong, e.g. "w.smtx: line 3: expected 104857 column indices, found 80000 (file truncated?)".
// Refused: a header that does not parse, sizes beyond kMaxMatrixDim / kMaxMatrixNnz (csr_matrix.h),
// more nonzeros than the shape can hold, sizes the file is too short to hold (checked before any
// allocation, so a hostile header cannot ask for a huge one), numbers that are not unsigned
// decimal integers or that overflow, too few or too many numbers, indices out of range, decreasing
// row offsets, unsorted or duplicate column indices in a .smtx row, duplicate .mtx entries
// (naming both lines), non-finite values (NaN, Inf, or beyond fp32), and trailing garbage.
// Every matrix returned satisfies ValidateCsr. Memory use is bounded by a small multiple of the
// file's size plus the row offsets of the declared shape (a legal matrix with kMaxMatrixDim mostly
// empty rows needs 64 MiB of them). Thread-safe (no shared state).
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

// Reads `path` by its extension (.smtx, .mtx or .npy, any case). Values come from the file where it
// has them, rounded to `dtype` with RoundToDtype (a value beyond the dtype's range, e.g. 1e5 in
// fp16, is an InvalidArgument error), and from FillRandomValues(value_seed, dtype) where it has none
// (.smtx, pattern .mtx). Zeros in a .npy are not stored.
// Errors: NotFound "<path>: no such file"; InvalidArgument for an unknown extension, a path that is
// not a regular file, a file over kMaxMatrixFileBytes, an unspecified dtype, or any parse error
// above.
absl::StatusOr<CsrMatrix> ReadMatrixFile(const std::string& path, v1::Dtype dtype, uint64_t value_seed);

// The parsers behind ReadMatrixFile, over file contents already in memory. `name` starts every
// error message. Values are left empty where the format has none (.smtx, pattern .mtx), and are
// not rounded (fp32, exactly as the file gives them, '<f8' converted to the nearest fp32).
absl::StatusOr<CsrMatrix> ParseSmtx(std::string_view contents, const std::string& name);
absl::StatusOr<CsrMatrix> ParseMatrixMarket(std::string_view contents, const std::string& name);
absl::StatusOr<CsrMatrix> ParseNpy(std::string_view contents, const std::string& name);

}  // namespace sparseditto
