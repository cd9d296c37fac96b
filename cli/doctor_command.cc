// `sparseditto doctor`: which OS sandbox layers this machine offers (issue 23, DESIGN.md §3.6), each on
// or off with the reason, tried for real in forked children (evaluator/sandbox/sandbox_probe.h), plus
// whether the runner that loads candidates is linked with full RELRO. Exit 0 when every layer the
// sandbox needs is on, 1 otherwise. --json prints the same as one JSON object on stdout.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/install_paths.h"
#include "evaluator/sandbox/sandbox_probe.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace sparseditto {
namespace {

struct DoctorOptions {
  bool json = false;
  std::string runner;  // empty: the installed runner (RunnerPath)
};

int RunDoctor(const DoctorOptions& options) {
  SandboxProbeOptions probe;
  probe.runner_path = options.runner.empty() ? RunnerPath() : options.runner;
  const std::vector<SandboxLayerStatus> layers = ProbeSandboxLayers(probe);
  const bool ready = AllNeededLayersOn(layers);
  if (options.json) {
    nlohmann::json out;
    out["ready"] = ready;
    out["layers"] = nlohmann::json::array();
    for (const SandboxLayerStatus& layer : layers) {
      out["layers"].push_back({{"name", layer.name}, {"on", layer.on}, {"needed", layer.needed}, {"reason", layer.reason}});
    }
    std::cout << out.dump(2) << "\n";
  } else {
    for (const SandboxLayerStatus& layer : layers) {
      std::cout << fmt::format("{:<3}  {:<26} {}{}\n", layer.on ? "on" : "off", layer.name, layer.reason,
                               layer.needed ? "" : " [optional]");
    }
    std::cout << (ready ? "every layer the sandbox needs is on\n"
                        : "some layers the sandbox needs are off: untrusted candidates must not run here "
                          "unless you accept that explicitly\n");
  }
  return ready ? kExitSuccess : kExitFailure;
}

}  // namespace

void RegisterDoctorCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<DoctorOptions>();
  CLI::App* cmd = app.add_subcommand(
      "doctor", "List the OS sandbox layers (namespaces, uid drop, Landlock, seccomp, RELRO) on or off here, with why");
  cmd->add_flag("--json", o->json, "Print one JSON object: ready, and each layer's name, on, needed, reason");
  cmd->add_option("--runner", o->runner, "Runner binary to check for full RELRO (default: the installed one)");
  cmd->callback([o, exit_code] { *exit_code = RunDoctor(*o); });
}

}  // namespace sparseditto
