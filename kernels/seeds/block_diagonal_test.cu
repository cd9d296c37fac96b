// CPU tests of the block_diagonal seed's host side: block ranges follow the generator, tiles cover every row
// once, the stored blocks re-expand to the matrix, and a nonzero outside its block is refused. No CUDA calls.
#include "kernels/seeds/block_diagonal.cu"

#include "gtest/gtest.h"

namespace {

struct Csr {
  int64_t rows, cols;
  std::vector<int32_t> offsets{0}, cols_of;
  std::vector<float> values;
};

// The generator's block-diagonal matrix: row block b = [b*rows/nb, (b+1)*rows/nb), full over its columns.
Csr GeneratedBlocks(int64_t rows, int64_t cols, int64_t nb) {
  Csr m{rows, cols};
  int64_t block = 0;
  for (int64_t r = 0; r < rows; ++r) {
    while ((block + 1) * rows / nb <= r) ++block;
    for (int64_t k = block * cols / nb; k < (block + 1) * cols / nb; ++k) {
      m.cols_of.push_back(static_cast<int32_t>(k));
      m.values.push_back(static_cast<float>(1 + m.values.size() % 83));
    }
    m.offsets.push_back(static_cast<int32_t>(m.cols_of.size()));
  }
  return m;
}

void CheckBlocks(const Csr& m, int64_t nb) {
  SCOPED_TRACE(testing::Message() << m.rows << "x" << m.cols << " in " << nb << " blocks");
  Blocks b;
  std::string error;
  ASSERT_TRUE(BuildBlocks(m.rows, m.cols, nb, m.offsets.data(), m.cols_of.data(), m.values.data(), &b, &error))
      << error;
  std::vector<float> want(m.rows * m.cols, 0.0f), got(m.rows * m.cols, 0.0f);
  for (int64_t r = 0; r < m.rows; ++r)
    for (int32_t e = m.offsets[r]; e < m.offsets[r + 1]; ++e) want[r * m.cols + m.cols_of[e]] = m.values[e];
  int64_t next_row = 0;
  int min_groups = 1 << 30;
  for (const Tile& t : b.tiles) {
    ASSERT_EQ(t.row0, next_row) << "tiles cover the rows in order, once";
    ASSERT_GE(t.rows, 1);
    ASSERT_LE(t.rows, kRows);
    next_row += t.rows;
    // All rows of the tile are in one block, whose columns are [k0, k0 + kcols).
    int64_t block = 0;
    while ((block + 1) * m.rows / nb <= t.row0) ++block;
    EXPECT_GE(t.row0, block * m.rows / nb);
    EXPECT_LE(t.row0 + t.rows, (block + 1) * m.rows / nb);
    EXPECT_EQ(t.k0, block * m.cols / nb);
    EXPECT_EQ(t.kcols, (block + 1) * m.cols / nb - t.k0);
    EXPECT_EQ(t.lda % kGroupK, 0);
    EXPECT_GE(t.lda, t.kcols);
    EXPECT_EQ(t.groups, t.lda / kGroupK);
    EXPECT_EQ(t.a_offset % 8, 0) << "16-byte aligned rows for cp.async";
    ASSERT_LE(t.a_offset + int64_t{kRows} * t.lda, static_cast<int64_t>(b.dense.size()));
    min_groups = std::min(min_groups, t.groups);
    for (int64_t i = 0; i < kRows; ++i) {
      for (int64_t k = 0; k < t.lda; ++k) {
        const float v = b.dense[t.a_offset + i * t.lda + k];
        if (i < t.rows && k < t.kcols) {
          got[(t.row0 + i) * m.cols + t.k0 + k] = v;
        } else if (i < t.rows) {
          EXPECT_EQ(v, 0.0f) << "column padding";
        }
      }
    }
  }
  EXPECT_EQ(next_row, m.rows);
  EXPECT_EQ(b.min_groups, min_groups);
  EXPECT_TRUE(got == want);
}

TEST(BlockDiagonal, GeneratedBlocksRoundTrip) {
  CheckBlocks(GeneratedBlocks(16, 16, 2), 2);
  CheckBlocks(GeneratedBlocks(7, 96, 3), 3);
  CheckBlocks(GeneratedBlocks(33, 200, 8), 8);
  CheckBlocks(GeneratedBlocks(65, 33, 5), 5);
  CheckBlocks(GeneratedBlocks(40, 40, 1), 1);    // one block: dense
  CheckBlocks(GeneratedBlocks(33, 7, 7), 7);     // as many blocks as columns
  CheckBlocks(GeneratedBlocks(256, 256, 8), 8);  // blocks of whole tiles
}

TEST(BlockDiagonal, EmptyRowsInsideBlocksAreStillCovered) {
  Csr m = GeneratedBlocks(33, 200, 8);
  Csr sparse{m.rows, m.cols};
  for (int64_t r = 0; r < m.rows; ++r) {  // keep every third nonzero: still inside the blocks
    for (int32_t e = m.offsets[r]; e < m.offsets[r + 1]; ++e) {
      if (r % 4 == 1 || e % 3 != 0) continue;
      sparse.cols_of.push_back(m.cols_of[e]);
      sparse.values.push_back(m.values[e]);
    }
    sparse.offsets.push_back(static_cast<int32_t>(sparse.cols_of.size()));
  }
  CheckBlocks(sparse, 8);
}

TEST(BlockDiagonal, NonzeroOutsideItsBlockIsRefused) {
  Csr m = GeneratedBlocks(16, 16, 2);
  m.cols_of[0] = 15;  // row 0 (block 0: columns 0-7) now reaches column 15
  Blocks b;
  std::string error;
  EXPECT_FALSE(BuildBlocks(m.rows, m.cols, 2, m.offsets.data(), m.cols_of.data(), m.values.data(), &b, &error));
  EXPECT_NE(error.find("row 0"), std::string::npos) << error;
}

}  // namespace
