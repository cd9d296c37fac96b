#include "evaluator/runner/shared_matrix.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "fmt/format.h"

namespace sparseditto {
namespace {

constexpr size_t kAlign = 64;
constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;

size_t AlignUp(size_t at) { return (at + kAlign - 1) / kAlign * kAlign; }

absl::Status ErrnoError(const char* call) {
  return absl::InternalError(fmt::format("shared matrix file: {}: {}", call, std::strerror(errno)));
}

}  // namespace

absl::StatusOr<SharedMatrixLayout> SharedMatrixLayout::For(int64_t rows, int64_t cols, int64_t nnz) {
  // Bounded well below size_t's range so that the sums below cannot wrap.
  constexpr int64_t kMost = int64_t{1} << 40;
  if (rows < 0 || cols < 0 || nnz < 0 || rows > kMost || nnz > kMost) {
    return absl::InvalidArgumentError(fmt::format("shared matrix: bad sizes {} x {} with {} nonzeros", rows, cols, nnz));
  }
  SharedMatrixLayout l;
  l.rows = rows;
  l.cols = cols;
  l.nnz = nnz;
  l.offsets_at = 0;
  l.cols_at = AlignUp(sizeof(int32_t) * static_cast<size_t>(rows + 1));
  l.values_at = AlignUp(l.cols_at + sizeof(int32_t) * static_cast<size_t>(nnz));
  l.bytes = AlignUp(l.values_at + sizeof(float) * static_cast<size_t>(nnz));
  return l;
}

absl::StatusOr<std::unique_ptr<SharedMatrixFile>> SharedMatrixFile::Create(const CsrMatrix& matrix) {
  auto layout = SharedMatrixLayout::For(matrix.rows, matrix.cols, matrix.nnz());
  if (!layout.ok()) return layout.status();
  if (matrix.row_offsets.size() != static_cast<size_t>(matrix.rows + 1) || matrix.values.size() != matrix.col_indices.size()) {
    return absl::InvalidArgumentError("shared matrix: the CSR arrays do not match the matrix's sizes");
  }
  auto file = std::unique_ptr<SharedMatrixFile>(new SharedMatrixFile);
  file->layout_ = *layout;
  file->source_ = &matrix;
  file->fd_ = memfd_create("sparseditto-task-matrix", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (file->fd_ < 0) return ErrnoError("memfd_create");
  if (ftruncate(file->fd_, static_cast<off_t>(layout->bytes)) != 0) return ErrnoError("ftruncate");
  auto put = [&](const void* data, size_t bytes, size_t at) -> absl::Status {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      const ssize_t wrote = pwrite(file->fd_, p, bytes, static_cast<off_t>(at));
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) return ErrnoError("pwrite");
      p += wrote;
      at += static_cast<size_t>(wrote);
      bytes -= static_cast<size_t>(wrote);
    }
    return absl::OkStatus();
  };
  if (absl::Status s = put(matrix.row_offsets.data(), sizeof(int32_t) * matrix.row_offsets.size(), layout->offsets_at);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = put(matrix.col_indices.data(), sizeof(int32_t) * matrix.col_indices.size(), layout->cols_at);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = put(matrix.values.data(), sizeof(float) * matrix.values.size(), layout->values_at); !s.ok()) {
    return s;
  }
  if (fcntl(file->fd_, F_ADD_SEALS, kSeals) != 0) return ErrnoError("F_ADD_SEALS");
  return file;
}

SharedMatrixFile::~SharedMatrixFile() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<std::unique_ptr<MappedSharedMatrix>> MappedSharedMatrix::Map(int fd, const SharedMatrixLayout& layout) {
  const int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & (F_SEAL_WRITE | F_SEAL_SHRINK)) != (F_SEAL_WRITE | F_SEAL_SHRINK)) {
    return absl::FailedPreconditionError(fmt::format("shared matrix: fd {} is not a sealed memory file", fd));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) return ErrnoError("fstat");
  if (static_cast<uint64_t>(st.st_size) < layout.bytes) {
    return absl::FailedPreconditionError(
        fmt::format("shared matrix: the file has {} bytes, its layout needs {}", st.st_size, layout.bytes));
  }
  auto mapped = std::unique_ptr<MappedSharedMatrix>(new MappedSharedMatrix);
  mapped->layout_ = layout;
  if (layout.bytes == 0) return mapped;  // an empty matrix: nothing to map (base_ stays null)
  void* base = mmap(nullptr, layout.bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) return ErrnoError("mmap");
  mapped->base_ = static_cast<const char*>(base);
  return mapped;
}

MappedSharedMatrix::~MappedSharedMatrix() {
  if (base_ != nullptr) munmap(const_cast<char*>(base_), layout_.bytes);
}

}  // namespace sparseditto
