// `sparseditto coordinator [TASKS.yaml] --listen HOST:PORT --tokens FILE [--serve]`: the search of
// `sparseditto search` (the same code, search_common.h, the same stores and artifacts under
// runs/<run>/), its evaluations done by evaluator workers (`sparseditto evaluator --coordinator
// HOST:PORT`) that pull them over gRPC (coordinator/server/: EvaluationWork behind WorkerService).
// Clients submit runs, read their status, watch them and fetch their kernels over the same port
// (ClientService; `sparseditto client ...`), and with --http-listen as JSON over HTTP (http_api.h: the
// same calls, tokens and TLS files). Runs are searched one after another from a durable queue
// (run_queue.h); the task file on the command line is queued first. Without --serve the coordinator
// ends once the queue is empty; with it, it waits for more.
// Its state lives in --state-dir (default <runs-dir>/.coordinator): the job journal (jobs/: every job,
// grant and acknowledged result) and the queue (runs/). Killed and started again with the same
// command, it takes its jobs and runs back: running workers still report, nothing acknowledged is
// evaluated again, and the interrupted run resumes from its store (DESIGN.md §3.7).
// Model requests of the LLM mutators go to mutator services (`sparseditto mutator --models FILE`,
// model_work.h), which hold the keys: the coordinator calls no model itself.
// A task with several archs is one population per arch, each evaluated on one arch and GPU model
// (evaluation_work.h, task/arch_populations.h). SIGTERM / SIGINT: see StopOnSignal. Not yet (issue 25):
// several runs at once.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/logging.h"
#include "cli/stop_signals.h"
#include "cli/search_common.h"
#include "common/durable_file.h"
#include "coordinator/server/client_service.h"
#include "coordinator/server/evaluation_work.h"
#include "coordinator/server/http_server.h"
#include "coordinator/server/job_journal.h"
#include "coordinator/server/model_work.h"
#include "coordinator/server/mutator_work_service.h"
#include "coordinator/server/run_queue.h"
#include "coordinator/server/worker_service.h"
#include "common/status_format.h"
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
  std::string http_listen;        // empty: no HTTP front
  std::string http_address_file;
  std::string state_dir;  // default: <runs_dir>/.coordinator
  rpc::ServerTls tls;
  double wait_for_evaluators_seconds = 0;  // 0: for ever
  double lease_seconds = EvaluationWorkOptions().lease / absl::Seconds(1);
  bool serve = false;
};

constexpr char kStateFolder[] = ".coordinator";

// One run's view of the coordinator's workers: the search's evaluator and pipeline for that run.
class RunOnWorkers final : public SearchBackend {
 public:
  explicit RunOnWorkers(EvaluationWork* work) : work_(work) {}
  CandidateEvaluator& evaluator() override { return *work_; }
  EvaluationPipeline& pipeline() override { return *work_; }
  size_t evaluators() override { return std::max<size_t>(work_->LiveWorkers().size(), 1); }

 private:
  EvaluationWork* work_;
};

// The address workers and clients use: a wildcard listen address names no machine, so this one's
// name is given.
std::string ServedAddress(const std::string& listen, int port) {
  std::string host = listen.substr(0, listen.rfind(':'));
  if (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "::") {
    char name[256] = {};
    gethostname(name, sizeof(name) - 1);
    host = name;
  }
  return fmt::format("{}:{}", host, port);
}

// Readable by the evaluators of a Slurm array (other jobs of the same user), written whole.
absl::Status WriteAddressFile(const std::string& path, const std::string& address, std::string_view flag) {
  if (absl::Status s = WriteFileDurably(path, address + "\n", 0644); !s.ok()) {
    return absl::UnavailableError(fmt::format("{} {}: {}", flag, path, s.message()));
  }
  return absl::OkStatus();
}

// SIGTERM / SIGINT (blocked from the start by StopSignals, so in every thread gRPC and the search
// start): the coordinator says NOT_SERVING, ends its watchers' streams
// ("the coordinator is stopping": `client watch` waits and comes back), and exits 143 / 130 with the
// run in progress left as it is: everything acknowledged is in the journal and the store, so the same
// command started again resumes it, as after kill -9. Its evaluators are not told to drain: they
// reconnect to the coordinator started again and report what they hold.
void StopOnSignal(StopSignals& stop_signals, grpc::Server* server, RunQueue* runs) {
  stop_signals.Watch([server, runs](int signal_number) {
    std::cerr << fmt::format("coordinator: {}: stopping; the run in progress resumes when the coordinator is "
                             "started again\n",
                             StopSignals::Name(signal_number));
    (void)rpc::SetServing(*server, false);
    runs->Close();
    // A moment for the watchers' streams to end with that word. No server Shutdown: it would wait for
    // the workers' long polls, and no drain: the workers are to stay for the coordinator's restart.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::cerr << std::flush;
    std::_Exit(128 + signal_number);  // as kill -9 would, which the journal and the store are made for
  });
}

int RunCoordinator(const SearchOptions& o, const CoordinatorCommandOptions& c) {
  auto fail = [](const absl::Status& status) { return FailWith("coordinator", status); };
  StopSignals stop_signals;
  if (absl::Status s = SetUpLogging(o.log_level, o.log_file); !s.ok()) return fail(s);
  // The command line's own run, checked before any port or file is touched.
  std::optional<v1::SubmitRunRequest> own_run;
  if (!o.task_file.empty()) {
    absl::StatusOr<std::string> run = SearchRunName(o);
    if (!run.ok()) return fail(run.status());
    absl::StatusOr<std::vector<v1::Task>> tasks = LoadSearchTasks(o);
    if (!tasks.ok()) return fail(tasks.status());
    own_run.emplace().set_run(*run);
    for (v1::Task& t : *tasks) *own_run->add_tasks() = std::move(t);
  } else if (!c.serve) {
    return fail(absl::InvalidArgumentError("give a task file, or --serve to search the runs clients submit"));
  }
  auto tokens = c.tokens_file.empty() ? rpc::RoleTokens::FromEnvironment() : rpc::RoleTokens::FromFile(c.tokens_file);
  if (!tokens.ok()) return fail(tokens.status());
  if (tokens->empty()) {
    return fail(absl::InvalidArgumentError(
        "no tokens: give --tokens FILE ('evaluator <token>' and 'client <token>' lines) or "
        "SPARSEDITTO_TOKEN_EVALUATOR and the like; the coordinator serves no one unauthenticated"));
  }
  std::optional<rpc::ServerTls> tls;
  if (!c.tls.cert_chain_path.empty() || !c.tls.private_key_path.empty()) tls = c.tls;
  auto credentials = rpc::MakeServerCredentials(tls);
  if (!credentials.ok()) return fail(credentials.status());
  const std::filesystem::path state =
      c.state_dir.empty() ? std::filesystem::path(o.runs_dir) / kStateFolder : std::filesystem::path(c.state_dir);
  // Submitted tasks may name LLM and command mutators: the coordinator only routes their requests by
  // model name to the mutator services, which hold the endpoints, keys and commands.
  auto queue = RunQueue::Open({.dir = (state / "runs").string(),
                               .builtin_mutators_only = false,
                               .reserved_names = {kStateFolder}});
  if (!queue.ok()) return fail(queue.status());
  if (own_run) {
    absl::StatusOr<v1::SubmitRunResponse> queued = (*queue)->Submit(*own_run, /*requeue_ended=*/true);
    if (absl::IsAlreadyExists(queued.status())) {
      std::cerr << fmt::format("coordinator: run {} is queued from before a restart: it resumes from its store\n",
                               own_run->run());
    } else if (!queued.ok()) {
      return fail(queued.status());
    }
  }
  EvaluationWorkOptions work_options;
  if (c.wait_for_evaluators_seconds > 0) work_options.wait_for_workers = absl::Seconds(c.wait_for_evaluators_seconds);
  if (c.lease_seconds > 0) work_options.lease = absl::Seconds(c.lease_seconds);
  RunQueue* runs = queue->get();
  // Workers and mutator services coming and going: in the log and to the running run's watchers.
  const auto log_event = [runs](const std::string& line) {
    std::cerr << "coordinator: " << line << "\n";
    v1::RunEvent event;
    event.set_line(line);
    runs->Publish(runs->Running(), std::move(event));
  };
  work_options.on_event = log_event;
  auto journal = JobJournal::Open((state / "jobs").string());
  if (!journal.ok()) return fail(journal.status());
  auto work = EvaluationWork::Restore(work_options, journal->get());
  if (!work.ok()) return fail(work.status());
  ModelWork models({.on_event = log_event});
  WorkerServiceImpl worker_service(work->get(), &*tokens);
  MutatorWorkServiceImpl mutator_service(&models, &*tokens);
  ClientServiceImpl client_service(runs, &*tokens, {.runs_dir = o.runs_dir, .work = work->get(), .models = &models});
  rpc::EnableHealthService();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(c.listen, *credentials, &port);
  rpc::ApplyServerOptions(builder, {});
  builder.RegisterService(&worker_service);
  builder.RegisterService(&mutator_service);
  builder.RegisterService(&client_service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return fail(absl::UnavailableError(fmt::format("--listen {}: cannot listen there (in use, or not an address)", c.listen)));
  }
  StopOnSignal(stop_signals, server.get(), runs);
  // The JSON/HTTP front of the same client service, with the same tokens and TLS files; its address
  // file is written before the gRPC one, which a script waits for.
  HttpApi http_api(&client_service, &*tokens);
  std::unique_ptr<HttpServer> http;
  if (!c.http_listen.empty()) {
    HttpServerOptions http_options;
    http_options.listen = c.http_listen;
    http_options.tls = tls;
    auto started = HttpServer::Start(&http_api, http_options);
    if (!started.ok()) return fail(started.status());
    http = *std::move(started);
    const std::string http_address = ServedAddress(c.http_listen, http->port());
    if (!c.http_address_file.empty()) {
      if (absl::Status s = WriteAddressFile(c.http_address_file, http_address, "--http-address-file"); !s.ok()) return fail(s);
    }
    std::cerr << fmt::format("coordinator: serving the HTTP API on {}://{}/v1/runs\n", tls ? "https" : "http",
                             http_address);
  }
  const std::string address = ServedAddress(c.listen, port);
  if (!c.address_file.empty()) {
    if (absl::Status s = WriteAddressFile(c.address_file, address, "--address-file"); !s.ok()) return fail(s);
  }
  std::cerr << fmt::format("coordinator: serving evaluators, mutator services and clients on {}{}; start evaluators "
                           "with: sparseditto evaluator --coordinator {} --token-file FILE, mutator services with: "
                           "sparseditto mutator --coordinator {} --models FILE --token-file FILE\n",
                           address, tls ? " (TLS)" : " (no TLS: use it on a trusted network only)", address, address);
  int exit_code = kExitSuccess;
  while (std::optional<v1::QueuedRun> next = runs->Next(/*wait=*/c.serve)) {
    const std::string run = next->run();
    std::cerr << fmt::format("coordinator: run {} ({} task(s)) starts\n", run, next->tasks_size());
    (*work)->SetRun(run);
    std::string last_error;
    SearchHooks events;
    events.model_clients = models.Factory();
    events.on_progress = [&](const SearchProgress& p) {
      v1::RunEvent event;
      v1::RunEvent::Progress* progress = event.mutable_progress();
      progress->set_task_name(p.task_name);
      progress->set_evaluations(p.evaluations);
      progress->set_max_evaluations(p.max_evaluations);
      progress->set_best_candidate_id(p.best_candidate_id);
      progress->set_best_fitness(p.best_fitness);
      progress->set_seconds(p.seconds_this_call);
      runs->Publish(run, std::move(event));
    };
    events.on_line = [&](const std::string& line) {
      if (line.starts_with("error: ") || line.find(": FAILED") != std::string::npos) last_error = line;
      v1::RunEvent event;
      event.set_line(line);
      runs->Publish(run, std::move(event));
    };
    const std::vector<v1::Task> tasks(next->tasks().begin(), next->tasks().end());
    const int code = RunSearchOfTasks(o, run, tasks, "coordinator", [&](const EvaluatorOptions&, const std::string&) {
      return absl::StatusOr<std::unique_ptr<SearchBackend>>(std::make_unique<RunOnWorkers>(work->get()));
    }, events);
    if (code != kExitSuccess) exit_code = code;
    const v1::RunState ended = code == kExitSuccess ? v1::RUN_STATE_DONE : v1::RUN_STATE_FAILED;
    if (absl::Status s = runs->Finish(run, ended, code == kExitSuccess ? "" : last_error); !s.ok()) {
      std::cerr << fmt::format("coordinator: run {}: {} (a restarted coordinator searches it again)\n", run,
                               s.message());
    }
  }
  (void)stop_signals.Finish();  // no signal handling past this point: the server below goes away
  (*work)->Close();  // workers hear "draining" and stop pulling
  models.Close();
  runs->Close();     // watchers hear the coordinator is stopping
  if (http != nullptr) http->Stop();  // after Close: its event streams have ended
  (void)rpc::SetServing(*server, false);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  return exit_code;
}

}  // namespace

void RegisterCoordinatorCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<SearchOptions>();
  auto c = std::make_shared<CoordinatorCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "coordinator", "The search of `search`, its evaluations done by evaluator workers that pull them over gRPC "
                     "(sparseditto evaluator --coordinator HOST:PORT), of the task file given and of the runs "
                     "clients submit (sparseditto client submit); resumes after a restart");
  AddSearchOptions(cmd, o.get(), /*task_file_required=*/false);
  cmd->add_option("--listen", c->listen, "Address to serve workers and clients on (port 0: one the OS picks)")
      ->capture_default_str();
  cmd->add_option("--tokens", c->tokens_file,
                  "Token file: '<role> <token>' lines (roles: evaluator, mutator, client, admin), readable by its "
                  "owner only; default: SPARSEDITTO_TOKEN_EVALUATOR and the like");
  cmd->add_option("--address-file", c->address_file,
                  "Write the address served on (host:port; this machine's name for a wildcard --listen) to this "
                  "file once listening, for workers of a Slurm array to find");
  cmd->add_option("--http-listen", c->http_listen,
                  "Also serve clients JSON over HTTP on HOST:PORT (:0: a port the OS picks; HTTPS with the --tls-* "
                  "files; the same tokens): POST /v1/runs, GET /v1/runs/RUN[/events|/export] (README)");
  cmd->add_option("--http-address-file", c->http_address_file,
                  "Write the HTTP API's address (host:port) to this file once listening");
  cmd->add_option("--state-dir", c->state_dir,
                  "The coordinator's own state: its job journal and run queue (default <runs-dir>/.coordinator)");
  cmd->add_flag("--serve", c->serve,
                "Keep serving once the queue is empty, for the runs clients submit (stop it with SIGTERM: its "
                "queue and jobs are durable, and a restart resumes them)");
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
  cmd->callback([o, c, exit_code] { *exit_code = RunCoordinator(*o, *c); });
}

}  // namespace sparseditto
