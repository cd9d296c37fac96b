// What the distributed-mode tests share: a coordinator's WorkerService on 127.0.0.1 (a port the OS
// picks), evaluator nodes on threads of the test, and a tiny evaluator scoring by candidate id.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <thread>

#include "coordinator/search/evaluation_job.h"
#include "coordinator/server/evaluation_work.h"
#include "coordinator/server/worker_service.h"
#include "evaluator/node/evaluator_node.h"
#include "evaluator/node/grpc_coordinator_link.h"
#include "fmt/format.h"
#include "grpcpp/grpcpp.h"
#include "rpc/connection_options.h"

namespace sparseditto::cluster_test {

inline constexpr char kEvaluatorToken[] = "evaluator-token-0123456789";
inline constexpr char kClientToken[] = "client-token-0123456789abcdef";
inline constexpr char kMutatorToken[] = "mutator-token-0123456789abcdef";

// The coordinator's server: WorkerService over an EvaluationWork, on a port the OS picks.
struct CoordinatorServer {
  explicit CoordinatorServer(EvaluationWorkOptions options) : work(options) {
    tokens.Add(rpc::Role::kEvaluator, kEvaluatorToken);
    tokens.Add(rpc::Role::kClient, kClientToken);
    service = std::make_unique<WorkerServiceImpl>(&work, &tokens);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    rpc::ApplyServerOptions(builder, {});
    builder.RegisterService(service.get());
    server = builder.BuildAndStart();
    address = fmt::format("127.0.0.1:{}", port);
  }
  ~CoordinatorServer() {
    work.Close();
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  }
  std::shared_ptr<grpc::Channel> Channel() const {
    return rpc::MakeChannel(address, grpc::InsecureChannelCredentials(), {});
  }
  std::unique_ptr<GrpcCoordinatorLink> Link(const std::string& token) const {
    return std::make_unique<GrpcCoordinatorLink>(Channel(), GrpcCoordinatorLinkOptions{.token = token});
  }

  EvaluationWork work;
  rpc::RoleTokens tokens;
  std::unique_ptr<WorkerServiceImpl> service;
  std::unique_ptr<grpc::Server> server;
  std::string address;
};

inline EvaluatorNodeOptions NodeOptions(const std::string& name) {
  EvaluatorNodeOptions o;
  o.worker.set_name(name);
  o.worker.set_arch("sm_90");
  o.worker.set_gpu_name("fake");
  o.pull_wait = absl::Milliseconds(200);  // so that a drain ends quickly
  o.initial_backoff = absl::Milliseconds(20);
  o.max_backoff = absl::Milliseconds(200);
  o.jitter_seed = 7;
  return o;
}

// An evaluator node on its own thread, over its own evaluator, from construction to destruction.
struct RunningNode {
  RunningNode(CoordinatorLink* link, CandidateEvaluator* evaluator, const std::string& name,
              const std::string& spool_dir = "")
      : spool(*ResultSpool::Open(spool_dir)), node(link, evaluator, spool.get(), NodeOptions(name)) {
    thread = std::thread([this] { ended = node.Run(); });
  }
  ~RunningNode() { Stop(); }
  void Stop() {
    node.Drain();
    if (thread.joinable()) thread.join();
  }
  std::unique_ptr<ResultSpool> spool;
  EvaluatorNode node;
  absl::Status ended;
  std::thread thread;
};

// Scores a candidate by its id (0.5 + length / 100), counting calls; one node's thread uses it.
class IdEvaluator : public CandidateEvaluator {
 public:
  v1::EvalResult Evaluate(const v1::Task&, const v1::Candidate& candidate, uint64_t) override {
    ++calls[candidate.id()];
    v1::EvalResult r;
    r.set_fitness(0.5 + static_cast<double>(candidate.id().size()) / 100);
    return r;
  }
  absl::Status SetUp(const v1::Task&) override {
    ++set_ups;
    return absl::OkStatus();
  }
  DeviceFacts Device() const override { return {.sm_count = 132, .smem_per_block = 232448, .smem_per_sm = 233472, .arch = 90}; }
  std::map<std::string, int> calls;
  int set_ups = 0;
};

inline v1::Task OneTask() {
  v1::Task t;
  t.set_name("t");
  return t;
}

inline v1::EvaluationJob JobFor(const std::string& candidate_id) {
  v1::Candidate c;
  c.set_id(candidate_id);
  return MakeEvaluationJob(OneTask(), c, 1, EvaluationKind::kFull);
}

}  // namespace sparseditto::cluster_test
