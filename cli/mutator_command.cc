// `sparseditto mutator --coordinator HOST:PORT --models FILE`: a mutator service of distributed mode
// (llm_mutator/service/mutator_node.h): it holds the LLM keys and endpoints of FILE (a mutator file,
// configs/mutators/: a 'mutators:' list) and answers the coordinator's requests for those models, one
// session per model, ModelOptions.concurrency requests at once each. The coordinator knows a model by
// its name only. SIGTERM / SIGINT: finish the requests in hand, report them and exit (143 / 130); 0
// when the coordinator drained it.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/stop_signals.h"
#include "common/status_format.h"
#include "fmt/format.h"
#include "llm_mutator/http_transport.h"
#include "llm_mutator/llm_mutator.h"
#include "llm_mutator/model_options.h"
#include "llm_mutator/service/mutator_node.h"
#include "rpc/connection_options.h"
#include "rpc/role_tokens.h"
#include "rpc/tls.h"
#include "task/mutator_file.h"

namespace sparseditto {
namespace {

struct MutatorCommandOptions {
  std::string coordinator;
  std::string models_file;
  std::string token_file;
  std::string name;  // empty: <hostname>/mutator
  rpc::ClientTls tls;
};

int Fail(const absl::Status& status) {
  std::cerr << "sparseditto mutator: " << status.message() << "\n";
  return kExitFailure;
}

int RunMutator(const MutatorCommandOptions& o) {
  // SIGTERM / SIGINT: drain. Blocked first (so in every thread started after, gRPC's included).
  StopSignals stop_signals;
  absl::StatusOr<std::vector<v1::MutatorSpec>> specs = LoadMutatorsFile(o.models_file);
  if (!specs.ok()) return Fail(specs.status());
  std::vector<llm::ModelOptions> models;
  for (const v1::MutatorSpec& spec : *specs) {
    if (spec.kind() == v1::MUTATOR_KIND_BUILTIN) continue;  // the coordinator's own
    absl::StatusOr<llm::ModelOptions> model = llm::ModelOptionsFromSpec(spec);
    if (!model.ok()) return Fail(model.status());
    models.push_back(*std::move(model));
  }
  if (models.empty()) {
    return Fail(absl::InvalidArgumentError(fmt::format("{} names no LLM or command model to serve", o.models_file)));
  }
  absl::StatusOr<std::string> token = rpc::LoadClientToken(o.token_file, "SPARSEDITTO_TOKEN");
  if (!token.ok()) return Fail(token.status());
  std::optional<rpc::ClientTls> tls;
  if (!o.tls.ca_path.empty()) tls = o.tls;
  auto credentials = rpc::MakeChannelCredentials(tls);
  if (!credentials.ok()) return Fail(credentials.status());
  std::string name = o.name;
  if (name.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    name = fmt::format("{}/mutator", host);
  }

  llm::CurlTransport transport;
  const llm::ClientFactory factory = llm::DefaultClientFactory(&transport);
  auto channel = rpc::MakeChannel(o.coordinator, *credentials, {});
  std::vector<std::unique_ptr<llm::ChatClient>> clients;
  std::vector<std::unique_ptr<llm::MutatorNode>> nodes;
  for (const llm::ModelOptions& model : models) {
    clients.push_back(factory(model));
    llm::MutatorNodeOptions options;
    options.name = name;
    options.model = model.name;
    options.concurrency = model.concurrency;
    options.token = *token;
    options.jitter_seed = static_cast<uint64_t>(getpid()) * 31 + nodes.size();
    options.on_event = [name, model = model.name](const std::string& line) {
      std::cerr << fmt::format("mutator {} ({}): {}\n", name, model, line);
    };
    nodes.push_back(std::make_unique<llm::MutatorNode>(channel, clients.back().get(), options));
  }
  std::cerr << fmt::format("mutator {}: serving {} model(s) to {}\n", name, nodes.size(), o.coordinator);
  stop_signals.Watch([&](int signal_number) {
    std::cerr << fmt::format("mutator {}: {}: finishing the requests in hand, then exiting\n", name,
                             StopSignals::Name(signal_number));
    for (auto& node : nodes) node->Drain();
  });
  std::vector<absl::Status> ended(nodes.size());
  std::vector<std::thread> runs;
  for (size_t i = 0; i < nodes.size(); ++i) runs.emplace_back([&, i] { ended[i] = nodes[i]->Run(); });
  for (std::thread& t : runs) t.join();
  const int received = stop_signals.Finish();
  int failures = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const llm::MutatorNodeCounts c = nodes[i]->counts();
    std::cerr << fmt::format("mutator {} ({}): {} requests asked; answers: {} accepted, {} not taken, {} dropped\n",
                             name, models[i].name, c.asked, c.accepted, c.not_taken, c.dropped);
    if (!ended[i].ok()) {
      std::cerr << fmt::format("mutator {} ({}): {}\n", name, models[i].name, ended[i].message());
      ++failures;
    }
  }
  if (failures > 0) return kExitFailure;
  if (received == SIGTERM) return 128 + SIGTERM;
  if (received == SIGINT) return 128 + SIGINT;
  return kExitSuccess;
}

}  // namespace

void RegisterMutatorCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<MutatorCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "mutator", "A mutator service: holds the LLM keys of a models file and answers a coordinator's model requests");
  cmd->add_option("--coordinator", o->coordinator, "The coordinator's address, HOST:PORT")->required();
  cmd->add_option("--models", o->models_file,
                  "Mutator file (a YAML 'mutators:' list, configs/mutators/): the models served, by name")
      ->required();
  cmd->add_option("--token-file", o->token_file, "File holding a mutator token (default: SPARSEDITTO_TOKEN)");
  cmd->add_option("--name", o->name, "This service's name in the coordinator's logs (default: host/mutator)");
  cmd->add_option("--tls-ca", o->tls.ca_path, "CA of the coordinator's certificate (PEM): TLS");
  cmd->add_option("--tls-cert", o->tls.cert_chain_path, "Client certificate chain (PEM), for mutual TLS");
  cmd->add_option("--tls-key", o->tls.private_key_path, "Client private key (PEM), for mutual TLS");
  cmd->add_option("--tls-server-name", o->tls.server_name_override, "Name to check the server's certificate for");
  cmd->callback([o, exit_code] { *exit_code = RunMutator(*o); });
}

}  // namespace sparseditto
