// GPU test (label "gpu"): every baseline that Prepare accepts computes C = A * B within the dtype's
// tolerance of the cuBLAS fp32 reference, on awkward shapes (ragged, empty rows, all-empty, n = 1)
// of every family it applies to, in fp32, fp16 and bf16, in both layouts (KN, and NK: B given as
// X = B^T, C written as Y = C^T, checked against the host's double product transposed); C is NaN-filled before each run, B must be
// unchanged after it, and only the given (non-blocking) stream is synchronized. Prints which
// baselines were absent and why. Skips without a GPU.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "common/dtype.h"
#include "evaluator/gpu/baseline.h"
#include "evaluator/gpu/cusparselt_loader.h"
#include "evaluator/gpu/gpu_test_util.h"
#include "evaluator/gpu/reference_gemm.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "matrix/generators.h"

namespace sparseditto::gpu {
namespace {

struct Case {
  std::string name;
  v1::PatternSpec pattern;
  int64_t rows, cols;
  std::vector<int64_t> n_values;
};

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

std::vector<Case> Cases() {
  using F = v1::PatternFamily;
  return {
      {"unstructured_7x96", Pattern(F::PATTERN_FAMILY_UNSTRUCTURED, 0.7), 7, 96, {40, 1, 3}},
      {"row_sparse_65x33_empty_rows", Pattern(F::PATTERN_FAMILY_ROW_SPARSE, 0.5), 65, 33, {1, 17}},
      {"row_sparse_5x9_all_empty", Pattern(F::PATTERN_FAMILY_ROW_SPARSE, 0.95), 5, 9, {2}},
      {"unstructured_300x1000", Pattern(F::PATTERN_FAMILY_UNSTRUCTURED, 0.95), 300, 1000, {129, 8}},
      {"dense_31x17", Pattern(F::PATTERN_FAMILY_DENSE), 31, 17, {3}},
      {"block_64x128_b16", Pattern(F::PATTERN_FAMILY_BLOCK, 0.5, 16, 16), 64, 128, {24, 1, 64}},
      {"block_96x64_b8x4", Pattern(F::PATTERN_FAMILY_BLOCK, 0.6, 8, 4), 96, 64, {8, 5}},
      {"block_30x40_b4_ragged", Pattern(F::PATTERN_FAMILY_BLOCK, 0.5, 4, 4), 30, 40, {3}},
      {"nm_2of4_128x256", Pattern(F::PATTERN_FAMILY_N_M, 0, 0, 0, 2, 4), 128, 256, {64, 16, 1}},
      {"nm_2of4_36x100_ragged", Pattern(F::PATTERN_FAMILY_N_M, 0, 0, 0, 2, 4), 36, 100, {8}},
      {"nm_1of4_64x128", Pattern(F::PATTERN_FAMILY_N_M, 0, 0, 0, 1, 4), 64, 128, {32}},
      // Large enough for the libraries' big-problem paths (split-K, tensor-core tiles, long rows).
      {"block_2048x2048_b64", Pattern(F::PATTERN_FAMILY_BLOCK, 0.9, 64, 64), 2048, 2048, {128}},
      {"nm_2of4_1024x2048", Pattern(F::PATTERN_FAMILY_N_M, 0, 0, 0, 2, 4), 1024, 2048, {256}},
  };
}

// Output rounding (one ulp of the dtype) and fp32 accumulation error relative to sum |a||b|
// (tensor-core accumulation for fp16/bf16 is a little looser than IEEE fp32).
double RelOut(v1::Dtype d) { return d == v1::DTYPE_FP32 ? 0x1p-22 : d == v1::DTYPE_FP16 ? 0x1p-10 : 0x1p-7; }
double RelAcc(v1::Dtype d) { return d == v1::DTYPE_FP32 ? 2e-5 : 1e-4; }
// cuSPARSE CSR with fp16/bf16 output rounds partial sums to the output type (measured on an H200;
// baseline.h): allow one output ulp of sum |a*b|. A layout or indexing bug still errs by O(sum |a*b|).
// cuBLAS's transposed-A GEMM (the NK call, Y = X * A^T, as F.linear makes it) does the same at some
// shapes with fp16/bf16 output (on an H100, 2026-12-06: 300x1000 at n = 8 and 129 erred by 1-2% of an
// element, about 1e-4 of sum |a*b|, beyond RelAcc; KN's call on the same matrix stayed within it).
double RelAccFor(const std::string& baseline, v1::Dtype d, v1::Layout layout) {
  if (baseline == "cusparse_csr" && d != v1::DTYPE_FP32) return RelOut(d);
  if (baseline == "cublas_dense" && layout == v1::LAYOUT_NK && d != v1::DTYPE_FP32) return RelOut(d);
  return RelAcc(d);
}

class BaselinesGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  cudaStream_t stream_ = nullptr;
};

class BaselinesLayoutGpuTest : public BaselinesGpuTest, public ::testing::WithParamInterface<v1::Layout> {};

TEST_P(BaselinesLayoutGpuTest, EveryAvailableBaselineMatchesTheReference) {
  const v1::Layout layout = GetParam();
  std::set<std::string> available;  // "case/dtype/baseline"
  for (v1::Dtype dtype : {v1::DTYPE_FP32, v1::DTYPE_FP16, v1::DTYPE_BF16}) {
    const int element = DtypeBytes(dtype);
    for (const Case& c : Cases()) {
      auto a = GenerateMatrix(c.pattern, c.rows, c.cols, /*seed=*/17, dtype);
      ASSERT_TRUE(a.ok()) << c.name << ": " << a.status();
      auto ref = ReferenceGemm::Create(*a, dtype);
      ASSERT_TRUE(ref.ok()) << ref.status();
      for (auto& baseline : MakeBaselines(c.pattern, dtype)) {
        const std::string where = fmt::format("{}/{}/{}", c.name, DtypeName(dtype), baseline->name());
        SCOPED_TRACE(fmt::format("{} layout {}", where, layout == v1::LAYOUT_NK ? "nk" : "kn"));
        const absl::Status prepared = baseline->Prepare(*a, dtype, c.pattern, c.n_values, layout);
        if (absl::IsFailedPrecondition(prepared)) {
          std::cout << "[ baseline ] " << where << ": absent: " << prepared.message() << "\n";
          continue;
        }
        ASSERT_TRUE(prepared.ok()) << prepared;
        std::cout << "[ baseline ] " << where << ": available: " << baseline->note() << "\n";
        available.insert(where);
        double worst_scaled = 0;
        for (int64_t n : c.n_values) {
          SCOPED_TRACE(fmt::format("n = {}", n));
          const std::vector<float> b = testing::RandomValues(c.cols * n, 1000 + n, dtype);
          auto b_dev = testing::Upload(b, dtype);
          auto c_dev = DeviceBuffer::Allocate(c.rows * n * element, "C");
          auto ref_dev = DeviceBuffer::Allocate(c.rows * n * 4, "C_ref");
          ASSERT_TRUE(b_dev.ok() && c_dev.ok() && ref_dev.ok());
          ASSERT_TRUE(testing::FillNaN(c_dev->get(), c_dev->size()).ok());
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          const absl::Status ran = baseline->Run(b_dev->get(), c_dev->get(), n, stream_);
          if (absl::IsFailedPrecondition(ran)) {
            std::cout << "[ baseline ] " << where << " n=" << n << ": absent: " << ran.message() << "\n";
            continue;
          }
          ASSERT_TRUE(ran.ok()) << ran;
          ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);  // only the given stream
          auto got = testing::Download(c_dev->get(), c.rows * n, dtype);
          ASSERT_TRUE(got.ok()) << got.status();
          ASSERT_TRUE((*ref)->Compute(b_dev->get(), n, ref_dev->as<float>(), stream_, layout).ok());
          ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
          auto want = testing::Download(ref_dev->get(), c.rows * n, v1::DTYPE_FP32);
          ASSERT_TRUE(want.ok());
          const testing::HostProduct host = testing::HostSpmmIn(layout, *a, b, n);
          const int64_t width = testing::OutputWidth(layout, c.rows, n);
          const testing::Comparison cmp = testing::Compare(*got, *want, host.abs, width, RelOut(dtype),
                                                                RelAccFor(baseline->name(), dtype, layout));
          EXPECT_TRUE(cmp.ok) << cmp.first_failure;
          // Against the host's own product too: a layout bug shared by the GPU reference shows here.
          const testing::Comparison host_cmp = testing::Compare(*got, host.c, host.abs, width, RelOut(dtype),
                                                                     RelAccFor(baseline->name(), dtype, layout));
          EXPECT_TRUE(host_cmp.ok) << "against the host product: " << host_cmp.first_failure;
          worst_scaled = std::max(worst_scaled, cmp.max_scaled_error);
          auto b_after = testing::Download(b_dev->get(), c.cols * n, dtype);
          ASSERT_TRUE(b_after.ok());
          EXPECT_EQ(*b_after, b) << "B was modified";
        }
        std::cout << "[ baseline ] " << where << ": max error / sum |a*b| = " << worst_scaled << "\n";
      }
    }
  }
  // The general baselines apply everywhere; the block formats where the blocks tile the matrix; the
  // 2:4 library where it is installed. Ragged shapes are absent from the block formats.
  for (v1::Dtype dtype : {v1::DTYPE_FP32, v1::DTYPE_FP16, v1::DTYPE_BF16}) {
    const std::string d(DtypeName(dtype));
    for (const Case& c : Cases()) {
      EXPECT_TRUE(available.count(c.name + "/" + d + "/cublas_dense")) << c.name << " " << d;
      EXPECT_TRUE(available.count(c.name + "/" + d + "/cusparse_csr")) << c.name << " " << d;
    }
    EXPECT_FALSE(available.count("block_30x40_b4_ragged/" + d + "/cusparse_bsr"));
    EXPECT_FALSE(available.count("block_30x40_b4_ragged/" + d + "/cusparse_blocked_ell"));
    // The block formats' algorithms may take only row-major B and C: in NK their absence (with the
    // library's reason, printed above) is an answer, not a failure.
    if (layout == v1::LAYOUT_NK) continue;
    for (const char* block_case : {"block_64x128_b16", "block_96x64_b8x4"}) {
      EXPECT_TRUE(available.count(std::string(block_case) + "/" + d + "/cusparse_bsr")) << block_case << " " << d;
      EXPECT_EQ(available.count(std::string(block_case) + "/" + d + "/cusparse_blocked_ell"),
                dtype == v1::DTYPE_FP32 ? 0u : 1u) << block_case << " " << d;
    }
  }
  if (lt::LoadCusparseLt().ok() && layout == v1::LAYOUT_KN) {
    EXPECT_TRUE(available.count("nm_2of4_128x256/fp16/cusparselt_2to4"));
    EXPECT_TRUE(available.count("nm_2of4_128x256/bf16/cusparselt_2to4"));
  } else if (lt::LoadCusparseLt().ok()) {
    // Column-major B and C: whether this cuSPARSELt takes them is printed above (absent with its reason).
    std::cout << "[ baseline ] nk cusparselt_2to4 on nm_2of4_128x256/fp16: "
              << (available.count("nm_2of4_128x256/fp16/cusparselt_2to4") ? "available" : "absent") << "\n";
  } else {
    std::cout << "[ baseline ] " << lt::LoadCusparseLt().status().message() << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, BaselinesLayoutGpuTest, ::testing::Values(v1::LAYOUT_KN, v1::LAYOUT_NK),
                         [](const ::testing::TestParamInfo<v1::Layout>& info) {
                           return std::string(info.param == v1::LAYOUT_NK ? "nk" : "kn");
                         });

TEST_F(BaselinesGpuTest, RunRefusesAnUnpreparedN) {
  v1::PatternSpec pattern = Pattern(v1::PATTERN_FAMILY_UNSTRUCTURED, 0.5);
  auto a = GenerateMatrix(pattern, 16, 16, 3, v1::DTYPE_FP32);
  ASSERT_TRUE(a.ok());
  for (auto& baseline : MakeBaselines(pattern, v1::DTYPE_FP32)) {
    EXPECT_FALSE(baseline->Run(nullptr, nullptr, 4, stream_).ok()) << baseline->name() << " before Prepare";
    ASSERT_TRUE(baseline->Prepare(*a, v1::DTYPE_FP32, pattern, {4}, v1::LAYOUT_KN).ok()) << baseline->name();
    if (baseline->name() == "cusparse_csr") {
      EXPECT_EQ(baseline->Run(nullptr, nullptr, 5, stream_).code(), absl::StatusCode::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace sparseditto::gpu
