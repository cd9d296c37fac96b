#include "evaluator/runner_client.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>

#include "common/text_tail.h"
#include "evaluator/runner/framing.h"
#include "common/status_format.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

constexpr int kRequestFd = 3;
constexpr int kEventFd = 4;
constexpr double kMemoryPollSeconds = 0.25;

}  // namespace

RunnerClient::~RunnerClient() {
  if (child_ == nullptr || child_->outcome().has_value()) return;
  child_->ClosePipe(kRequestFd);  // end of input: the runner returns from its loop and exits
  (void)child_->WaitFor(DeadlineAfter(options_.exit_grace_seconds));
}  // child_'s destructor kills the group if it is still there

absl::Status RunnerClient::EnsureChild() {
  if (child_ != nullptr && !child_->outcome().has_value()) return absl::OkStatus();
  child_.reset();
  SpawnOptions spawn;
  spawn.argv = {options_.runner_path};
  spawn.inherit_variables = options_.inherit_variables;
  if (options_.eager_module_loading) spawn.environment["CUDA_MODULE_LOADING"] = "EAGER";
  if (!options_.cuda_visible_devices.empty()) spawn.environment["CUDA_VISIBLE_DEVICES"] = options_.cuda_visible_devices;
  if (!options_.gpu_share_dir.empty()) spawn.environment["SPARSEDITTO_GPU_SHARE_DIR"] = options_.gpu_share_dir;
  spawn.pipes = {{kRequestFd, ChildPipe::Direction::kToChild}, {kEventFd, ChildPipe::Direction::kFromChild}};
  spawn.limits.file_size_bytes = int64_t{1} << 30;
  spawn.max_captured_bytes = options_.max_log_bytes;
  auto child = Spawn(spawn);
  if (!child.ok()) return absl::UnavailableError(fmt::format("cannot start the runner: {}", child.status().message()));
  child_ = *std::move(child);
  return absl::OkStatus();
}

absl::Status RunnerClient::Send(const v1::RunnerRequest& request) {
  auto frame = EncodeFrame(request);
  if (!frame.ok()) return frame.status();
  return child_->WriteToChild(kRequestFd, *frame, DeadlineAfter(30));
}

absl::StatusOr<v1::RunnerEvent> RunnerClient::ReadEvent(Deadline deadline) {
  // Wait for the first byte in slices, checking the child's memory between them.
  if (absl::Status s = child_->WaitReadableWithin(kEventFd, deadline, options_.max_resident_bytes, kMemoryPollSeconds);
      !s.ok()) {
    if (absl::IsDeadlineExceeded(s)) return absl::DeadlineExceededError("stage time limit");
    if (absl::IsResourceExhausted(s)) return absl::ResourceExhaustedError(fmt::format("the candidate {}", s.message()));
    return s;
  }
  const Deadline frame_deadline = std::max(deadline, DeadlineAfter(10));  // a started frame completes promptly
  auto header = child_->ReadFromChild(kEventFd, kFrameHeaderBytes, frame_deadline);
  if (!header.ok()) return absl::UnavailableError(std::string(header.status().message()));
  auto size = DecodeFrameLength(*header);
  if (!size.ok()) return size.status();
  auto payload = child_->ReadFromChild(kEventFd, *size, frame_deadline);
  if (!payload.ok()) return absl::UnavailableError(std::string(payload.status().message()));
  v1::RunnerEvent event;
  if (!event.ParseFromString(*payload)) return absl::DataLossError("runner event does not parse");
  return event;
}

std::string RunnerClient::ChildLogSince(size_t stdout_offset, size_t stderr_offset) const {
  if (child_ == nullptr) return "";
  const std::string& out = child_->captured_stdout().bytes;
  const std::string& err = child_->captured_stderr().bytes;
  std::string log;
  if (out.size() > stdout_offset) log += "[stdout]\n" + TextTail(out.substr(stdout_offset), 16 << 10);
  if (err.size() > stderr_offset) log += "[stderr]\n" + TextTail(err.substr(stderr_offset), 16 << 10);
  if (child_->captured_stdout().truncated || child_->captured_stderr().truncated) log += "\n[output truncated]";
  return log;
}

double RunnerClient::StageSeconds(v1::EvalStage stage, const v1::EvaluateRequest& request) const {
  if (stage == v1::EVAL_STAGE_TIMING) {
    const double per_n = (request.options().max_timing_seconds() > 0 ? request.options().max_timing_seconds() : 2) + 5;
    return options_.stage_timeout_seconds + per_n * std::max(1, request.task().n_size());
  }
  return options_.stage_timeout_seconds;
}

absl::StatusOr<v1::SetupTaskReply> RunnerClient::SetupTask(const v1::SetupTaskRequest& request) {
  if (absl::Status s = EnsureChild(); !s.ok()) return s;
  v1::RunnerRequest wrapped;
  *wrapped.mutable_setup_task() = request;
  if (absl::Status s = Send(wrapped); !s.ok()) return s;
  auto event = ReadEvent(DeadlineAfter(options_.setup_timeout_seconds));
  if (!event.ok() || !event->has_setup_task()) {
    const std::string log = ChildLogSince(0, 0);
    child_.reset();
    return absl::UnavailableError(fmt::format("runner failed during task set-up: {}\n{}",
                                              event.ok() ? "unexpected event" : event.status().message(), log));
  }
  if (!event->setup_task().ok()) return absl::FailedPreconditionError(event->setup_task().error());
  return event->setup_task();
}

v1::EvalResult RunnerClient::Evaluate(const v1::EvaluateRequest& request) {
  v1::EvalResult result;
  result.set_candidate_id(request.candidate_id());
  result.set_task_name(request.task().name());
  if (absl::Status s = EnsureChild(); !s.ok()) {
    result.set_failure(v1::FAILURE_CATEGORY_INTERNAL);
    result.set_failure_detail(std::string(s.message()));
    return result;
  }
  const size_t out_offset = child_->captured_stdout().bytes.size();
  const size_t err_offset = child_->captured_stderr().bytes.size();
  const auto started = Clock::now();
  v1::RunnerRequest wrapped;
  *wrapped.mutable_evaluate() = request;
  v1::EvalStage stage = v1::EVAL_STAGE_SMOKE;
  // Where the time goes, on our clock: the span before the first stage event is "START".
  std::map<std::string, double> stage_seconds;
  std::string timed_stage = "START";
  auto stage_began = started;
  auto close_stage = [&](const std::string& next) {
    const auto now = Clock::now();
    stage_seconds[timed_stage] += std::chrono::duration<double>(now - stage_began).count();
    timed_stage = next;
    stage_began = now;
  };
  absl::Status status = Send(wrapped);
  while (status.ok()) {
    auto event = ReadEvent(DeadlineAfter(StageSeconds(stage, request)));
    if (!event.ok()) {
      status = event.status();
      break;
    }
    if (event->has_stage_entered()) {
      stage = event->stage_entered();
      close_stage(v1::EvalStage_Name(stage));
      continue;
    }
    if (event->has_evaluate()) {
      close_stage("");
      result = event->evaluate();
      result.clear_stage_seconds();  // the child's word is not ours
      for (const auto& [name, seconds] : stage_seconds) (*result.mutable_stage_seconds())[name] = seconds;
      result.set_run_log(ChildLogSince(out_offset, err_offset));
      result.set_gpu_seconds(std::chrono::duration<double>(Clock::now() - started).count());
      if (event->context_lost()) child_.reset();
      return result;
    }
    status = absl::DataLossError("unexpected runner event");
  }
  // The child hung, died, or broke the protocol: the verdict is the candidate's, the child is replaced.
  result.set_stage_reached(stage);
  if (absl::IsDeadlineExceeded(status)) {
    result.set_failure(v1::FAILURE_CATEGORY_TIMEOUT);
    result.set_failure_detail(fmt::format("{} did not finish within {:.0f} s", v1::EvalStage_Name(stage),
                                          StageSeconds(stage, request)));
  } else {
    auto outcome = child_->WaitFor(DeadlineAfter(2));  // how it ended, if it is ending by itself
    result.set_failure(v1::FAILURE_CATEGORY_CRASH);
    result.set_failure_detail(fmt::format("runner {} during {}: {}",
                                          outcome.ok() ? outcome->ToString() : "lost",
                                          v1::EvalStage_Name(stage), status.message()));
  }
  close_stage("");
  for (const auto& [name, seconds] : stage_seconds) (*result.mutable_stage_seconds())[name] = seconds;
  child_->Kill();
  (void)child_->WaitFor(DeadlineAfter(5));
  result.set_run_log(ChildLogSince(out_offset, err_offset));
  result.set_gpu_seconds(std::chrono::duration<double>(Clock::now() - started).count());
  child_.reset();
  return result;
}

}  // namespace sparseditto
