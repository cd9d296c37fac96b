#include "coordinator/server/run_queue.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/durable_file.h"
#include "common/status_format.h"
#include "fmt/format.h"
#include "task/run_paths.h"
#include "task/task_loader.h"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
constexpr char kRecordSuffix[] = ".run";

bool Ended(v1::RunState state) { return state == v1::RUN_STATE_DONE || state == v1::RUN_STATE_FAILED; }

}  // namespace

absl::StatusOr<std::unique_ptr<RunQueue>> RunQueue::Open(RunQueueOptions options) {
  std::error_code error;
  fs::create_directories(options.dir, error);
  if (error) return absl::UnavailableError(fmt::format("run queue {}: {}", options.dir, error.message()));
  auto queue = std::unique_ptr<RunQueue>(new RunQueue(std::move(options)));
  const fs::path dir(queue->options_.dir);
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (it->path().extension() == kRecordSuffix) files.push_back(it->path());
  }
  if (error) return absl::UnavailableError(fmt::format("run queue {}: {}", dir.string(), error.message()));
  absl::MutexLock lock(&queue->mutex_);
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    v1::QueuedRun record;
    if (!in || !record.ParseFromString(bytes.str()) || RunNameProblem(record.run()) ||
        file.stem().string() != fmt::format("{:08}", record.sequence())) {
      return absl::DataLossError(fmt::format("run queue: {} is not a record of a run (left as it is)", file.string()));
    }
    if (queue->runs_.contains(record.run())) {
      return absl::DataLossError(fmt::format("run queue: {} names run {} again", file.string(), record.run()));
    }
    // A run that was running when the coordinator stopped is searched again first; its search resumes
    // from its store.
    if (record.state() == v1::RUN_STATE_RUNNING) record.set_state(v1::RUN_STATE_QUEUED);
    queue->next_sequence_ = std::max(queue->next_sequence_, record.sequence() + 1);
    const std::string name = record.run();
    queue->runs_[name].record = std::move(record);
  }
  return queue;
}

absl::Status RunQueue::WriteLocked(const v1::QueuedRun& record) {
  const std::string path = (fs::path(options_.dir) / fmt::format("{:08}{}", record.sequence(), kRecordSuffix)).string();
  return WriteFileDurably(path, record.SerializeAsString());
}

int RunQueue::RunsAheadLocked(const v1::QueuedRun& record) const {
  int ahead = 0;
  for (const auto& [name, entry] : runs_) {
    const v1::RunState state = entry.record.state();
    if (name != record.run() && (state == v1::RUN_STATE_RUNNING ||
                                 (state == v1::RUN_STATE_QUEUED && entry.record.sequence() < record.sequence()))) {
      ++ahead;
    }
  }
  return ahead;
}

absl::StatusOr<v1::SubmitRunResponse> RunQueue::Submit(const v1::SubmitRunRequest& request, bool requeue_ended) {
  if (absl::Status s = CheckRunName(request.run(), "run"); !s.ok()) return s;
  for (const std::string& reserved : options_.reserved_names) {
    if (request.run() == reserved) {
      return absl::InvalidArgumentError(
          fmt::format("run: run name '{}' is taken by the coordinator's own state; pick another", reserved));
    }
  }
  if (request.tasks().empty()) return absl::InvalidArgumentError("tasks: a run needs at least one task");
  if (request.tasks_size() > options_.max_tasks) {
    return absl::InvalidArgumentError(
        fmt::format("tasks: {} tasks, more than the {} a run may hold", request.tasks_size(), options_.max_tasks));
  }
  std::set<std::string> names;
  for (int i = 0; i < request.tasks_size(); ++i) {
    const v1::Task& task = request.tasks(i);
    for (int m = 0; options_.builtin_mutators_only && m < task.mutators_size(); ++m) {
      if (task.mutators(m).kind() != v1::MUTATOR_KIND_BUILTIN) {
        return absl::InvalidArgumentError(fmt::format(
            "tasks[{}].mutators[{}]: this coordinator takes only the built-in mutator in a submitted task (an "
            "LLM or command mutator would run on the coordinator with its keys); its operator chooses LLM "
            "mutators with --mutators",
            i, m));
      }
    }
    if (absl::Status s = ValidateTask(task); !s.ok()) {
      return absl::InvalidArgumentError(fmt::format("tasks[{}]: {}", i, s.message()));
    }
    if (absl::Status s = CheckTaskName(task.name()); !s.ok()) {
      return absl::InvalidArgumentError(fmt::format("tasks[{}]: {}", i, s.message()));
    }
    if (!names.insert(task.name()).second) {
      return absl::InvalidArgumentError(fmt::format("tasks[{}]: a second task named {}", i, task.name()));
    }
  }
  absl::MutexLock lock(&mutex_);
  if (closed_) return absl::UnavailableError("the coordinator is stopping");
  auto found = runs_.find(request.run());
  if (found != runs_.end() && !(requeue_ended && Ended(found->second.record.state()))) {
    return absl::AlreadyExistsError(fmt::format("run {} was submitted already (it is {}); give another name",
                                                request.run(), v1::RunState_Name(found->second.record.state())));
  }
  int queued = 0;
  for (const auto& [name, entry] : runs_) queued += entry.record.state() == v1::RUN_STATE_QUEUED ? 1 : 0;
  if (queued >= options_.max_queued) {
    return absl::ResourceExhaustedError(
        fmt::format("{} runs are queued already (the most the coordinator holds); submit again once some end", queued));
  }
  v1::QueuedRun record;
  record.set_sequence(found != runs_.end() ? found->second.record.sequence() : next_sequence_);
  record.set_run(request.run());
  *record.mutable_tasks() = request.tasks();
  record.set_state(v1::RUN_STATE_QUEUED);
  // Written under the lock: submissions are rare, and the file's order is the queue's.
  if (absl::Status s = WriteLocked(record); !s.ok()) return s;
  if (found == runs_.end()) ++next_sequence_;
  Entry& entry = runs_[request.run()];
  entry.record = std::move(record);
  v1::SubmitRunResponse response;
  response.set_run(request.run());
  response.set_runs_ahead(RunsAheadLocked(entry.record));
  return response;
}

RunQueue::Entry* RunQueue::FirstQueuedLocked() {
  Entry* first = nullptr;
  for (auto& [name, entry] : runs_) {
    if (entry.record.state() == v1::RUN_STATE_QUEUED &&
        (first == nullptr || entry.record.sequence() < first->record.sequence())) {
      first = &entry;
    }
  }
  return first;
}

bool RunQueue::ClosedOrQueuedLocked() { return closed_ || FirstQueuedLocked() != nullptr; }

std::optional<v1::QueuedRun> RunQueue::Next(bool wait) {
  absl::MutexLock lock(&mutex_);
  if (!wait && FirstQueuedLocked() == nullptr) return std::nullopt;
  mutex_.Await(absl::Condition(this, &RunQueue::ClosedOrQueuedLocked));
  if (closed_) return std::nullopt;
  Entry* entry = FirstQueuedLocked();
  // Running in memory only: on disk it stays queued until it ends, which is what a restart does with a
  // running run anyway.
  entry->record.set_state(v1::RUN_STATE_RUNNING);
  running_ = entry->record.run();
  return entry->record;
}

absl::Status RunQueue::Finish(const std::string& run, v1::RunState state, const std::string& detail) {
  absl::MutexLock lock(&mutex_);
  auto found = runs_.find(run);
  if (found == runs_.end() || running_ != run) return absl::NotFoundError(fmt::format("run {} is not running", run));
  v1::QueuedRun record = found->second.record;
  record.set_state(state);
  record.set_detail(detail);
  running_.clear();
  absl::Status written = WriteLocked(record);
  found->second.record = std::move(record);
  v1::RunEvent ended;
  ended.mutable_ended()->set_state(state);
  ended.mutable_ended()->set_detail(detail);
  PublishLocked(found->second, std::move(ended));
  return written;
}

void RunQueue::PublishLocked(Entry& entry, v1::RunEvent event) {
  // A progress event replaces the one before it when that one is of the same task: a watcher that
  // keeps up sees each, a slow one the latest.
  if (event.has_progress() && !entry.events.empty() && entry.events.back().has_progress() &&
      entry.events.back().progress().task_name() == event.progress().task_name()) {
    entry.events.pop_back();
  }
  event.set_sequence(next_event_++);
  event.set_run(entry.record.run());
  entry.events.push_back(std::move(event));
  while (static_cast<int>(entry.events.size()) > options_.max_events_per_run) entry.events.pop_front();
}

void RunQueue::Publish(const std::string& run, v1::RunEvent event) {
  absl::MutexLock lock(&mutex_);
  auto found = runs_.find(run);
  if (found != runs_.end()) PublishLocked(found->second, std::move(event));
}

absl::StatusOr<RunEvents> RunQueue::Wait(const std::string& run, int64_t after_sequence, absl::Duration wait) {
  absl::MutexLock lock(&mutex_);
  auto found = runs_.find(run);
  if (found == runs_.end()) return absl::NotFoundError(fmt::format("no run {} on this coordinator", run));
  const Entry* entry = &found->second;  // entries are never erased: the pointer stays good
  struct Args {
    RunQueue* queue;
    const Entry* entry;
    int64_t after;
  } args{this, entry, after_sequence};
  mutex_.AwaitWithTimeout(absl::Condition(
                              +[](Args* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                return a->queue->closed_ || Ended(a->entry->record.state()) ||
                                       (!a->entry->events.empty() && a->entry->events.back().sequence() > a->after);
                              },
                              &args),
                          wait);
  RunEvents out;
  for (const v1::RunEvent& event : entry->events) {
    if (event.sequence() > after_sequence) out.events.push_back(event);
  }
  out.ended = Ended(entry->record.state());
  out.closed = closed_;
  return out;
}

absl::StatusOr<std::pair<v1::QueuedRun, int>> RunQueue::Find(const std::string& run) {
  absl::MutexLock lock(&mutex_);
  auto found = runs_.find(run);
  if (found == runs_.end()) return absl::NotFoundError(fmt::format("no run {} on this coordinator", run));
  const int ahead = found->second.record.state() == v1::RUN_STATE_QUEUED ? RunsAheadLocked(found->second.record) : 0;
  return std::make_pair(found->second.record, ahead);
}

std::string RunQueue::Running() {
  absl::MutexLock lock(&mutex_);
  return running_;
}

void RunQueue::Close() {
  absl::MutexLock lock(&mutex_);
  closed_ = true;
}

}  // namespace sparseditto
