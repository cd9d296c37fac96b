// The child of evaluator_kill_test: an evaluator worker (EvaluatorNode) over a fake evaluator that
// takes `seconds` per evaluation (so that a SIGKILL lands mid-job), working for the coordinator at
// 127.0.0.1:PORT with its results spool in SPOOL.
//
//   evaluator_kill_child PORT SPOOL SECONDS
//
// Prints "evaluating <candidate id>" as each evaluation starts, and the node's events ("registered
// again (same session)"). Exits 0 once drained (2: bad arguments).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "coordinator/server/coordinator_kill_setup.h"
#include "evaluator/node/evaluator_node.h"
#include "evaluator/node/grpc_coordinator_link.h"
#include "fmt/format.h"
#include "rpc/connection_options.h"

namespace sparseditto {
namespace {

class SlowEvaluator final : public CandidateEvaluator {
 public:
  explicit SlowEvaluator(double seconds) : seconds_(seconds) {}
  v1::EvalResult Evaluate(const v1::Task&, const v1::Candidate& candidate, uint64_t) override {
    std::printf("evaluating %s\n", candidate.id().c_str());
    std::fflush(stdout);
    absl::SleepFor(absl::Seconds(seconds_));
    v1::EvalResult r;
    r.set_fitness(0.25);
    return r;
  }

 private:
  const double seconds_;
};

int Main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s PORT SPOOL SECONDS\n", argv[0]);
    return 2;
  }
  auto spool = ResultSpool::Open(argv[2]);
  if (!spool.ok()) return 2;
  GrpcCoordinatorLink link(
      rpc::MakeChannel(fmt::format("127.0.0.1:{}", argv[1]), grpc::InsecureChannelCredentials(), {}),
      {.token = kill_test::kToken});
  SlowEvaluator evaluator(std::strtod(argv[3], nullptr));
  EvaluatorNodeOptions options;
  options.worker.set_name("doomed");
  options.worker.set_arch("sm_90");
  options.pull_wait = absl::Milliseconds(300);
  options.initial_backoff = absl::Milliseconds(20);
  options.max_backoff = absl::Milliseconds(200);
  options.on_event = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  EvaluatorNode node(&link, &evaluator, spool->get(), options);
  const absl::Status ended = node.Run();
  if (!ended.ok()) std::fprintf(stderr, "%s\n", std::string(ended.message()).c_str());
  return ended.ok() ? 0 : 1;
}

}  // namespace
}  // namespace sparseditto

int main(int argc, char** argv) { return sparseditto::Main(argc, argv); }
