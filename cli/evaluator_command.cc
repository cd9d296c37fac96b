// `sparseditto evaluator --coordinator HOST:PORT`: an evaluator worker of distributed mode on one GPU
// of this machine (evaluator/node/evaluator_node.h): the embedded evaluator (compile pool, sandbox,
// runner) taking jobs from the coordinator. It reconnects with backoff while the coordinator is away,
// keeps each result in a spool folder until it is acknowledged, and on SIGTERM or SIGINT finishes the
// job it runs, reports it and exits (143 / 130); 0 when the coordinator drained it.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/stop_signals.h"
#include "cli/install_paths.h"
#include "cli/provenance.h"
#include "common/subprocess.h"
#include "coordinator/search/gpu_candidate_evaluator.h"
#include "evaluator/node/evaluator_node.h"
#include "evaluator/node/grpc_coordinator_link.h"
#include "fmt/format.h"
#include "rpc/connection_options.h"
#include "rpc/role_tokens.h"
#include "rpc/tls.h"

namespace sparseditto {
namespace {

struct EvaluatorCommandOptions {
  std::string coordinator;
  std::string token_file;
  std::string gpu;     // CUDA_VISIBLE_DEVICES for the runner; empty: the first visible
  std::string arch;    // empty: read from the GPU (nvidia-smi)
  std::string name;    // empty: <hostname>/gpu<id>
  std::string spool;   // empty: <cache>/../evaluator-spool/<name>
  std::string cache_dir;
  double timing_seconds = 1.0;
  double stage_timeout = 60;
  rpc::ClientTls tls;
};

int Fail(const absl::Status& status) {
  std::cerr << "sparseditto evaluator: " << status.message() << "\n";
  return kExitFailure;
}

// The GPU's name, "sm_XY" and driver, from nvidia-smi (the driver's own tool, on every GPU node).
absl::Status ReadGpu(const std::string& gpu, v1::WorkerInfo* worker) {
  SpawnOptions spawn;
  spawn.argv = {"nvidia-smi", "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader", "-i",
                gpu.empty() ? "0" : gpu};
  spawn.inherit_variables = {"PATH"};
  absl::StatusOr<CommandResult> ran = RunCommand(spawn, 30);
  if (!ran.ok() || !ran->outcome.success()) {
    return absl::UnavailableError(fmt::format("cannot read the GPU with nvidia-smi ({}); give --arch",
                                              ran.ok() ? ran->outcome.ToString() : std::string(ran.status().message())));
  }
  std::vector<std::string> fields = absl::StrSplit(ran->stdout_output.bytes, ',');
  if (fields.size() < 3) return absl::UnavailableError("nvidia-smi's answer is not 'name, compute_cap, driver'; give --arch");
  for (std::string& f : fields) f = std::string(absl::StripAsciiWhitespace(f));
  worker->set_gpu_name(fields[0]);
  std::string capability = fields[1];
  capability.erase(std::remove(capability.begin(), capability.end(), '.'), capability.end());
  if (worker->arch().empty()) worker->set_arch("sm_" + capability);
  worker->set_driver_version(fields[2]);
  return absl::OkStatus();
}

// "12.4" from `nvcc --version` ("Cuda compilation tools, release 12.4, V12.4.131"); "" when unknown.
std::string NvccRelease(const std::string& nvcc) {
  SpawnOptions spawn;
  spawn.argv = {nvcc, "--version"};
  absl::StatusOr<CommandResult> ran = RunCommand(spawn, 30);
  if (!ran.ok() || !ran->outcome.success()) return "";
  const std::string& text = ran->stdout_output.bytes;
  const size_t at = text.find("release ");
  if (at == std::string::npos) return "";
  const size_t end = text.find_first_of(", \n", at + 8);
  return text.substr(at + 8, end == std::string::npos ? std::string::npos : end - at - 8);
}

int RunEvaluator(const EvaluatorCommandOptions& o) {
  // SIGTERM / SIGINT: drain. Blocked before anything starts a thread (the compile pool, gRPC): a thread
  // that did not block them would let the default action end the process with the job in hand unreported.
  StopSignals stop_signals;
  if (o.coordinator.empty()) return Fail(absl::InvalidArgumentError("--coordinator HOST:PORT is required"));
  absl::StatusOr<std::string> token = rpc::LoadClientToken(o.token_file, "SPARSEDITTO_TOKEN");
  if (!token.ok()) return Fail(token.status());
  std::optional<rpc::ClientTls> tls;
  if (!o.tls.ca_path.empty()) tls = o.tls;
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = rpc::MakeChannelCredentials(tls);
  if (!credentials.ok()) return Fail(credentials.status());
  if (absl::Status s = RequireSandboxLayers("evaluator"); !s.ok()) return Fail(s);

  EvaluatorNodeOptions node_options;
  v1::WorkerInfo& worker = node_options.worker;
  worker.set_arch(o.arch);
  if (absl::Status s = ReadGpu(o.gpu, &worker); !s.ok() && o.arch.empty()) return Fail(s);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  worker.set_hostname(host);
  worker.set_name(o.name.empty() ? fmt::format("{}/gpu{}", host, o.gpu.empty() ? "0" : o.gpu) : o.name);
  worker.set_harness_version(ProjectRevision());

  EvaluatorOptions evaluator_options = InstalledEvaluatorOptions(o.cache_dir, o.stage_timeout, o.timing_seconds, 20);
  evaluator_options.runner.cuda_visible_devices = o.gpu;
  worker.set_nvcc_version(NvccRelease(evaluator_options.compiler.nvcc));
  worker.set_cuda_version(worker.nvcc_version());  // the toolkit the candidates are built and linked with
  auto evaluator = Evaluator::Create(evaluator_options);
  if (!evaluator.ok()) return Fail(evaluator.status());
  GpuCandidateEvaluator gpu_evaluator(evaluator->get());
  std::string spool_dir = o.spool;
  if (spool_dir.empty()) {
    std::string safe = worker.name();
    for (char& ch : safe) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    spool_dir = (std::filesystem::path(evaluator_options.compiler.cache_directory).parent_path() / "evaluator-spool" /
                 safe).string();
  }
  auto spool = ResultSpool::Open(spool_dir);
  if (!spool.ok()) return Fail(spool.status());
  for (const std::string& bad : (*spool)->set_aside()) std::cerr << "sparseditto evaluator: set aside " << bad << "\n";

  GrpcCoordinatorLink link(rpc::MakeChannel(o.coordinator, *credentials, {}), {.token = *token});
  node_options.on_event = [name = worker.name()](const std::string& line) {
    std::cerr << fmt::format("evaluator {}: {}\n", name, line);
  };
  EvaluatorNode node(&link, &gpu_evaluator, spool->get(), node_options);
  std::cerr << fmt::format("evaluator {}: {} ({}), working for {}; results kept in {} until acknowledged\n",
                           worker.name(), worker.gpu_name(), worker.arch(), o.coordinator, spool_dir);

  stop_signals.Watch([&](int signal_number) {
    std::cerr << fmt::format("evaluator {}: {}: finishing the job in hand, then exiting\n", worker.name(),
                             StopSignals::Name(signal_number));
    node.Drain();
  });
  const absl::Status ended = node.Run();
  const int received = stop_signals.Finish();
  const EvaluatorNodeCounts c = node.counts();
  std::cerr << fmt::format("evaluator {}: {} jobs run; reports: {} accepted, {} duplicate, {} stale, {} not held; {} "
                           "dropped on the coordinator's word\n",
                           worker.name(), c.jobs_run, c.accepted, c.duplicate, c.stale, c.not_held, c.discarded);
  if (!ended.ok()) return Fail(ended);
  if (received == SIGTERM) return 128 + SIGTERM;
  if (received == SIGINT) return 128 + SIGINT;
  return kExitSuccess;
}

}  // namespace

void RegisterEvaluatorCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<EvaluatorCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "evaluator", "An evaluator worker on one GPU of this machine, taking evaluation jobs from a coordinator");
  cmd->add_option("--coordinator", o->coordinator, "The coordinator's address, HOST:PORT")->required();
  cmd->add_option("--token-file", o->token_file,
                  "File holding this worker's evaluator token (owner-readable only); default: SPARSEDITTO_TOKEN");
  cmd->add_option("--gpu", o->gpu, "CUDA device (index or UUID) to evaluate on; default: the first visible");
  cmd->add_option("--arch", o->arch, "The GPU's arch, e.g. sm_90 (default: read with nvidia-smi)");
  cmd->add_option("--name", o->name, "This worker's name in the coordinator's logs (default: host/gpuN)");
  cmd->add_option("--spool", o->spool, "Folder where results wait until the coordinator acknowledges them");
  cmd->add_option("--cache", o->cache_dir, "Compile and baseline cache folder (default ~/.cache/sparseditto)");
  cmd->add_option("--timing-seconds", o->timing_seconds, "Timing budget per n")->capture_default_str();
  cmd->add_option("--stage-timeout", o->stage_timeout, "Seconds a cascade stage may take")->capture_default_str();
  cmd->add_option("--tls-ca", o->tls.ca_path, "CA of the coordinator's certificate (PEM): TLS");
  cmd->add_option("--tls-cert", o->tls.cert_chain_path, "Client certificate chain (PEM), for mutual TLS");
  cmd->add_option("--tls-key", o->tls.private_key_path, "Client private key (PEM), for mutual TLS");
  cmd->add_option("--tls-server-name", o->tls.server_name_override, "Name to check the server's certificate for");
  cmd->callback([o, exit_code] { *exit_code = RunEvaluator(*o); });
}

}  // namespace sparseditto
