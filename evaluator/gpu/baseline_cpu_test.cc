// CPU tests (no GPU needed): baseline cache keys, which baselines apply to which pattern, the block
// format conversions, the block-size choice, and the cuSPARSELt search path and its refusal.
#include <cstdlib>

#include "evaluator/gpu/baseline.h"
#include "evaluator/gpu/baseline_cache_key.h"
#include "evaluator/gpu/block_formats.h"
#include "evaluator/gpu/cusparse_spmm_baseline.h"
#include "evaluator/gpu/cusparselt_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "matrix/generators.h"

namespace sparseditto::gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::PatternSpec Pattern(v1::PatternFamily family, double sparsity = 0, int block_rows = 0, int block_cols = 0,
                        int n = 0, int m = 0) {
  v1::PatternSpec p;
  p.set_family(family);
  p.set_sparsity(sparsity);
  p.set_block_rows(block_rows);
  p.set_block_cols(block_cols);
  p.set_n(n);
  p.set_m(m);
  return p;
}

CsrMatrix Small() {  // [[1 0 2] [0 0 0] [0 3 0]]
  CsrMatrix m;
  m.rows = 3;
  m.cols = 3;
  m.row_offsets = {0, 2, 2, 3};
  m.col_indices = {0, 2, 1};
  m.values = {1.0f, 2.0f, 3.0f};
  return m;
}

TEST(BaselineCacheKeyTest, StableAndSensitiveToEveryInput) {
  const CsrMatrix a = Small();
  const std::string key = BaselineCacheKey(a, v1::DTYPE_FP16, 64, "NVIDIA H200", "cusparse_csr");
  EXPECT_EQ(key.size(), 16u);
  EXPECT_EQ(key, BaselineCacheKey(Small(), v1::DTYPE_FP16, 64, "NVIDIA H200", "cusparse_csr"));
  // Golden: the key format is part of the on-disk cache; changing it must be deliberate.
  EXPECT_EQ(key, "a765bc124de2e6e9");  // checked against an independent Python FNV-1a (v1's d9d4b615f5192e96 too)

  CsrMatrix value_changed = a;
  value_changed.values[1] = 2.5f;
  CsrMatrix structure_changed = a;
  structure_changed.col_indices[2] = 0;
  CsrMatrix shape_changed = a;
  shape_changed.cols = 4;
  for (const CsrMatrix& other : {value_changed, structure_changed, shape_changed}) {
    EXPECT_NE(BaselineCacheKey(other, v1::DTYPE_FP16, 64, "NVIDIA H200", "cusparse_csr"), key);
  }
  EXPECT_NE(BaselineCacheKey(a, v1::DTYPE_BF16, 64, "NVIDIA H200", "cusparse_csr"), key);
  EXPECT_NE(BaselineCacheKey(a, v1::DTYPE_FP16, 65, "NVIDIA H200", "cusparse_csr"), key);
  EXPECT_NE(BaselineCacheKey(a, v1::DTYPE_FP16, 64, "NVIDIA A100", "cusparse_csr"), key);
  EXPECT_NE(BaselineCacheKey(a, v1::DTYPE_FP16, 64, "NVIDIA H200", "cublas_dense"), key);
  // A timing in the NK layout is another entry; KN keys are those of before layouts existed.
  EXPECT_NE(BaselineCacheKey(a, v1::DTYPE_FP16, 64, "NVIDIA H200", "cusparse_csr", v1::LAYOUT_NK), key);
  EXPECT_EQ(BaselineCacheKey(a, v1::DTYPE_FP16, 64, "NVIDIA H200", "cusparse_csr", v1::LAYOUT_KN), key);
  // Length-prefixed strings: moving characters between fields changes the key.
  EXPECT_NE(BaselineCacheKey(a, v1::DTYPE_FP16, 64, "ab", "c"), BaselineCacheKey(a, v1::DTYPE_FP16, 64, "a", "bc"));
  EXPECT_EQ(BaselineCacheKey(MatrixFingerprint(a), v1::DTYPE_FP16, 64, "NVIDIA H200", "cusparse_csr"), key);
}

TEST(BaselineCacheKeyTest, GeneratedMatricesWithTheSameSeedShareAKey) {
  const v1::PatternSpec p = Pattern(v1::PATTERN_FAMILY_UNSTRUCTURED, 0.9);
  auto a = GenerateMatrix(p, 200, 300, 7, v1::DTYPE_FP16);
  auto b = GenerateMatrix(p, 200, 300, 7, v1::DTYPE_FP16);
  auto c = GenerateMatrix(p, 200, 300, 8, v1::DTYPE_FP16);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(MatrixFingerprint(*a), MatrixFingerprint(*b));
  EXPECT_NE(MatrixFingerprint(*a), MatrixFingerprint(*c));
}

TEST(MakeBaselinesTest, PicksTheBaselinesThatApplyPerFamily) {
  using F = v1::PatternFamily;
  EXPECT_THAT(BaselineNames(Pattern(F::PATTERN_FAMILY_UNSTRUCTURED, 0.9), v1::DTYPE_FP16),
              ElementsAre("cublas_dense", "cusparse_csr"));
  EXPECT_THAT(BaselineNames(Pattern(F::PATTERN_FAMILY_BLOCK, 0.9, 16, 16), v1::DTYPE_FP32),
              ElementsAre("cublas_dense", "cusparse_csr", "cusparse_bsr", "cusparse_blocked_ell"));
  EXPECT_THAT(BaselineNames(Pattern(F::PATTERN_FAMILY_N_M, 0, 0, 0, 2, 4), v1::DTYPE_FP16),
              ElementsAre("cublas_dense", "cusparse_csr", "cusparselt_2to4"));
  EXPECT_THAT(BaselineNames(Pattern(F::PATTERN_FAMILY_N_M, 0, 0, 0, 1, 4), v1::DTYPE_BF16),
              ElementsAre("cublas_dense", "cusparse_csr", "cusparselt_2to4"));
  EXPECT_THAT(BaselineNames(Pattern(F::PATTERN_FAMILY_N_M, 0, 0, 0, 1, 2), v1::DTYPE_BF16),
              ElementsAre("cublas_dense", "cusparse_csr", "cusparselt_2to4"));
  EXPECT_THAT(BaselineNames(Pattern(F::PATTERN_FAMILY_N_M, 0, 0, 0, 2, 4), v1::DTYPE_FP32),
              ElementsAre("cublas_dense", "cusparse_csr"));
  EXPECT_THAT(BaselineNames(Pattern(F::PATTERN_FAMILY_N_M, 0, 0, 0, 4, 8), v1::DTYPE_FP16),
              ElementsAre("cublas_dense", "cusparse_csr"));
  EXPECT_THAT(BaselineNames(Pattern(F::PATTERN_FAMILY_N_M, 0, 0, 0, 3, 4), v1::DTYPE_FP16),
              ElementsAre("cublas_dense", "cusparse_csr"));
  EXPECT_THAT(BaselineNames(Pattern(F::PATTERN_FAMILY_BANDED), v1::DTYPE_FP16),
              ElementsAre("cublas_dense", "cusparse_csr"));
  const v1::PatternSpec block = Pattern(F::PATTERN_FAMILY_BLOCK, 0.5, 8, 8);
  std::vector<std::string> made;
  for (const auto& b : MakeBaselines(block, v1::DTYPE_FP16)) made.push_back(b->name());  // no GPU touched
  EXPECT_EQ(made, BaselineNames(block, v1::DTYPE_FP16));
}

TEST(BlockFormatsTest, BsrAndBlockedEllHoldExactlyTheMatrix) {
  const v1::PatternSpec p = Pattern(v1::PATTERN_FAMILY_BLOCK, 0.6, 4, 4);
  auto a = GenerateMatrix(p, 32, 48, 3, v1::DTYPE_FP32);
  ASSERT_TRUE(a.ok());
  const BlockStructure s = FindBlocks(*a, 4);
  EXPECT_EQ(s.block_rows, 8);
  EXPECT_EQ(s.block_cols, 12);
  EXPECT_EQ(s.num_blocks() * 16, a->nnz());  // generated blocks are full
  const std::vector<float> dense = Densify(*a);

  std::vector<float> from_bsr(dense.size(), 0.0f);
  const std::vector<float> bsr = BsrValues(*a, s);
  for (int64_t br = 0; br < s.block_rows; ++br) {
    for (int32_t i = s.row_offsets[br]; i < s.row_offsets[br + 1]; ++i) {
      for (int r = 0; r < 4; ++r) {
        for (int c = 0; c < 4; ++c) from_bsr[(br * 4 + r) * 48 + s.col_indices[i] * 4 + c] = bsr[i * 16 + r * 4 + c];
      }
    }
  }
  EXPECT_EQ(from_bsr, dense);

  const BlockedEll ell = ToBlockedEll(*a, s);
  const int64_t width = s.max_blocks_per_row();
  EXPECT_EQ(ell.ell_cols, width * 4);
  std::vector<float> from_ell(dense.size(), 0.0f);
  for (int64_t r = 0; r < 32; ++r) {
    for (int64_t slot = 0; slot < width; ++slot) {
      const int32_t bc = ell.col_indices[(r / 4) * width + slot];
      for (int c = 0; c < 4; ++c) {
        const float v = ell.values[r * ell.ell_cols + slot * 4 + c];
        if (bc < 0) {
          EXPECT_EQ(v, 0.0f);
        } else {
          from_ell[r * 48 + bc * 4 + c] = v;
        }
      }
    }
  }
  EXPECT_EQ(from_ell, dense);
}

TEST(BlockFormatsTest, FindsPartialBlocksOfAHandMatrix) {
  CsrMatrix m;  // 4x4: entries at (0,3), (1,0), (3,3)
  m.rows = m.cols = 4;
  m.row_offsets = {0, 1, 2, 2, 3};
  m.col_indices = {3, 0, 3};
  m.values = {1, 2, 3};
  const BlockStructure s = FindBlocks(m, 2);
  EXPECT_THAT(s.row_offsets, ElementsAre(0, 2, 3));
  EXPECT_THAT(s.col_indices, ElementsAre(0, 1, 1));
  EXPECT_THAT(BsrValues(m, s), ElementsAre(0, 0, 2, 0, 0, 1, 0, 0, 0, 0, 0, 3));
}

TEST(SquareBlockSizeTest, ChoosesADividingSquareBlockOrRefuses) {
  CsrMatrix a;
  a.rows = 96;
  a.cols = 64;
  EXPECT_EQ(*SquareBlockSize(a, Pattern(v1::PATTERN_FAMILY_BLOCK, 0.5, 16, 16), "BSR"), 16);
  EXPECT_EQ(*SquareBlockSize(a, Pattern(v1::PATTERN_FAMILY_BLOCK, 0.5, 8, 4), "BSR"), 4);
  EXPECT_EQ(SquareBlockSize(a, Pattern(v1::PATTERN_FAMILY_BLOCK, 0.5, 3, 2), "BSR").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(SquareBlockSize(a, Pattern(v1::PATTERN_FAMILY_BLOCK, 0.5, 5, 5), "BSR").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(SquareBlockSize(a, Pattern(v1::PATTERN_FAMILY_UNSTRUCTURED, 0.5), "BSR").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(CusparseLtLoaderTest, SearchesTheEnvironmentFirstAndExplainsAFailure) {
  ASSERT_EQ(setenv("SPARSEDITTO_CUSPARSELT", "/nonexistent/sd_dir:/nonexistent/libsd_lt.so", 1), 0);
  const std::vector<std::string> paths = lt::CusparseLtCandidatePaths();
  ASSERT_GE(paths.size(), 3u);
  EXPECT_EQ(paths[0], "/nonexistent/sd_dir/libcusparseLt.so.0");
  EXPECT_EQ(paths[1], "/nonexistent/libsd_lt.so");
  EXPECT_EQ(paths[2], "libcusparseLt.so.0");
  auto api = lt::LoadCusparseLt();
  if (!api.ok()) {  // the usual case on a build machine
    EXPECT_EQ(api.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(api.status().message(), HasSubstr("cuSPARSELt not found: searched"));
    EXPECT_THAT(api.status().message(), HasSubstr("/nonexistent/sd_dir/libcusparseLt.so.0"));
  }
}

TEST(CusparseLtBaselineTest, RefusesFp32BeforeTouchingTheGpu) {
  const v1::PatternSpec p = Pattern(v1::PATTERN_FAMILY_N_M, 0, 0, 0, 2, 4);
  auto baselines = MakeBaselines(p, v1::DTYPE_FP16);
  ASSERT_EQ(baselines.back()->name(), "cusparselt_2to4");
  const absl::Status s = baselines.back()->Prepare(Small(), v1::DTYPE_FP32, p, {8}, v1::LAYOUT_KN);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("fp16/bf16"));
}

TEST(BlockBaselinesTest, RefuseARaggedShapeBeforeTouchingTheGpu) {
  const v1::PatternSpec p = Pattern(v1::PATTERN_FAMILY_BLOCK, 0.5, 4, 4);
  auto a = GenerateMatrix(p, 30, 40, 1, v1::DTYPE_FP32);
  ASSERT_TRUE(a.ok());
  for (auto& b : MakeBaselines(p, v1::DTYPE_FP16)) {
    if (b->name() != "cusparse_bsr" && b->name() != "cusparse_blocked_ell") continue;
    const absl::Status s = b->Prepare(*a, v1::DTYPE_FP16, p, {4}, v1::LAYOUT_KN);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << b->name() << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr("not a multiple of the block size 4"));
  }
}

TEST(BlockBaselinesTest, BlockedEllIsAbsentForFp32) {
  const v1::PatternSpec p = Pattern(v1::PATTERN_FAMILY_BLOCK, 0.5, 4, 4);
  auto a = GenerateMatrix(p, 32, 32, 1, v1::DTYPE_FP32);
  ASSERT_TRUE(a.ok());
  for (auto& b : MakeBaselines(p, v1::DTYPE_FP32)) {
    if (b->name() != "cusparse_blocked_ell") continue;
    const absl::Status s = b->Prepare(*a, v1::DTYPE_FP32, p, {4}, v1::LAYOUT_KN);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_THAT(s.message(), HasSubstr("TF32"));
  }
}

}  // namespace
}  // namespace sparseditto::gpu
