// The child of coordinator_kill_test: a coordinator as `sparseditto coordinator` runs it (the search
// of one task over the real seed library, its evaluations served over gRPC on 127.0.0.1:PORT, its
// jobs journaled), with no evaluator of its own: the test's evaluator nodes do the work. The test
// SIGKILLs it mid-search and starts it again on the same store and journal.
//
//   coordinator_kill_child STORE JOURNAL PORT       (PORT 0: one the OS picks)
//
// Prints "listening PORT" once serving, and "done EVALUATIONS BEST_ID FITNESS" at the end (exit 0; 1 when
// the search failed, 2 for bad arguments or a store or journal that does not open).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "coordinator/search/search_loop.h"
#include "coordinator/server/coordinator_kill_setup.h"
#include "coordinator/server/evaluation_work.h"
#include "coordinator/server/job_journal.h"
#include "coordinator/server/worker_service.h"
#include "coordinator/testing/search_fixture.h"
#include "fmt/format.h"
#include "grpcpp/grpcpp.h"
#include "rpc/connection_options.h"

namespace sparseditto {
namespace {

int Main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s STORE JOURNAL PORT\n", argv[0]);
    return 2;
  }
  absl::Status error;
  auto store = testing::OpenTestStore(argv[1], &error);
  auto journal = JobJournal::Open(argv[2]);
  auto seeds = LoadSeedLibrary(std::string(SPARSEDITTO_SOURCE_DIR) + "/kernels/seeds");
  if (store == nullptr || !journal.ok() || !seeds.ok()) {
    std::fprintf(stderr, "cannot open: %s %s\n", std::string(error.message()).c_str(),
                 std::string(journal.status().message()).c_str());
    return 2;
  }
  auto work = EvaluationWork::Restore(kill_test::WorkOptions(), journal->get());
  if (!work.ok()) {
    std::fprintf(stderr, "%s\n", std::string(work.status().message()).c_str());
    return 2;
  }
  rpc::RoleTokens tokens;
  tokens.Add(rpc::Role::kEvaluator, kill_test::kToken);
  WorkerServiceImpl service(work->get(), &tokens);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(fmt::format("127.0.0.1:{}", argv[3]), grpc::InsecureServerCredentials(), &port);
  rpc::ApplyServerOptions(builder, {});
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "cannot listen on port %s\n", argv[3]);
    return 2;
  }
  std::printf("listening %d\n", port);
  std::fflush(stdout);
  SearchLoopOptions options = kill_test::LoopOptions();
  options.pipeline = work->get();
  auto summary = RunTaskSearch(*store, "run", kill_test::Task(), *seeds, **work, options);
  (*work)->Close();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  if (!summary.ok()) {
    std::fprintf(stderr, "%s\n", std::string(summary.status().message()).c_str());
    return 1;
  }
  std::printf("done %lld %s %.17g\n", static_cast<long long>(summary->evaluations), summary->best_candidate_id.c_str(),
              summary->best_fitness);
  return 0;
}

}  // namespace
}  // namespace sparseditto

int main(int argc, char** argv) { return sparseditto::Main(argc, argv); }
