#include "evaluator/runner/shared_matrix.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

CsrMatrix Diagonalish(int64_t rows, int64_t cols, int per_row) {
  CsrMatrix m;
  m.rows = rows;
  m.cols = cols;
  m.row_offsets.push_back(0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int k = 0; k < per_row && k < cols; ++k) {
      m.col_indices.push_back(static_cast<int32_t>((r + k) % cols));
      m.values.push_back(static_cast<float>(r) - 0.5f * k);
    }
    m.row_offsets.push_back(static_cast<int32_t>(m.col_indices.size()));
  }
  return m;
}

TEST(SharedMatrix, TheHostSeesTheJudgesArraysExactly) {
  struct Case {
    const char* what;
    int64_t rows, cols;
    int per_row;
  };
  const Case cases[] = {
      {"no rows", 0, 8, 1}, {"no nonzeros", 5, 7, 0}, {"one element", 1, 1, 1}, {"awkward", 33, 17, 3},
      {"wide rows", 3, 1000, 1000},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    // Column indices here are not sorted per row (not a valid CsrMatrix); the file does not care.
    const CsrMatrix matrix = Diagonalish(c.rows, c.cols, c.per_row);
    auto file = SharedMatrixFile::Create(matrix);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ((*file)->source(), &matrix);
    const SharedMatrixLayout& layout = (*file)->layout();
    EXPECT_EQ(layout.nnz, matrix.nnz());
    EXPECT_EQ(layout.cols_at % 64, 0u);
    EXPECT_EQ(layout.values_at % 64, 0u);
    auto mapped = MappedSharedMatrix::Map((*file)->fd(), layout);
    ASSERT_TRUE(mapped.ok()) << mapped.status();
    EXPECT_EQ(std::memcmp((*mapped)->row_offsets(), matrix.row_offsets.data(), 4 * matrix.row_offsets.size()), 0);
    if (matrix.nnz() > 0) {
      EXPECT_EQ(std::memcmp((*mapped)->col_indices(), matrix.col_indices.data(), 4 * matrix.col_indices.size()), 0);
      EXPECT_EQ(std::memcmp((*mapped)->values(), matrix.values.data(), 4 * matrix.values.size()), 0);
    }
  }
}

TEST(SharedMatrix, NoHostCanChangeWhatTheNextHostIsGiven) {
  const CsrMatrix matrix = Diagonalish(16, 16, 2);
  auto file = SharedMatrixFile::Create(matrix);
  ASSERT_TRUE(file.ok()) << file.status();
  const int fd = (*file)->fd();
  const size_t bytes = (*file)->layout().bytes;
  errno = 0;
  EXPECT_EQ(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), MAP_FAILED);
  EXPECT_EQ(errno, EPERM);
  EXPECT_LT(pwrite(fd, "x", 1, 0), 0);
  EXPECT_NE(ftruncate(fd, 0), 0);
  EXPECT_NE(fcntl(fd, F_ADD_SEALS, 0), 0) << "the seals are themselves sealed";
  // A private writable mapping is a copy: writing it changes nothing for anyone else.
  void* copy = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ASSERT_NE(copy, MAP_FAILED);
  static_cast<int32_t*>(copy)[1] = 12345;
  munmap(copy, bytes);
  auto mapped = MappedSharedMatrix::Map(fd, (*file)->layout());
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  EXPECT_EQ((*mapped)->row_offsets()[1], matrix.row_offsets[1]);
}

TEST(SharedMatrix, MapRefusesAFileThatIsNotTheJudges) {
  const CsrMatrix matrix = Diagonalish(8, 8, 1);
  auto file = SharedMatrixFile::Create(matrix);
  ASSERT_TRUE(file.ok()) << file.status();
  auto bigger = SharedMatrixLayout::For(8, 8, 1 << 20);
  ASSERT_TRUE(bigger.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(MappedSharedMatrix::Map((*file)->fd(), *bigger).status()));
  const int unsealed = memfd_create("unsealed", MFD_CLOEXEC);
  ASSERT_GE(unsealed, 0);
  ASSERT_EQ(ftruncate(unsealed, static_cast<off_t>((*file)->layout().bytes)), 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(MappedSharedMatrix::Map(unsealed, (*file)->layout()).status()));
  close(unsealed);
  EXPECT_TRUE(absl::IsInvalidArgument(SharedMatrixLayout::For(-1, 4, 0).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(SharedMatrixLayout::For(4, 4, int64_t{1} << 50).status()));
}

}  // namespace
}  // namespace sparseditto
