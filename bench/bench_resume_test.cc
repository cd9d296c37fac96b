// bench --resume's pieces: which tasks the kept rows finish, the suite's order, and reading bench.json.
#include "bench/bench_resume.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

BenchRow Row(const std::string& task, int64_t n) {
  BenchRow r;
  r.task = task;
  r.dtype = "fp16";
  r.n = n;
  r.best_kernel = "k";
  r.kernel_ms = 0.01 * n;
  r.baselines_ms = {{"cublas_dense", 0.02}};
  r.speedup_over_best_baseline = r.speedup_over_dense = 2;
  return r;
}

v1::Task Task(const std::string& name, std::initializer_list<int64_t> ns) {
  v1::Task t;
  t.set_name(name);
  for (int64_t n : ns) t.add_n(n);
  return t;
}

TEST(BenchResumeTest, ATaskIsDoneWhenEveryNHasARow) {
  const std::vector<BenchRow> rows = {Row("a", 16), Row("a", 128), Row("b", 16), Row("c", 16)};
  EXPECT_TRUE(BenchTaskDone(Task("a", {16, 128}), rows));
  EXPECT_FALSE(BenchTaskDone(Task("b", {16, 128}), rows)) << "n = 128 of b has no row: the task was cut short";
  EXPECT_FALSE(BenchTaskDone(Task("d", {16}), rows));
  EXPECT_TRUE(BenchTaskDone(Task("e", {}), rows)) << "a task with no n has nothing to do";
}

TEST(BenchResumeTest, RowsTakeTheSuitesOrderAndUnknownTasksGoLast) {
  const std::vector<BenchRow> rows = {Row("zz", 1), Row("b", 16), Row("a", 128), Row("b", 2048), Row("a", 16)};
  const auto ordered = OrderLikeSuite(rows, {Task("a", {}), Task("b", {})});
  std::vector<std::pair<std::string, int64_t>> got;
  for (const BenchRow& r : ordered) got.emplace_back(r.task, r.n);
  const std::vector<std::pair<std::string, int64_t>> want = {{"a", 128}, {"a", 16}, {"b", 16}, {"b", 2048}, {"zz", 1}};
  EXPECT_EQ(got, want);
}

TEST(BenchResumeTest, ReadingNamesThePathAndWhatIsWrong) {
  const std::filesystem::path dir = std::filesystem::path(::sparseditto::testing_support::ProcessTempDir()) / ("bench_resume_test." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&dir](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const std::string good = write("good.json", BenchJson({Row("a", 16), Row("b", 16)}).dump(2));
  auto rows = ReadBenchRows(good);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].task, "b");

  EXPECT_TRUE(absl::IsNotFound(ReadBenchRows((dir / "absent.json").string()).status()));
  const std::string truncated = write("truncated.json", BenchJson({Row("a", 16)}).dump(2).substr(0, 40));
  auto cut = ReadBenchRows(truncated);
  EXPECT_TRUE(absl::IsInvalidArgument(cut.status()));
  EXPECT_NE(std::string(cut.status().message()).find(truncated + ": not JSON"), std::string::npos) << cut.status();
  const std::string wrong = write("wrong.json", R"([{"task": "a"}])");
  auto bad = ReadBenchRows(wrong);
  EXPECT_NE(std::string(bad.status().message()).find(wrong + ": row 0: field \"dtype\""), std::string::npos) << bad.status();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sparseditto
