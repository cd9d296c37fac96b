#include "evaluator/runner/smoke_cases.h"

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

v1::Task MakeTask(v1::PatternSpec pattern, std::vector<int64_t> n) {
  v1::Task task;
  task.set_dtype(v1::DTYPE_FP16);
  *task.mutable_pattern() = pattern;
  for (int64_t v : n) task.add_n(v);
  return task;
}

TEST(SmokeCasesTest, EveryFamilyGetsValidSmallCasesWithNOneAndOdd) {
  struct Case { const char* name; v1::PatternSpec pattern; int64_t rows, cols; int64_t row_unit, col_unit; };
  auto spec = [](v1::PatternFamily f) { v1::PatternSpec p; p.set_family(f); return p; };
  v1::PatternSpec unstructured = spec(v1::PATTERN_FAMILY_UNSTRUCTURED);
  unstructured.set_sparsity(0.9);
  v1::PatternSpec block = spec(v1::PATTERN_FAMILY_BLOCK);
  block.set_sparsity(0.8);
  block.set_block_rows(32);
  block.set_block_cols(16);
  v1::PatternSpec nm = spec(v1::PATTERN_FAMILY_N_M);
  nm.set_n(2);
  nm.set_m(4);
  v1::PatternSpec banded = spec(v1::PATTERN_FAMILY_BANDED);
  banded.set_half_bandwidth(100);
  v1::PatternSpec diag = spec(v1::PATTERN_FAMILY_BLOCK_DIAGONAL);
  diag.set_num_blocks(8);
  v1::PatternSpec rows = spec(v1::PATTERN_FAMILY_ROW_SPARSE);
  rows.set_sparsity(0.7);
  const Case cases[] = {
      {"unstructured", unstructured, 4096, 4096, 1, 1},
      {"block aligned", block, 4096, 4096, 32, 16},
      {"n:m aligned", nm, 4096, 11008, 1, 4},
      {"banded", banded, 1024, 1024, 1, 1},
      {"block diagonal", diag, 4096, 4096, 8, 8},
      {"row sparse", rows, 512, 512, 1, 1},
      {"file", spec(v1::PATTERN_FAMILY_FILE), 2048, 512, 1, 1},
  };
  for (const Case& c : cases) {
    auto smoke = MakeSmokeCases(MakeTask(c.pattern, {128, 2048}), c.rows, c.cols, 5);
    ASSERT_TRUE(smoke.ok()) << c.name << ": " << smoke.status();
    ASSERT_GE(smoke->size(), 3u) << c.name;
    for (const SmokeCase& s : *smoke) {
      SCOPED_TRACE(std::string(c.name) + " " + s.name);
      EXPECT_TRUE(ValidateCsr(s.matrix, s.name).ok());
      EXPECT_EQ(s.matrix.rows % c.row_unit, 0);
      EXPECT_EQ(s.matrix.cols % c.col_unit, 0);
      EXPECT_EQ(s.n_values, (std::vector<int64_t>{1, 7, 128, kSmokeMaxN}));  // the task's n: 128 and 2048
      EXPECT_NE(s.pattern.family(), v1::PATTERN_FAMILY_FILE);
    }
  }
}

TEST(SmokeCasesTest, UnstructuredIncludesADenseRowAndEmptyRows) {
  v1::PatternSpec p;
  p.set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  p.set_sparsity(0.5);
  auto smoke = MakeSmokeCases(MakeTask(p, {16}), 4096, 4096, 1);
  ASSERT_TRUE(smoke.ok());
  const SmokeCase& extreme = smoke->back();
  EXPECT_NE(extreme.name.find("dense_and_empty_rows"), std::string::npos);
  EXPECT_EQ(extreme.matrix.RowLength(0), extreme.matrix.cols);
  EXPECT_EQ(extreme.matrix.RowLength(1), 0);
  EXPECT_EQ(extreme.matrix.RowLength(2), 0);
  EXPECT_TRUE(ValidateCsr(extreme.matrix, "extreme").ok());
}

TEST(SmokeCasesTest, RaggedTaskShapesGiveRaggedSmokeShapes) {
  v1::PatternSpec block;
  block.set_family(v1::PATTERN_FAMILY_BLOCK);
  block.set_sparsity(0.5);
  block.set_block_rows(4);
  block.set_block_cols(4);
  auto smoke = MakeSmokeCases(MakeTask(block, {1}), 4099, 4097, 1);  // not multiples of 4
  ASSERT_TRUE(smoke.ok()) << smoke.status();
  EXPECT_EQ(smoke->front().matrix.rows, 7);
  EXPECT_EQ(smoke->front().n_values, (std::vector<int64_t>{1, 7}));
}

TEST(SmokeCasesTest, NValuesAddTheTasksSmallestAndLargestOnce) {
  v1::PatternSpec p;
  p.set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  p.set_sparsity(0.9);
  struct Case { std::vector<int64_t> task_n, smoke_n; };
  const Case cases[] = {
      {{16, 128, 2048}, {1, 7, 16, kSmokeMaxN}},
      {{16}, {1, 7, 16}},
      {{7, 300}, {1, 7, 300}},
      {{512, 600}, {1, 7, 256, 600}},
      {{1}, {1, 7}},
      {{kSmokeMaxN + 1}, {1, 7, 256, kSmokeMaxN}},
  };
  for (const Case& c : cases) {
    auto smoke = MakeSmokeCases(MakeTask(p, c.task_n), 4096, 4096, 3);
    ASSERT_TRUE(smoke.ok()) << smoke.status();
    for (const SmokeCase& s : *smoke) EXPECT_EQ(s.n_values, c.smoke_n) << s.name << ", task n " << c.task_n.front();
  }
}

}  // namespace
}  // namespace sparseditto
