// Round trips of every kind of record, the errors of every write, read-only use and concurrent writers,
// against a real RocksDB in a temporary folder.
#include "population_store/population_store.h"

#include <functional>
#include <thread>

#include "common/status_format.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "population_store/store_test_util.h"

namespace sparseditto {
namespace {

using ::google::protobuf::Message;
using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;
using namespace store_testing;

constexpr std::string_view kRun = "run-1";
constexpr std::string_view kTask = "spmm_90";

// A store in a temporary folder holding run kRun and task kTask.
class StoreInFolder {
  TempDir dir_;  // first: removed after the store is closed

 public:
  absl::Status Init() {
    if (!dir_.ok()) return absl::InternalError("no temporary folder");
    if (absl::Status s = Reopen(); !s.ok()) return s;
    if (absl::Status s = store->CreateRun(SampleRun(kRun)); !s.ok()) return s;
    return store->PutTask(kRun, SampleTask(kTask));
  }
  absl::Status Reopen() {
    store.reset();
    PopulationStoreOptions options;
    options.create_if_missing = true;
    auto opened = PopulationStore::Open(path(), options);
    if (!opened.ok()) return opened.status();
    store = std::move(*opened);
    return absl::OkStatus();
  }
  std::string path() const { return dir_.Sub("store"); }

  std::unique_ptr<PopulationStore> store;
};

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const absl::Status status = folder_.Init();
    ASSERT_TRUE(status.ok()) << status;
    store_ = folder_.store.get();
  }
  StoreInFolder folder_;
  PopulationStore* store_ = nullptr;
};

template <typename T>
absl::StatusOr<std::unique_ptr<Message>> Boxed(absl::StatusOr<T> read) {
  if (!read.ok()) return read.status();
  return std::unique_ptr<Message>(new T(*std::move(read)));
}

struct RoundTripCase {
  std::string name;
  std::function<absl::Status(PopulationStore&)> write;
  std::function<absl::StatusOr<std::unique_ptr<Message>>(const PopulationStore&)> read;
  std::shared_ptr<Message> expected;
};

std::vector<RoundTripCase> RoundTripCases() {
  const auto run = std::make_shared<store::RunRecord>(SampleRun("run-2"));
  const auto task = std::make_shared<v1::Task>(SampleTask("bsr_64"));
  const auto seed = std::make_shared<v1::Candidate>(SampleCandidate("c1", kTask));
  const auto eval = std::make_shared<v1::EvalResult>(SampleEvaluation("c1", kTask, 1.5));
  const auto state = std::make_shared<store::RunState>(SampleRunState(kTask, 1, "c1"));
  const auto status = std::make_shared<store::RunState>(SampleRunState(kTask, 0));
  return {
      {"run", [=](PopulationStore& s) { return s.CreateRun(*run); },
       [](const PopulationStore& s) { return Boxed(s.GetRun("run-2")); }, run},
      {"task", [=](PopulationStore& s) { return s.PutTask(kRun, *task); },
       [](const PopulationStore& s) { return Boxed(s.GetTask(kRun, "bsr_64")); }, task},
      {"candidate", [=](PopulationStore& s) { return s.PutCandidate(kRun, *seed); },
       [](const PopulationStore& s) { return Boxed(s.GetCandidate(kRun, "c1")); }, seed},
      {"evaluation",
       [=](PopulationStore& s) {
         absl::Status put = s.PutCandidate(kRun, *seed);
         return put.ok() ? s.CommitEvaluation(kRun, *eval, *state) : put;
       },
       [](const PopulationStore& s) { return Boxed(s.GetEvaluation(kRun, "c1")); }, eval},
      {"run_state_with_evaluation",
       [=](PopulationStore& s) {
         absl::Status put = s.PutCandidate(kRun, *seed);
         return put.ok() ? s.CommitEvaluation(kRun, *eval, *state) : put;
       },
       [](const PopulationStore& s) { return Boxed(s.GetRunState(kRun, kTask)); }, state},
      {"run_state_alone", [=](PopulationStore& s) { return s.PutRunState(kRun, *status); },
       [](const PopulationStore& s) { return Boxed(s.GetRunState(kRun, kTask)); }, status},
      {"run_state_with_candidates",
       [=](PopulationStore& s) { return s.CommitCandidates(kRun, {*seed}, *state); },
       [](const PopulationStore& s) { return Boxed(s.GetRunState(kRun, kTask)); }, state},
  };
}

TEST(PopulationStore, EveryKindRoundTripsAndSurvivesReopening) {
  for (const RoundTripCase& c : RoundTripCases()) {
    SCOPED_TRACE(c.name);
    StoreInFolder folder;
    ASSERT_TRUE(folder.Init().ok());
    const absl::Status written = c.write(*folder.store);
    ASSERT_TRUE(written.ok()) << written;
    for (const char* when : {"before reopening", "after reopening"}) {
      SCOPED_TRACE(when);
      auto read = c.read(*folder.store);
      ASSERT_TRUE(read.ok()) << read.status();
      EXPECT_TRUE(MessageDifferencer::Equals(**read, *c.expected)) << "read:\n"
                                                                   << (*read)->DebugString() << "expected:\n"
                                                                   << c.expected->DebugString();
      ASSERT_TRUE(folder.Reopen().ok());
    }
  }
}

TEST_F(StoreTest, ListsRunsAndTasksByName) {
  ASSERT_TRUE(store_->CreateRun(SampleRun("run-0")).ok());
  ASSERT_TRUE(store_->PutTask(kRun, SampleTask("a_first")).ok());
  ASSERT_TRUE(store_->PutTask("run-0", SampleTask("other_run_task")).ok());
  auto runs = store_->ListRuns();
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].run_id(), "run-0");
  EXPECT_EQ((*runs)[1].run_id(), "run-1");
  auto tasks = store_->ListTasks(kRun);
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_EQ((*tasks)[0].name(), "a_first");
  EXPECT_EQ((*tasks)[1].name(), kTask);
  EXPECT_TRUE(store_->ListTasks("no-such-run")->empty());
}

struct ErrorCase {
  std::string name;
  std::function<absl::Status(PopulationStore&)> call;
  absl::StatusCode code;
  std::string words;
};

std::vector<ErrorCase> ErrorCases() {
  using C = absl::StatusCode;
  auto c1 = SampleCandidate("c1", kTask);
  auto state_for = [](std::string_view in_flight) { return SampleRunState(kTask, 1, in_flight); };
  return {
      {"empty run id", [](PopulationStore& s) { return s.CreateRun(SampleRun("")); }, C::kInvalidArgument,
       "run id is empty"},
      {"NUL in candidate id",
       [](PopulationStore& s) {
         return s.PutCandidate(kRun, SampleCandidate(std::string("a\0b", 3), kTask));
       },
       C::kInvalidArgument, "contains a NUL byte"},
      {"over-long task name",
       [](PopulationStore& s) { return s.PutTask(kRun, SampleTask(std::string(2000, 'x'))); },
       C::kInvalidArgument, "at most 1024"},
      {"task of an unknown run", [](PopulationStore& s) { return s.PutTask("nope", SampleTask("t")); },
       C::kFailedPrecondition, "run nope is not stored"},
      {"run stored with other content",
       [](PopulationStore& s) {
         auto run = SampleRun(kRun);
         run.set_project_revision("other");
         return s.CreateRun(run);
       },
       C::kAlreadyExists, "different record"},
      {"task stored with other content",
       [](PopulationStore& s) {
         auto task = SampleTask(kTask);
         task.set_seed(99);
         return s.PutTask(kRun, task);
       },
       C::kAlreadyExists, "different content"},
      {"candidate of an unknown task",
       [](PopulationStore& s) { return s.PutCandidate(kRun, SampleCandidate("c9", "nope")); },
       C::kFailedPrecondition, "task nope is not stored"},
      {"unknown parent",
       [](PopulationStore& s) { return s.PutCandidate(kRun, SampleCandidate("c9", kTask, {"ghost"})); },
       C::kFailedPrecondition, "parent ghost is not stored"},
      {"own parent",
       [](PopulationStore& s) { return s.PutCandidate(kRun, SampleCandidate("c9", kTask, {"c9"})); },
       C::kInvalidArgument, "names itself as a parent"},
      {"candidate stored with other content",
       [c1](PopulationStore& s) {
         auto changed = c1;
         changed.set_source("other");
         return s.PutCandidate(kRun, changed);
       },
       C::kAlreadyExists, "different content"},
      {"same id twice in one commit",
       [](PopulationStore& s) {
         return s.CommitCandidates(kRun, {SampleCandidate("c7", kTask), SampleCandidate("c7", kTask)},
                                   std::nullopt);
       },
       C::kInvalidArgument, "appears twice"},
      {"evaluation of an unknown candidate",
       [](PopulationStore& s) {
         return s.CommitEvaluation(kRun, SampleEvaluation("ghost", kTask, 1), SampleRunState(kTask, 1));
       },
       C::kFailedPrecondition, "candidate ghost is not stored"},
      {"evaluation and state of different tasks",
       [](PopulationStore& s) {
         return s.CommitEvaluation(kRun, SampleEvaluation("c1", kTask, 1), SampleRunState("other", 1));
       },
       C::kInvalidArgument, "run state of task 'other'"},
      {"evaluation names the wrong task",
       [](PopulationStore& s) {
         return s.CommitEvaluation(kRun, SampleEvaluation("c1", "other", 1), SampleRunState("other", 1));
       },
       C::kInvalidArgument, "belongs to 'spmm_90'"},
      {"in-flight candidate not stored",
       [=](PopulationStore& s) {
         return s.CommitEvaluation(kRun, SampleEvaluation("c1", kTask, 1), state_for("ghost"));
       },
       C::kFailedPrecondition, "in-flight candidate ghost is not a stored candidate"},
      {"run state of an unknown task",
       [](PopulationStore& s) { return s.PutRunState(kRun, SampleRunState("nope", 0)); },
       C::kFailedPrecondition, "task nope is not stored"},
      {"missing run", [](PopulationStore& s) { return s.GetRun("nope").status(); }, C::kNotFound,
       "run nope is not stored"},
      {"missing task", [](PopulationStore& s) { return s.GetTask(kRun, "nope").status(); }, C::kNotFound,
       "task nope is not stored"},
      {"missing candidate", [](PopulationStore& s) { return s.GetCandidate(kRun, "nope").status(); },
       C::kNotFound, "candidate nope is not stored"},
      {"missing evaluation", [](PopulationStore& s) { return s.GetEvaluation(kRun, "c1").status(); },
       C::kNotFound, "no evaluation of candidate c1"},
      {"missing run state", [](PopulationStore& s) { return s.GetRunState(kRun, kTask).status(); },
       C::kNotFound, "no run state of task spmm_90"},
  };
}

TEST_F(StoreTest, EveryErrorHasItsCodeAndSaysWhy) {
  ASSERT_TRUE(store_->PutCandidate(kRun, SampleCandidate("c1", kTask)).ok());
  for (const ErrorCase& c : ErrorCases()) {
    SCOPED_TRACE(c.name);
    const absl::Status status = c.call(*store_);
    EXPECT_EQ(status.code(), c.code) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.words));
  }
}

TEST_F(StoreTest, IdenticalWritesReplayedAfterACrashAreHarmless) {
  const v1::Candidate c1 = SampleCandidate("c1", kTask);
  ASSERT_TRUE(store_->PutCandidate(kRun, c1).ok());
  EXPECT_TRUE(store_->CreateRun(SampleRun(kRun)).ok());
  EXPECT_TRUE(store_->PutTask(kRun, SampleTask(kTask)).ok());
  EXPECT_TRUE(store_->PutCandidate(kRun, c1).ok());
  EXPECT_EQ(store_->ListCandidates(kRun, kTask)->size(), 1u);
}

// A run resumes from a task file that moved or was edited around the task: where the task was read
// from is not its content. Anything else that differs is another task.
TEST_F(StoreTest, PutTaskComparesContentNotWhereTheFileLives) {
  const struct {
    std::string name;
    std::function<void(v1::Task*)> change;
    bool accepted;
  } cases[] = {
      {"moved file", [](v1::Task* t) { t->set_source_file("/elsewhere/tasks.yaml"); }, true},
      {"task further down the file", [](v1::Task* t) { t->set_source_line(t->source_line() + 7); }, true},
      {"other seed", [](v1::Task* t) { t->set_seed(t->seed() + 1); }, false},
      {"other n list", [](v1::Task* t) { t->add_n(4096); }, false},
      {"other budget", [](v1::Task* t) { t->mutable_budget()->set_max_evaluations(3); }, false},
  };
  v1::Task stored = SampleTask("moving");
  stored.set_source_file("/work/a/tasks.yaml");
  stored.set_source_line(3);
  ASSERT_TRUE(store_->PutTask(kRun, stored).ok());
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    v1::Task task = stored;
    c.change(&task);
    EXPECT_EQ(SameTaskContent(stored, task), c.accepted);
    const absl::Status status = store_->PutTask(kRun, task);
    EXPECT_EQ(status.code(), c.accepted ? absl::StatusCode::kOk : absl::StatusCode::kAlreadyExists) << status;
    EXPECT_EQ(store_->GetTask(kRun, "moving")->source_file(), "/work/a/tasks.yaml") << "the first record is kept";
  }
}

TEST_F(StoreTest, ReadOnlyStoreReadsAlongsideTheWriterAndRefusesWrites) {
  ASSERT_TRUE(store_->PutCandidate(kRun, SampleCandidate("c1", kTask)).ok());
  auto reader = PopulationStore::OpenReadOnly(folder_.path());  // the writer still has it open
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE((*reader)->read_only());
  EXPECT_TRUE((*reader)->GetCandidate(kRun, "c1").ok());
  EXPECT_EQ((*reader)->ListTasks(kRun)->size(), 1u);
  const std::vector<std::function<absl::Status(PopulationStore&)>> writes = {
      [](PopulationStore& s) { return s.CreateRun(SampleRun("r9")); },
      [](PopulationStore& s) { return s.PutTask(kRun, SampleTask("t9")); },
      [](PopulationStore& s) { return s.PutCandidate(kRun, SampleCandidate("c9", kTask)); },
      [](PopulationStore& s) {
        return s.CommitEvaluation(kRun, SampleEvaluation("c1", kTask, 1), SampleRunState(kTask, 1));
      },
      [](PopulationStore& s) { return s.PutRunState(kRun, SampleRunState(kTask, 1)); },
  };
  for (const auto& write : writes) {
    const absl::Status status = write(**reader);
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("open read-only"));
  }
}

TEST_F(StoreTest, ConcurrentWritersAndReadersLoseNothing) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 25;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string id = fmt::format("t{}-c{}", t, i);
        const std::string parent = fmt::format("t{}-c{}", t, i - 1);
        auto candidate = i == 0 ? SampleCandidate(id, kTask) : SampleCandidate(id, kTask, {parent});
        if (!store_->PutCandidate(kRun, candidate).ok()) ++failures;
        if (!store_->ListCandidates(kRun, kTask).ok()) ++failures;
        if (!store_->CommitEvaluation(kRun, SampleEvaluation(id, kTask, i), SampleRunState(kTask, i, id))
                 .ok()) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  auto all = store_->ListCandidates(kRun, kTask);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), static_cast<size_t>(kThreads * kPerThread));
  // Each thread's candidates appear in the order that thread stored them.
  std::vector<int> next(kThreads, 0);
  for (const v1::Candidate& candidate : *all) {
    int t = 0, i = 0;
    ASSERT_EQ(sscanf(candidate.id().c_str(), "t%d-c%d", &t, &i), 2);
    EXPECT_EQ(i, next[t]++) << candidate.id();
    EXPECT_TRUE(store_->GetEvaluation(kRun, candidate.id()).ok());
  }
}

}  // namespace
}  // namespace sparseditto
