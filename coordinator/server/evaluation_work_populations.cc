// EvaluationWork's populations (evaluation_work.h): the platform each population's jobs carry, which
// sessions serve it, and the one line the coordinator's log gets when none does.
#include "coordinator/server/evaluation_work.h"
#include "fmt/format.h"
#include "task/arch_populations.h"

namespace sparseditto {

std::string EvaluationWork::PopulationKey(const std::string& run, const std::string& task_name) {
  return run + "\n" + task_name;
}

std::string EvaluationWork::PlatformOfLocked(const std::string& run, const std::string& task_name) const {
  auto it = population_platforms_.find(PopulationKey(run, task_name));
  return it == population_platforms_.end() ? "" : it->second;
}

bool EvaluationWork::ServedLocked(const std::string& platform) const {
  for (const auto& [id, session] : sessions_) {
    if (session.platform == platform) return true;
  }
  return false;
}

void EvaluationWork::TellOnceLocked(const std::string& key, const std::string& line) {
  if (!told_.insert(key).second || !options_.on_event) return;
  options_.on_event(line);
}

void EvaluationWork::TellIfUnservedLocked(const std::string& platform, const std::string& whose) {
  if (platform.empty() || ServedLocked(platform)) return;
  TellOnceLocked(platform, fmt::format("no evaluator of {} is registered: {} wait for one (a population is timed "
                                       "on one GPU model; workers of other models do not take its jobs)",
                                       DescribePlatform(platform), whose));
}

std::string EvaluationWork::OldestServingLocked(const v1::Task& task) const {
  const std::string platform = PlatformOfLocked(run_, task.name());
  const Session* oldest = nullptr;
  std::string oldest_id;
  for (const auto& [id, session] : sessions_) {
    const bool serves =
        platform.empty() ? DeviceServesTask(task, session.worker.arch()) : session.platform == platform;
    if (serves && (oldest == nullptr || session.order < oldest->order)) {
      oldest = &session;
      oldest_id = id;
    }
  }
  return oldest_id;
}

}  // namespace sparseditto
