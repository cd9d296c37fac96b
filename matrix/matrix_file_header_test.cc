// ReadMatrixFile checks the header before it reads the file: a huge file that is not what its name
// says, or that holds more than its header declares, is refused from its first bytes, with memory
// bounded by the header. The huge files are sparse (ftruncate): they take no disk.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "matrix/matrix_file.h"
#include "matrix/testing/largest_allocation.h"
#include "matrix/testing/npy_bytes.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
constexpr int64_t kGiB = int64_t{1} << 30;

class MatrixFileHeaderFirst : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(folder_.ok()); }
  // `name` in the folder holding `head` and then zeros up to `size` bytes, as a hole (no disk used).
  std::string SparseFile(const std::string& name, const std::string& head, int64_t size) {
    const std::string path = dir_ + "/" + name;
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, head.data(), head.size()), static_cast<ssize_t>(head.size()));
    EXPECT_EQ(ftruncate(fd, size), 0);
    close(fd);
    return path;
  }
  testing_support::TempFolder folder_{"matrix_file_header_test"};
  const std::string dir_ = folder_.path().string();
};

struct HugeCase {
  std::string label;
  std::string name;
  std::string head;
  int64_t size;
  std::vector<std::string> words;
};

TEST_F(MatrixFileHeaderFirst, HugeFilesAreJudgedByTheirHeaderAlone) {
  const std::string npy_2x2 = testing::NpyFile(testing::NpyDict("<f4", false, 2, 2),
                                               testing::Bytes(std::vector<float>{1, 0, 0, 2}));
  const HugeCase cases[] = {
      {"5 GB of zeros called .npy", "zeros.npy", "", 5 * kGiB, {"not a .npy file (missing the \\x93NUMPY magic)"}},
      {"5 GB of text called .npy", "text.npy", "%%MatrixMarket matrix coordinate real general\n", 5 * kGiB,
       {"not a .npy file"}},
      {"a 2x2 .npy with 3 GB after it", "tail.npy", npy_2x2, 3 * kGiB,
       {"3221225472 bytes, more than the 144 its header allows", "refused before reading it"}},
      {"a .npy header declaring 2^24 x 2^24 doubles", "vast.npy",
       testing::NpyFile(testing::NpyDict("<f8", false, int64_t{1} << 24, int64_t{1} << 24), ""), 4096,
       {"the header declares a matrix of", "bytes, over the limit of 17179869184"}},
      {"a .smtx header with 3 GB after it", "tail.smtx", "2, 2, 1\n0 0 1\n1\n", 3 * kGiB,
       {"3221225472 bytes, more than the", "its header allows at most"}},
      {"a .smtx whose first line does not end", "endless.smtx", "2, 2, 1", 2 * kGiB,
       {"line 1: no end of line in the first 1048576 bytes; not a .smtx file"}},
      {"a .smtx of zeros", "zeros.smtx", "", 2 * kGiB, {"line 1: no end of line in the first"}},
      {"a bad .smtx header before 2 GB", "bad.smtx", "2, 2, x\n", 2 * kGiB,
       {"line 1: nonzero count 'x' is not a non-negative integer"}},
      {"a MatrixMarket header with 3 GB after it", "tail.mtx",
       "%%MatrixMarket matrix coordinate real general\n% a comment\n2 2 1\n1 1 1.5\n", 3 * kGiB,
       {"3221225472 bytes, more than the", "its header allows at most"}},
      {"5 GB called .mtx without a banner", "zeros.mtx", "garbage\n", 5 * kGiB,
       {"line 1: missing the '%%MatrixMarket' banner"}},
  };
  for (const HugeCase& c : cases) {
    SCOPED_TRACE(c.label);
    const std::string path = SparseFile(c.name, c.head, c.size);
    testing::ResetLargestAllocation();
    absl::StatusOr<CsrMatrix> m = ReadMatrixFile(path, v1::DTYPE_FP32, 1);
    const size_t largest = testing::LargestAllocation();
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(m.status().message()), ::testing::StartsWith(path + ": "));
    for (const std::string& w : c.words) EXPECT_THAT(std::string(m.status().message()), HasSubstr(w));
    EXPECT_LE(largest, size_t{4} << 20) << "read more than its header to refuse it";
    std::filesystem::remove(path);
  }
}

TEST_F(MatrixFileHeaderFirst, FilesWithinTheirHeaderStillRead) {
  const struct {
    std::string name;
    std::string contents;
  } cases[] = {
      {"a.smtx", "2, 2, 2\n0 1 2\n0 1\n\n\n"},
      {"a.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n2 2 2\n1 1 1.5\n% between\n2 2 -2\n"},
      {"a.npy", testing::NpyFile(testing::NpyDict("<f4", false, 2, 2), testing::Bytes(std::vector<float>{1, 0, 0, 2}))},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = SparseFile(c.name, c.contents, static_cast<int64_t>(c.contents.size()));
    absl::StatusOr<CsrMatrix> m = ReadMatrixFile(path, v1::DTYPE_FP32, 1);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->rows, 2);
    EXPECT_EQ(m->row_offsets.back(), 2);
  }
}

}  // namespace
}  // namespace sparseditto
