// Where the judge's time goes inside one evaluation, for whoever tunes the evaluator: with
// SPARSEDITTO_RUNNER_TRACE=FILE in the runner's environment, every ScopedStep adds its wall time to
// its label, and FlushStepTrace appends one line per label ("<candidate> <label> <calls> <seconds>")
// to FILE and starts over. Without the variable a ScopedStep costs one branch. Measurement only: no
// verdict reads it. Not thread-safe (the runner's one thread).
#pragma once

#include <chrono>
#include <string>

namespace sparseditto {

bool StepTraceOn();
void AddStepTime(const char* label, double seconds);
void FlushStepTrace(const std::string& candidate_id);

class ScopedStep {
 public:
  explicit ScopedStep(const char* label) : label_(StepTraceOn() ? label : nullptr) {
    if (label_ != nullptr) begin_ = std::chrono::steady_clock::now();
  }
  ~ScopedStep() { Stop(); }
  // Ends the step early (once; the destructor then adds nothing).
  void Stop() {
    if (label_ != nullptr) {
      AddStepTime(label_, std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count());
      label_ = nullptr;
    }
  }
  ScopedStep(const ScopedStep&) = delete;
  ScopedStep& operator=(const ScopedStep&) = delete;

 private:
  const char* label_;
  std::chrono::steady_clock::time_point begin_;
};

}  // namespace sparseditto
