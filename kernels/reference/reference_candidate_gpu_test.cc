// GPU test (label "gpu"): the reference candidate, loaded through the ABI, computes C = A * B correctly
// on awkward shapes of several families, for fp32, fp16 and bf16, in both layouts (KN; NK: B given as
// X = B^T [n x K] and C written as Y = C^T [n x M], row-major). Skips where there is no GPU.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/dtype.h"
#include "common/rng.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"
#include "kernels/testing/candidate_build.h"
#include "matrix/generators.h"

namespace sparseditto {
namespace {

constexpr char kReferencePath[] = SPARSEDITTO_SOURCE_DIR "/kernels/reference/csr_reference.cu";

struct Case {
  const char* name;
  v1::PatternFamily family;
  double sparsity;
  int64_t rows, cols, n;
};

std::vector<uint16_t> ToBits(const std::vector<float>& x, v1::Dtype dtype) {
  std::vector<uint16_t> bits(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    bits[i] = dtype == v1::DTYPE_FP16 ? FloatToHalfBits(x[i]) : FloatToBfloat16Bits(x[i]);
  }
  return bits;
}

float FromBits(uint16_t bits, v1::Dtype dtype) {
  return dtype == v1::DTYPE_FP16 ? HalfBitsToFloat(bits) : Bfloat16BitsToFloat(bits);
}

class ReferenceCandidateGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return;
    cudaDeviceProp prop;
    ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    const std::string arch = "sm_" + std::to_string(prop.major * 10 + prop.minor);
    const std::string library = (std::filesystem::path(::sparseditto::testing_support::ProcessTempDir()) /
                                 ("sd_reference_gpu_" + std::to_string(getpid()) + ".so")).string();
    auto log = testing::CompileCandidate(SPARSEDITTO_NVCC, kReferencePath, {arch}, library);
    ASSERT_TRUE(log.ok()) << log.status();
    auto lib = testing::LoadCandidate(library);
    ASSERT_TRUE(lib.ok()) << lib.status();
    library_ = new testing::CandidateLibrary(*lib);
  }
  void SetUp() override {
    if (library_ == nullptr) GTEST_SKIP() << "no CUDA device";
  }
  static testing::CandidateLibrary* library_;
};
testing::CandidateLibrary* ReferenceCandidateGpuTest::library_ = nullptr;

TEST_F(ReferenceCandidateGpuTest, MatchesAHostReferenceOnAwkwardShapes) {
  const Case cases[] = {
      {"unstructured_7x96_n40", v1::PATTERN_FAMILY_UNSTRUCTURED, 0.7, 7, 96, 40},
      {"row_sparse_65x33_n1", v1::PATTERN_FAMILY_ROW_SPARSE, 0.5, 65, 33, 1},
      {"unstructured_300x1000_n129", v1::PATTERN_FAMILY_UNSTRUCTURED, 0.95, 300, 1000, 129},
      {"dense_31x17_n3", v1::PATTERN_FAMILY_DENSE, 0.0, 31, 17, 3},
      {"unstructured_1x5_n7", v1::PATTERN_FAMILY_UNSTRUCTURED, 0.4, 1, 5, 7},
      {"row_sparse_33x65_n2", v1::PATTERN_FAMILY_ROW_SPARSE, 0.5, 33, 65, 2},
  };
  ASSERT_NE(library_->layouts, nullptr) << "the reference exports sparseditto_layouts";
  ASSERT_EQ(library_->layouts(), SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK));
  for (int32_t layout : {SD_LAYOUT_KN, SD_LAYOUT_NK}) {
  const bool nk = layout == SD_LAYOUT_NK;
  for (v1::Dtype dtype : {v1::DTYPE_FP32, v1::DTYPE_FP16, v1::DTYPE_BF16}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(DtypeName(dtype)) + (nk ? " nk" : " kn"));
      v1::PatternSpec pattern;
      pattern.set_family(c.family);
      pattern.set_sparsity(c.sparsity);
      auto a = GenerateMatrix(pattern, c.rows, c.cols, /*seed=*/11, dtype);
      ASSERT_TRUE(a.ok()) << a.status();

      Rng rng(99);
      std::vector<float> b(c.cols * c.n);
      for (float& x : b) x = RoundToDtype(static_cast<float>(rng.Uniform(-1, 1)), dtype);

      sd_problem problem{};
      problem.abi_version = SPARSEDITTO_ABI_VERSION;
      problem.dtype = dtype;
      problem.rows = a->rows;
      problem.cols = a->cols;
      problem.nnz = a->nnz();
      problem.pattern.family = c.family;
      problem.row_offsets = a->row_offsets.data();
      problem.col_indices = a->col_indices.data();
      problem.values = a->values.data();
      problem.n_values = &c.n;
      problem.num_n_values = 1;
      problem.layout = layout;
      void* state = nullptr;
      char error[256] = {0};
      ASSERT_EQ(library_->prepare(&problem, &state, error, sizeof(error)), 0) << error;

      const size_t elem = DtypeBytes(dtype);
      void *d_b = nullptr, *d_c = nullptr;
      ASSERT_EQ(cudaMalloc(&d_b, b.size() * elem), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&d_c, c.rows * c.n * elem), cudaSuccess);
      if (dtype == v1::DTYPE_FP32) {
        cudaMemcpy(d_b, b.data(), b.size() * elem, cudaMemcpyHostToDevice);
      } else {
        const auto bits = ToBits(b, dtype);
        cudaMemcpy(d_b, bits.data(), bits.size() * elem, cudaMemcpyHostToDevice);
      }
      cudaMemset(d_c, 0xff, c.rows * c.n * elem);  // NaN in every dtype: unwritten outputs fail
      cudaStream_t stream;
      ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
      ASSERT_EQ(library_->run(state, d_b, d_c, c.n, stream), 0);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);

      std::vector<float> got(c.rows * c.n);
      if (dtype == v1::DTYPE_FP32) {
        cudaMemcpy(got.data(), d_c, got.size() * elem, cudaMemcpyDeviceToHost);
      } else {
        std::vector<uint16_t> bits(got.size());
        cudaMemcpy(bits.data(), d_c, bits.size() * elem, cudaMemcpyDeviceToHost);
        for (size_t i = 0; i < bits.size(); ++i) got[i] = FromBits(bits[i], dtype);
      }
      const double rtol = dtype == v1::DTYPE_FP32 ? 1e-5 : dtype == v1::DTYPE_FP16 ? 2e-3 : 1.6e-2;
      int bad = 0;
      // B's element (k, j) and C's (r, j) where the layout puts them: b is X [n x K] for NK.
      auto b_at = [&](int64_t k, int64_t j) { return double{b[nk ? j * c.cols + k : k * c.n + j]}; };
      for (int64_t r = 0; r < c.rows; ++r) {
        for (int64_t j = 0; j < c.n; ++j) {
          double want = 0, magnitude = 0;
          for (int32_t k = a->row_offsets[r]; k < a->row_offsets[r + 1]; ++k) {
            want += double{a->values[k]} * b_at(a->col_indices[k], j);
            magnitude += std::abs(double{a->values[k]} * b_at(a->col_indices[k], j));
          }
          const double g = got[nk ? j * c.rows + r : r * c.n + j];
          if (!(std::abs(g - want) <= rtol * (magnitude + 1e-6)) && bad++ < 5) {
            ADD_FAILURE() << "C[" << r << "," << j << "] = " << g << ", want " << want;
          }
        }
      }
      EXPECT_EQ(bad, 0);
      cudaStreamDestroy(stream);
      cudaFree(d_b);
      cudaFree(d_c);
      library_->release(state);
    }
  }
  }
}

}  // namespace
}  // namespace sparseditto
