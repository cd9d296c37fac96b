// RunQueue (run_queue.h): what a submission must be, the queue's order and durability across a
// restart, and the events its watchers get.
#include "coordinator/server/run_queue.h"

#include <filesystem>
#include <fstream>
#include <thread>

#include "task/task_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;

// A task as the loader gives it (defaults filled in), so that it passes ValidateTask.
v1::Task LoadedTask(const std::string& name) {
  absl::StatusOr<v1::TaskBatch> batch = ParseTaskYaml(
      "name: " + name + "\ndtype: fp16\npattern: {family: unstructured, sparsity: 0.9}\n"
      "matrix:\n  generated: {rows: 256, cols: 256}\nn: [16]\narch: [sm_90]\nbudget: {max_evaluations: 10}\n",
      "run_queue_test.yaml");
  EXPECT_TRUE(batch.ok()) << batch.status();
  return batch.ok() ? batch->tasks(0) : v1::Task();
}

v1::SubmitRunRequest RunOf(const std::string& run, int tasks = 1) {
  v1::SubmitRunRequest r;
  r.set_run(run);
  for (int i = 0; i < tasks; ++i) *r.add_tasks() = LoadedTask("t" + std::to_string(i));
  return r;
}

class RunQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(folder_.ok());
    Reopen();
  }
  void Reopen() {
    queue_.reset();
    auto q = RunQueue::Open({.dir = dir(), .max_queued = 3, .max_tasks = 4, .reserved_names = {".coordinator"}});
    ASSERT_TRUE(q.ok()) << q.status();
    queue_ = *std::move(q);
  }
  std::string dir() const { return (folder_.path() / "runs").string(); }
  v1::RunEvent Line(const std::string& text) {
    v1::RunEvent e;
    e.set_line(text);
    return e;
  }
  v1::RunEvent Progress(const std::string& task, int64_t evaluations) {
    v1::RunEvent e;
    e.mutable_progress()->set_task_name(task);
    e.mutable_progress()->set_evaluations(evaluations);
    return e;
  }

  testing_support::TempFolder folder_{"run_queue_test"};
  std::unique_ptr<RunQueue> queue_;
};

TEST_F(RunQueueTest, RefusesWhatCannotBeARunAndNamesWhy) {
  struct Case {
    const char* what;
    v1::SubmitRunRequest request;
    absl::StatusCode code;
    const char* says;
  };
  v1::SubmitRunRequest twice = RunOf("twice", 2);
  twice.mutable_tasks(1)->set_name("t0");
  v1::SubmitRunRequest bad_task = RunOf("bad_task");
  bad_task.mutable_tasks(0)->clear_dtype();
  v1::SubmitRunRequest llm = RunOf("llm");
  v1::MutatorSpec* m = llm.mutable_tasks(0)->add_mutators();
  m->set_name("evil");
  m->set_kind(v1::MUTATOR_KIND_COMMAND);
  m->add_command("/bin/sh");
  v1::SubmitRunRequest path_task = RunOf("path_task");
  path_task.mutable_tasks(0)->set_name("../up");
  const Case cases[] = {
      {"an empty name", RunOf(""), absl::StatusCode::kInvalidArgument, "run name is empty"},
      {"a path", RunOf("../x"), absl::StatusCode::kInvalidArgument, "must match"},
      {"the coordinator's own folder", RunOf(".coordinator"), absl::StatusCode::kInvalidArgument, "taken by"},
      {"no tasks", RunOf("none", 0), absl::StatusCode::kInvalidArgument, "at least one task"},
      {"too many tasks", RunOf("many", 5), absl::StatusCode::kInvalidArgument, "more than the 4"},
      {"two tasks of one name", twice, absl::StatusCode::kInvalidArgument, "tasks[1]: a second task named t0"},
      {"a task the loader refuses", bad_task, absl::StatusCode::kInvalidArgument, "tasks[0]"},
      {"a command mutator", llm, absl::StatusCode::kInvalidArgument, "tasks[0].mutators[1]: this coordinator takes only"},
      {"a task name that is a path", path_task, absl::StatusCode::kInvalidArgument, "tasks[0]"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<v1::SubmitRunResponse> r = queue_->Submit(c.request);
    EXPECT_EQ(r.status().code(), c.code) << c.what << ": " << r.status();
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.says)) << c.what;
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir())) << "nothing written for a refused run";
}

TEST_F(RunQueueTest, KeepsOrderAndStateAcrossARestartAndResumesTheRunningRunFirst) {
  ASSERT_EQ(queue_->Submit(RunOf("a")).value().runs_ahead(), 0);
  ASSERT_EQ(queue_->Submit(RunOf("b")).value().runs_ahead(), 1);
  ASSERT_EQ(queue_->Submit(RunOf("c")).value().runs_ahead(), 2);
  EXPECT_EQ(queue_->Submit(RunOf("d")).status().code(), absl::StatusCode::kResourceExhausted) << "max_queued 3";
  EXPECT_EQ(queue_->Submit(RunOf("b")).status().code(), absl::StatusCode::kAlreadyExists);
  std::optional<v1::QueuedRun> first = queue_->Next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->run(), "a");
  ASSERT_TRUE(queue_->Finish("a", v1::RUN_STATE_DONE, "").ok());
  EXPECT_EQ(queue_->Next()->run(), "b");  // b running when the coordinator dies
  EXPECT_EQ(queue_->Finish("c", v1::RUN_STATE_DONE, "").code(), absl::StatusCode::kNotFound) << "c is not running";

  Reopen();
  EXPECT_EQ(queue_->Find("a")->first.state(), v1::RUN_STATE_DONE);
  EXPECT_EQ(queue_->Find("b")->first.state(), v1::RUN_STATE_QUEUED) << "a running run is searched again";
  EXPECT_EQ(queue_->Find("c")->second, 1) << "c waits behind b";
  EXPECT_EQ(queue_->Find("b")->first.tasks_size(), 1);
  EXPECT_EQ(queue_->Next()->run(), "b");
  ASSERT_TRUE(queue_->Finish("b", v1::RUN_STATE_FAILED, "task t0 failed").ok());
  EXPECT_EQ(queue_->Next()->run(), "c");
  ASSERT_TRUE(queue_->Finish("c", v1::RUN_STATE_DONE, "").ok());
  EXPECT_FALSE(queue_->Next(/*wait=*/false).has_value()) << "nothing queued";
  EXPECT_EQ(queue_->Submit(RunOf("a")).status().code(), absl::StatusCode::kAlreadyExists) << "a done run stays done";
  ASSERT_TRUE(queue_->Submit(RunOf("a"), /*requeue_ended=*/true).ok()) << "the command line's run, searched again";

  Reopen();
  EXPECT_EQ(queue_->Find("b")->first.detail(), "task t0 failed");
  EXPECT_EQ(queue_->Find("a")->first.state(), v1::RUN_STATE_QUEUED);
  EXPECT_EQ(queue_->Find("zzz").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(RunQueueTest, ARecordThatDoesNotParseStopsTheOpenAndIsLeftAsItIs) {
  ASSERT_TRUE(queue_->Submit(RunOf("a")).ok());
  queue_.reset();
  const auto file = std::filesystem::path(dir()) / "00000001.run";
  ASSERT_TRUE(std::filesystem::exists(file));
  std::ofstream(file, std::ios::trunc) << "not a record";
  auto q = RunQueue::Open({.dir = dir()});
  EXPECT_EQ(q.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(q.status().message()), HasSubstr("00000001.run"));
  EXPECT_TRUE(std::filesystem::exists(file));
}

TEST_F(RunQueueTest, WatchersGetEventsInOrderWithProgressCoalescedAndTheEnd) {
  ASSERT_TRUE(queue_->Submit(RunOf("a")).ok());
  ASSERT_TRUE(queue_->Next().has_value());
  queue_->Publish("a", Line("started"));
  queue_->Publish("a", Progress("t0", 1));
  queue_->Publish("a", Progress("t0", 2));  // replaces the one before: same task, nothing between
  queue_->Publish("a", Line("best so far"));
  queue_->Publish("a", Progress("t0", 3));
  queue_->Publish("nobody", Line("ignored"));
  absl::StatusOr<RunEvents> seen = queue_->Wait("a", 0, absl::ZeroDuration());
  ASSERT_TRUE(seen.ok());
  ASSERT_EQ(seen->events.size(), 4u);
  EXPECT_EQ(seen->events[0].line(), "started");
  EXPECT_EQ(seen->events[1].progress().evaluations(), 2);
  EXPECT_EQ(seen->events[2].line(), "best so far");
  EXPECT_EQ(seen->events[3].progress().evaluations(), 3);
  EXPECT_FALSE(seen->ended);
  for (size_t i = 1; i < seen->events.size(); ++i) EXPECT_LT(seen->events[i - 1].sequence(), seen->events[i].sequence());

  // A watcher waiting for more wakes when the run ends, and gets the end.
  const int64_t last = seen->events.back().sequence();
  std::thread finisher([&] {
    absl::SleepFor(absl::Milliseconds(50));
    ASSERT_TRUE(queue_->Finish("a", v1::RUN_STATE_DONE, "").ok());
  });
  absl::StatusOr<RunEvents> rest = queue_->Wait("a", last, absl::Seconds(30));
  finisher.join();
  ASSERT_TRUE(rest.ok());
  EXPECT_TRUE(rest->ended);
  ASSERT_EQ(rest->events.size(), 1u);
  EXPECT_EQ(rest->events[0].ended().state(), v1::RUN_STATE_DONE);
  EXPECT_EQ(queue_->Wait("unknown", 0, absl::ZeroDuration()).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(RunQueueTest, CloseWakesNextAndWatchersAndRefusesSubmissions) {
  ASSERT_TRUE(queue_->Submit(RunOf("a")).ok());
  ASSERT_TRUE(queue_->Next().has_value());
  std::thread closer([&] {
    absl::SleepFor(absl::Milliseconds(50));
    queue_->Close();
  });
  absl::StatusOr<RunEvents> waited = queue_->Wait("a", 0, absl::Seconds(30));
  std::optional<v1::QueuedRun> next = queue_->Next();
  closer.join();
  ASSERT_TRUE(waited.ok());
  EXPECT_TRUE(waited->closed);
  EXPECT_FALSE(next.has_value());
  EXPECT_EQ(queue_->Submit(RunOf("b")).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace sparseditto
