// The task matrix handed to every candidate host of a task through one sealed memory file instead of
// being copied into each host over its request pipe (proto/host.proto: HostOpen.matrix,
// HostPrepare.shared_matrix). The judge writes the CSR arrays once per task into a memfd and seals it
// (no write, shrink or grow, no further seals), so no host can change what a later host is given; a
// host maps it read-only and hands the mapping's arrays to the candidate's prepare as they are (no
// copy: the ABI's arrays are const, and a candidate that writes to them faults).
// Thread-safety: a SharedMatrixFile is immutable after Create; MapSharedMatrix is a free function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "matrix/csr_matrix.h"

namespace sparseditto {

// Where each array lies in the file: row offsets (rows + 1 int32), column indices (nnz int32), values
// (nnz float32), each at a 64-byte-aligned offset.
struct SharedMatrixLayout {
  int64_t rows = 0, cols = 0, nnz = 0;
  size_t offsets_at = 0, cols_at = 0, values_at = 0, bytes = 0;

  // InvalidArgument for negative sizes or sizes whose arrays do not fit in memory.
  static absl::StatusOr<SharedMatrixLayout> For(int64_t rows, int64_t cols, int64_t nnz);
};

class SharedMatrixFile {
 public:
  // Writes `matrix`'s arrays into a new sealed memfd. `matrix` is remembered (not owned) so that a
  // caller can tell whether a matrix it holds is this one (source()). Errors: Internal (memfd_create,
  // write or the seals failed; the message names the call and errno), InvalidArgument (a layout
  // error).
  static absl::StatusOr<std::unique_ptr<SharedMatrixFile>> Create(const CsrMatrix& matrix);
  ~SharedMatrixFile();
  SharedMatrixFile(const SharedMatrixFile&) = delete;
  SharedMatrixFile& operator=(const SharedMatrixFile&) = delete;

  int fd() const { return fd_; }  // owned; close-on-exec (hand it on with SpawnOptions.inherited_fds)
  const SharedMatrixLayout& layout() const { return layout_; }
  const CsrMatrix* source() const { return source_; }

 private:
  SharedMatrixFile() = default;
  int fd_ = -1;
  SharedMatrixLayout layout_;
  const CsrMatrix* source_ = nullptr;
};

// A read-only private mapping of a shared matrix file (the host's side). Unmapped on destruction.
class MappedSharedMatrix {
 public:
  // Maps `fd` (not closed here) with `layout`. Errors: FailedPrecondition (the file is smaller than
  // the layout, or is not sealed against writes: then it is not the judge's file), Internal (mmap).
  static absl::StatusOr<std::unique_ptr<MappedSharedMatrix>> Map(int fd, const SharedMatrixLayout& layout);
  ~MappedSharedMatrix();
  MappedSharedMatrix(const MappedSharedMatrix&) = delete;
  MappedSharedMatrix& operator=(const MappedSharedMatrix&) = delete;

  const SharedMatrixLayout& layout() const { return layout_; }
  const int32_t* row_offsets() const { return reinterpret_cast<const int32_t*>(base_ + layout_.offsets_at); }
  const int32_t* col_indices() const { return reinterpret_cast<const int32_t*>(base_ + layout_.cols_at); }
  const float* values() const { return reinterpret_cast<const float*>(base_ + layout_.values_at); }

 private:
  MappedSharedMatrix() = default;
  const char* base_ = nullptr;
  SharedMatrixLayout layout_;
};

}  // namespace sparseditto
