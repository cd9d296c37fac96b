#include "evaluator/runner/step_trace.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <utility>

#include "fmt/format.h"

namespace sparseditto {
namespace {

const char* TraceFile() {
  static const char* file = [] {
    const char* f = std::getenv("SPARSEDITTO_RUNNER_TRACE");
    return f != nullptr && *f != 0 ? f : nullptr;
  }();
  return file;
}

std::map<std::string, std::pair<int, double>>& Steps() {
  static auto* steps = new std::map<std::string, std::pair<int, double>>;
  return *steps;
}

}  // namespace

bool StepTraceOn() { return TraceFile() != nullptr; }

void AddStepTime(const char* label, double seconds) {
  auto& step = Steps()[label];
  ++step.first;
  step.second += seconds;
}

void FlushStepTrace(const std::string& candidate_id) {
  if (!StepTraceOn()) return;
  std::ofstream out(TraceFile(), std::ios::app);
  for (const auto& [label, step] : Steps()) {
    out << fmt::format("{} {} {} {:.4f}\n", candidate_id, label, step.first, step.second);
  }
  Steps().clear();
}

}  // namespace sparseditto
