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
// empty rows needs 64 MiB of them).
//
// ReadMatrixFile checks the header before it reads the file: it reads the first kMatrixHeadBytes,
// checks the header there (so a file that is not a matrix file is refused at once, whatever its size),
// and refuses a file larger than the header allows: for .npy exactly the header plus shape * itemsize
// bytes; for the text formats kMaxTextBytesPerNumber bytes for each number the header declares (M + 1
// row offsets and nnz column indices in .smtx; 3 numbers per entry in .mtx) plus kTextSlackBytes (for
// comments and blank lines) — before it allocates anything for the contents. So what it holds in
// memory is bounded by what the header declares, never by what the file's size happens to be.
// Thread-safe (no shared state).
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
// What ReadMatrixFile reads to check the header first; a header (for .mtx, with its comments before the
// size line) must end within it.
inline constexpr int64_t kMatrixHeadBytes = int64_t{1} << 20;
// The most bytes a text file may spend on one number it declares (digits and separators), and the
// slack allowed beside them.
inline constexpr int64_t kMaxTextBytesPerNumber = 32;
inline constexpr int64_t kTextSlackBytes = int64_t{1} << 20;

// Reads `path` by its extension (.smtx, .mtx or .npy, any case). Values come from the file where it
// has them, rounded to `dtype` with RoundToDtype (a value beyond the dtype's range, e.g. 1e5 in
// fp16, is an InvalidArgument error), and from FillRandomValues(value_seed, dtype) where it has none
// (.smtx, pattern .mtx). Zeros in a .npy are not stored.
// Errors: NotFound "<path>: no such file"; InvalidArgument for an unknown extension, a path that is
// not a regular file, a file over kMaxMatrixFileBytes, a header that does not parse (said from its
// first bytes alone), a file larger than its header allows ("<path>: <N> bytes, more than the <B> its
// header allows ..."), an unspecified dtype, or any parse error above.
absl::StatusOr<CsrMatrix> ReadMatrixFile(const std::string& path, v1::Dtype dtype, uint64_t value_seed);

// The parsers behind ReadMatrixFile, over file contents already in memory. `name` starts every
// error message. Values are left empty where the format has none (.smtx, pattern .mtx), and are
// not rounded (fp32, exactly as the file gives them, '<f8' converted to the nearest fp32).
absl::StatusOr<CsrMatrix> ParseSmtx(std::string_view contents, const std::string& name);
absl::StatusOr<CsrMatrix> ParseMatrixMarket(std::string_view contents, const std::string& name);
absl::StatusOr<CsrMatrix> ParseNpy(std::string_view contents, const std::string& name);

// The header checks behind ReadMatrixFile, over `head`, the file's first bytes cut to whole lines (for
// .npy: its first bytes, of a file of `file_bytes`). Each checks the header as its Parse* function does
// and returns how many bytes the file may hold at most (for .npy: exactly); the Parse* errors.
absl::StatusOr<int64_t> SmtxFileBytesBound(std::string_view head, const std::string& name);
absl::StatusOr<int64_t> MatrixMarketFileBytesBound(std::string_view head, const std::string& name);
absl::StatusOr<int64_t> NpyFileBytes(std::string_view head, uint64_t file_bytes, const std::string& name);

}  // namespace sparseditto
