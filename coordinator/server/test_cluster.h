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

// A node registering as `arch` on a GPU named `gpu_name` (what nvidia-smi tells a real one).
inline EvaluatorNodeOptions NodeOptions(const std::string& name, const std::string& arch = "sm_90",
                                        const std::string& gpu_name = "fake") {
  EvaluatorNodeOptions o;
  o.worker.set_name(name);
  o.worker.set_arch(arch);
  o.worker.set_gpu_name(gpu_name);
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
      : RunningNode(link, evaluator, NodeOptions(name), spool_dir) {}
  RunningNode(CoordinatorLink* link, CandidateEvaluator* evaluator, const EvaluatorNodeOptions& options,
              const std::string& spool_dir = "")
      : spool(*ResultSpool::Open(spool_dir)), node(link, evaluator, spool.get(), options) {
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

// Scores a candidate by its id (0.5 + length / 100), counting calls; one node's thread uses it. Its
// device is an sm_90 by default; given a GPU name and arch, its results name them (as the real
// evaluator's name the device they ran on) and it counts the tasks it set up and evaluated.
class IdEvaluator : public CandidateEvaluator {
 public:
  IdEvaluator() = default;
  IdEvaluator(std::string gpu_name, std::string arch) : gpu_name_(std::move(gpu_name)), arch_(std::move(arch)) {}
  v1::EvalResult Evaluate(const v1::Task& task, const v1::Candidate& candidate, uint64_t) override {
    ++calls[candidate.id()];
    ++tasks[task.name()];
    v1::EvalResult r;
    r.set_fitness(0.5 + static_cast<double>(candidate.id().size()) / 100);
    r.set_gpu_name(gpu_name_);
    r.set_arch(arch_);
    return r;
  }
  absl::Status SetUp(const v1::Task& task) override {
    ++set_ups;
    ++tasks[task.name()];
    return absl::OkStatus();
  }
  DeviceFacts Device() const override {
    int64_t arch = 0;  // "sm_80" -> 80; an sm_90 when not given
    for (char c : arch_) arch = c >= '0' && c <= '9' ? arch * 10 + (c - '0') : arch;
    return {.sm_count = 132, .smem_per_block = 232448, .smem_per_sm = 233472, .arch = arch == 0 ? 90 : arch};
  }
  std::map<std::string, int> calls;
  std::map<std::string, int> tasks;  // set-ups and evaluations, by task name
  int set_ups = 0;

 private:
  std::string gpu_name_;
  std::string arch_;
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
