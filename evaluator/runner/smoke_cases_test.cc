#include "evaluator/runner/smoke_cases.h"

#include "gtest/gtest.h"
#include "matrix/generators.h"

namespace sparseditto {
namespace {

v1::Task MakeTask(v1::PatternSpec pattern, std::vector<int64_t> n) {
  v1::Task task;
  task.set_dtype(v1::DTYPE_FP16);
  *task.mutable_pattern() = pattern;
  for (int64_t v : n) task.add_n(v);
  return task;
}

// A pattern of `family` with the fields given (zero: unset).
v1::PatternSpec Spec(v1::PatternFamily family, double sparsity = 0, int block_rows = 0, int block_cols = 0) {
  v1::PatternSpec p;
  p.set_family(family);
  p.set_sparsity(sparsity);
  p.set_block_rows(block_rows);
  p.set_block_cols(block_cols);
  return p;
}

v1::PatternSpec NM(int n, int m) {
  v1::PatternSpec p = Spec(v1::PATTERN_FAMILY_N_M);
  p.set_n(n);
  p.set_m(m);
  return p;
}

v1::PatternSpec Banded(int half_bandwidth) {
  v1::PatternSpec p = Spec(v1::PATTERN_FAMILY_BANDED);
  p.set_half_bandwidth(half_bandwidth);
  return p;
}

TEST(SmokeCasesTest, EveryFamilyGetsValidSmallCasesWithNOneAndOdd) {
  struct Case { const char* name; v1::PatternSpec pattern; int64_t rows, cols; int64_t row_unit, col_unit; };
  v1::PatternSpec diag = Spec(v1::PATTERN_FAMILY_BLOCK_DIAGONAL);
  diag.set_num_blocks(8);
  const Case cases[] = {
      {"unstructured", Spec(v1::PATTERN_FAMILY_UNSTRUCTURED, 0.9), 4096, 4096, 1, 1},
      {"block aligned", Spec(v1::PATTERN_FAMILY_BLOCK, 0.8, 32, 16), 4096, 4096, 32, 16},
      {"n:m aligned", NM(2, 4), 4096, 11008, 1, 4},
      {"banded", Banded(100), 1024, 1024, 1, 1},
      {"block diagonal", diag, 4096, 4096, 8, 8},
      {"row sparse", Spec(v1::PATTERN_FAMILY_ROW_SPARSE, 0.7), 512, 512, 1, 1},
      {"file", Spec(v1::PATTERN_FAMILY_FILE), 2048, 512, 1, 1},
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

TEST(TaskCropCaseTest, KeepsTheFirstRowsEveryColumnAndEveryTaskN) {
  const v1::PatternSpec unstructured = Spec(v1::PATTERN_FAMILY_UNSTRUCTURED, 0.9);
  struct Case { const char* name; v1::PatternSpec pattern; int64_t rows, cols, crop_rows; v1::PatternFamily declared; };
  const Case cases[] = {
      {"unstructured", unstructured, 1000, 700, kTaskCropRows, v1::PATTERN_FAMILY_UNSTRUCTURED},
      {"block 32", Spec(v1::PATTERN_FAMILY_BLOCK, 0.8, 32, 16), 1024, 512, 256, v1::PATTERN_FAMILY_BLOCK},
      // 256 is not a multiple of 48: five block rows (240)
      {"block 48", Spec(v1::PATTERN_FAMILY_BLOCK, 0.8, 48, 16), 960, 512, 240, v1::PATTERN_FAMILY_BLOCK},
      {"2:4", NM(2, 4), 600, 1100, kTaskCropRows, v1::PATTERN_FAMILY_N_M},
      {"banded", Banded(40), 300, 300, kTaskCropRows, v1::PATTERN_FAMILY_BANDED},
      {"row sparse", Spec(v1::PATTERN_FAMILY_ROW_SPARSE, 0.7), 500, 96, kTaskCropRows, v1::PATTERN_FAMILY_ROW_SPARSE},
      {"fewer rows than the crop", unstructured, 100, 4000, 100, v1::PATTERN_FAMILY_UNSTRUCTURED},
      {"file (declared unstructured)", Spec(v1::PATTERN_FAMILY_FILE), 400, 64, kTaskCropRows,
       v1::PATTERN_FAMILY_UNSTRUCTURED},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    v1::PatternSpec generated = c.pattern;
    if (generated.family() == v1::PATTERN_FAMILY_FILE) generated = unstructured;
    auto matrix = GenerateMatrix(generated, c.rows, c.cols, 11, v1::DTYPE_FP16);
    ASSERT_TRUE(matrix.ok()) << matrix.status();
    auto crop = MakeTaskCropCase(MakeTask(c.pattern, {2048, 16, kSmokeMaxN + 1, 16}), *matrix);
    ASSERT_TRUE(crop.ok()) << crop.status();
    EXPECT_TRUE(ValidateCsr(crop->matrix, crop->name).ok());
    EXPECT_EQ(crop->matrix.rows, c.crop_rows);
    EXPECT_EQ(crop->matrix.cols, c.cols);
    const int64_t nnz = matrix->row_offsets[c.crop_rows];
    EXPECT_EQ(crop->matrix.row_offsets,
              std::vector<int32_t>(matrix->row_offsets.begin(), matrix->row_offsets.begin() + c.crop_rows + 1));
    EXPECT_EQ(crop->matrix.col_indices,
              std::vector<int32_t>(matrix->col_indices.begin(), matrix->col_indices.begin() + nnz));
    EXPECT_EQ(crop->matrix.values, std::vector<float>(matrix->values.begin(), matrix->values.begin() + nnz));
    EXPECT_EQ(crop->n_values, (std::vector<int64_t>{16, kSmokeMaxN + 1, 2048}));  // every n, uncapped, once
    EXPECT_EQ(crop->pattern.family(), c.declared);
    if (c.declared == v1::PATTERN_FAMILY_UNSTRUCTURED && c.pattern.family() == v1::PATTERN_FAMILY_FILE) {
      EXPECT_NEAR(crop->pattern.sparsity(), 1.0 - crop->matrix.Density(), 1e-9);
    }
  }
}

TEST(TaskCropCaseTest, RefusesBlockDiagonalAndEmptyOrBrokenMatrices) {
  v1::PatternSpec diag;
  diag.set_family(v1::PATTERN_FAMILY_BLOCK_DIAGONAL);
  diag.set_num_blocks(4);
  auto diag_matrix = GenerateMatrix(diag, 64, 64, 1, v1::DTYPE_FP16);
  ASSERT_TRUE(diag_matrix.ok());
  EXPECT_EQ(MakeTaskCropCase(MakeTask(diag, {16}), *diag_matrix).status().code(),
            absl::StatusCode::kFailedPrecondition);

  v1::PatternSpec p;
  p.set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  p.set_sparsity(0.5);
  EXPECT_EQ(MakeTaskCropCase(MakeTask(p, {16}), CsrMatrix{}).status().code(), absl::StatusCode::kInvalidArgument);
  auto broken = GenerateMatrix(p, 300, 40, 2, v1::DTYPE_FP16);
  ASSERT_TRUE(broken.ok());
  broken->values.pop_back();  // one value short: the crop must not read past it
  const absl::Status status = MakeTaskCropCase(MakeTask(p, {16}), *broken).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("task crop"), std::string::npos) << status;
  broken->values.clear();  // a pattern without values (valid CSR): nothing to hand a kernel
  EXPECT_EQ(MakeTaskCropCase(MakeTask(p, {16}), *broken).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sparseditto
