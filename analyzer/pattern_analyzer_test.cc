#include "analyzer/pattern_analyzer.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/pattern_measures.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "matrix/generators.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using v1::PatternSpec;

PatternSpec Spec(v1::PatternFamily family) {
  PatternSpec p;
  p.set_family(family);
  return p;
}
PatternSpec Unstructured(double sparsity, bool skewed) {
  PatternSpec p = Spec(v1::PATTERN_FAMILY_UNSTRUCTURED);
  p.set_sparsity(sparsity);
  p.set_row_lengths(skewed ? v1::ROW_LENGTHS_SKEWED : v1::ROW_LENGTHS_UNIFORM);
  return p;
}
PatternSpec Block(int rows, int cols, double sparsity) {
  PatternSpec p = Spec(v1::PATTERN_FAMILY_BLOCK);
  p.set_block_rows(rows);
  p.set_block_cols(cols);
  p.set_sparsity(sparsity);
  return p;
}
PatternSpec Nm(int n, int m) {
  PatternSpec p = Spec(v1::PATTERN_FAMILY_N_M);
  p.set_n(n);
  p.set_m(m);
  return p;
}
PatternSpec Sparse(v1::PatternFamily family, double sparsity) {
  PatternSpec p = Spec(family);
  p.set_sparsity(sparsity);
  return p;
}
PatternSpec Banded(int half_bandwidth) {
  PatternSpec p = Spec(v1::PATTERN_FAMILY_BANDED);
  p.set_half_bandwidth(half_bandwidth);
  return p;
}
PatternSpec BlockDiagonal(int blocks) {
  PatternSpec p = Spec(v1::PATTERN_FAMILY_BLOCK_DIAGONAL);
  p.set_num_blocks(blocks);
  return p;
}

struct RecoveryCase {
  PatternSpec pattern;
  int64_t rows, cols;
};

// True if `got` names the generator's family and its main parameter.
void ExpectRecovered(const PatternSpec& want, const PatternFeatures& f, int64_t rows, int64_t cols) {
  const PatternSpec& got = f.detected;
  ASSERT_EQ(FamilyYamlName(got.family()), FamilyYamlName(want.family()));
  switch (want.family()) {
    case v1::PATTERN_FAMILY_UNSTRUCTURED:
      EXPECT_EQ(got.row_lengths(), want.row_lengths());
      EXPECT_NEAR(got.sparsity(), want.sparsity(), 0.05);
      break;
    case v1::PATTERN_FAMILY_BLOCK:
      EXPECT_EQ(got.block_rows(), want.block_rows());
      EXPECT_EQ(got.block_cols(), want.block_cols());
      EXPECT_NEAR(got.sparsity(), want.sparsity(), 0.01);
      break;
    case v1::PATTERN_FAMILY_N_M:
      EXPECT_EQ(got.n(), want.n());
      EXPECT_EQ(got.m(), want.m());
      break;
    case v1::PATTERN_FAMILY_ROW_SPARSE: EXPECT_NEAR(got.sparsity(), want.sparsity(), 1.0 / rows); break;
    case v1::PATTERN_FAMILY_COLUMN_SPARSE: EXPECT_NEAR(got.sparsity(), want.sparsity(), 1.0 / cols); break;
    case v1::PATTERN_FAMILY_BANDED: EXPECT_EQ(got.half_bandwidth(), want.half_bandwidth()); break;
    case v1::PATTERN_FAMILY_BLOCK_DIAGONAL: EXPECT_EQ(got.num_blocks(), want.num_blocks()); break;
    default: break;
  }
}

TEST(PatternAnalyzerTest, RecoversEveryGeneratedFamilyAndItsParameter) {
  using F = v1::PatternFamily;
  const std::vector<RecoveryCase> cases = {
      {Spec(v1::PATTERN_FAMILY_DENSE), 64, 96},
      {Spec(v1::PATTERN_FAMILY_DENSE), 7, 3},
      {Unstructured(0.9, false), 512, 512},
      {Unstructured(0.5, false), 100, 37},
      {Unstructured(0.98, false), 512, 512},
      {Unstructured(0.3, false), 256, 1000},
      {Unstructured(0.9, true), 512, 512},
      {Unstructured(0.7, true), 300, 200},
      {Unstructured(0.5, true), 512, 1024},
      {Nm(2, 4), 96, 128},
      {Nm(1, 4), 100, 37},
      {Nm(4, 8), 512, 512},
      {Nm(2, 8), 33, 250},
      {Nm(1, 2), 64, 64},
      {Nm(3, 7), 10, 50},
      {Nm(16, 32), 128, 1000},
      {Block(32, 32, 0.8), 512, 512},
      {Block(16, 16, 0.9), 512, 512},
      {Block(64, 64, 0.5), 1024, 1024},
      {Block(1, 4, 0.7), 100, 37},
      {Block(4, 1, 0.5), 96, 64},
      {Block(8, 2, 0.75), 200, 300},
      {Block(3, 5, 0.6), 100, 37},
      {Sparse(F::PATTERN_FAMILY_ROW_SPARSE, 0.7), 200, 100},
      {Sparse(F::PATTERN_FAMILY_ROW_SPARSE, 0.3), 7, 96},
      {Sparse(F::PATTERN_FAMILY_COLUMN_SPARSE, 0.5), 100, 37},
      {Sparse(F::PATTERN_FAMILY_COLUMN_SPARSE, 0.9), 512, 512},
      {Banded(8), 512, 512},
      {Banded(3), 100, 37},
      {Banded(20), 300, 1000},
      {Banded(0), 64, 64},
      {BlockDiagonal(4), 512, 512},
      {BlockDiagonal(3), 100, 37},
      {BlockDiagonal(16), 256, 1024},
  };
  for (const RecoveryCase& c : cases) {
    for (uint64_t seed : {1, 2, 3}) {
      SCOPED_TRACE(fmt::format("{} {}x{} seed {}", c.pattern.ShortDebugString(), c.rows, c.cols, seed));
      auto m = GenerateMatrix(c.pattern, c.rows, c.cols, seed, v1::DTYPE_FP16);
      ASSERT_TRUE(m.ok()) << m.status();
      const PatternFeatures f = AnalyzePattern(*m);
      EXPECT_EQ(f.rows, c.rows);
      EXPECT_EQ(f.nnz, m->nnz());
      ExpectRecovered(c.pattern, f, c.rows, c.cols);
      EXPECT_FALSE(f.evidence.empty());
    }
  }
}

CsrMatrix FromRows(int64_t cols, const std::vector<std::vector<int32_t>>& rows) {
  CsrMatrix m;
  m.rows = static_cast<int64_t>(rows.size());
  m.cols = cols;
  m.row_offsets.push_back(0);
  for (const auto& row : rows) {
    m.col_indices.insert(m.col_indices.end(), row.begin(), row.end());
    m.row_offsets.push_back(static_cast<int32_t>(m.col_indices.size()));
  }
  return m;
}

TEST(PatternMeasuresTest, LengthStatsOfKnownLengths) {
  const std::vector<int64_t> lengths = {0, 0, 2, 4, 4};
  const LengthStats s = ComputeLengthStats(lengths, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.0);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(3.2));
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.max, 4);
  EXPECT_EQ(s.empty, 2);
  EXPECT_EQ(s.full, 2);
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(3.2) / 2);
  // Gini = sum |xi - xj| / (2 n^2 mean) = 48 / 100.
  EXPECT_NEAR(s.gini, 0.48, 1e-12);
  EXPECT_DOUBLE_EQ(ComputeLengthStats(std::vector<int64_t>{3, 3, 3}, 5).gini, 0.0);
}

TEST(PatternMeasuresTest, NmConformanceCountsThePartialFinalGroup) {
  // 2 rows x 10 columns, groups of 4: [0,4) [4,8) [8,10). Row 0 conforms to 2:4 everywhere; row 1
  // has 3 in its first group and 2 in its partial group (conforming: at most 2).
  const CsrMatrix m = FromRows(10, {{0, 3, 5, 8}, {0, 1, 2, 8, 9}});
  const NmConformance c = MeasureNmConformance(m, 2, 4);
  EXPECT_EQ(c.groups, 6);
  EXPECT_EQ(c.conforming_groups, 5);
  EXPECT_TRUE(c.partial_final_group);
  // 1:2 over 5 pairs a row: only row 1's pairs {0, 1} and {8, 9} hold two.
  EXPECT_EQ(MeasureNmConformance(m, 1, 2).conforming_groups, 8);
  EXPECT_FALSE(MeasureNmConformance(m, 1, 2).partial_final_group);
}

TEST(PatternMeasuresTest, BlockFillAndBandwidth) {
  // 4x6: a full 2x2 block at (0,0), one entry in block (1,2), the band of the scaled diagonal.
  const CsrMatrix m = FromRows(6, {{0, 1}, {0, 1}, {}, {5}});
  const BlockFill b = MeasureBlockFill(m, 2, 2);
  EXPECT_EQ(b.total_blocks, 6);
  EXPECT_EQ(b.nonempty_blocks, 2);
  EXPECT_DOUBLE_EQ(b.fill, 5.0 / 8.0);
  const Bandwidth band = MeasureBandwidth(m);  // centers 0, 1, 3, 4
  EXPECT_EQ(band.lower, 1);                    // row 1: 1 - 0
  EXPECT_EQ(band.upper, 1);                    // row 0: 1 - 0; row 3: 5 - 4
  EXPECT_EQ(band.half, 1);
  EXPECT_FALSE(IsFullBand(m, band));
}

TEST(PatternAnalyzerTest, EmptyMatrixIsUnstructuredWithoutCrashing) {
  const PatternFeatures f = AnalyzePattern(FromRows(5, {{}, {}, {}}));
  EXPECT_EQ(f.family(), v1::PATTERN_FAMILY_UNSTRUCTURED);
  EXPECT_EQ(f.row_lengths.empty, 3);
  EXPECT_EQ(f.col_lengths.empty, 5);
  CsrMatrix no_rows;
  no_rows.row_offsets = {0};
  EXPECT_EQ(AnalyzePattern(no_rows).family(), v1::PATTERN_FAMILY_UNSTRUCTURED);
}

TEST(PatternAnalyzerTest, SaturatedAtMostNmIsNm) {
  // 2:4 "at most": every group holds 2 but one, which holds 1 (a pruned weight that was already zero).
  const PatternFeatures f = AnalyzePattern(FromRows(8, {{0, 1, 4, 7}, {1, 2, 5, 6}, {0, 3, 4, 5}, {2, 3, 6}}));
  EXPECT_EQ(f.family(), v1::PATTERN_FAMILY_N_M);
  EXPECT_EQ(f.detected.n(), 2);
  EXPECT_EQ(f.detected.m(), 4);
}

TEST(PatternAnalyzerTest, JsonAndSummary) {
  auto m = GenerateMatrix(Block(32, 32, 0.8), 512, 512, 5, v1::DTYPE_FP32);
  ASSERT_TRUE(m.ok());
  const PatternFeatures f = AnalyzePattern(*m);
  const nlohmann::json j = FeaturesToJson(f);
  EXPECT_EQ(j["rows"], 512);
  EXPECT_EQ(j["nnz"], m->nnz());
  EXPECT_EQ(j["family"], "block");
  EXPECT_EQ(j["detected"]["block_rows"], 32);
  EXPECT_EQ(j["n_m"].size(), 5u);
  EXPECT_EQ(j["n_m"][1]["n"], 2);
  EXPECT_EQ(j["n_m"][1]["m"], 4);
  EXPECT_EQ(j["blocks"].size(), 4u);
  EXPECT_DOUBLE_EQ(j["blocks"][2]["fill"].get<double>(), 1.0);  // 32x32
  EXPECT_TRUE(j["evidence"].is_array());
  EXPECT_TRUE(j.contains("bandwidth"));
  EXPECT_TRUE(j["row_lengths"].contains("gini"));
  const std::string line = FeaturesSummary(f);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_TRUE(line.starts_with(fmt::format("512x512 nnz={} density={:.3f} block 32x32", m->nnz(), m->Density())))
      << line;
  EXPECT_NE(line.find("2:4 conform"), std::string::npos) << line;
  EXPECT_NE(line.find("block16 fill 1.00"), std::string::npos) << line;
  EXPECT_NE(line.find("empty rows"), std::string::npos) << line;
}

TEST(PatternAnalyzerTest, LlmSizedMatrix) {
  auto m = GenerateMatrix(Unstructured(0.5, false), 4096, 11008, 3, v1::DTYPE_BF16);
  ASSERT_TRUE(m.ok());
  const PatternFeatures f = AnalyzePattern(*m);
  EXPECT_EQ(f.family(), v1::PATTERN_FAMILY_UNSTRUCTURED);
  EXPECT_EQ(f.detected.row_lengths(), v1::ROW_LENGTHS_UNIFORM);
  EXPECT_NEAR(f.n_m[1].conforming_fraction, 11.0 / 16.0, 0.01);  // P(at most 2 of 4) at p = 1/2
}

// A minimal .smtx reader for this test: "M, K, nnz", then M+1 offsets, then nnz column indices.
CsrMatrix LoadSmtx(const fs::path& path) {
  std::ifstream in(path);
  std::string header;
  std::getline(in, header);
  for (char& c : header) c = c == ',' ? ' ' : c;
  std::istringstream fields(header);
  int64_t nnz = 0;
  CsrMatrix m;
  fields >> m.rows >> m.cols >> nnz;
  m.row_offsets.resize(m.rows + 1);
  m.col_indices.resize(nnz);
  for (auto& offset : m.row_offsets) in >> offset;
  for (auto& col : m.col_indices) in >> col;
  return m;
}

TEST(PatternAnalyzerTest, DlmcMatricesAreUnstructured) {
  const fs::path dir = fs::path(SPARSEDITTO_DATA_DIR) / "dlmc";
  const fs::path csv = dir / "dlmc_subset.csv";
  ASSERT_TRUE(fs::exists(csv)) << csv << " (data/dlmc is part of the checkout)";
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);  // header: model,quality,path,name,nrows,ncols,nnz,...
  int matrices = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    ASSERT_GE(cells.size(), 7u) << line;
    const fs::path file = dir.parent_path() / cells[2];
    SCOPED_TRACE(file.string());
    const CsrMatrix m = LoadSmtx(file);
    ASSERT_TRUE(ValidateCsr(m, file.string()).ok()) << ValidateCsr(m, file.string());
    const PatternFeatures f = AnalyzePattern(m);
    EXPECT_EQ(f.rows, std::stoll(cells[4]));
    EXPECT_EQ(f.cols, std::stoll(cells[5]));
    EXPECT_EQ(f.nnz, static_cast<int64_t>(std::stod(cells[6])));
    EXPECT_EQ(f.family(), v1::PATTERN_FAMILY_UNSTRUCTURED) << FeaturesSummary(f);
    EXPECT_NEAR(f.row_lengths.stddev, std::stod(cells[8]), 1e-3);
    ++matrices;
  }
  EXPECT_EQ(matrices, 36);
}

}  // namespace
}  // namespace sparseditto
