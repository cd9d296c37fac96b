// CPU test of the dense_cublas seed's host side: the densified A holds every value, in the dtype's bits, at its
// row-major place, and zeros elsewhere. No CUDA runtime or cuBLAS calls.
#include "kernels/seeds/dense_cublas.cu"

#include "gtest/gtest.h"

namespace {

TEST(DenseCublas, DensifyPlacesEveryValueInTheDtype) {
  // 3 x 5: row 0 = {1: 1.5, 4: -2}, row 1 empty, row 2 = {0: 0.25, 2: 3}.
  const int32_t offsets[] = {0, 2, 2, 4};
  const int32_t cols[] = {1, 4, 0, 2};
  const float values[] = {1.5f, -2.0f, 0.25f, 3.0f};
  sd_problem p{};
  p.rows = 3;
  p.cols = 5;
  p.nnz = 4;
  p.row_offsets = offsets;
  p.col_indices = cols;
  p.values = values;
  std::vector<float> want(15, 0.0f);
  want[1] = 1.5f, want[4] = -2.0f, want[10] = 0.25f, want[12] = 3.0f;
  for (int32_t dtype : {SD_DTYPE_FP32, SD_DTYPE_FP16, SD_DTYPE_BF16}) {
    p.dtype = dtype;
    const std::vector<unsigned char> dense = Densify(&p);
    ASSERT_EQ(dense.size(), 15 * ElementBytes(dtype));
    for (int i = 0; i < 15; ++i) {
      float got;
      if (dtype == SD_DTYPE_FP32) {
        std::memcpy(&got, &dense[i * 4], 4);
      } else {
        uint16_t bits;
        std::memcpy(&bits, &dense[i * 2], 2);
        got = dtype == SD_DTYPE_FP16 ? __half2float(__ushort_as_half(bits))
                                     : __bfloat162float(__ushort_as_bfloat16(bits));
      }
      EXPECT_EQ(got, want[i]) << "dtype " << dtype << " element " << i;
    }
  }
}

}  // namespace
