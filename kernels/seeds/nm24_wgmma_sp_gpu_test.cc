// GPU test (label "gpu"): nm24_wgmma_sp built with nvcc for sm_90a and loaded through the ABI computes
// C = A * B for a 2:4 A in both layouts (KN: B, C row-major; NK: X = B^T, Y = C^T row-major), fp16 and bf16,
// on shapes that take each transport: the copy engine (rows of B and C multiples of 8 values, 16-byte
// aligned pointers), the thread copy with 16-byte chunks (Y's rows odd, or Y only 8-byte aligned) and with
// guarded loads (K % 8 != 0, or X off by one value); split-K (4096 rows at small n). Checked against a host
// product, or at 4096 x 4096, n = 2048, NK against KN. Skips without a compute capability 9.0 device.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/rng.h"
#include "gtest/gtest.h"
#include "kernels/testing/candidate_build.h"
#include "kernels/testing/device_run.h"
#include "kernels/testing/host_product_check.h"
#include "matrix/generators.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

constexpr char kSeedPath[] = SPARSEDITTO_SOURCE_DIR "/kernels/seeds/nm24_wgmma_sp.cu";

using testing::CountOffHostProduct;
using gpu::testing::RandomValues;
using gpu::testing::Transposed;

class Nm24WgmmaSpGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    int devices = 0;
    cudaDeviceProp prop;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess ||
        prop.major != 9 || prop.minor != 0)
      return;
    const std::string library = (std::filesystem::path(::sparseditto::testing_support::ProcessTempDir()) /
                                 ("sd_nm24_wgmma_sp_gpu_" + std::to_string(getpid()) + ".so")).string();
    auto log = testing::CompileCandidate(SPARSEDITTO_NVCC, kSeedPath, {"sm_90a"}, library);
    ASSERT_TRUE(log.ok()) << log.status();
    auto lib = testing::LoadCandidate(library);
    ASSERT_TRUE(lib.ok()) << lib.status();
    library_ = new testing::CandidateLibrary(*lib);
    layouts_ = reinterpret_cast<uint32_t (*)()>(dlsym(lib->handle, "sparseditto_layouts"));
  }
  void SetUp() override {
    if (library_ == nullptr) GTEST_SKIP() << "no compute capability 9.0 device";
  }

  static sd_problem Problem(const CsrMatrix& a, v1::Dtype dtype, int layout, const int64_t* n) {
    sd_problem p{};
    p.abi_version = SPARSEDITTO_ABI_VERSION;
    p.dtype = dtype;
    p.rows = a.rows, p.cols = a.cols, p.nnz = a.nnz();
    p.pattern.family = v1::PATTERN_FAMILY_N_M, p.pattern.n = 2, p.pattern.m = 4;
    p.row_offsets = a.row_offsets.data(), p.col_indices = a.col_indices.data(), p.values = a.values.data();
    p.n_values = n, p.num_n_values = 1;
    p.layout = layout;
    return p;
  }

  // The seed's output (in the layout's memory) for B given in the layout's memory; b_off / c_off: the
  // operands start that many values past a 256-byte aligned allocation.
  static std::vector<float> Run(const CsrMatrix& a, v1::Dtype dtype, int layout, const std::vector<float>& b, int64_t n, int b_off,
                                int c_off) {
    auto c = testing::RunOnDevice(*library_, Problem(a, dtype, layout, &n), b, n, b_off, c_off);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *c : std::vector<float>{};
  }

  static testing::CandidateLibrary* library_;
  static uint32_t (*layouts_)();
};
testing::CandidateLibrary* Nm24WgmmaSpGpuTest::library_ = nullptr;
uint32_t (*Nm24WgmmaSpGpuTest::layouts_)() = nullptr;

CsrMatrix Random24(int64_t rows, int64_t cols, v1::Dtype dtype) {
  v1::PatternSpec pattern;
  pattern.set_family(v1::PATTERN_FAMILY_N_M);
  pattern.set_n(2);
  pattern.set_m(4);
  return testing::GeneratedMatrix(pattern, rows, cols, dtype);
}

TEST_F(Nm24WgmmaSpGpuTest, ExportsBothLayouts) {
  ASSERT_NE(layouts_, nullptr);
  EXPECT_EQ(layouts_(), SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK));
}

TEST_F(Nm24WgmmaSpGpuTest, RefusesAnUnknownLayoutNamingIt) {
  const CsrMatrix a = Random24(64, 64, v1::DTYPE_FP16);
  const int64_t n = 16;
  const sd_problem problem = Problem(a, v1::DTYPE_FP16, 7, &n);
  void* state = nullptr;
  char error[256] = {0};
  EXPECT_NE(library_->prepare(&problem, &state, error, sizeof(error)), 0);
  EXPECT_NE(std::string(error).find("layout 7"), std::string::npos) << error;
}

TEST_F(Nm24WgmmaSpGpuTest, MatchesAHostProductInBothLayouts) {
  struct Case { const char* why; int layout; int64_t rows, cols, n; int b_off, c_off; };
  const Case cases[] = {
      {"NK copy engine", SD_LAYOUT_NK, 136, 200, 1, 0, 0},
      {"NK copy engine", SD_LAYOUT_NK, 136, 200, 16, 0, 0},
      {"NK copy engine", SD_LAYOUT_NK, 136, 200, 17, 0, 0},
      {"NK copy engine", SD_LAYOUT_NK, 136, 200, 128, 0, 0},
      {"NK copy engine", SD_LAYOUT_NK, 136, 200, 2048, 0, 0},
      {"NK copy engine, split-K", SD_LAYOUT_NK, 4096, 4096, 16, 0, 0},
      {"NK copy engine, split-K", SD_LAYOUT_NK, 4096, 4096, 128, 0, 0},
      {"NK threads: Y rows of 130", SD_LAYOUT_NK, 130, 200, 17, 0, 0},
      {"NK threads: Y rows of 130", SD_LAYOUT_NK, 130, 200, 2048, 0, 0},
      {"NK threads: Y 8-byte aligned", SD_LAYOUT_NK, 136, 200, 128, 0, 4},
      {"NK threads, guarded: K 150", SD_LAYOUT_NK, 72, 150, 17, 0, 0},
      {"NK threads, guarded: K 150", SD_LAYOUT_NK, 72, 150, 129, 0, 0},
      {"NK threads, guarded: X off by a value", SD_LAYOUT_NK, 136, 200, 128, 1, 0},
      {"KN copy engine", SD_LAYOUT_KN, 130, 200, 2048, 0, 0},
      {"KN threads", SD_LAYOUT_KN, 130, 200, 17, 0, 0},
  };
  for (v1::Dtype dtype : {v1::DTYPE_FP16, v1::DTYPE_BF16}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << c.why << ": " << c.rows << "x" << c.cols << " n " << c.n << " " << DtypeName(dtype));
      const CsrMatrix a = Random24(c.rows, c.cols, dtype);
      const std::vector<float> b = RandomValues(c.cols * c.n, c.n * 7 + c.rows, dtype);
      const std::vector<float> got = Run(a, dtype, c.layout, b, c.n, c.b_off, c.c_off);
      ASSERT_EQ(got.size(), static_cast<size_t>(c.rows * c.n));
      EXPECT_EQ(CountOffHostProduct(a, b, got, c.layout, c.n, dtype == v1::DTYPE_FP16 ? 2e-3 : 1.6e-2), 0);
    }
  }
}

// The shape: 4096 x 4096, n = 2048. NK's Y is KN's C transposed (both fp32-accumulated over the
// same K order, rounded once).
TEST_F(Nm24WgmmaSpGpuTest, NkIsKnTransposedAt4096) {
  const int64_t rows = 4096, cols = 4096, n = 2048;
  for (v1::Dtype dtype : {v1::DTYPE_FP16, v1::DTYPE_BF16}) {
    SCOPED_TRACE(DtypeName(dtype));
    const CsrMatrix a = Random24(rows, cols, dtype);
    const std::vector<float> x = RandomValues(cols * n, 5, dtype);  // X (n x K)
    const std::vector<float> b = Transposed(x, n, cols);  // B = X^T (K x n)
    const std::vector<float> y = Run(a, dtype, SD_LAYOUT_NK, x, n, 0, 0), c = Run(a, dtype, SD_LAYOUT_KN, b, n, 0, 0);
    ASSERT_EQ(y.size(), c.size());
    const double rel = dtype == v1::DTYPE_FP16 ? 2e-3 : 1.6e-2;  // two units in the last place of the dtype
    int bad = 0;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (!(std::abs(y[j * rows + i] - c[i * n + j]) <= rel * std::max(1.0f, std::abs(c[i * n + j]))) && bad++ < 5)
          ADD_FAILURE() << "Y[" << j << "][" << i << "] = " << y[j * rows + i] << ", C[" << i << "][" << j << "] = " << c[i * n + j];
    EXPECT_EQ(bad, 0);
  }
}

}  // namespace
}  // namespace sparseditto
