// The device output check against the host's CheckOutput (output_check.h), case by case: the same
// verdict, counts, first bad element, worst ratio and errors. Needs a GPU (label gpu; skips without).
#include "evaluator/runner/device_output_check.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "evaluator/gpu/device_buffer.h"
#include "evaluator/gpu/gpu_test_util.h"
#include "evaluator/runner/harness_kernels.h"
#include "evaluator/runner/output_check.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

struct Case {
  const char* name;
  int64_t rows, n, k;
  v1::Dtype dtype;
  std::vector<std::pair<int64_t, float>> planted;  // index, value written into got
};

gpu::DeviceBuffer Put(const std::vector<float>& host) {
  auto buffer = gpu::DeviceBuffer::Allocate(host.size() * sizeof(float), "test");
  EXPECT_TRUE(buffer.ok());
  EXPECT_EQ(cudaMemcpy(buffer->get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  return *std::move(buffer);
}

TEST(DeviceOutputCheckGpuTest, AgreesWithTheHostCheck) {
  if (!gpu::testing::HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Case> cases = {
      {"all within tolerance", 37, 5, 96, v1::DTYPE_FP16, {}},
      {"one element far off", 64, 16, 4096, v1::DTYPE_FP16, {{333, 1e3f}}},
      {"NaN and Inf", 31, 7, 128, v1::DTYPE_BF16, {{200, nan}, {10, inf}}},
      {"first bad is the smallest index", 129, 33, 512, v1::DTYPE_FP32, {{4000, -5.f}, {17, 9.f}, {4100, 2.f}}},
      // more elements than the grid's threads: the grid-stride loop
      {"larger than one grid", 2048, 260, 4096, v1::DTYPE_FP16, {{532479, 7.f}, {532000, nan}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const int64_t count = c.rows * c.n;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> value(-4.f, 4.f), noise(-0.1f, 0.1f);
    std::vector<float> ref(count), abs_sum(count), got(count);
    for (int64_t i = 0; i < count; ++i) {
      ref[i] = value(rng);
      abs_sum[i] = std::abs(ref[i]) + 8.f;
      // well inside the tolerance: a tenth of it at most
      got[i] = ref[i] + noise(rng) * static_cast<float>(ElementTolerance(ref[i], abs_sum[i], c.dtype, c.k));
    }
    for (const auto& [i, v] : c.planted) got[i] = v;
    const OutputCheckResult host = CheckOutput(got.data(), ref.data(), abs_sum.data(), c.rows, c.n, c.dtype, c.k);
    int64_t first_bad = -1;
    for (int64_t i = 0; i < count && first_bad < 0; ++i) {
      if (!std::isfinite(got[i]) || !(std::abs(double{got[i]} - ref[i]) <= ElementTolerance(ref[i], abs_sum[i], c.dtype, c.k))) {
        first_bad = i;
      }
    }

    gpu::DeviceBuffer g = Put(got), r = Put(ref), a = Put(abs_sum);
    auto totals_buffer = gpu::DeviceBuffer::Allocate(sizeof(DeviceCheckTotals), "totals");
    ASSERT_TRUE(totals_buffer.ok());
    const DeviceTolerance tolerance{OutputEpsilon(c.dtype), OutputFloor(c.dtype), AccumulationEpsilon(c.k)};
    ASSERT_EQ(LaunchOutputCheck(g.as<float>(), r.as<float>(), a.as<float>(), count, tolerance,
                                totals_buffer->as<DeviceCheckTotals>(), nullptr),
              cudaSuccess);
    DeviceCheckTotals totals{};
    ASSERT_EQ(cudaMemcpy(&totals, totals_buffer->get(), sizeof(totals), cudaMemcpyDeviceToHost), cudaSuccess);

    EXPECT_EQ(static_cast<int64_t>(totals.bad_elements), host.bad_elements);
    EXPECT_EQ(static_cast<int64_t>(totals.non_finite), host.non_finite);
    EXPECT_EQ(totals.bad_elements == 0, host.passed);
    if (first_bad >= 0) {
      EXPECT_EQ(static_cast<int64_t>(totals.first_bad), first_bad);
    } else {
      EXPECT_EQ(totals.first_bad, ~0ULL);
    }
    EXPECT_NEAR(totals.max_abs_error, host.max_abs_error, 1e-12 * (1 + host.max_abs_error));
    EXPECT_NEAR(totals.worst_ratio, host.worst_ratio, 1e-9 * (1 + host.worst_ratio));
    const double rel = totals.ref_squares > 0 ? std::sqrt(totals.error_squares / totals.ref_squares) : 0;
    EXPECT_NEAR(rel, host.max_rel_error, 1e-9 * (1 + host.max_rel_error));
    EXPECT_EQ(c.planted.empty(), host.passed);  // the cases mean what they say
  }
}

// The judge's look at C while the candidate's stream is held (ProblemRun::COutsideStreamWasWritten),
// and at B after a checked run.
TEST(DeviceOutputCheckGpuTest, AnyByteDiffersAndBytesDifferFindOneChangedByteAnywhere) {
  if (!gpu::testing::HasCudaDevice()) GTEST_SKIP() << "no CUDA device";
  struct Case {
    const char* name;
    size_t bytes;
    int64_t changed;  // -1: none
  };
  const Case cases[] = {
      {"nothing written", 4099, -1}, {"first byte", 4099, 0},      {"a middle byte", 1 << 22, 1234567},
      {"the tail byte", 4099, 4098}, {"no bytes", 0, -1},          {"one byte, changed", 1, 0},
      {"large, last word", (size_t{1} << 24) + 8, (int64_t{1} << 24) + 7},
  };
  auto flag = gpu::DeviceBuffer::Allocate(sizeof(unsigned int), "flag");
  ASSERT_TRUE(flag.ok());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto buffer = gpu::DeviceBuffer::Allocate(c.bytes + 8, "bytes");
    ASSERT_TRUE(buffer.ok());
    ASSERT_EQ(cudaMemset(buffer->get(), 0xff, c.bytes + 8), cudaSuccess);
    if (c.changed >= 0) {
      ASSERT_EQ(cudaMemset(buffer->as<unsigned char>() + c.changed, 0xfe, 1), cudaSuccess);
    }
    ASSERT_EQ(cudaMemset(buffer->as<unsigned char>() + c.bytes, 0, 8), cudaSuccess);  // beyond: never read
    ASSERT_EQ(LaunchAnyByteDiffers(buffer->get(), c.bytes, 0xff, flag->as<unsigned int>(), nullptr), cudaSuccess);
    unsigned int any = 7;
    ASSERT_EQ(cudaMemcpy(&any, flag->get(), sizeof any, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(any, c.changed >= 0 ? 1u : 0u);
    // The same bytes against a copy as they were (ProblemRun::CheckRun's look at B), whose bytes beyond
    // differ too: never read either.
    auto before = gpu::DeviceBuffer::Allocate(c.bytes + 8, "before");
    ASSERT_TRUE(before.ok());
    ASSERT_EQ(cudaMemset(before->get(), 0xff, c.bytes), cudaSuccess);
    ASSERT_EQ(cudaMemset(before->as<unsigned char>() + c.bytes, 1, 8), cudaSuccess);
    ASSERT_EQ(LaunchBytesDiffer(buffer->get(), before->get(), c.bytes, flag->as<unsigned int>(), nullptr), cudaSuccess);
    any = 7;
    ASSERT_EQ(cudaMemcpy(&any, flag->get(), sizeof any, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(any, c.changed >= 0 ? 1u : 0u) << "against a copy";
  }
  auto buffer = gpu::DeviceBuffer::Allocate(64, "misaligned");
  ASSERT_TRUE(buffer.ok());
  EXPECT_EQ(LaunchAnyByteDiffers(buffer->as<unsigned char>() + 1, 8, 0xff, flag->as<unsigned int>(), nullptr),
            cudaErrorMisalignedAddress);
  EXPECT_EQ(LaunchBytesDiffer(buffer->get(), buffer->as<unsigned char>() + 2, 8, flag->as<unsigned int>(), nullptr),
            cudaErrorMisalignedAddress);
  EXPECT_EQ(LaunchBytesDiffer(buffer->get(), nullptr, 8, flag->as<unsigned int>(), nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace sparseditto
