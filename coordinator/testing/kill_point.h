// Test code only: the child's side of the kill tests (search_kill_child, llm_kill_child; the test's
// side is kill_runner.h). The child runs a search and stops dead at the stop point given on its
// command line: "evaluate:N" inside the N-th evaluator call of the process (OnEvaluate, from the
// evaluator), "write:OPERATION:N" just before the N-th store write of that operation (StoreOptions).
// Stopping prints "STOPPED\n" on stdout and waits forever, for the test's SIGKILL.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
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

// What every kill child opens first, in this order: the stop point (the last argument, when it follows the `args`
// positional ones),
// the calls log (appended to), and the store at `store_path` with the stop point's write hook. Holds the
// KillPoint the store's hook points at: keep it where it is (not copied or moved) while the store lives.
struct KillChild {
  KillPoint kill;
  int log = -1;
  std::unique_ptr<PopulationStore> store;

  // `args`: the positional arguments the usage names before the optional stop point. False after saying
  // why on stderr: a wrong count, a bad stop point, a log or store that does not open (exit 2 then).
  bool SetUp(int argc, char** argv, int args, const char* usage, int store_arg, int log_arg) {
    if (argc < args + 1 || argc > args + 2) {
      std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
      return false;
    }
    if (argc == args + 2 && !kill.Parse(argv[args + 1])) {
      std::fprintf(stderr, "bad stop point '%s'\n", argv[args + 1]);
      return false;
    }
    log = open(argv[log_arg], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log < 0) return false;
    auto opened = PopulationStore::Open(argv[store_arg], kill.StoreOptions());
    if (!opened.ok()) {
      std::fprintf(stderr, "%s\n", std::string(opened.status().message()).c_str());
      return false;
    }
    store = *std::move(opened);
    return true;
  }
};

}  // namespace sparseditto::testing
