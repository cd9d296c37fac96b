// A gtest fixture base for tests of the search over a real store: a fresh folder per test under the
// process's temporary folder (removed after the test), and stores opened in it by name. Test code only.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "coordinator/testing/search_fixture.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto::testing {

class StoreTest : public ::testing::Test {
 protected:
  // `prefix` names the folder: "<prefix>.<pid>.<test name>".
  explicit StoreTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    root_ = std::filesystem::path(::sparseditto::testing_support::ProcessTempDir()) /
            fmt::format("{}.{}.{}", prefix_, getpid(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  std::unique_ptr<PopulationStore> OpenStore(const std::string& name) {
    absl::Status error;
    auto store = OpenTestStore(root_ / name, &error);
    EXPECT_TRUE(error.ok()) << error;
    return store;
  }

  std::string prefix_;
  std::filesystem::path root_;
};

}  // namespace sparseditto::testing
