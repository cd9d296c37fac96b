// CudaStatus and MissingNvidiaDriver: a machine without the NVIDIA driver is told so, not that its
// driver version is insufficient.
#include "evaluator/gpu/cuda_status.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto::gpu {
namespace {

using ::testing::HasSubstr;

TEST(CudaStatus, NoDriverIsSaidAsSuch) {
  testing_support::TempFolder folder("cuda_status_test");
  ASSERT_TRUE(folder.ok());
  const std::string dir = folder.path().string();
  const struct {
    std::string label;
    bool device, library;
    bool missing;
  } cases[] = {
      {"neither the device nor the library", false, false, true},
      {"the control device", true, false, false},
      {"the library", false, true, false},
      {"both", true, true, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.label);
    NvidiaDriverProbe probe;
    probe.devices = {dir + "/nvidiactl"};
    probe.libraries = {dir + "/libcuda.so.1"};
    probe.try_loader = false;
    std::filesystem::remove(probe.devices[0]);
    std::filesystem::remove(probe.libraries[0]);
    if (c.device) std::ofstream(probe.devices[0]) << "";
    if (c.library) std::ofstream(probe.libraries[0]) << "";
    const std::optional<std::string> missing = MissingNvidiaDriver(probe);
    ASSERT_EQ(missing.has_value(), c.missing) << missing.value_or("found");
    if (missing) {
      EXPECT_THAT(*missing, HasSubstr("no NVIDIA driver was found on this machine"));
      EXPECT_THAT(*missing, HasSubstr(probe.devices[0]));
      EXPECT_THAT(*missing, HasSubstr(probe.libraries[0]));
    }
  }
}

TEST(CudaStatus, InsufficientDriverWithoutADriverNamesTheMissingDriver) {
  for (cudaError_t error : {cudaErrorInsufficientDriver, cudaErrorNoDevice}) {
    const absl::Status s = CudaStatus(error, "cudaGetDeviceCount");
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_THAT(std::string(s.message()), ::testing::StartsWith("cudaGetDeviceCount failed: "));
    if (MissingNvidiaDriver().has_value()) {
      EXPECT_THAT(std::string(s.message()), HasSubstr("no NVIDIA driver was found on this machine")) << s;
    } else {
      EXPECT_THAT(std::string(s.message()), HasSubstr(cudaGetErrorName(error)));
    }
  }
}

}  // namespace
}  // namespace sparseditto::gpu
