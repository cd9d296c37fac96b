#include "coordinator/search/search_progress.h"

#include <cmath>

#include "fmt/format.h"

namespace sparseditto {

std::string FormatDuration(double seconds) {
  if (std::isnan(seconds)) return "?";
  if (seconds > kLongestShownSeconds) return "unlimited";  // llround of 1e300 would be INT64_MIN
  const int64_t s = std::llround(std::max(0.0, seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02d}s", s / 60, s % 60);
  return fmt::format("{}h{:02d}m", s / 3600, (s % 3600) / 60);
}

int64_t EvaluationsTheWallHolds(double wall_limit, double wall_spent, double evaluator_seconds, int64_t evaluations) {
  if (!(wall_limit > 0) || evaluations <= 0 || !(evaluator_seconds > 0)) return INT64_MAX;
  const double held = (wall_limit - wall_spent) / (evaluator_seconds / static_cast<double>(evaluations));
  if (!(held > 0)) return 0;
  if (held >= 9.0e18) return INT64_MAX;  // beyond int64: the cast would be undefined
  return static_cast<int64_t>(held);
}

std::string FormatProgressLine(const SearchProgress& p) {
  const int64_t left = std::max<int64_t>(0, p.max_evaluations - p.evaluations);
  const std::string best = p.best_candidate_id.empty()
                               ? std::string("none correct yet")
                               : fmt::format("{:.3f} ({})", p.best_fitness, p.best_candidate_id);
  std::string eta = "?";
  if (p.evaluations_this_call > 0) {
    const double by_evaluations =
        p.seconds_this_call / static_cast<double>(p.evaluations_this_call) * static_cast<double>(left);
    eta = p.wall_seconds_left >= 0 && p.wall_seconds_left < by_evaluations
              ? FormatDuration(p.wall_seconds_left) + " (wall budget)"
              : FormatDuration(by_evaluations);
  }
  const std::string exhausted =
      p.exhausted_spaces > 0 ? fmt::format(", {} seed space{} exhausted", p.exhausted_spaces, p.exhausted_spaces == 1 ? "" : "s")
                             : std::string();
  return fmt::format("{}: {}/{} evaluations, best {}, {} left, ETA {}{}", p.task_name, p.evaluations,
                     p.max_evaluations, best, left, eta, exhausted);
}

ProgressPrinter::ProgressPrinter(std::FILE* out, bool terminal, double log_interval_seconds)
    : out_(out), terminal_(terminal), log_interval_seconds_(log_interval_seconds) {}

void ProgressPrinter::Update(const SearchProgress& progress) {
  const std::string line = FormatProgressLine(progress);
  if (terminal_) {
    std::fprintf(out_, "\r\033[K%s", line.c_str());  // \033[K clears what a longer line left
    std::fflush(out_);
    line_open_ = true;
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (last_logged_ == std::chrono::steady_clock::time_point{} ||
      std::chrono::duration<double>(now - last_logged_).count() >= log_interval_seconds_) {
    std::fprintf(out_, "%s\n", line.c_str());
    std::fflush(out_);
    last_logged_ = now;
    pending_.clear();
  } else {
    pending_ = line;
  }
}

void ProgressPrinter::EndTask() {
  if (terminal_ && line_open_) std::fputc('\n', out_);
  if (!terminal_ && !pending_.empty()) std::fprintf(out_, "%s\n", pending_.c_str());
  std::fflush(out_);
  pending_.clear();
  line_open_ = false;
  last_logged_ = {};
}

}  // namespace sparseditto
