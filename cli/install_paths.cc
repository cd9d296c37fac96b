#include "cli/install_paths.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "evaluator/gpu/nvidia_driver.h"
#include "evaluator/sandbox/sandbox_probe.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

std::filesystem::path ExecutableDir() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::current_path() : self.parent_path();
}

const char* Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

std::string RunnerPath() {
  if (const char* env = Env("SPARSEDITTO_RUNNER")) return env;
  return (ExecutableDir() / "sparseditto-runner").string();
}

std::string AbiIncludeDir() {
  if (const char* env = Env("SPARSEDITTO_ABI_DIR")) return env;
  const auto packaged = ExecutableDir().parent_path() / "share" / "sparseditto";
  if (std::filesystem::exists(packaged / "sparseditto_kernel.h")) return packaged.string();
  return SPARSEDITTO_SOURCE_DIR "/kernel_abi";
}

absl::Status InstallExportCompanions(const std::string& out_dir) {
  namespace fs = std::filesystem;
  for (const char* header : {"sparseditto_kernel.h", "sparseditto_weight_check.h"}) {
    const fs::path from = fs::path(AbiIncludeDir()) / header, to = fs::path(out_dir) / header;
    std::error_code error;
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, error);
    if (error) return absl::FailedPreconditionError(fmt::format("copy {} to {}: {}", from.string(), to.string(), error.message()));
  }
  const fs::path script = fs::path(out_dir) / "build.sh";
  std::error_code error;
  if (fs::exists(script, error)) {
    fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec, error);
    if (error) return absl::FailedPreconditionError(fmt::format("chmod {}: {}", script.string(), error.message()));
  }
  return absl::OkStatus();
}

std::string SeedLibraryDir() {
  if (const char* env = Env("SPARSEDITTO_SEEDS")) return env;
  const auto packaged = ExecutableDir().parent_path() / "share" / "sparseditto" / "seeds";
  if (std::filesystem::is_directory(packaged)) return packaged.string();
  return SPARSEDITTO_SOURCE_DIR "/kernels/seeds";
}

std::string PromptsDir() {
  if (const char* env = Env("SPARSEDITTO_PROMPTS")) return env;
  const auto packaged = ExecutableDir().parent_path() / "share" / "sparseditto" / "prompts";
  if (std::filesystem::is_directory(packaged)) return packaged.string();
  return SPARSEDITTO_SOURCE_DIR "/configs/prompts";
}

std::string DefaultCacheDir() {
  if (const char* env = Env("SPARSEDITTO_CACHE")) return env;
  if (const char* xdg = Env("XDG_CACHE_HOME")) return std::string(xdg) + "/sparseditto";
  if (const char* home = Env("HOME")) return std::string(home) + "/.cache/sparseditto";
  return "/tmp/sparseditto-cache";
}

EvaluatorOptions InstalledEvaluatorOptions(const std::string& cache_dir, double stage_timeout_seconds,
                                           double timing_seconds_per_n, int min_trials) {
  EvaluatorOptions options;
  const std::string cache = cache_dir.empty() ? DefaultCacheDir() : cache_dir;
  options.compiler.cache_directory = cache + "/compile";
  options.baseline_cache_dir = cache + "/baselines";
  options.compile.abi_include_dir = AbiIncludeDir();
  options.runner.runner_path = RunnerPath();
  options.runner.stage_timeout_seconds = stage_timeout_seconds;
  options.runner_options.set_max_timing_seconds(timing_seconds_per_n);
  options.runner_options.set_min_trials(min_trials);
  options.missing_driver = [] { return gpu::MissingNvidiaDriver(); };
  return options;
}

absl::Status RequireSandboxLayers(const char* command) {
  SandboxProbeOptions probe;
  probe.runner_path = RunnerPath();
  const std::vector<SandboxLayerStatus> layers = ProbeSandboxLayers(probe);
  const bool allowed = MissingLayersAllowed();
  if (absl::Status s = CheckNeededLayers(layers, allowed); !s.ok()) return s;
  if (const std::string missing = DescribeMissingLayers(layers); !missing.empty()) {
    fmt::print(stderr, "sparseditto {}: WARNING: untrusted candidates run without these sandbox layers "
                       "(SPARSEDITTO_ALLOW_MISSING_LAYERS=1): {}\n", command, missing);
  }
  return absl::OkStatus();
}

}  // namespace sparseditto
