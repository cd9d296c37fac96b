#include "cli/provenance.h"

#include <unistd.h>

#include "common/subprocess.h"
#include "nlohmann/json.hpp"

#include "revision.h"  // SPARSEDITTO_REVISION, written at every build by cli/write_revision.cmake

namespace sparseditto {
namespace {

// The trimmed stdout of a short command, or "unknown: <why>".
std::string Probe(std::vector<std::string> argv) {
  SpawnOptions options;
  options.argv = std::move(argv);
  options.environment["PATH"] = "/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin";
  absl::StatusOr<CommandResult> result = RunCommand(options, /*timeout_seconds=*/20);
  if (!result.ok()) return "unknown: " + std::string(result.status().message());
  if (!result->outcome.success()) return "unknown: " + options.argv[0] + " " + result->outcome.ToString();
  std::string out = result->stdout_output.bytes;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

}  // namespace

std::string ProjectRevision() { return SPARSEDITTO_REVISION; }

std::string CollectProvenance(const std::vector<v1::Task>& tasks, const std::string& nvcc,
                              const std::string& fake_evaluator_note) {
  nlohmann::ordered_json p;
  if (!fake_evaluator_note.empty()) p["fake_evaluator"] = fake_evaluator_note;
  const std::string gpu = Probe({"nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"});
  const size_t comma = gpu.find(", ");
  p["gpu"] = gpu.starts_with("unknown") || comma == std::string::npos ? gpu : gpu.substr(0, comma);
  p["driver"] = gpu.starts_with("unknown") || comma == std::string::npos ? gpu : gpu.substr(comma + 2);
  const std::string compiler = Probe({nvcc, "--version"});
  const size_t release = compiler.find("release ");
  p["cuda"] = release == std::string::npos ? compiler : compiler.substr(release + 8, compiler.find(',', release) - release - 8);
  p["nvcc"] = compiler;
  p["project_revision"] = ProjectRevision();
  char host[256] = {};
  p["host"] = gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
  nlohmann::ordered_json models = nlohmann::ordered_json::object();
  for (const v1::Task& task : tasks) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    if (task.mutators().empty()) list.push_back("builtin");
    for (const v1::MutatorSpec& m : task.mutators()) {
      list.push_back(m.model().empty() ? (m.name().empty() ? "builtin" : m.name()) : m.model());
    }
    models[task.name()] = list;
  }
  p["mutator_models"] = models;
  return p.dump();
}

}  // namespace sparseditto
