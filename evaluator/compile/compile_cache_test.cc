#include "evaluator/compile/compile_cache.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "evaluator/compile/nvcc_compiler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;

TEST(CompileCacheKey, ChangesWithEveryInput) {
  const std::vector<std::string> flags = {"-O3", "-gencode", "arch=compute_90,code=sm_90"};
  const std::string base = CompileCacheKey("src", flags, "nvcc 13.0", "header");
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(base, CompileCacheKey("src", flags, "nvcc 13.0", "header"));
  EXPECT_NE(base, CompileCacheKey("src ", flags, "nvcc 13.0", "header"));
  EXPECT_NE(base, CompileCacheKey("src", {"-O3", "-gencode", "arch=compute_80,code=sm_80"}, "nvcc 13.0", "header"));
  EXPECT_NE(base, CompileCacheKey("src", {"-O3", "-gencodearch=compute_90,code=sm_90"}, "nvcc 13.0", "header"));
  EXPECT_NE(base, CompileCacheKey("src", flags, "nvcc 12.8", "header"));
  EXPECT_NE(base, CompileCacheKey("src", flags, "nvcc 13.0", "header v2"));
  EXPECT_NE(CompileCacheKey("ab", {"c"}, "", ""), CompileCacheKey("a", {"bc"}, "", ""));  // length-prefixed
}

class CompileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = (fs::temp_directory_path() / "sd-cache-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(dir.data()), nullptr);
    dir_ = dir;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(CompileCacheTest, StoresAndFindsOkAndFailedEntries) {
  absl::StatusOr<CompileCache> cache = CompileCache::Open(dir_ + "/cache");
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::string key(64, 'a');
  EXPECT_FALSE(cache->Lookup(key).has_value());

  CompileResult ok;
  ok.ok = true;
  ok.log = "ptxas info : Used 8 registers\n\xff not utf-8";
  ok.seconds = 3.5;
  v1::KernelResources& r = ok.resources.emplace_back();
  r.set_arch("sm_90");
  r.set_kernel_name("K");
  r.set_registers(8);
  r.set_shared_bytes(1024);
  const std::string built = dir_ + "/built.so";
  std::ofstream(built) << "library bytes";
  ASSERT_TRUE(cache->Store(key, ok, built).ok());
  EXPECT_FALSE(fs::exists(built));  // renamed into place

  std::optional<CompileResult> hit = cache->Lookup(key);
  ASSERT_TRUE(hit.has_value());
  EXPECT_TRUE(hit->ok);
  EXPECT_TRUE(hit->from_cache);
  EXPECT_EQ(hit->seconds, 0);
  EXPECT_EQ(hit->library_path, cache->LibraryPath(key));
  EXPECT_THAT(hit->log, ::testing::StartsWith("ptxas info : Used 8 registers\n"));
  ASSERT_EQ(hit->resources.size(), 1u);
  EXPECT_EQ(hit->resources[0].shared_bytes(), 1024);
  std::ifstream library(hit->library_path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(library), {}), "library bytes");

  CompileResult failed;
  failed.failure = "nvcc exited with code 2";
  const std::string other_key(64, 'b');
  ASSERT_TRUE(cache->Store(other_key, failed, "").ok());
  std::optional<CompileResult> failed_hit = cache->Lookup(other_key);
  ASSERT_TRUE(failed_hit.has_value());
  EXPECT_FALSE(failed_hit->ok);
  EXPECT_EQ(failed_hit->failure, "nvcc exited with code 2");
  EXPECT_TRUE(failed_hit->library_path.empty());
  EXPECT_TRUE(fs::is_empty(dir_ + "/cache/tmp"));  // no scratch left behind
}

TEST_F(CompileCacheTest, CorruptOrHalfEntriesAreMisses) {
  absl::StatusOr<CompileCache> cache = CompileCache::Open(dir_);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::string key(64, 'c');
  CompileResult ok;
  ok.ok = true;
  const std::string built = dir_ + "/built.so";
  std::ofstream(built) << "x";
  ASSERT_TRUE(cache->Store(key, ok, built).ok());
  fs::remove(cache->LibraryPath(key));  // .json without its .so
  EXPECT_FALSE(cache->Lookup(key).has_value());
  const std::string json = cache->LibraryPath(key).substr(0, cache->LibraryPath(key).size() - 3) + ".json";
  std::ofstream(json) << "{not json";
  EXPECT_FALSE(cache->Lookup(key).has_value());
  std::ofstream(json) << R"({"format": 1, "ok": "yes"})";
  EXPECT_FALSE(cache->Lookup(key).has_value());
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// One way of changing a stored entry after the trusted side wrote it.
struct TamperCase {
  std::string name;
  void (*tamper)(const std::string& library, const std::string& index);
};

TEST_F(CompileCacheTest, TamperedEntriesAreMissesAndNeverCopied) {
  const std::vector<TamperCase> cases = {
      {"one byte flipped in the .so",
       [](const std::string& library, const std::string&) {
         std::fstream f(library, std::ios::in | std::ios::out | std::ios::binary);
         f.seekg(100);
         const char c = static_cast<char>(f.get());
         f.seekp(100);
         f.put(static_cast<char>(c ^ 0x01));
       }},
      {"bytes appended to the .so", [](const std::string& library, const std::string&) {
         std::ofstream(library, std::ios::app | std::ios::binary) << "\x90\x90";
       }},
      {"the .so replaced by another library", [](const std::string& library, const std::string&) {
         fs::remove(library);
         std::ofstream(library, std::ios::binary) << std::string(4096, 'Z');
       }},
      {"the .so truncated", [](const std::string& library, const std::string&) { fs::resize_file(library, 10); }},
      {"the hash removed from the index", [](const std::string&, const std::string& index) {
         std::string text = ReadAll(index);
         text.replace(text.find("\"library_sha256\""), 16, "\"library_sha257\"");
         std::ofstream(index, std::ios::trunc) << text;
       }},
  };
  for (const TamperCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string dir = dir_ + "/" + std::to_string(&c - cases.data());
    absl::StatusOr<CompileCache> cache = CompileCache::Open(dir);
    ASSERT_TRUE(cache.ok()) << cache.status();
    const std::string key(64, 'd');
    CompileResult ok;
    ok.ok = true;
    std::string library_bytes(8192, '\0');
    for (size_t i = 0; i < library_bytes.size(); ++i) library_bytes[i] = static_cast<char>(i * 7);
    std::ofstream(dir + "/built.so", std::ios::binary) << library_bytes;
    ASSERT_TRUE(cache->Store(key, ok, dir + "/built.so").ok());
    std::string warning;
    ASSERT_TRUE(cache->Lookup(key, &warning).has_value());  // untouched: a hit, no warning
    EXPECT_EQ(warning, "");

    const std::string library = cache->LibraryPath(key);
    c.tamper(library, library.substr(0, library.size() - 3) + ".json");
    EXPECT_FALSE(cache->Lookup(key, &warning).has_value());
    if (ReadAll(library) != library_bytes) {
      EXPECT_THAT(warning, ::testing::HasSubstr("failed its hash check"));
      EXPECT_THAT(warning, ::testing::HasSubstr("recompiled"));
    }
    const absl::Status copy = cache->CopyVerifiedLibrary(key, dir + "/copy.so");
    EXPECT_FALSE(copy.ok());
    EXPECT_FALSE(fs::exists(dir + "/copy.so"));

    // A fresh store (the recompile) replaces the entry and it is a hit again.
    std::ofstream(dir + "/built.so", std::ios::binary) << library_bytes;
    ASSERT_TRUE(cache->Store(key, ok, dir + "/built.so").ok());
    EXPECT_TRUE(cache->Lookup(key).has_value());
  }
}

TEST_F(CompileCacheTest, CopyVerifiedLibraryWritesTheCheckedBytesReadOnly) {
  absl::StatusOr<CompileCache> cache = CompileCache::Open(dir_);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::string key(64, 'e');
  CompileResult ok;
  ok.ok = true;
  std::ofstream(dir_ + "/built.so", std::ios::binary) << "the library";
  ASSERT_TRUE(cache->Store(key, ok, dir_ + "/built.so").ok());
  ASSERT_TRUE(cache->CopyVerifiedLibrary(key, dir_ + "/copy.so").ok());
  EXPECT_EQ(ReadAll(dir_ + "/copy.so"), "the library");
  struct stat st {};
  ASSERT_EQ(stat((dir_ + "/copy.so").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0444u);
  EXPECT_TRUE(absl::IsInternal(cache->CopyVerifiedLibrary(key, dir_ + "/copy.so")));  // never overwrites
  EXPECT_EQ(ReadAll(dir_ + "/copy.so"), "the library");
  EXPECT_TRUE(absl::IsNotFound(cache->CopyVerifiedLibrary(std::string(64, 'f'), dir_ + "/other.so")));
  CompileResult failed;
  failed.failure = "nvcc exited with code 2";
  ASSERT_TRUE(cache->Store(std::string(64, 'f'), failed, "").ok());
  EXPECT_TRUE(absl::IsNotFound(cache->CopyVerifiedLibrary(std::string(64, 'f'), dir_ + "/other.so")));
}

// Five entries last used 5 h, 4 h, 3 h and 2 h ago and 10 min ago; then entry 0 is looked up (a use).
struct TrimCase {
  std::string name;
  int keep_entries_worth;          // max_bytes = this many entries' bytes (-1: unlimited)
  std::vector<int> expected_kept;  // entry indices left
};

TEST_F(CompileCacheTest, TrimEvictsLeastRecentlyUsedButNothingUsedWithinMinAge) {
  const std::vector<TrimCase> cases = {
      {"under the cap", -1, {0, 1, 2, 3, 4}},
      {"three entries' worth", 3, {0, 3, 4}},
      {"zero bytes", 0, {0, 4}},  // the looked-up one and the 10-minute-old one are spared
  };
  for (const TrimCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string dir = dir_ + "/" + std::to_string(&c - cases.data());
    absl::StatusOr<CompileCache> cache = CompileCache::Open(dir);
    ASSERT_TRUE(cache.ok()) << cache.status();
    const auto now = fs::file_time_type::clock::now();
    const std::vector<std::chrono::minutes> ages = {std::chrono::minutes(300), std::chrono::minutes(240),
                                                    std::chrono::minutes(180), std::chrono::minutes(120),
                                                    std::chrono::minutes(10)};
    std::vector<std::string> keys;
    uint64_t entry_bytes = 0;
    for (size_t i = 0; i < ages.size(); ++i) {
      keys.push_back(std::string(63, 'a' + static_cast<char>(i)) + "0");
      CompileResult ok;
      ok.ok = true;
      const std::string built = dir + "/built.so";
      std::ofstream(built) << std::string(1000, 'x');
      ASSERT_TRUE(cache->Store(keys[i], ok, built).ok());
      const std::string json = dir + "/objects/" + keys[i].substr(0, 2) + "/" + keys[i] + ".json";
      fs::last_write_time(json, now - ages[i]);
      entry_bytes = std::max<uint64_t>(entry_bytes, fs::file_size(json) + 1000);
    }
    ASSERT_TRUE(cache->Lookup(keys[0]).has_value());
    const std::string old_scratch = *cache->MakeScratchDirectory(), new_scratch = *cache->MakeScratchDirectory();
    fs::last_write_time(old_scratch, now - std::chrono::hours(2));

    const uint64_t max_bytes = c.keep_entries_worth < 0 ? UINT64_MAX : c.keep_entries_worth * entry_bytes;
    absl::StatusOr<CompileCache::TrimStats> stats = cache->Trim(max_bytes, std::chrono::hours(1));
    ASSERT_TRUE(stats.ok()) << stats.status();
    std::vector<int> kept;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (cache->Lookup(keys[i]).has_value()) kept.push_back(static_cast<int>(i));
    }
    EXPECT_EQ(kept, c.expected_kept);
    EXPECT_EQ(stats->entries_before, 5);
    EXPECT_EQ(stats->entries_removed, 5 - static_cast<int64_t>(c.expected_kept.size()));
    EXPECT_EQ(stats->scratch_removed, 1);
    EXPECT_FALSE(fs::exists(old_scratch));
    EXPECT_TRUE(fs::exists(new_scratch));
    if (c.keep_entries_worth > 0) EXPECT_LE(stats->bytes_after, max_bytes);
  }
}

TEST(CompileCache, EmptyFolderIsAnError) { EXPECT_TRUE(absl::IsInvalidArgument(CompileCache::Open("").status())); }

struct GencodeCase {
  std::string arch;
  std::string flag;  // empty: InvalidArgument
};

TEST(GencodeFlags, Table) {
  const std::vector<GencodeCase> cases = {
      {"sm_80", "arch=compute_80,code=sm_80"},   {"sm_90", "arch=compute_90,code=sm_90"},
      {"sm_90a", "arch=compute_90a,code=sm_90a"}, {"sm_100f", "arch=compute_100f,code=sm_100f"},
      {"sm_", ""}, {"compute_90", ""}, {"sm_9x", ""}, {"sm_90;rm -rf", ""}, {"", ""}};
  for (const GencodeCase& c : cases) {
    SCOPED_TRACE(c.arch);
    absl::StatusOr<std::vector<std::string>> flags = GencodeFlags(c.arch);
    if (c.flag.empty()) {
      EXPECT_TRUE(absl::IsInvalidArgument(flags.status())) << flags.status();
    } else {
      ASSERT_TRUE(flags.ok()) << flags.status();
      EXPECT_THAT(*flags, ::testing::ElementsAre("-gencode", c.flag));
    }
  }
}

TEST(NvccFlags, ProjectFlagsThenArchsThenExtras) {
  CompileOptions options;
  options.abi_include_dir = "/abi";
  options.archs = {"sm_80", "sm_90a"};
  options.extra_flags = {"-DX=1"};
  absl::StatusOr<std::vector<std::string>> flags = NvccFlags(options);
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_THAT(*flags, ::testing::ElementsAre("-std=c++17", "-O3", "-shared", "-Xcompiler", "-fPIC", "-Xcompiler",
                                             "-fvisibility=hidden", "-Xptxas", "-v", "-lineinfo", "-I/abi",
                                             "-gencode", "arch=compute_80,code=sm_80", "-gencode",
                                             "arch=compute_90a,code=sm_90a", "-DX=1"));
  options.archs.clear();
  EXPECT_TRUE(absl::IsInvalidArgument(NvccFlags(options).status()));
}

}  // namespace
}  // namespace sparseditto
