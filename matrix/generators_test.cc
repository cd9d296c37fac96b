#include "matrix/generators.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "fmt/format.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using v1::PatternSpec;

PatternSpec Unstructured(double sparsity, bool skewed = false) {
  PatternSpec p;
  p.set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  p.set_sparsity(sparsity);
  if (skewed) p.set_row_lengths(v1::ROW_LENGTHS_SKEWED);
  return p;
}
PatternSpec Block(int rows, int cols, double sparsity) {
  PatternSpec p;
  p.set_family(v1::PATTERN_FAMILY_BLOCK);
  p.set_block_rows(rows);
  p.set_block_cols(cols);
  p.set_sparsity(sparsity);
  return p;
}
PatternSpec Nm(int n, int m) {
  PatternSpec p;
  p.set_family(v1::PATTERN_FAMILY_N_M);
  p.set_n(n);
  p.set_m(m);
  return p;
}
PatternSpec WithSparsity(v1::PatternFamily family, double sparsity) {
  PatternSpec p;
  p.set_family(family);
  p.set_sparsity(sparsity);
  return p;
}
PatternSpec Banded(int half_bandwidth) {
  PatternSpec p;
  p.set_family(v1::PATTERN_FAMILY_BANDED);
  p.set_half_bandwidth(half_bandwidth);
  return p;
}
PatternSpec BlockDiagonal(int blocks) {
  PatternSpec p;
  p.set_family(v1::PATTERN_FAMILY_BLOCK_DIAGONAL);
  p.set_num_blocks(blocks);
  return p;
}
PatternSpec Dense() {
  PatternSpec p;
  p.set_family(v1::PATTERN_FAMILY_DENSE);
  return p;
}

struct GenCase {
  std::string name;
  PatternSpec pattern;
  int64_t rows, cols;
};

std::string CaseName(const GenCase& c) { return fmt::format("{} {}x{}", c.name, c.rows, c.cols); }

std::vector<GenCase> AllCases() {
  return {
      {"uniform 0.5", Unstructured(0.5), 100, 37},
      {"uniform 0.9", Unstructured(0.9), 512, 512},
      {"uniform 0.98", Unstructured(0.98), 7, 96},
      {"uniform 0", Unstructured(0.0), 7, 96},
      {"skewed 0.9", Unstructured(0.9, true), 512, 512},
      {"skewed 0.5", Unstructured(0.5, true), 512, 300},
      {"block 1x4", Block(1, 4, 0.7), 100, 37},
      {"block 4x1", Block(4, 1, 0.5), 7, 96},
      {"block 3x5", Block(3, 5, 0.6), 100, 37},
      {"block 16x16", Block(16, 16, 0.9), 512, 512},
      {"block 32x32", Block(32, 32, 0.8), 512, 512},
      {"block 64x64", Block(64, 64, 0.5), 100, 130},
      {"2:4", Nm(2, 4), 7, 96},
      {"1:4", Nm(1, 4), 100, 37},
      {"4:8", Nm(4, 8), 512, 512},
      {"2:8", Nm(2, 8), 33, 250},
      {"3:7", Nm(3, 7), 10, 50},
      {"row-sparse 0.7", WithSparsity(v1::PATTERN_FAMILY_ROW_SPARSE, 0.7), 100, 37},
      {"row-sparse 0.5", WithSparsity(v1::PATTERN_FAMILY_ROW_SPARSE, 0.5), 512, 512},
      {"column-sparse 0.7", WithSparsity(v1::PATTERN_FAMILY_COLUMN_SPARSE, 0.7), 7, 96},
      {"column-sparse 0.9", WithSparsity(v1::PATTERN_FAMILY_COLUMN_SPARSE, 0.9), 512, 512},
      {"banded 8", Banded(8), 512, 512},
      {"banded 3", Banded(3), 100, 37},
      {"banded 0", Banded(0), 7, 96},
      {"block-diagonal 4", BlockDiagonal(4), 512, 512},
      {"block-diagonal 3", BlockDiagonal(3), 100, 37},
      {"block-diagonal 7", BlockDiagonal(7), 7, 96},
      {"dense", Dense(), 7, 96},
  };
}

double Expected(const PatternSpec& p, int64_t total) { return std::llround((1.0 - p.sparsity()) * total); }

std::vector<int64_t> ColumnCounts(const CsrMatrix& m) {
  std::vector<int64_t> counts(m.cols, 0);
  for (int32_t c : m.col_indices) counts[c]++;
  return counts;
}

// Returns "" if `m` has exactly the structure the generator documents for `p`, else the first violation.
std::string StructureViolation(const PatternSpec& p, const CsrMatrix& m) {
  const auto row_cols = [&](int64_t r) {
    return std::vector<int32_t>(m.col_indices.begin() + m.row_offsets[r], m.col_indices.begin() + m.row_offsets[r + 1]);
  };
  // True if row r holds exactly the columns [first, last).
  const auto row_is_range = [&](int64_t r, int64_t first, int64_t last) {
    return m.RowLength(r) == last - first && (last == first || (m.col_indices[m.row_offsets[r]] == first &&
                                                                 m.col_indices[m.row_offsets[r + 1] - 1] == last - 1));
  };
  switch (p.family()) {
    case v1::PATTERN_FAMILY_BLOCK: {
      const int64_t br = p.block_rows(), bc = p.block_cols(), grid_cols = (m.cols + bc - 1) / bc;
      std::map<int64_t, int64_t> block_counts;
      for (int64_t r = 0; r < m.rows; ++r) {
        for (int32_t c : row_cols(r)) block_counts[(r / br) * grid_cols + c / bc]++;
      }
      for (const auto& [b, count] : block_counts) {
        const int64_t r0 = (b / grid_cols) * br, c0 = (b % grid_cols) * bc;
        const int64_t area = std::min(br, m.rows - r0) * std::min(bc, m.cols - c0);
        if (count != area) return fmt::format("block {} has {} of {} entries", b, count, area);
      }
      const int64_t want = Expected(p, ((m.rows + br - 1) / br) * grid_cols);
      if (static_cast<int64_t>(block_counts.size()) != want) {
        return fmt::format("{} nonempty blocks, want {}", block_counts.size(), want);
      }
      return "";
    }
    case v1::PATTERN_FAMILY_N_M:
      for (int64_t r = 0; r < m.rows; ++r) {
        std::vector<int64_t> group_counts((m.cols + p.m() - 1) / p.m(), 0);
        for (int32_t c : row_cols(r)) group_counts[c / p.m()]++;
        for (size_t g = 0; g < group_counts.size(); ++g) {
          const int64_t length = std::min<int64_t>(p.m(), m.cols - g * p.m());
          if (group_counts[g] != std::min<int64_t>(p.n(), length)) {
            return fmt::format("row {} group {} has {}", r, g, group_counts[g]);
          }
        }
      }
      return "";
    case v1::PATTERN_FAMILY_ROW_SPARSE: {
      int64_t full = 0;
      for (int64_t r = 0; r < m.rows; ++r) {
        if (m.RowLength(r) != 0 && m.RowLength(r) != m.cols) return fmt::format("row {} is partial", r);
        full += m.RowLength(r) == m.cols;
      }
      return full == Expected(p, m.rows) ? "" : fmt::format("{} full rows", full);
    }
    case v1::PATTERN_FAMILY_COLUMN_SPARSE: {
      int64_t full = 0;
      for (int64_t count : ColumnCounts(m)) {
        if (count != 0 && count != m.rows) return "a partial column";
        full += count == m.rows;
      }
      return full == Expected(p, m.cols) ? "" : fmt::format("{} full columns", full);
    }
    case v1::PATTERN_FAMILY_BANDED:
      for (int64_t r = 0; r < m.rows; ++r) {
        const int64_t center = r * m.cols / m.rows;
        if (!row_is_range(r, std::max<int64_t>(0, center - p.half_bandwidth()),
                          std::min<int64_t>(m.cols, center + p.half_bandwidth() + 1))) {
          return fmt::format("row {} is not its band", r);
        }
      }
      return "";
    case v1::PATTERN_FAMILY_BLOCK_DIAGONAL: {
      const int64_t nb = p.num_blocks();
      for (int64_t b = 0; b < nb; ++b) {
        for (int64_t r = b * m.rows / nb; r < (b + 1) * m.rows / nb; ++r) {
          if (!row_is_range(r, b * m.cols / nb, (b + 1) * m.cols / nb)) return fmt::format("row {} is off block {}", r, b);
        }
      }
      return "";
    }
    case v1::PATTERN_FAMILY_DENSE:
      return m.nnz() == m.rows * m.cols ? "" : "not dense";
    default:
      return "";  // unstructured: no exact structure (density is checked separately)
  }
}

TEST(GeneratorsTest, EveryFamilyValidAndStructured) {
  for (const GenCase& c : AllCases()) {
    SCOPED_TRACE(CaseName(c));
    auto m = GenerateMatrix(c.pattern, c.rows, c.cols, 42, v1::DTYPE_FP16);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->rows, c.rows);
    EXPECT_EQ(m->cols, c.cols);
    EXPECT_TRUE(ValidateCsr(*m, CaseName(c)).ok()) << ValidateCsr(*m, CaseName(c));
    EXPECT_EQ(StructureViolation(c.pattern, *m), "");
    ASSERT_EQ(m->values.size(), m->col_indices.size());
  }
}

TEST(GeneratorsTest, DensityNearTarget) {
  for (const GenCase& c : AllCases()) {
    SCOPED_TRACE(CaseName(c));
    const PatternSpec& p = c.pattern;
    double want = 0, tolerance = 0;
    const double cells = static_cast<double>(c.rows * c.cols);
    switch (p.family()) {
      case v1::PATTERN_FAMILY_UNSTRUCTURED: {
        want = 1 - p.sparsity();
        const double binomial_sd = std::sqrt(want * (1 - want) / cells);
        // Skewed rows add the variance of the per-row density (log-normal, sigma 1: sd ~1.3 x mean).
        tolerance = p.row_lengths() == v1::ROW_LENGTHS_SKEWED ? 5 * 1.4 * want / std::sqrt(c.rows) + 0.01
                                                               : 5 * binomial_sd + 1e-9;
        break;
      }
      case v1::PATTERN_FAMILY_N_M: want = static_cast<double>(p.n()) / p.m(), tolerance = 0.05; break;
      case v1::PATTERN_FAMILY_ROW_SPARSE: want = Expected(p, c.rows) / c.rows, tolerance = 1e-12; break;
      case v1::PATTERN_FAMILY_COLUMN_SPARSE: want = Expected(p, c.cols) / c.cols, tolerance = 1e-12; break;
      case v1::PATTERN_FAMILY_BLOCK: want = 1 - p.sparsity(), tolerance = 0.12; break;  // edge blocks clipped
      case v1::PATTERN_FAMILY_DENSE: want = 1, tolerance = 0; break;
      default: continue;  // banded, block-diagonal: exact structure checked elsewhere
    }
    auto m = GenerateMatrix(p, c.rows, c.cols, 7, v1::DTYPE_FP32);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_NEAR(m->Density(), want, tolerance);
  }
}

bool SameMatrix(const CsrMatrix& a, const CsrMatrix& b) {
  return a.rows == b.rows && a.cols == b.cols && a.row_offsets == b.row_offsets && a.col_indices == b.col_indices &&
         a.values == b.values;
}

TEST(GeneratorsTest, SameSeedSameMatrixDifferentSeedDifferent) {
  for (const GenCase& c : AllCases()) {
    SCOPED_TRACE(CaseName(c));
    auto a = GenerateMatrix(c.pattern, c.rows, c.cols, 1234, v1::DTYPE_BF16);
    auto b = GenerateMatrix(c.pattern, c.rows, c.cols, 1234, v1::DTYPE_BF16);
    auto other = GenerateMatrix(c.pattern, c.rows, c.cols, 1235, v1::DTYPE_BF16);
    ASSERT_TRUE(a.ok() && b.ok() && other.ok());
    EXPECT_TRUE(SameMatrix(*a, *b));
    EXPECT_FALSE(SameMatrix(*a, *other));
  }
}

TEST(GeneratorsTest, RandomFamiliesChangeStructureWithTheSeed) {
  for (const PatternSpec& p : {Unstructured(0.9), Block(16, 16, 0.9), Nm(2, 4),
                               WithSparsity(v1::PATTERN_FAMILY_ROW_SPARSE, 0.5)}) {
    auto a = GenerateMatrix(p, 512, 512, 1, v1::DTYPE_FP32);
    auto b = GenerateMatrix(p, 512, 512, 2, v1::DTYPE_FP32);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(a->row_offsets != b->row_offsets || a->col_indices != b->col_indices) << p.ShortDebugString();
  }
}

TEST(GeneratorsTest, ValuesNonzeroAndRepresentable) {
  for (v1::Dtype dtype : {v1::DTYPE_FP32, v1::DTYPE_FP16, v1::DTYPE_BF16}) {
    auto m = GenerateMatrix(Unstructured(0.5), 200, 300, 9, dtype);
    ASSERT_TRUE(m.ok());
    float lo = 1, hi = -1;
    for (float v : m->values) {
      ASSERT_NE(v, 0.0f);
      ASSERT_EQ(RoundToDtype(v, dtype), v);
      ASSERT_LE(std::fabs(v), 1.0f);
      lo = std::min(lo, v), hi = std::max(hi, v);
    }
    EXPECT_LT(lo, -0.9f);
    EXPECT_GT(hi, 0.9f);
  }
}

TEST(GeneratorsTest, FillRandomValuesIsSeeded) {
  auto m = GenerateMatrix(Dense(), 10, 10, 3, v1::DTYPE_FP32);
  ASSERT_TRUE(m.ok());
  CsrMatrix a = *m, b = *m, c = *m;
  FillRandomValues(&a, 5, v1::DTYPE_FP16);
  FillRandomValues(&b, 5, v1::DTYPE_FP16);
  FillRandomValues(&c, 6, v1::DTYPE_FP16);
  EXPECT_EQ(a.values, b.values);
  EXPECT_NE(a.values, c.values);
  c.values.clear();
  FillRandomValues(&c, 5, v1::DTYPE_FP16);
  EXPECT_EQ(c.values, a.values);
}

TEST(GeneratorsTest, SkewedRowsVaryMoreThanUniform) {
  const auto row_length_cv = [](const CsrMatrix& m) {
    double sum = 0, sum_sq = 0;
    for (int64_t r = 0; r < m.rows; ++r) sum += m.RowLength(r), sum_sq += double(m.RowLength(r)) * m.RowLength(r);
    const double mean = sum / m.rows;
    return std::sqrt(sum_sq / m.rows - mean * mean) / mean;
  };
  auto uniform = GenerateMatrix(Unstructured(0.9), 1024, 1024, 4, v1::DTYPE_FP32);
  auto skewed = GenerateMatrix(Unstructured(0.9, true), 1024, 1024, 4, v1::DTYPE_FP32);
  ASSERT_TRUE(uniform.ok() && skewed.ok());
  EXPECT_LT(row_length_cv(*uniform), 0.15);  // binomial: sqrt(0.9 / 102.4) = 0.094
  EXPECT_GT(row_length_cv(*skewed), 0.8);    // log-normal sigma 1: sqrt(e - 1) = 1.31
}

TEST(GeneratorsTest, LlmSizedUniformMatrix) {
  auto m = GenerateMatrix(Unstructured(0.5), 4096, 11008, 11, v1::DTYPE_BF16);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_NEAR(m->Density(), 0.5, 0.001);
  EXPECT_TRUE(ValidateCsr(*m, "llm").ok());
}

TEST(GeneratorsTest, ParameterErrorsNameTheField) {
  struct ErrorCase {
    PatternSpec pattern;
    int64_t rows, cols;
    std::string field;
  };
  PatternSpec bad_skew = Unstructured(0.5, true);
  bad_skew.set_skew(-1);
  PatternSpec file;
  file.set_family(v1::PATTERN_FAMILY_FILE);
  const std::vector<ErrorCase> cases = {
      {Unstructured(1.0), 10, 10, "pattern.sparsity"},
      {Unstructured(-0.1), 10, 10, "pattern.sparsity"},
      {Unstructured(std::nan("")), 10, 10, "pattern.sparsity"},
      {bad_skew, 10, 10, "pattern.skew"},
      {Block(0, 4, 0.5), 10, 10, "pattern.block_rows: must be >= 1, got 0"},
      {Block(4, -2, 0.5), 10, 10, "pattern.block_cols"},
      {Nm(5, 4), 10, 10, "pattern.n"},
      {Nm(0, 4), 10, 10, "pattern.n"},
      {Nm(1, 0), 10, 10, "pattern.m"},
      {Banded(-1), 10, 10, "pattern.half_bandwidth"},
      {BlockDiagonal(0), 10, 10, "pattern.num_blocks"},
      {BlockDiagonal(11), 10, 20, "pattern.num_blocks"},
      {file, 10, 10, "pattern.family"},
      {PatternSpec(), 10, 10, "pattern.family"},
      {Dense(), 0, 10, "rows"},
      {Dense(), 10, kMaxMatrixDim + 1, "cols"},
      {Dense(), kMaxMatrixDim, kMaxMatrixDim, "pattern: "},                  // nnz beyond the limit
      {Unstructured(0.5), kMaxMatrixDim, kMaxMatrixDim, "pattern: "},        // refused before allocating
      {Block(1, 1, 0.5), kMaxMatrixDim, kMaxMatrixDim, "pattern: "},
  };
  for (const ErrorCase& c : cases) {
    auto m = GenerateMatrix(c.pattern, c.rows, c.cols, 1, v1::DTYPE_FP32);
    ASSERT_FALSE(m.ok()) << c.field;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(m.status().message().substr(0, c.field.size()), c.field) << m.status();
  }
}

}  // namespace
}  // namespace sparseditto
