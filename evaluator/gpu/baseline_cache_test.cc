#include "evaluator/gpu/baseline_cache.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto::gpu {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class BaselineCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = (fs::temp_directory_path() / "sd-baseline-cache-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    dir_ = dir;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

v1::BaselineTime Timed(const std::string& name, double median_ms) {
  v1::BaselineTime t;
  t.set_name(name);
  t.set_available(true);
  t.mutable_timing()->set_median_ms(median_ms);
  t.mutable_timing()->set_trials(20);
  return t;
}

struct ForgeryCase {
  std::string name;
  std::function<void(const std::string& dir)> forge;  // applied to the entry of key "0a1b" (cublas_dense, 0.25 ms)
  std::string warning;  // expected in the warning; empty: a silent miss
};

TEST_F(BaselineCacheTest, ForgedOrDamagedEntriesAreMissesWithAWarning) {
  const std::vector<ForgeryCase> cases = {
      {"a forged median in the .pb",
       [](const std::string& dir) {
         std::ofstream out(dir + "/0a1b.pb", std::ios::binary | std::ios::trunc);
         Timed("cublas_dense", 2.5).SerializeToOstream(&out);  // 10x slower: the candidate looks 10x better
       },
       "failed its hash check"},
      {"one byte flipped in the .pb",
       [](const std::string& dir) {
         std::fstream f(dir + "/0a1b.pb", std::ios::in | std::ios::out | std::ios::binary);
         f.seekg(3);
         const char c = static_cast<char>(f.get());
         f.seekp(3);
         f.put(static_cast<char>(c ^ 0x08));
       },
       "failed its hash check"},
      {"the index entry removed", [](const std::string& dir) { fs::remove(dir + "/0a1b.sha256"); }, "no index entry"},
      {"another key's whole entry copied over it",
       [](const std::string& dir) {
         ASSERT_TRUE(StoreCachedBaseline(dir, "ffff", Timed("cublas_dense", 9.0)).ok());
         fs::copy_file(dir + "/ffff.pb", dir + "/0a1b.pb", fs::copy_options::overwrite_existing);
         fs::copy_file(dir + "/ffff.sha256", dir + "/0a1b.sha256", fs::copy_options::overwrite_existing);
       },
       "failed its hash check"},
      {"an implausible time stored whole",
       [](const std::string& dir) { ASSERT_TRUE(StoreCachedBaseline(dir, "0a1b", Timed("cublas_dense", 0)).ok()); },
       "not a plausible timing"},
      {"the .pb removed", [](const std::string& dir) { fs::remove(dir + "/0a1b.pb"); }, ""},
  };
  for (const ForgeryCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string dir = dir_ + "/" + std::to_string(&c - cases.data());
    ASSERT_TRUE(StoreCachedBaseline(dir, "0a1b", Timed("cublas_dense", 0.25)).ok());
    std::string warning;
    std::optional<v1::BaselineTime> hit = LookupCachedBaseline(dir, "0a1b", &warning);
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(hit->timing().median_ms(), 0.25);
    EXPECT_EQ(warning, "");

    c.forge(dir);
    EXPECT_FALSE(LookupCachedBaseline(dir, "0a1b", &warning).has_value());
    if (c.warning.empty()) {
      EXPECT_EQ(warning, "");
    } else {
      EXPECT_THAT(warning, HasSubstr(c.warning));
      EXPECT_THAT(warning, HasSubstr("timed again"));
    }
    // Retiming stores a whole entry again, and it is used.
    ASSERT_TRUE(StoreCachedBaseline(dir, "0a1b", Timed("cublas_dense", 0.26)).ok());
    hit = LookupCachedBaseline(dir, "0a1b");
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(hit->timing().median_ms(), 0.26);
  }
}

TEST_F(BaselineCacheTest, UnavailableEntriesEmptyFolderAndBadKeys) {
  v1::BaselineTime missing;
  missing.set_name("cusparselt_2to4");
  missing.set_note("libcusparseLt.so.0 not found");
  ASSERT_TRUE(StoreCachedBaseline(dir_, "abc", missing).ok());
  std::optional<v1::BaselineTime> hit = LookupCachedBaseline(dir_, "abc");
  ASSERT_TRUE(hit.has_value());
  EXPECT_FALSE(hit->available());
  EXPECT_EQ(hit->note(), "libcusparseLt.so.0 not found");

  EXPECT_TRUE(StoreCachedBaseline("", "abc", missing).ok());  // no cache folder: nothing to do
  EXPECT_FALSE(LookupCachedBaseline("", "abc").has_value());
  for (const std::string key : {"", "../abc", "ABC", "a/b", "a.b"}) {
    SCOPED_TRACE(key);
    EXPECT_TRUE(absl::IsInvalidArgument(StoreCachedBaseline(dir_, key, missing)));
    EXPECT_FALSE(LookupCachedBaseline(dir_, key).has_value());
  }
  EXPECT_FALSE(fs::exists(fs::path(dir_).parent_path() / "abc.pb"));
}

}  // namespace
}  // namespace sparseditto::gpu
