// Test code only: the child's side of the kill tests (search_kill_child, llm_kill_child; the test's
// side is kill_runner.h). The child runs a search and stops dead at the stop point given on its
// command line: "evaluate:N" inside the N-th evaluator call of the process (OnEvaluate, from the
// evaluator), "write:OPERATION:N" just before the N-th store write of that operation (StoreOptions).
// Stopping prints "STOPPED\n" on stdout and waits forever, for the test's SIGKILL.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fmt/format.h"
#include "population_store/population_store.h"

namespace sparseditto::testing {

// The child's side: the stop point of its last argument.
class KillPoint {
 public:
  // False for a spec that is no stop point.
  bool Parse(const std::string& spec) {
    const size_t last = spec.rfind(':');
    if (last == std::string::npos) return false;
    operation_ = spec.substr(0, last);
    at_ = std::strtol(spec.c_str() + last + 1, nullptr, 10);
    return at_ >= 1;
  }
  // Store options (create_if_missing) that stop at a "write:" point.
  PopulationStoreOptions StoreOptions() {
    PopulationStoreOptions options;
    options.create_if_missing = true;
    options.before_write = [this](std::string_view operation) {
      if (operation_ == fmt::format("write:{}", operation) && ++writes_ == at_) StopHere();
      return absl::OkStatus();
    };
    return options;
  }
  // Called from the evaluator at each call: stops at an "evaluate:" point.
  void OnEvaluate() {
    if (operation_ == "evaluate" && ++evaluations_ == at_) StopHere();
  }

 private:
  [[noreturn]] static void StopHere() {
    std::fputs("STOPPED\n", stdout);
    std::fflush(stdout);
    for (;;) pause();
  }
  std::string operation_;
  long at_ = 0;
  long writes_ = 0;
  long evaluations_ = 0;
};

}  // namespace sparseditto::testing
