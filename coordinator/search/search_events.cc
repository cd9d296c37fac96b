#include "coordinator/search/search_events.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include "absl/strings/strip.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

constexpr size_t kDetailLimit = 2000;  // a failure's detail (a compile log's head) is trimmed to this

std::string Trimmed(const std::string& text) {
  if (text.size() <= kDetailLimit) return text;
  return text.substr(0, kDetailLimit) + fmt::format(" [{} more bytes]", text.size() - kDetailLimit);
}

// The file's length after its last newline is cut (0 bytes kept when it has none); -1 on a read error.
int64_t WholeLinesLength(int fd, int64_t size) {
  char buffer[4096];
  int64_t end = size;
  while (end > 0) {
    const int64_t from = std::max<int64_t>(0, end - static_cast<int64_t>(sizeof(buffer)));
    const ssize_t got = pread(fd, buffer, static_cast<size_t>(end - from), from);
    if (got != end - from) return -1;
    for (int64_t i = got - 1; i >= 0; --i) {
      if (buffer[i] == '\n') return from + i + 1;
    }
    end = from;
  }
  return 0;
}

std::string Rfc3339(std::chrono::system_clock::time_point now) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                     utc.tm_hour, utc.tm_min, utc.tm_sec, ms % 1000);
}

}  // namespace

absl::StatusOr<std::unique_ptr<JsonlEventFile>> JsonlEventFile::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return absl::UnavailableError(fmt::format("events file {}: {}", path, std::strerror(errno)));
  struct stat st {};
  int64_t dropped = 0;
  if (fstat(fd, &st) != 0) {
    const int error = errno;
    close(fd);
    return absl::UnavailableError(fmt::format("events file {}: {}", path, std::strerror(error)));
  }
  if (st.st_size > 0) {
    const int64_t whole = WholeLinesLength(fd, st.st_size);
    if (whole < 0 || (whole < st.st_size && (ftruncate(fd, whole) != 0 || fsync(fd) != 0))) {
      const int error = errno;
      close(fd);
      return absl::UnavailableError(
          fmt::format("events file {}: cannot cut its partial last line: {}", path, std::strerror(error)));
    }
    dropped = st.st_size - whole;
  }
  auto file = std::unique_ptr<JsonlEventFile>(new JsonlEventFile(fd, path, dropped));
  if (dropped > 0) {
    file->Emit({{"type", "resumed"},
                {"dropped_partial_line_bytes", dropped},
                {"detail", "the last line was cut by a crash and was dropped; the store holds what it described"}});
  }
  return file;
}

JsonlEventFile::~JsonlEventFile() {
  (void)fsync(fd_);
  close(fd_);
}

void JsonlEventFile::Emit(EventJson event) {
  const auto now = std::chrono::system_clock::now();
  const int64_t unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  EventJson line = {{"schema", kEventSchemaVersion}, {"time", Rfc3339(now)}, {"unix_ms", unix_ms}};
  line.update(event);
  // Invalid UTF-8 (a compiler's message quoting a candidate's bytes) is replaced, not thrown.
  const std::string text = line.dump(-1, ' ', false, EventJson::error_handler_t::replace) + "\n";
  const bool sync = line.value("type", "") != "mutation";
  std::lock_guard<std::mutex> lock(mu_);
  // One write per line: with O_APPEND a line is never interleaved with another, and a crash cuts at
  // most the last one, which the next Open drops.
  const ssize_t wrote = write(fd_, text.data(), text.size());
  std::string error;
  if (wrote != static_cast<ssize_t>(text.size())) {
    error = wrote < 0 ? std::strerror(errno) : "short write";
  } else if (sync && fsync(fd_) != 0) {
    error = std::strerror(errno);
  }
  if (!error.empty() && first_error_.empty()) first_error_ = fmt::format("events file {}: {}", path_, error);
}

std::string JsonlEventFile::first_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_error_;
}

std::string OutcomeName(const v1::EvalResult& result) {
  if (result.failure() == v1::FAILURE_CATEGORY_NONE) return "CORRECT";
  return std::string(absl::StripPrefix(v1::FailureCategory_Name(result.failure()), "FAILURE_CATEGORY_"));
}

EventJson EvaluationEvent(const std::string& task, const v1::Candidate& candidate, const v1::EvalResult& result,
                               double seconds, int64_t evaluations, double best_fitness) {
  EventJson times = EventJson::array();
  for (const v1::TimingStats& t : result.timings()) {
    times.push_back({{"n", t.n()}, {"ms", t.median_ms()}, {"min_ms", t.min_ms()}, {"max_ms", t.max_ms()}});
  }
  return {{"type", "evaluation"},
          {"task", task},
          {"candidate", candidate.id()},
          {"parents", std::vector<std::string>(candidate.parent_ids().begin(), candidate.parent_ids().end())},
          {"operator", std::string(absl::StripPrefix(v1::MutationOperator_Name(candidate.operator_()),
                                                     "MUTATION_OPERATOR_"))},
          {"mutator", candidate.mutator()},
          {"seed", candidate.seed_name()},
          {"outcome", OutcomeName(result)},
          {"stage", std::string(absl::StripPrefix(v1::EvalStage_Name(result.stage_reached()), "EVAL_STAGE_"))},
          {"fitness", result.fitness()},
          {"times", times},
          {"screened", result.timing_screen()},
          {"seconds", seconds},
          {"evaluations", evaluations},
          {"best_fitness", best_fitness}};
}

EventJson FailureEvent(const std::string& task, const v1::EvalResult& result) {
  if (result.failure() == v1::FAILURE_CATEGORY_NONE || result.failure() == v1::FAILURE_CATEGORY_SLOWER) return nullptr;
  return {{"type", "failure"},
          {"task", task},
          {"candidate", result.candidate_id()},
          {"category", OutcomeName(result)},
          {"stage", std::string(absl::StripPrefix(v1::EvalStage_Name(result.stage_reached()), "EVAL_STAGE_"))},
          {"detail", Trimmed(result.failure_detail())}};
}

EventJson MutationEvent(const std::string& task, const std::vector<std::string>& parents, const std::string& mutator,
                             const v1::Candidate* child, const std::string& outcome, const std::string& detail) {
  return {{"type", "mutation"},
          {"task", task},
          {"parents", parents},
          {"child", child == nullptr ? "" : child->id()},
          {"mutator", mutator},
          {"outcome", outcome},
          {"detail", Trimmed(detail)}};
}

}  // namespace sparseditto
