// CPU tests of the row_compact_dense seed's host side: the row/column compaction re-expands to the matrix,
// maps and zero rows are complete, and the launch plan stays inside its limits. No CUDA runtime calls.
#include "kernels/seeds/row_compact_dense.cu"

#include <random>

#include "gtest/gtest.h"

namespace {

struct Csr {
  int64_t rows, cols;
  std::vector<int32_t> offsets{0}, cols_of;
  std::vector<float> values;
};

// Element (r, c) is nonzero when keep(r, c).
template <typename Keep>
Csr MakeCsr(int64_t rows, int64_t cols, Keep keep) {
  Csr m{rows, cols};
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (!keep(r, c)) continue;
      m.cols_of.push_back(static_cast<int32_t>(c));
      m.values.push_back(static_cast<float>(1 + m.values.size() % 97));
    }
    m.offsets.push_back(static_cast<int32_t>(m.cols_of.size()));
  }
  return m;
}

void CheckCompaction(const Csr& m) {
  SCOPED_TRACE(testing::Message() << m.rows << "x" << m.cols << " nnz " << m.values.size());
  const Compaction c = Compact(m.rows, m.cols, m.offsets.data(), m.cols_of.data(), m.values.data());
  ASSERT_EQ(c.pad_rows % kRows, 0);
  ASSERT_EQ(c.pad_cols % kGroupK, 0);
  EXPECT_LT(c.pad_rows - c.kept_rows, kRows);
  EXPECT_LT(c.pad_cols - c.kept_cols, kGroupK);
  ASSERT_EQ(c.row_map.size(), static_cast<size_t>(c.pad_rows));
  ASSERT_EQ(c.col_map.size(), static_cast<size_t>(c.pad_cols));
  ASSERT_EQ(c.dense.size(), static_cast<size_t>(c.pad_rows * c.pad_cols));
  // Kept rows: exactly the nonempty ones, ascending; zero rows: the others; together every row once.
  std::vector<int> seen(m.rows, 0);
  for (int64_t i = 0; i < c.pad_rows; ++i) {
    if (i >= c.kept_rows) {
      EXPECT_EQ(c.row_map[i], -1);
      continue;
    }
    EXPECT_GT(m.offsets[c.row_map[i] + 1], m.offsets[c.row_map[i]]);
    if (i > 0) EXPECT_LT(c.row_map[i - 1], c.row_map[i]);
    ++seen[c.row_map[i]];
  }
  for (int32_t z : c.zero_rows) {
    EXPECT_EQ(m.offsets[z + 1], m.offsets[z]);
    ++seen[z];
  }
  for (int64_t r = 0; r < m.rows; ++r) EXPECT_EQ(seen[r], 1) << "row " << r;
  // Kept columns: exactly the columns with a nonzero, ascending.
  std::vector<bool> used(m.cols, false);
  for (int32_t col : m.cols_of) used[col] = true;
  std::vector<int32_t> want_cols;
  for (int64_t k = 0; k < m.cols; ++k)
    if (used[k]) want_cols.push_back(static_cast<int32_t>(k));
  EXPECT_EQ(std::vector<int32_t>(c.col_map.begin(), c.col_map.begin() + c.kept_cols), want_cols);
  for (int64_t k = c.kept_cols; k < c.pad_cols; ++k) EXPECT_EQ(c.col_map[k], -1);
  EXPECT_EQ(c.identity_cols, c.kept_cols == m.cols);
  // Re-expanded A' is A; padding is zero.
  std::vector<float> want(m.rows * m.cols, 0.0f), got(m.rows * m.cols, 0.0f);
  for (int64_t r = 0; r < m.rows; ++r)
    for (int32_t e = m.offsets[r]; e < m.offsets[r + 1]; ++e) want[r * m.cols + m.cols_of[e]] = m.values[e];
  for (int64_t i = 0; i < c.pad_rows; ++i) {
    for (int64_t k = 0; k < c.pad_cols; ++k) {
      const float v = c.dense[i * c.pad_cols + k];
      if (i >= c.kept_rows || k >= c.kept_cols) {
        EXPECT_EQ(v, 0.0f);
      } else {
        got[c.row_map[i] * m.cols + c.col_map[k]] = v;
      }
    }
  }
  EXPECT_TRUE(got == want);
}

TEST(RowCompactDense, RowSparseKeepsNonemptyRows) {
  std::mt19937 rng(1);
  std::vector<bool> keep(300);
  for (size_t r = 0; r < keep.size(); ++r) keep[r] = rng() % 10 < 3;
  CheckCompaction(MakeCsr(300, 200, [&](int64_t r, int64_t) { return keep[r]; }));
  CheckCompaction(MakeCsr(7, 96, [](int64_t r, int64_t) { return r % 3 == 1; }));
}

TEST(RowCompactDense, ColumnSparseKeepsUsedColumns) {
  CheckCompaction(MakeCsr(33, 200, [](int64_t, int64_t c) { return c % 2 == 0; }));
  CheckCompaction(MakeCsr(65, 33, [](int64_t, int64_t c) { return c == 0 || c == 32; }));
}

TEST(RowCompactDense, AwkwardShapesAndExtremes) {
  std::mt19937 rng(2);
  CheckCompaction(MakeCsr(33, 200, [&](int64_t r, int64_t) { return r != 1 && r != 2 && rng() % 3 == 0; }));
  CheckCompaction(MakeCsr(7, 96, [](int64_t, int64_t) { return false; }));  // empty: every row zero
  CheckCompaction(MakeCsr(1, 1, [](int64_t, int64_t) { return true; }));
  CheckCompaction(MakeCsr(65, 33, [](int64_t r, int64_t c) { return r == 0 || c == 5; }));
}

TEST(RowCompactDense, PlanStaysInsideLimits) {
  State s;
  s.dtype = SD_DTYPE_BF16;
  s.sms = 132;
  s.max_smem = 227 * 1024;
  s.row_tiles = 3302 / kRows + 1;
  s.pad_cols = static_cast<int>(RoundUp(4096, kGroupK));
  for (int64_t n : {1, 7, 16, 32, 100, 256, 2048}) {
    const Plan plan = MakePlan(&s, n, SIZE_MAX, SIZE_MAX);
    EXPECT_EQ(plan.ncols % 16, 0);
    EXPECT_LE(plan.ncols, N_TILE);
    EXPECT_GE(int64_t{plan.ny} * plan.ncols, n);
    EXPECT_LT(int64_t{plan.ny - 1} * plan.ncols, n);
    EXPECT_GE(plan.split, 1);
    EXPECT_LE(plan.split, MAX_SPLIT);
    EXPECT_LE(plan.split, s.pad_cols / kGroupK);
    EXPECT_LE(SmemBytes(s.dtype, plan.ncols) + 16, static_cast<size_t>(s.max_smem));
    EXPECT_EQ(MakePlan(&s, n, 0, 0).split, 1) << "no workspace: no split";
  }
  s.dtype = SD_DTYPE_FP32;
  s.max_smem = 163 * 1024;  // an A100
  EXPECT_LE(SmemBytes(s.dtype, 16) + 16, static_cast<size_t>(s.max_smem));
}

}  // namespace
