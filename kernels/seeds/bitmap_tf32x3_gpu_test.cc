// GPU test (label "gpu"): bitmap_tf32x3 built with nvcc for the device's arch and run through the ABI passes the
// evaluator's fp32 output check (CheckOutput against a product in double) on real DLMC matrices and ragged
// generated ones, at n that take each path: 16-byte B copies and paired C stores (n % 4 == 0, aligned), the
// guarded scalar ones (odd n, or B and C one value off alignment), K split over CTAs (a 512-row matrix at small
// n), records in fixed slots (the default) and through the offset table (SLOT_EXTRA_KB 0), more splits
// (SPLIT_CTAS_PER_SM 4), hi/lo stored at prepare (A_PRESPLIT 1). Two runs give the same bits (split K is
// deterministic) and nothing outside C is written. Prints each case's worst error / tolerance. Skips without a
// device of compute capability 8.0 or above.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/rng.h"
#include "evaluator/runner/output_check.h"
#include "gtest/gtest.h"
#include "kernel_abi/tunables.h"
#include "kernels/testing/candidate_build.h"
#include "kernels/testing/device_run.h"
#include "matrix/generators.h"
#include "matrix/matrix_file.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

constexpr char kSeedPath[] = SPARSEDITTO_SOURCE_DIR "/kernels/seeds/bitmap_tf32x3.cu";
const char* const kDlmc = SPARSEDITTO_DATA_DIR "/dlmc/transformer/magnitude_pruning/";

// The seed, and variants with tunables changed, each compiled and loaded once.
struct Variant {
  std::string name;
  std::map<std::string, std::string> tunables;
  testing::CandidateLibrary library;
};

class BitmapTf32x3GpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cudaDeviceProp prop;
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess ||
        prop.major < 8)
      return;
    const std::string arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    std::stringstream source;
    source << std::ifstream(kSeedPath).rdbuf();
    variants_ = new std::vector<Variant>{{"default", {}, {}},
                                         {"offset table", {{"SLOT_EXTRA_KB", "0"}}, {}},
                                         {"more splits", {{"SPLIT_CTAS_PER_SM", "4"}}, {}},
                                         {"presplit A", {{"A_PRESPLIT", "1"}}, {}}};
    for (Variant& v : *variants_) {
      auto text = ApplyTunables(source.str(), v.tunables);
      ASSERT_TRUE(text.ok()) << v.name << ": " << text.status();
      const std::filesystem::path dir = ::sparseditto::testing_support::ProcessTempDir();
      const std::string stem = "sd_bitmap_tf32x3_" + std::to_string(getpid()) + "_" + std::to_string(&v - variants_->data());
      std::ofstream(dir / (stem + ".cu")) << *text;
      auto log = testing::CompileCandidate(SPARSEDITTO_NVCC, dir / (stem + ".cu"), {arch}, dir / (stem + ".so"));
      ASSERT_TRUE(log.ok()) << v.name << ": " << log.status();
      auto library = testing::LoadCandidate(dir / (stem + ".so"));
      ASSERT_TRUE(library.ok()) << library.status();
      v.library = *library;
    }
  }
  void SetUp() override {
    if (variants_ == nullptr) GTEST_SKIP() << "no device of compute capability 8.0 or above";
  }

  // C for B (cols x n, starting b_off values past an aligned allocation) into C starting c_off values past one;
  // prepared for every n of `n_values`. Checks that nothing around C is written (testing::RunOnDevice).
  static std::vector<float> Run(const testing::CandidateLibrary& lib, const CsrMatrix& a, const std::vector<int64_t>& n_values,
                                const std::vector<float>& b, int64_t n, int b_off, int c_off) {
    sd_problem p{};
    p.abi_version = SPARSEDITTO_ABI_VERSION, p.dtype = SD_DTYPE_FP32, p.rows = a.rows, p.cols = a.cols, p.nnz = a.nnz();
    p.pattern.family = SD_PATTERN_UNSTRUCTURED;
    p.row_offsets = a.row_offsets.data(), p.col_indices = a.col_indices.data(), p.values = a.values.data();
    p.n_values = n_values.data(), p.num_n_values = static_cast<int32_t>(n_values.size()), p.layout = SD_LAYOUT_KN;
    auto c = testing::RunOnDevice(lib, p, b, n, b_off, c_off);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *c : std::vector<float>{};
  }

  static std::vector<Variant>* variants_;
};
std::vector<Variant>* BitmapTf32x3GpuTest::variants_ = nullptr;

CsrMatrix Dlmc(const std::string& file) {
  auto m = ReadMatrixFile(kDlmc + file, v1::DTYPE_FP32, /*value_seed=*/7);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : CsrMatrix{};
}
CsrMatrix Generated(int64_t rows, int64_t cols, double sparsity) {
  v1::PatternSpec pattern;
  pattern.set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  pattern.set_sparsity(static_cast<float>(sparsity));
  auto m = GenerateMatrix(pattern, rows, cols, /*seed=*/rows + cols, v1::DTYPE_FP32);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : CsrMatrix{};
}

TEST_F(BitmapTf32x3GpuTest, PassesTheFp32CheckOnEveryPathAndRepeatsItsBits) {
  struct Case {
    std::string name;
    CsrMatrix a;
    std::vector<int64_t> n_values;
    int b_off = 0, c_off = 0;
  };
  const std::vector<Case> cases = {
      {"ffn conv1 90% 2048x512", Dlmc("0.9/body_encoder_layer_0_ffn_conv1_fully_connected.smtx"), {32, 128, 256}},
      {"q 90% 512x512 (split K)", Dlmc("0.9/body_encoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx"), {32, 128, 256}},
      {"ffn conv2 50% 512x2048", Dlmc("0.5/body_encoder_layer_0_ffn_conv2_fully_connected.smtx"), {32, 256}},
      {"q 98% 512x512", Dlmc("0.98/body_encoder_layer_0_self_attention_multihead_attention_q_fully_connected.smtx"), {32}},
      {"ragged 130x333 80%", Generated(130, 333, 0.8), {1, 7, 33, 1024}},
      {"B and C off alignment", Generated(70, 300, 0.7), {32, 64}, 1, 1},
  };
  for (const Variant& v : *variants_)
    for (const Case& c : cases)
      for (int64_t n : c.n_values) {
        SCOPED_TRACE(::testing::Message() << v.name << ", " << c.name << ", n " << n);
        Rng rng(static_cast<uint64_t>(n * 131 + c.a.rows));
        std::vector<float> b(c.a.cols * n);
        for (float& x : b) x = static_cast<float>(rng.Uniform(-1, 1));
        std::vector<float> ref(c.a.rows * n), abs_sum(c.a.rows * n);
        for (int64_t r = 0; r < c.a.rows; ++r)
          for (int64_t j = 0; j < n; ++j) {
            double sum = 0, abs = 0;
            for (int32_t e = c.a.row_offsets[r]; e < c.a.row_offsets[r + 1]; ++e) {
              const double term = double{c.a.values[e]} * b[c.a.col_indices[e] * n + j];
              sum += term, abs += std::abs(term);
            }
            ref[r * n + j] = static_cast<float>(sum), abs_sum[r * n + j] = static_cast<float>(abs);
          }
        const std::vector<float> got = Run(v.library, c.a, c.n_values, b, n, c.b_off, c.c_off);
        ASSERT_EQ(got.size(), ref.size());
        const OutputCheckResult check = CheckOutput(got.data(), ref.data(), abs_sum.data(), c.a.rows, n, v1::DTYPE_FP32, c.a.cols);
        EXPECT_TRUE(check.passed) << check.detail;
        std::printf("%-13s %-26s n %5lld: worst error / fp32 tolerance %.4f\n", v.name.c_str(), c.name.c_str(),
                    static_cast<long long>(n), check.worst_ratio);
        const std::vector<float> again = Run(v.library, c.a, c.n_values, b, n, c.b_off, c.c_off);
        EXPECT_EQ(std::memcmp(got.data(), again.data(), got.size() * 4), 0) << "two runs differ";
      }
}

TEST_F(BitmapTf32x3GpuTest, RefusesOtherDtypesNamingThem) {
  const CsrMatrix a = Generated(32, 32, 0.5);
  const int64_t n = 8;
  sd_problem p{};
  p.abi_version = SPARSEDITTO_ABI_VERSION, p.dtype = SD_DTYPE_FP16, p.rows = a.rows, p.cols = a.cols, p.nnz = a.nnz();
  p.row_offsets = a.row_offsets.data(), p.col_indices = a.col_indices.data(), p.values = a.values.data();
  p.n_values = &n, p.num_n_values = 1;
  void* state = nullptr;
  char error[256] = {0};
  EXPECT_NE((*variants_)[0].library.prepare(&p, &state, error, sizeof(error)), 0);
  EXPECT_NE(std::string(error).find("dtype 2 unsupported (fp32 only)"), std::string::npos) << error;
}

}  // namespace
}  // namespace sparseditto
