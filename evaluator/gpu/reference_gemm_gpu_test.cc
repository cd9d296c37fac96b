// GPU test (label "gpu"): the cuBLAS fp32 reference against a host double-precision product, over
// awkward shapes and every dtype, plus the device helpers it is built on. Skips without a GPU.
#include <cuda_runtime_api.h>

#include <cmath>

#include "common/dtype.h"
#include "evaluator/gpu/device_ops.h"
#include "evaluator/gpu/gpu_test_util.h"
#include "evaluator/gpu/reference_gemm.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "matrix/generators.h"

namespace sparseditto::gpu {
namespace {

using testing::Compare;
using testing::Download;
using testing::FillNaN;
using testing::HostSpmm;
using testing::RandomValues;
using testing::Upload;

struct Case {
  const char* name;
  v1::PatternFamily family;
  double sparsity;
  int64_t rows, cols, n;
};

constexpr Case kCases[] = {
    {"unstructured_7x96_n40", v1::PATTERN_FAMILY_UNSTRUCTURED, 0.7, 7, 96, 40},
    {"row_sparse_65x33_n1_empty_rows", v1::PATTERN_FAMILY_ROW_SPARSE, 0.5, 65, 33, 1},
    {"row_sparse_5x9_n2_all_empty", v1::PATTERN_FAMILY_ROW_SPARSE, 0.95, 5, 9, 2},
    {"unstructured_300x1000_n129", v1::PATTERN_FAMILY_UNSTRUCTURED, 0.95, 300, 1000, 129},
    {"dense_31x17_n3", v1::PATTERN_FAMILY_DENSE, 0.0, 31, 17, 3},
    {"unstructured_1024x4096_n256", v1::PATTERN_FAMILY_UNSTRUCTURED, 0.9, 1024, 4096, 256},
    {"dense_1x1_n1", v1::PATTERN_FAMILY_DENSE, 0.0, 1, 1, 1},
};

class ReferenceGemmGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
  }
};

// The reference is true fp32: its error, relative to the sum of the terms' magnitudes, stays below
// 1e-5 (TF32 would give about 1e-4, fp16 inputs rounded in the product about 5e-4).
// In both layouts (NK: B given as X = B^T, C made as Y = C^T, against the host product transposed).
TEST_F(ReferenceGemmGpuTest, MatchesHostDoubleOnAwkwardShapes) {
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  for (v1::Layout layout : {v1::LAYOUT_KN, v1::LAYOUT_NK}) {
  for (v1::Dtype dtype : {v1::DTYPE_FP32, v1::DTYPE_FP16, v1::DTYPE_BF16}) {
    for (const Case& c : kCases) {
      SCOPED_TRACE(fmt::format("{} {} layout {}", c.name, DtypeName(dtype), static_cast<int>(layout)));
      v1::PatternSpec pattern;
      pattern.set_family(c.family);
      pattern.set_sparsity(c.sparsity);
      auto a = GenerateMatrix(pattern, c.rows, c.cols, /*seed=*/5, dtype);
      ASSERT_TRUE(a.ok()) << a.status();
      if (std::string(c.name).find("all_empty") != std::string::npos) {
        ASSERT_EQ(a->nnz(), 0);
      }
      auto ref = ReferenceGemm::Create(*a, dtype);
      ASSERT_TRUE(ref.ok()) << ref.status();

      const std::vector<float> b = RandomValues(c.cols * c.n, /*seed=*/c.rows * 31 + c.n, dtype);
      auto b_dev = Upload(b, dtype);
      ASSERT_TRUE(b_dev.ok()) << b_dev.status();
      auto c_dev = DeviceBuffer::Allocate(c.rows * c.n * sizeof(float), "C_ref");
      ASSERT_TRUE(c_dev.ok()) << c_dev.status();
      ASSERT_TRUE(FillNaN(c_dev->get(), c_dev->size()).ok());
      ASSERT_TRUE((*ref)->Compute(b_dev->get(), c.n, c_dev->as<float>(), stream, layout).ok());
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      auto got = Download(c_dev->get(), c.rows * c.n, v1::DTYPE_FP32);
      ASSERT_TRUE(got.ok()) << got.status();

      const testing::HostProduct want = testing::HostSpmmIn(layout, *a, b, c.n);
      const testing::Comparison cmp = Compare(*got, want.c, want.abs, testing::OutputWidth(layout, c.rows, c.n),
                                              /*rel_out=*/0, /*rel_acc=*/1e-5);
      EXPECT_TRUE(cmp.ok) << cmp.first_failure;
      EXPECT_LT(cmp.max_scaled_error, 1e-5);
    }
  }
  }
  cudaStreamDestroy(stream);
}

TEST_F(ReferenceGemmGpuTest, RefusesBadArguments) {
  v1::PatternSpec pattern;
  pattern.set_family(v1::PATTERN_FAMILY_DENSE);
  auto a = GenerateMatrix(pattern, 4, 4, 1, v1::DTYPE_FP32);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(ReferenceGemm::Create(*a, v1::DTYPE_UNSPECIFIED).status().code(), absl::StatusCode::kInvalidArgument);
  auto ref = ReferenceGemm::Create(*a, v1::DTYPE_FP32);
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ((*ref)->Compute(nullptr, 0, nullptr, nullptr).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*ref)->Compute(nullptr, 4, nullptr, nullptr, static_cast<v1::Layout>(9)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ReferenceGemmGpuTest, DensifyMatchesHostDensifyInEveryDtype) {
  v1::PatternSpec pattern;
  pattern.set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  pattern.set_sparsity(0.6);
  for (v1::Dtype dtype : {v1::DTYPE_FP32, v1::DTYPE_FP16, v1::DTYPE_BF16}) {
    auto a = GenerateMatrix(pattern, 37, 53, 9, dtype);
    ASSERT_TRUE(a.ok());
    auto dense = DensifyOnDevice(*a, dtype, "test dense");
    ASSERT_TRUE(dense.ok()) << dense.status();
    auto got = Download(dense->get(), a->rows * a->cols, dtype);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, Densify(*a)) << DtypeName(dtype);
  }
}

TEST_F(ReferenceGemmGpuTest, ConvertToFloatIsExact) {
  for (v1::Dtype dtype : {v1::DTYPE_FP32, v1::DTYPE_FP16, v1::DTYPE_BF16}) {
    const std::vector<float> values = RandomValues(100003, 4, dtype);
    auto in = Upload(values, dtype);
    auto out = DeviceBuffer::Allocate(values.size() * 4, "out");
    ASSERT_TRUE(in.ok() && out.ok());
    ASSERT_TRUE(ConvertToFloatOnDevice(in->get(), dtype, values.size(), out->as<float>(), nullptr).ok());
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    auto got = Download(out->get(), values.size(), v1::DTYPE_FP32);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, values) << DtypeName(dtype);
  }
}

}  // namespace
}  // namespace sparseditto::gpu
