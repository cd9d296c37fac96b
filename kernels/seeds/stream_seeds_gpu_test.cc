// GPU test (label "gpu"): the small-n stream seeds (nm24_stream_sp on 2:4, u14_stream_sp on unstructured 90%,
// u24_stream_sp on unstructured 70%, dense_stream on unstructured 50%) built with nvcc for sm_90 and loaded through the ABI compute C = A * B in
// both layouts (KN: B, C row-major; NK: X = B^T, Y = C^T row-major), fp16 and bf16, on shapes that take each
// path: 16-byte B chunks (KN: n % 8 == 0; NK: K % 8 == 0 and X 16-byte aligned), guarded scalar loads (n odd;
// K % 8 != 0; X one value off), C pairs and single stores, a second n tile, the cluster's K split (4096 x 4096; 1024 x 16384, 32 K tiles a split),
// against a host product; and at 4096 x 4096, n = 16, NK's Y is KN's C transposed bit for bit (the same mma
// operands and the same sum order). The paths off by default are built too, set through ApplyTunables as the
// search sets them: u14_stream_sp's and u24_stream_sp's residual walks (SPREAD_RESIDUAL, RESIDUAL_FIRST,
// BALANCE_ROWS) on the generality suite's skewed rows (log-normal lengths: a dense row's long residual list), u24's
// THIRDS (24, and 0 beside its default 32), STAGE_A of nm24_stream_sp and u14_stream_sp (the 4096 x 4096 cases stage) and u14's PRMT_EXPAND, each through every case
// above in both layouts. The libraries compile in parallel. Skips without a compute capability 9.x device.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/rng.h"
#include "gtest/gtest.h"
#include "kernel_abi/tunables.h"
#include "kernels/testing/candidate_build.h"
#include "kernels/testing/device_run.h"
#include "kernels/testing/host_product_check.h"
#include "matrix/generators.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

struct Seed {
  std::string name;         // the library's: the seed's, with its tunables when any are set
  std::string source;       // kernels/seeds/<source>.cu
  v1::PatternSpec pattern;  // the family the seed serves, for its test matrices
  std::map<std::string, std::string> tunables;  // set over the seed's defaults
};

v1::PatternSpec Unstructured(float sparsity, float skew = 0) {
  v1::PatternSpec p;
  p.set_family(v1::PATTERN_FAMILY_UNSTRUCTURED), p.set_sparsity(sparsity);
  if (skew > 0) p.set_row_lengths(v1::ROW_LENGTHS_SKEWED), p.set_skew(skew);
  return p;
}

std::vector<Seed> Seeds() {
  v1::PatternSpec nm24;
  nm24.set_family(v1::PATTERN_FAMILY_N_M), nm24.set_n(2), nm24.set_m(4);
  const v1::PatternSpec u90 = Unstructured(0.9f), u70 = Unstructured(0.7f), u50 = Unstructured(0.5f);
  const v1::PatternSpec u90_skew = Unstructured(0.9f, 1.0f), u70_skew = Unstructured(0.7f, 0.5f);  // the generality suite's
  return {{"nm24_stream_sp", "nm24_stream_sp", nm24, {}},
          {"u14_stream_sp", "u14_stream_sp", u90, {}},
          {"u24_stream_sp", "u24_stream_sp", u70, {}},
          {"dense_stream", "dense_stream", u50, {}},
          {"nm24_stream_sp staged", "nm24_stream_sp", nm24, {{"STAGE_A", "1"}}},
          {"u14_stream_sp staged", "u14_stream_sp", u90, {{"STAGE_A", "1"}}},
          {"u14_stream_sp prmt expand", "u14_stream_sp", u90, {{"PRMT_EXPAND", "1"}}},
          {"u14_stream_sp prmt expand balanced", "u14_stream_sp", u90_skew, {{"PRMT_EXPAND", "1"}, {"BALANCE_ROWS", "1"}}},
          {"u14_stream_sp spread balanced", "u14_stream_sp", u90_skew, {{"SPREAD_RESIDUAL", "1"}, {"BALANCE_ROWS", "1"}}},
          {"u14_stream_sp first balanced", "u14_stream_sp", u90_skew, {{"RESIDUAL_FIRST", "1"}, {"BALANCE_ROWS", "1"}}},
          {"u24_stream_sp spread balanced", "u24_stream_sp", u70_skew, {{"SPREAD_RESIDUAL", "1"}, {"BALANCE_ROWS", "1"}}},
          {"u24_stream_sp spread first", "u24_stream_sp", u70_skew, {{"SPREAD_RESIDUAL", "1"}, {"RESIDUAL_FIRST", "1"}}},
          {"u24_stream_sp thirds", "u24_stream_sp", u70, {{"THIRDS", "24"}}},
          {"u24_stream_sp without thirds", "u24_stream_sp", u70, {{"THIRDS", "0"}}},  // the default is 32
          {"u24_stream_sp thirds first balanced", "u24_stream_sp", u70_skew, {{"THIRDS", "32"}, {"RESIDUAL_FIRST", "1"}, {"BALANCE_ROWS", "1"}}}};
}

// The seed's source with its tunables set, written where the library will be built (the seeds' own folder
// untouched); the seed's path when none are set.
absl::StatusOr<std::string> VariantSource(const Seed& seed, const std::string& folder, int index) {
  const std::string path = SPARSEDITTO_SOURCE_DIR "/kernels/seeds/" + seed.source + ".cu";
  if (seed.tunables.empty()) return path;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto source = ApplyTunables(text.str(), seed.tunables);
  if (!source.ok()) return source.status();
  const std::string out = (std::filesystem::path(folder) / (seed.source + "_variant" + std::to_string(index) + ".cu")).string();
  std::ofstream(out) << *source;
  return out;
}

class StreamSeedsGpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    int devices = 0;
    cudaDeviceProp prop;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess ||
        prop.major != 9)
      return;
    libraries_ = new std::map<std::string, testing::CandidateLibrary>;
    const std::string folder = ::sparseditto::testing_support::ProcessTempDir();
    const std::vector<Seed> seeds = Seeds();
    std::vector<std::future<absl::StatusOr<std::string>>> builds;  // nvcc runs a process each: in parallel
    for (size_t i = 0; i < seeds.size(); ++i)
      builds.push_back(std::async(std::launch::async, [&seeds, &folder, i]() -> absl::StatusOr<std::string> {
        auto source = VariantSource(seeds[i], folder, static_cast<int>(i));
        if (!source.ok()) return source.status();
        const std::string library = (std::filesystem::path(folder) / ("sd_stream_" + std::to_string(i) + "_gpu_" + std::to_string(getpid()) + ".so")).string();
        auto log = testing::CompileCandidate(SPARSEDITTO_NVCC, *source, {"sm_90"}, library);
        if (!log.ok()) return log.status();
        return library;
      }));
    for (size_t i = 0; i < seeds.size(); ++i) {
      auto library = builds[i].get();
      ASSERT_TRUE(library.ok()) << seeds[i].name << ": " << library.status();
      auto lib = testing::LoadCandidate(*library);
      ASSERT_TRUE(lib.ok()) << lib.status();
      (*libraries_)[seeds[i].name] = *lib;
    }
  }
  void SetUp() override {
    if (libraries_ == nullptr) GTEST_SKIP() << "no compute capability 9.x device";
  }

  // C (in the layout's memory) of the seed for A and B given in the layout's memory.
  static std::vector<float> Run(const Seed& seed, const CsrMatrix& a, v1::Dtype dtype, int layout, const std::vector<float>& b,
                                int64_t n, int b_off, int c_off) {
    sd_problem p{};
    p.abi_version = SPARSEDITTO_ABI_VERSION;
    p.dtype = dtype;
    p.rows = a.rows, p.cols = a.cols, p.nnz = a.nnz();
    p.pattern.family = seed.pattern.family(), p.pattern.sparsity = seed.pattern.sparsity();
    p.pattern.n = seed.pattern.n(), p.pattern.m = seed.pattern.m();
    p.row_offsets = a.row_offsets.data(), p.col_indices = a.col_indices.data(), p.values = a.values.data();
    p.n_values = &n, p.num_n_values = 1;
    p.layout = layout;
    auto c = testing::RunOnDevice(libraries_->at(seed.name), p, b, n, b_off, c_off);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *c : std::vector<float>{};
  }

  static std::map<std::string, testing::CandidateLibrary>* libraries_;
};
std::map<std::string, testing::CandidateLibrary>* StreamSeedsGpuTest::libraries_ = nullptr;

using testing::CountOffHostProduct;
using testing::GeneratedMatrix;
using gpu::testing::RandomValues;
using gpu::testing::Transposed;

TEST_F(StreamSeedsGpuTest, ExportBothLayouts) {
  for (const auto& [name, lib] : *libraries_) {
    ASSERT_NE(lib.layouts, nullptr) << name;
    EXPECT_EQ(lib.layouts(), SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) | SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK)) << name;
  }
}

TEST_F(StreamSeedsGpuTest, MatchAHostProductInBothLayouts) {
  struct Case { const char* why; int layout; int64_t rows, cols, n; int b_off, c_off; };
  const Case cases[] = {
      {"KN 16-byte chunks, pairs", SD_LAYOUT_KN, 136, 200, 16, 0, 0},
      {"KN guarded: n odd", SD_LAYOUT_KN, 130, 200, 7, 0, 0},
      {"KN second n tile", SD_LAYOUT_KN, 130, 200, 20, 0, 0},
      {"NK 16-byte chunks", SD_LAYOUT_NK, 136, 200, 1, 0, 0},
      {"NK 16-byte chunks", SD_LAYOUT_NK, 136, 200, 16, 0, 0},
      {"NK 16-byte chunks, n odd", SD_LAYOUT_NK, 130, 200, 7, 0, 0},
      {"NK second n tile", SD_LAYOUT_NK, 130, 200, 20, 0, 0},
      {"NK guarded: K 150", SD_LAYOUT_NK, 72, 150, 16, 0, 0},
      {"NK guarded: X one value off", SD_LAYOUT_NK, 136, 200, 16, 1, 0},
      {"NK Y one value off", SD_LAYOUT_NK, 136, 200, 16, 0, 1},
      {"NK cluster split", SD_LAYOUT_NK, 4096, 4096, 16, 0, 0},
      {"KN cluster split", SD_LAYOUT_KN, 4096, 4096, 16, 0, 0},
      {"KN long slab (32 K tiles a split)", SD_LAYOUT_KN, 1024, 16384, 16, 0, 0},
  };
  for (const Seed& seed : Seeds())
    for (v1::Dtype dtype : {v1::DTYPE_FP16, v1::DTYPE_BF16})
      for (const Case& c : cases) {
        SCOPED_TRACE(::testing::Message() << seed.name << ", " << c.why << ": " << c.rows << "x" << c.cols << " n " << c.n << " "
                                          << DtypeName(dtype));
        const CsrMatrix a = GeneratedMatrix(seed.pattern, c.rows, c.cols, dtype);
        const std::vector<float> b = RandomValues(c.cols * c.n, c.n * 7 + c.rows, dtype);
        const std::vector<float> got = Run(seed, a, dtype, c.layout, b, c.n, c.b_off, c.c_off);
        ASSERT_EQ(got.size(), static_cast<size_t>(c.rows * c.n));
        EXPECT_EQ(CountOffHostProduct(a, b, got, c.layout, c.n, dtype == v1::DTYPE_FP16 ? 2e-3 : 1.6e-2), 0);
      }
}

TEST_F(StreamSeedsGpuTest, NkIsKnTransposedBitForBitAt4096) {
  const int64_t rows = 4096, cols = 4096, n = 16;
  for (const Seed& seed : Seeds())
    for (v1::Dtype dtype : {v1::DTYPE_FP16, v1::DTYPE_BF16}) {
      SCOPED_TRACE(::testing::Message() << seed.name << " " << DtypeName(dtype));
      const CsrMatrix a = GeneratedMatrix(seed.pattern, rows, cols, dtype);
      const std::vector<float> x = RandomValues(cols * n, 5, dtype);  // X (n x K)
      const std::vector<float> b = Transposed(x, n, cols);  // B = X^T (K x n)
      const std::vector<float> y = Run(seed, a, dtype, SD_LAYOUT_NK, x, n, 0, 0), c = Run(seed, a, dtype, SD_LAYOUT_KN, b, n, 0, 0);
      ASSERT_EQ(y.size(), c.size());
      int differ = 0;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < n; ++j)
          if (std::memcmp(&y[j * rows + i], &c[i * n + j], sizeof(float)) != 0 && differ++ < 5)
            ADD_FAILURE() << "Y[" << j << "][" << i << "] = " << y[j * rows + i] << ", C[" << i << "][" << j << "] = " << c[i * n + j];
      EXPECT_EQ(differ, 0);
    }
}

}  // namespace
}  // namespace sparseditto
