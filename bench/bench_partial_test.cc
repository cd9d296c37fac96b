// The kept evaluations of a bench's task in hand (bench_partial.h): written and read back as they were,
// and damaged or foreign files refused naming the file and the entry, never a crash.
#include "bench/bench_partial.h"

#include <fstream>

#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;

KeptEvaluation Kept(const std::string& seed, v1::FailureCategory failure, const std::string& detail) {
  KeptEvaluation k;
  k.seed = seed;
  k.source_hash = "h-" + seed;
  k.result.set_candidate_id(seed + "@t");
  k.result.set_failure(failure);
  k.result.set_failure_detail(detail);
  k.result.set_fitness(failure == v1::FAILURE_CATEGORY_NONE ? 1.5 : 0);
  v1::TimingStats* t = k.result.add_timings();
  t->set_n(16);
  t->set_median_ms(0.25);
  return k;
}

TEST(BenchPartialTest, WrittenEvaluationsReadBackAsTheyWere) {
  testing_support::TempFolder folder("bench_partial_test");
  ASSERT_TRUE(folder.ok());
  auto path = PartialResultsPath(folder.path(), "t");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, folder.path() / "bench-partial" / "t.json");
  EXPECT_TRUE(absl::IsNotFound(ReadPartialResults(*path, "t").status()));
  const std::vector<KeptEvaluation> kept = {Kept("a", v1::FAILURE_CATEGORY_NONE, ""),
                                            Kept("b", v1::FAILURE_CATEGORY_COMPILE, "error: \"x\"\n\ty")};
  ASSERT_TRUE(WritePartialResults(*path, "t", kept).ok());
  auto read = ReadPartialResults(*path, "t");
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ((*read)[i].seed, kept[i].seed);
    EXPECT_EQ((*read)[i].source_hash, kept[i].source_hash);
    EXPECT_EQ((*read)[i].result.SerializeAsString(), kept[i].result.SerializeAsString()) << i;
  }
  // A compiler's bytes that are not UTF-8: written or refused with an error, never a crash.
  const absl::Status odd = WritePartialResults(*path, "t", {Kept("c", v1::FAILURE_CATEGORY_COMPILE, "bad \xff\xfe")});
  if (odd.ok()) {
    auto odd_read = ReadPartialResults(*path, "t");
    EXPECT_TRUE(odd_read.ok() || odd_read.status().code() == absl::StatusCode::kInvalidArgument) << odd_read.status();
  } else {
    EXPECT_NE(odd.message().find("t.json"), std::string::npos) << odd;
  }
  EXPECT_FALSE(PartialResultsPath(folder.path(), "../x").ok()) << "a task name may not leave the folder";
}

TEST(BenchPartialTest, DamagedOrForeignFilesAreRefusedNamingWhere) {
  testing_support::TempFolder folder("bench_partial_test");
  ASSERT_TRUE(folder.ok());
  const struct {
    std::string text;
    std::string want;  // in the error
  } cases[] = {
      {"{\"task\": \"t\", \"evaluations\": [", "not JSON"},
      {"[]", "not a bench's kept evaluations"},
      {"{\"task\": \"other\", \"evaluations\": []}", "kept for task 'other'"},
      {"{\"task\": \"t\", \"evaluations\": [{\"seed\": \"a\"}]}", "evaluation 0: no string \"source_hash\""},
      {"{\"task\": \"t\", \"evaluations\": [{\"seed\": \"a\", \"source_hash\": \"h\"}]}", "evaluation 0: no object"},
      {"{\"task\": \"t\", \"evaluations\": [{\"seed\": \"a\", \"source_hash\": \"h\", \"result\": {\"fitness\": \"x\"}}]}",
       "evaluation 0: result:"},
  };
  const fs::path path = folder / "t.json";
  for (const auto& c : cases) {
    std::ofstream(path) << c.text;
    auto read = ReadPartialResults(path, "t");
    ASSERT_FALSE(read.ok()) << c.text;
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(read.status().message().find(path.string()), std::string::npos) << read.status();
    EXPECT_NE(read.status().message().find(c.want), std::string::npos) << read.status();
  }
}

}  // namespace
}  // namespace sparseditto
