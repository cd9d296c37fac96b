#include "torch_package/torch_package.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TempFolder {
 public:
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "torch_package_test.XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempFolder() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, ec);
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TorchPackageTask NmTask(const std::string& name) {
  TorchPackageTask t;
  t.task.set_name(name);
  t.task.set_dtype(v1::DTYPE_FP16);
  t.task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_N_M);
  t.task.mutable_pattern()->set_n(2);
  t.task.mutable_pattern()->set_m(4);
  t.task.add_n(16);
  t.task.add_n(2048);
  t.task.add_arch("sm_90");
  t.rows = 4096;
  t.cols = 2048;
  return t;
}

TEST(TorchPackageName, IsAPythonModuleName) {
  const struct { const char* run; const char* want; } cases[] = {
      {"r1", "sparseditto_r1"},
      {"nm24-4096.v2", "sparseditto_nm24_4096_v2"},
      {"2026-12-06", "sparseditto_2026_12_06"},  // the prefix keeps a leading digit legal
  };
  for (const auto& c : cases) EXPECT_EQ(TorchPackageName(c.run), c.want) << c.run;
}

TEST(TorchKernelsJson, DescribesEveryTask) {
  TorchPackageTask banded = NmTask("band");
  banded.task.mutable_pattern()->Clear();
  banded.task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_BANDED);
  banded.task.mutable_pattern()->set_half_bandwidth(7);
  banded.task.set_layout(v1::LAYOUT_NK);
  const nlohmann::json doc = nlohmann::json::parse(TorchKernelsJson("run-1", {NmTask("nm24"), banded}));
  EXPECT_EQ(doc["format"], 1);
  EXPECT_EQ(doc["run"], "run-1");
  ASSERT_EQ(doc["tasks"].size(), 2u);
  const nlohmann::json& nm = doc["tasks"][0];
  EXPECT_EQ(nm["name"], "nm24");
  EXPECT_EQ(nm["rows"], 4096);
  EXPECT_EQ(nm["cols"], 2048);
  EXPECT_EQ(nm["dtype"], "fp16");
  EXPECT_EQ(nm["pattern"]["family"], "n_m");
  EXPECT_EQ(nm["pattern"]["n"], 2);
  EXPECT_EQ(nm["pattern"]["m"], 4);
  EXPECT_EQ(nm["n_values"], nlohmann::json({16, 2048}));
  EXPECT_EQ(nm["arch"], nlohmann::json({"sm_90"}));
  EXPECT_EQ(nm["library"], ExportedEntryPoints("nm24").library);
  EXPECT_EQ(nm["symbol_prefix"], ExportedEntryPoints("nm24").symbol_prefix);
  EXPECT_EQ(doc["tasks"][1]["pattern"]["family"], "banded");
  EXPECT_EQ(doc["tasks"][1]["pattern"]["half_bandwidth"], 7);
  EXPECT_EQ(nm["layout"], "kn");  // the default
  EXPECT_EQ(doc["tasks"][1]["layout"], "nk");
}

TEST(WriteTorchPackage, WritesTheTemplateAndKernelsJson) {
  TempFolder tmp;
  absl::StatusOr<std::string> folder = WriteTorchPackage(tmp.path().string(), "r.1", {NmTask("nm24")});
  ASSERT_TRUE(folder.ok()) << folder.status();
  EXPECT_EQ(fs::path(*folder), tmp.path() / "sparseditto_r_1");
  const fs::path source = SPARSEDITTO_SOURCE_DIR;
  const struct { const char* name; fs::path original; } files[] = {
      {"__init__.py", source / "torch_package/template/__init__.py"},
      {"weight_pattern.py", source / "torch_package/template/weight_pattern.py"},
      {"sparseditto_op.cpp", source / "torch_package/template/sparseditto_op.cpp"},
      {"sparseditto_kernel.h", source / "kernel_abi/sparseditto_kernel.h"},
  };
  for (const auto& f : files) EXPECT_EQ(ReadFile(fs::path(*folder) / f.name), ReadFile(f.original)) << f.name;
  EXPECT_EQ(ReadFile(fs::path(*folder) / "kernels.json"), TorchKernelsJson("r.1", {NmTask("nm24")}));
  // Written again over itself (a second export) it gives the same files.
  ASSERT_TRUE(WriteTorchPackage(tmp.path().string(), "r.1", {NmTask("nm24")}).ok());
  EXPECT_EQ(ReadFile(fs::path(*folder) / "__init__.py"), ReadFile(files[0].original));
}

TEST(WriteTorchPackage, RefusesBadTasksByName) {
  TorchPackageTask no_shape = NmTask("flat");
  no_shape.rows = 0;
  TorchPackageTask no_n = NmTask("idle");
  no_n.task.clear_n();
  const struct { std::vector<TorchPackageTask> tasks; const char* message; } cases[] = {
      {{}, "no tasks"},
      {{no_shape}, "task flat: shape 0 x 2048"},
      {{no_n}, "task idle: no n values"},
      {{NmTask("twin"), NmTask("twin")}, "task twin appears twice"},
  };
  for (const auto& c : cases) {
    TempFolder tmp;
    absl::StatusOr<std::string> folder = WriteTorchPackage(tmp.path().string(), "r", c.tasks);
    ASSERT_FALSE(folder.ok()) << c.message;
    EXPECT_EQ(folder.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(folder.status().message(), HasSubstr(c.message));
    EXPECT_TRUE(fs::is_empty(tmp.path())) << "nothing is written for " << c.message;
  }
}

TEST(WriteTorchPackage, AFileInPlaceOfTheFolderIsAnError) {
  TempFolder tmp;
  std::ofstream(tmp.path() / "sparseditto_r") << "not a folder";
  absl::StatusOr<std::string> folder = WriteTorchPackage(tmp.path().string(), "r", {NmTask("nm24")});
  ASSERT_FALSE(folder.ok());
  EXPECT_THAT(folder.status().message(), HasSubstr("sparseditto_r"));
  EXPECT_EQ(ReadFile(tmp.path() / "sparseditto_r"), "not a folder");
}

}  // namespace
}  // namespace sparseditto
