// `sparseditto client submit|status|watch|export --coordinator HOST:PORT`: a coordinator's runs over
// gRPC (ClientService, proto/services.proto), with a client token (--token-file, else
// SPARSEDITTO_TOKEN). `submit` loads and checks the task file here (matrix paths made absolute: the
// coordinator and its workers must see the same files) and queues it as a run; `watch` prints the
// run's events until it ends (reconnecting from the last event it saw when the stream breaks);
// `status` prints each task; `export` writes the run's best kernels. Every call has a deadline.
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/install_paths.h"
#include "cli/search_common.h"
#include "common/status_format.h"
#include "coordinator/search/run_artifacts.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "grpcpp/grpcpp.h"
#include "rpc/connection_options.h"
#include "rpc/role_tokens.h"
#include "rpc/status_conversion.h"
#include "rpc/tls.h"
#include "services.grpc.pb.h"
#include "task/run_paths.h"

namespace sparseditto {
namespace {

struct ClientOptions {
  std::string coordinator;
  std::string token_file;
  rpc::ClientTls tls;
  double call_timeout = 30;         // seconds, every unary call
  double watch_hours = 48;          // the deadline of one watch, reconnections included
  // submit:
  SearchOptions search;             // the task file, --name, --run, --mutators
  bool watch_after_submit = false;
  // status, watch, export:
  std::string run;
  std::string out_dir = ".";
};

class Client {
 public:
  static absl::StatusOr<Client> Connect(const ClientOptions& o) {
    absl::StatusOr<std::string> token = rpc::LoadClientToken(o.token_file, "SPARSEDITTO_TOKEN");
    if (!token.ok()) return token.status();
    std::optional<rpc::ClientTls> tls;
    if (!o.tls.ca_path.empty()) tls = o.tls;
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = rpc::MakeChannelCredentials(tls);
    if (!credentials.ok()) return credentials.status();
    return Client(v1::ClientService::NewStub(rpc::MakeChannel(o.coordinator, *credentials, {})), *std::move(token),
                  o.call_timeout);
  }
  // A context with the token and a deadline `seconds` from now.
  std::unique_ptr<grpc::ClientContext> Context(double seconds) const {
    auto context = std::make_unique<grpc::ClientContext>();
    rpc::AttachToken(*context, token_);
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
    return context;
  }
  template <typename Request, typename Response, typename Method>
  absl::StatusOr<Response> Call(Method method, const Request& request) const {
    Response response;
    auto context = Context(call_timeout_);
    grpc::Status status = ((*stub_).*method)(context.get(), request, &response);
    if (!status.ok()) return rpc::FromGrpcStatus(status);
    return response;
  }
  v1::ClientService::Stub& stub() const { return *stub_; }

 private:
  Client(std::unique_ptr<v1::ClientService::Stub> stub, std::string token, double call_timeout)
      : stub_(std::move(stub)), token_(std::move(token)), call_timeout_(call_timeout) {}
  std::shared_ptr<v1::ClientService::Stub> stub_;
  std::string token_;
  double call_timeout_;
};

int Fail(const char* command, const absl::Status& status) {
  std::cerr << fmt::format("sparseditto client {}: {}\n", command, status.message());
  return kExitFailure;
}

std::string StateWord(v1::RunState state) {
  switch (state) {
    case v1::RUN_STATE_QUEUED: return "queued";
    case v1::RUN_STATE_RUNNING: return "running";
    case v1::RUN_STATE_DONE: return "done";
    case v1::RUN_STATE_FAILED: return "failed";
    default: return "unknown";
  }
}

// Prints the run's events until it ends; 0 when it ended done.
int Watch(const Client& client, const ClientOptions& o, const std::string& run) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(static_cast<int64_t>(o.watch_hours * 3600));
  int64_t after = 0;
  absl::Duration backoff = absl::Milliseconds(200);
  while (std::chrono::steady_clock::now() < give_up) {
    v1::WatchRunRequest request;
    request.set_run(run);
    request.set_after_sequence(after);
    auto context = client.Context(o.watch_hours * 3600);
    std::unique_ptr<grpc::ClientReader<v1::RunEvent>> reader = client.stub().WatchRun(context.get(), request);
    v1::RunEvent event;
    while (reader->Read(&event)) {
      backoff = absl::Milliseconds(200);
      after = event.sequence();
      if (event.has_progress()) {
        const v1::RunEvent::Progress& p = event.progress();
        std::cout << fmt::format("{}: {}/{} evaluations, best {}\n", p.task_name(), p.evaluations(), p.max_evaluations(),
                                 p.best_candidate_id().empty() ? std::string("none correct yet")
                                                               : fmt::format("{:.3f} ({})", p.best_fitness(),
                                                                             p.best_candidate_id()));
      } else if (event.has_line()) {
        std::cout << event.line() << "\n";
      } else if (event.has_ended()) {
        std::cout << fmt::format("run {} {}{}\n", run, StateWord(event.ended().state()),
                                 event.ended().detail().empty() ? "" : ": " + event.ended().detail());
        return event.ended().state() == v1::RUN_STATE_DONE ? kExitSuccess : kExitFailure;
      }
      std::cout << std::flush;
    }
    const grpc::Status status = reader->Finish();
    const grpc::StatusCode code = status.error_code();
    if (code == grpc::StatusCode::OK) {
      // The stream ended with the run, but this watcher missed its last event (it was dropped from the
      // coordinator's bounded history): ask for the state.
      v1::RunStatusRequest asked;
      asked.set_run(run);
      auto state = client.Call<v1::RunStatusRequest, v1::RunStatusResponse>(&v1::ClientService::Stub::GetRunStatus, asked);
      if (!state.ok()) return Fail("watch", state.status());
      std::cout << fmt::format("run {} {}\n", run, StateWord(state->state()));
      return state->state() == v1::RUN_STATE_DONE ? kExitSuccess : kExitFailure;
    }
    if (code != grpc::StatusCode::UNAVAILABLE && code != grpc::StatusCode::DEADLINE_EXCEEDED) {
      return Fail("watch", rpc::FromGrpcStatus(status));
    }
    // The coordinator restarts or the network broke: come back from the last event seen.
    std::cerr << fmt::format("sparseditto client watch: {} (trying again in {})\n", status.error_message(),
                             absl::FormatDuration(backoff));
    std::this_thread::sleep_for(absl::ToChronoMilliseconds(backoff));
    backoff = std::min(backoff * 2, absl::Seconds(10));
  }
  return Fail("watch", absl::DeadlineExceededError(fmt::format("run {} did not end within --watch-hours", run)));
}

int Submit(const ClientOptions& o) {
  absl::StatusOr<std::string> run = SearchRunName(o.search);
  if (!run.ok()) return Fail("submit", run.status());
  absl::StatusOr<std::vector<v1::Task>> tasks = LoadSearchTasks(o.search);
  if (!tasks.ok()) return Fail("submit", tasks.status());
  absl::StatusOr<Client> client = Client::Connect(o);
  if (!client.ok()) return Fail("submit", client.status());
  v1::SubmitRunRequest request;
  request.set_run(*run);
  for (v1::Task& t : *tasks) *request.add_tasks() = std::move(t);
  auto queued = client->Call<v1::SubmitRunRequest, v1::SubmitRunResponse>(&v1::ClientService::Stub::SubmitRun, request);
  if (!queued.ok()) return Fail("submit", queued.status());
  std::cout << fmt::format("run {} queued ({} run(s) ahead of it); watch it: sparseditto client watch {} "
                           "--coordinator {}\n",
                           queued->run(), queued->runs_ahead(), queued->run(), o.coordinator)
            << std::flush;  // before a --watch that may print nothing for a while
  return o.watch_after_submit ? Watch(*client, o, queued->run()) : kExitSuccess;
}

int Status(const ClientOptions& o) {
  absl::StatusOr<Client> client = Client::Connect(o);
  if (!client.ok()) return Fail("status", client.status());
  v1::RunStatusRequest request;
  request.set_run(o.run);
  auto status = client->Call<v1::RunStatusRequest, v1::RunStatusResponse>(&v1::ClientService::Stub::GetRunStatus, request);
  if (!status.ok()) return Fail("status", status.status());
  std::cout << fmt::format("run {}: {}", status->run(), StateWord(status->state()));
  if (status->state() == v1::RUN_STATE_QUEUED) std::cout << fmt::format(" ({} run(s) ahead)", status->runs_ahead());
  if (!status->detail().empty()) std::cout << " — " << status->detail();
  std::cout << "\n";
  for (const v1::TaskStatus& t : status->tasks()) {
    std::cout << fmt::format("  task {}: {}{}, evaluations {}/{}, candidates {}, best {}\n", t.task_name(), t.state(),
                             t.state_detail().empty() ? "" : " (" + t.state_detail() + ")", t.evaluations(),
                             t.max_evaluations(), t.candidates(),
                             t.best_candidate_id().empty() ? std::string("none correct yet")
                                                           : fmt::format("{} fitness {:.3f}", t.best_candidate_id(),
                                                                         t.best_fitness()));
    if (!t.arch().empty() || t.evaluated_on_size() > 0) {
      std::cout << fmt::format("    arch {}, evaluated on {}\n", t.arch().empty() ? "any" : t.arch(),
                               t.evaluated_on().empty() ? std::string("no GPU yet") : fmt::format("{}", fmt::join(t.evaluated_on(), ", ")));
    }
    if (!t.finalists().empty()) std::cout << "    finalist checks: " << t.finalists() << "\n";
  }
  int evaluators = 0;
  for (const v1::WorkerInfo& w : status->workers()) evaluators += w.kind() == v1::WORKER_KIND_EVALUATOR ? 1 : 0;
  std::cout << fmt::format("  evaluators: {}\n", evaluators);
  for (const v1::WorkerInfo& w : status->workers()) {
    if (w.kind() == v1::WORKER_KIND_EVALUATOR) {
      std::cout << fmt::format("    {} ({}, {}, {} slot(s))\n", w.name(), w.gpu_name(), w.arch(), w.slots());
    }
  }
  std::cout << fmt::format("  mutator services: {}\n", status->workers_size() - evaluators);
  for (const v1::WorkerInfo& w : status->workers()) {
    if (w.kind() == v1::WORKER_KIND_MUTATOR) {
      std::cout << fmt::format("    {} (model {}, {} at once)\n", w.name(), w.model(), w.slots());
    }
  }
  return kExitSuccess;
}

int Export(const ClientOptions& o) {
  absl::StatusOr<Client> client = Client::Connect(o);
  if (!client.ok()) return Fail("export", client.status());
  v1::ExportRunRequest request;
  request.set_run(o.run);
  auto exported = client->Call<v1::ExportRunRequest, v1::ExportRunResponse>(&v1::ClientService::Stub::ExportRun, request);
  if (!exported.ok()) return Fail("export", exported.status());
  for (const std::string& problem : exported->problems()) std::cerr << "sparseditto client export: " << problem << "\n";
  for (const v1::ExportedFile& file : exported->files()) {
    // The name comes from the network: build.sh or one path component <task>.cu or <task>.h, inside --out.
    const std::string& name = file.name();
    if (name != "build.sh") {
      const size_t dot = name.rfind('.');
      const std::string extension = dot == std::string::npos ? "" : name.substr(dot);
      if (extension != ".cu" && extension != ".h") {
        return Fail("export", absl::InvalidArgumentError(fmt::format("the coordinator sent a file named '{}'", name)));
      }
      if (absl::Status s = CheckTaskName(name.substr(0, dot)); !s.ok()) return Fail("export", s);
    }
    absl::StatusOr<std::filesystem::path> path = PathInside(o.out_dir, {file.name()});
    if (!path.ok()) return Fail("export", path.status());
    if (absl::Status s = WriteFileAtomically(path->string(), file.content()); !s.ok()) return Fail("export", s);
    std::cout << path->string() << "\n";
  }
  if (exported->files_size() > 0) {
    if (absl::Status s = InstallExportCompanions(o.out_dir); !s.ok()) return Fail("export", s);
  }
  return exported->problems_size() == 0 && exported->files_size() > 0 ? kExitSuccess : kExitFailure;
}

void AddConnection(CLI::App* cmd, ClientOptions* o) {
  cmd->add_option("--coordinator", o->coordinator, "The coordinator's address, HOST:PORT")->required();
  cmd->add_option("--token-file", o->token_file, "File holding a client token (default: SPARSEDITTO_TOKEN)");
  cmd->add_option("--tls-ca", o->tls.ca_path, "CA of the coordinator's certificate (PEM): TLS");
  cmd->add_option("--tls-cert", o->tls.cert_chain_path, "Client certificate chain (PEM), for mutual TLS");
  cmd->add_option("--tls-key", o->tls.private_key_path, "Client private key (PEM), for mutual TLS");
  cmd->add_option("--tls-server-name", o->tls.server_name_override, "Name to check the server's certificate for");
  cmd->add_option("--timeout", o->call_timeout, "Seconds each call may take")->capture_default_str();
}

}  // namespace

void RegisterClientCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ClientOptions>();
  CLI::App* client = app.add_subcommand("client", "Submit, watch, read and export runs of a coordinator over gRPC");
  client->require_subcommand(1);

  CLI::App* submit = client->add_subcommand("submit", "Queue a task file as a run on the coordinator");
  submit->add_option("tasks", o->search.task_file, "Task file (YAML)")->required();
  submit->add_option("--run", o->search.run, "Run name (default: the task file's name)");
  submit->add_option("--name", o->search.task_name, "Only this task of the file");
  submit->add_option("--mutators", o->search.mutators_file, "Mutator file replacing every task's mutators");
  AddBudgetOptions(submit, &o->search);
  submit->add_flag("--watch", o->watch_after_submit, "Watch the run until it ends (exit 0 when it ended done)");
  submit->add_option("--watch-hours", o->watch_hours, "The longest a watch lasts")->capture_default_str();
  AddConnection(submit, o.get());
  submit->callback([o, exit_code] { *exit_code = Submit(*o); });

  CLI::App* status = client->add_subcommand("status", "A run's state, its tasks and the coordinator's evaluators");
  status->add_option("run", o->run, "Run name")->required();
  AddConnection(status, o.get());
  status->callback([o, exit_code] { *exit_code = Status(*o); });

  CLI::App* watch = client->add_subcommand("watch", "Print a run's progress and results until it ends");
  watch->add_option("run", o->run, "Run name")->required();
  watch->add_option("--watch-hours", o->watch_hours, "The longest a watch lasts")->capture_default_str();
  AddConnection(watch, o.get());
  watch->callback([o, exit_code] {
    absl::StatusOr<Client> c = Client::Connect(*o);
    *exit_code = c.ok() ? Watch(*c, *o, o->run) : Fail("watch", c.status());
  });

  CLI::App* exported = client->add_subcommand("export", "Write a run's best kernels (<task>.cu) into --out");
  exported->add_option("run", o->run, "Run name")->required();
  exported->add_option("--out", o->out_dir, "Output folder")->capture_default_str();
  AddConnection(exported, o.get());
  exported->callback([o, exit_code] { *exit_code = Export(*o); });
}

}  // namespace sparseditto
