// CPU test of the dense_cublaslt seed's host side: the operands of the transposed product, the choice of the
// fastest algorithm from timings, the alignment test and the densified A. No CUDA runtime or cuBLASLt calls.
#include "kernels/seeds/dense_cublaslt.cu"

#include <string>

#include "gtest/gtest.h"

namespace {

TEST(DenseCublasLt, OperandsOfTheTransposedProduct) {
  struct Case {
    int64_t m, k, n;
  };
  // Awkward shapes first: odd n, M < n, K not a multiple of anything.
  for (const Case& c : {Case{7, 96, 40}, Case{300, 520, 7}, Case{1, 1, 1}, Case{4096, 11008, 2048}}) {
    const LtOperands ops = Operands(c.m, c.k, c.n);
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.k) + " n " + std::to_string(c.n));
    // B^T: n x K over the harness's row-major K x n B, so consecutive columns of B^T are n apart.
    EXPECT_EQ(ops.b_t.rows, static_cast<uint64_t>(c.n));
    EXPECT_EQ(ops.b_t.cols, static_cast<uint64_t>(c.k));
    EXPECT_EQ(ops.b_t.ld, c.n);
    // A^T: K x M over our row-major M x K dense A.
    EXPECT_EQ(ops.a_t.rows, static_cast<uint64_t>(c.k));
    EXPECT_EQ(ops.a_t.cols, static_cast<uint64_t>(c.m));
    EXPECT_EQ(ops.a_t.ld, c.k);
    // C^T: n x M over the harness's row-major M x n C; the product's inner dimensions agree.
    EXPECT_EQ(ops.c_t.rows, ops.b_t.rows);
    EXPECT_EQ(ops.c_t.cols, ops.a_t.cols);
    EXPECT_EQ(ops.c_t.ld, c.n);
    EXPECT_EQ(ops.b_t.cols, ops.a_t.rows);
  }
}

// NK: the harness's X (n x K row-major) is B as K x n column-major (ld K) and its Y (n x M) is C as M x n
// (ld M); the dense A^T (K x M, ld K) is read transposed, so the inner dimensions are A^T's rows and B's.
TEST(DenseCublasLt, OperandsOfTheNkProduct) {
  struct Case {
    int64_t m, k, n;
  };
  for (const Case& c : {Case{7, 96, 40}, Case{300, 520, 7}, Case{1, 1, 1}, Case{4096, 11008, 2048}}) {
    const LtOperands ops = Operands(c.m, c.k, c.n, /*nk=*/true);
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.k) + " n " + std::to_string(c.n));
    EXPECT_EQ(ops.b_t.rows, static_cast<uint64_t>(c.k));
    EXPECT_EQ(ops.b_t.cols, static_cast<uint64_t>(c.n));
    EXPECT_EQ(ops.b_t.ld, c.k);
    EXPECT_EQ(ops.a_t.rows, static_cast<uint64_t>(c.k));
    EXPECT_EQ(ops.a_t.cols, static_cast<uint64_t>(c.m));
    EXPECT_EQ(ops.a_t.ld, c.k);
    EXPECT_EQ(ops.c_t.rows, ops.a_t.cols);  // op(A^T) = A is M x K
    EXPECT_EQ(ops.c_t.cols, ops.b_t.cols);
    EXPECT_EQ(ops.c_t.ld, c.m);
    EXPECT_EQ(ops.a_t.rows, ops.b_t.rows);  // K inner
  }
}

TEST(DenseCublasLt, FastestAlgoTakesTheSmallestMedian) {
  struct Case {
    std::string name;
    std::vector<std::vector<float>> ms;
    int want;
  };
  const Case cases[] = {
      {"the median, not the minimum", {{1.0f, 5.0f, 5.0f}, {2.0f, 2.0f, 2.0f}}, 1},
      {"an algorithm that failed is skipped", {{}, {3.0f, 3.0f, 3.0f}, {4.0f}}, 1},
      {"a tie goes to the heuristic's order", {{2.0f, 2.0f}, {2.0f, 2.0f}}, 0},
      {"every algorithm failed", {{}, {}}, -1},
      {"nothing to choose from", {}, -1},
      {"one timing each", {{0.9f}, {0.5f}, {0.7f}}, 1},
      {"an outlier does not move the median", {{1.0f, 1.0f, 100.0f}, {1.1f, 1.1f, 1.1f}}, 0},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FastestAlgo(c.ms), c.want) << c.name;
  }
}

TEST(DenseCublasLt, AlignedChecksTheAddress) {
  alignas(16) static unsigned char buffer[64];
  EXPECT_TRUE(Aligned(buffer, 16));
  EXPECT_FALSE(Aligned(buffer + 2, 16));
  EXPECT_TRUE(Aligned(buffer + 2, 2));
  EXPECT_FALSE(Aligned(buffer + 1, 2));
}

TEST(DenseCublasLt, DensifyPlacesEveryValueInTheDtype) {
  // 2 x 3: row 0 = {2: -0.5}, row 1 = {0: 1.25, 1: 8}.
  const int32_t offsets[] = {0, 1, 3};
  const int32_t cols[] = {2, 0, 1};
  const float values[] = {-0.5f, 1.25f, 8.0f};
  sd_problem p{};
  p.rows = 2, p.cols = 3, p.nnz = 3;
  p.row_offsets = offsets, p.col_indices = cols, p.values = values;
  const float want[] = {0, 0, -0.5f, 1.25f, 8.0f, 0};
  for (int32_t dtype : {SD_DTYPE_FP32, SD_DTYPE_FP16, SD_DTYPE_BF16}) {
    p.dtype = dtype;
    const std::vector<unsigned char> dense = Densify(&p);
    ASSERT_EQ(dense.size(), 6 * ElementBytes(dtype));
    for (int i = 0; i < 6; ++i) {
      float got;
      if (dtype == SD_DTYPE_FP32) {
        std::memcpy(&got, &dense[i * 4], 4);
      } else {
        uint16_t bits;
        std::memcpy(&bits, &dense[i * 2], 2);
        got = dtype == SD_DTYPE_FP16 ? __half2float(__ushort_as_half(bits)) : __bfloat162float(__ushort_as_bfloat16(bits));
      }
      EXPECT_EQ(got, want[i]) << "dtype " << dtype << " element " << i;
    }
  }
}

}  // namespace
