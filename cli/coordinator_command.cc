// `sparseditto coordinator TASKS.yaml --listen HOST:PORT --tokens FILE`: the search of `sparseditto
// search` (the same code, search_common.h, the same store and artifacts under runs/<run>/), with its
// evaluations done by evaluator workers (`sparseditto evaluator --coordinator HOST:PORT`) that pull
// them over gRPC (coordinator/server/: EvaluationWork behind WorkerService). Workers may come and go;
// a job whose worker vanished goes to another after its lease (DESIGN.md §3.7).
// Its jobs, grants and acknowledged results are journaled in runs/<run>/jobs (job_journal.h): killed
// and started again with the same command, it resumes the search from the store and takes its jobs
// back, so running workers still report and nothing acknowledged is evaluated again.
// Not yet (issue 25): the client service (submit, watch, status over the network), mutator workers.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/search_common.h"
#include "coordinator/server/evaluation_work.h"
#include "coordinator/server/job_journal.h"
#include "coordinator/server/worker_service.h"
#include "fmt/format.h"
#include "grpcpp/grpcpp.h"
#include "rpc/connection_options.h"
#include "rpc/health.h"
#include "rpc/role_tokens.h"
#include "rpc/tls.h"

namespace sparseditto {
namespace {

struct CoordinatorCommandOptions {
  std::string listen = "127.0.0.1:7070";
  std::string tokens_file;
  std::string address_file;
  rpc::ServerTls tls;
  double wait_for_evaluators_seconds = 0;  // 0: for ever
  double lease_seconds = EvaluationWorkOptions().lease / absl::Seconds(1);
};

// The workers' server and what it serves, for the time of the search.
class RemoteEvaluators final : public SearchBackend {
 public:
  static absl::StatusOr<std::unique_ptr<SearchBackend>> Make(const CoordinatorCommandOptions& o,
                                                             const std::string& run_dir) {
    auto tokens = o.tokens_file.empty() ? rpc::RoleTokens::FromEnvironment() : rpc::RoleTokens::FromFile(o.tokens_file);
    if (!tokens.ok()) return tokens.status();
    if (tokens->empty()) {
      return absl::InvalidArgumentError(
          "no tokens: give --tokens FILE ('evaluator <token>' lines) or SPARSEDITTO_TOKEN_EVALUATOR; the "
          "coordinator serves no one unauthenticated");
    }
    std::optional<rpc::ServerTls> tls;
    if (!o.tls.cert_chain_path.empty() || !o.tls.private_key_path.empty()) tls = o.tls;
    auto credentials = rpc::MakeServerCredentials(tls);
    if (!credentials.ok()) return credentials.status();
    EvaluationWorkOptions work_options;
    if (o.wait_for_evaluators_seconds > 0) work_options.wait_for_workers = absl::Seconds(o.wait_for_evaluators_seconds);
    if (o.lease_seconds > 0) work_options.lease = absl::Seconds(o.lease_seconds);
    work_options.on_event = [](const std::string& line) { std::cerr << "coordinator: " << line << "\n"; };
    // The jobs' journal beside the run's store: a coordinator killed and started again on the run
    // takes its jobs, leases and acknowledged results back (evaluation_work.h Restore).
    auto journal = JobJournal::Open((std::filesystem::path(run_dir) / "jobs").string());
    if (!journal.ok()) return journal.status();
    auto work = EvaluationWork::Restore(work_options, journal->get());
    if (!work.ok()) return work.status();
    auto remote = std::unique_ptr<RemoteEvaluators>(
        new RemoteEvaluators(*std::move(journal), *std::move(work), *std::move(tokens)));
    rpc::EnableHealthService();
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort(o.listen, *credentials, &port);
    rpc::ApplyServerOptions(builder, {});
    builder.RegisterService(&remote->service_);
    remote->server_ = builder.BuildAndStart();
    if (remote->server_ == nullptr || port == 0) {
      return absl::UnavailableError(fmt::format("--listen {}: cannot listen there (in use, or not an address)", o.listen));
    }
    // The address workers use: a wildcard listen address names no machine, so this one's name is given.
    std::string host = o.listen.substr(0, o.listen.rfind(':'));
    if (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "::") {
      char name[256] = {};
      gethostname(name, sizeof(name) - 1);
      host = name;
    }
    remote->address_ = fmt::format("{}:{}", host, port);
    if (!o.address_file.empty()) {
      const std::string temporary = o.address_file + ".tmp";
      std::ofstream(temporary) << remote->address_ << "\n";
      std::error_code error;
      std::filesystem::rename(temporary, o.address_file, error);
      if (error) return absl::InternalError(fmt::format("--address-file {}: {}", o.address_file, error.message()));
    }
    std::cerr << fmt::format("coordinator: serving evaluators on {}{}; start them with: sparseditto evaluator "
                             "--coordinator {} --token-file FILE\n",
                             remote->address_, tls ? " (TLS)" : " (no TLS: use it on a trusted network only)",
                             remote->address_);
    return remote;
  }
  ~RemoteEvaluators() override {
    work_->Close();  // workers hear "draining" and stop pulling
    if (server_ != nullptr) {
      (void)rpc::SetServing(*server_, false);
      server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    }
  }
  CandidateEvaluator& evaluator() override { return *work_; }
  EvaluationPipeline& pipeline() override { return *work_; }
  size_t evaluators() override { return std::max<size_t>(work_->LiveWorkers().size(), 1); }

 private:
  RemoteEvaluators(std::unique_ptr<JobJournal> journal, std::unique_ptr<EvaluationWork> work, rpc::RoleTokens tokens)
      : journal_(std::move(journal)), work_(std::move(work)), tokens_(std::move(tokens)), service_(work_.get(), &tokens_) {}
  std::unique_ptr<JobJournal> journal_;
  std::unique_ptr<EvaluationWork> work_;
  rpc::RoleTokens tokens_;
  WorkerServiceImpl service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

}  // namespace

void RegisterCoordinatorCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<SearchOptions>();
  auto c = std::make_shared<CoordinatorCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "coordinator", "The search of `search`, its evaluations done by evaluator workers that pull them over gRPC "
                     "(sparseditto evaluator --coordinator HOST:PORT); resumes an existing run");
  AddSearchOptions(cmd, o.get());
  cmd->add_option("--listen", c->listen, "Address to serve the workers on (port 0: one the OS picks)")
      ->capture_default_str();
  cmd->add_option("--tokens", c->tokens_file,
                  "Token file: '<role> <token>' lines (roles: evaluator, mutator, client, admin), readable by its "
                  "owner only; default: SPARSEDITTO_TOKEN_EVALUATOR and the like");
  cmd->add_option("--address-file", c->address_file,
                  "Write the address served on (host:port; this machine's name for a wildcard --listen) to this "
                  "file once listening, for workers of a Slurm array to find");
  cmd->add_option("--tls-cert", c->tls.cert_chain_path, "Server certificate chain (PEM); with --tls-key: TLS");
  cmd->add_option("--tls-key", c->tls.private_key_path, "Server private key (PEM)");
  cmd->add_option("--tls-client-ca", c->tls.client_ca_path,
                  "Require client certificates signed by this CA (PEM): mutual TLS");
  cmd->add_option("--wait-for-evaluators", c->wait_for_evaluators_seconds,
                  "Seconds a task waits for its first evaluator before failing; 0: for ever")
      ->capture_default_str();
  cmd->add_option("--lease", c->lease_seconds,
                  "Seconds a job stays with a worker that stopped heartbeating before it goes to another")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  cmd->callback([o, c, exit_code] {
    *exit_code = RunSearch(*o, "coordinator", [&](const EvaluatorOptions&, const std::string& run_dir) {
      return RemoteEvaluators::Make(*c, run_dir);
    });
  });
}

}  // namespace sparseditto
