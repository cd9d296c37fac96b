// `sparseditto eval`: the evaluator on one task and one or more kernel files. Kernels are compiled
// concurrently (one worker per core) while the GPU checks and times them one at a time.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/install_paths.h"
#include "common/eval_outcome.h"
#include "common/status_format.h"
#include "evaluator/compile/compile_pool.h"
#include "evaluator/evaluator.h"
#include "evaluator/report.h"
#include "fmt/format.h"
#include "task/task_loader.h"

namespace sparseditto {
namespace {

struct EvalOptions {
  std::string task_path;
  std::string task_name;
  std::vector<std::string> kernels;
  std::string json_path;
  std::string out_dir;
  std::string cache_dir;
  bool finalist = false;
  bool task_shapes_only = false;  // skip the smoke shapes (for profilers); never with finalist
  uint64_t seed = 0x5eed;
  double timing_seconds = 2;
  int min_trials = 20;
  double stage_timeout = 60;
};

std::optional<std::string> ReadSource(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<v1::Task> PickTask(const EvalOptions& o) {
  auto batch = LoadTaskFile(o.task_path);
  if (!batch.ok()) return batch.status();
  for (const auto& task : batch->tasks()) {
    if (o.task_name.empty() || task.name() == o.task_name) return task;
  }
  return absl::NotFoundError(fmt::format("{}: no task named '{}'", o.task_path, o.task_name));
}

int RunEval(const EvalOptions& o) {
  auto task = PickTask(o);
  if (!task.ok()) {
    std::cerr << "sparseditto eval: " << task.status().message() << "\n";
    return kExitFailure;
  }
  if (absl::Status s = RequireSandboxLayers("eval"); !s.ok()) {
    std::cerr << "sparseditto eval: " << s.message() << "\n";
    return kExitFailure;
  }
  EvaluatorOptions options = InstalledEvaluatorOptions(o.cache_dir, o.stage_timeout, o.timing_seconds, o.min_trials);
  options.runner_options.set_skip_smoke(o.task_shapes_only);
  auto evaluator = Evaluator::Create(options);
  if (!evaluator.ok()) {
    std::cerr << "sparseditto eval: " << evaluator.status().message() << "\n";
    return kExitFailure;
  }
  const auto wall_start = std::chrono::steady_clock::now();
  // Compile everything in the background while the GPU works.
  CompilePool pool(&(*evaluator)->compiler());
  std::vector<v1::Candidate> candidates;
  std::vector<std::future<absl::StatusOr<CompileResult>>> compiles;
  for (const std::string& path : o.kernels) {
    auto source = ReadSource(path);
    if (!source) {
      std::cerr << "sparseditto eval: cannot read kernel file " << path << "\n";
      return kExitFailure;
    }
    v1::Candidate candidate;
    candidate.set_id(fmt::format("{}-{:08x}", std::filesystem::path(path).stem().string(),
                                 std::hash<std::string>{}(*source) & 0xffffffffu));
    candidate.set_task_name(task->name());
    candidate.set_source(*source);
    const bool screened = (*evaluator)->Screen(candidate, *task).ok();
    compiles.push_back(screened ? pool.Submit(*source, (*evaluator)->CompileOptionsFor(*task))
                                : std::future<absl::StatusOr<CompileResult>>());
    candidates.push_back(std::move(candidate));
  }
  auto setup = (*evaluator)->SetupTask(*task);
  if (setup.ok()) {
    std::cout << fmt::format("task {}: {} nonzeros on {} ({})\n", task->name(), setup->matrix_nnz(),
                             setup->gpu_name(), setup->arch());
  } else if (absl::IsUnavailable(setup.status())) {
    std::cerr << "sparseditto eval: no GPU stages (screen and compile only): " << setup.status().message() << "\n";
  } else {
    std::cerr << "sparseditto eval: task set-up failed: " << setup.status().message() << "\n";
    return kExitFailure;
  }
  int failures = 0;
  double compile_seconds = 0, gpu_seconds = 0;
  std::string json = "[\n";
  for (size_t i = 0; i < candidates.size(); ++i) {
    v1::EvalResult result;
    if (compiles[i].valid()) {
      auto compiled = compiles[i].get();
      if (!compiled.ok()) {
        std::cerr << "sparseditto eval: compiler failed: " << compiled.status().message() << "\n";
        return kExitFailure;
      }
      result = (*evaluator)->Evaluate(*task, candidates[i], o.finalist, o.seed + i, &*compiled);
    } else {
      result = (*evaluator)->Evaluate(*task, candidates[i], o.finalist, o.seed + i);  // reports the screen
    }
    compile_seconds += result.compile_seconds();
    gpu_seconds += result.gpu_seconds();
    std::cout << FormatReport(*task, result) << "\n";  // it says when the smoke shapes were skipped
    failures += !IsCorrect(result);
    json += ResultToJson(result) + (i + 1 < candidates.size() ? ",\n" : "\n");
    if (!o.out_dir.empty()) {
      const std::string dir = candidates.size() == 1
                                  ? o.out_dir
                                  : o.out_dir + "/" + std::filesystem::path(o.kernels[i]).stem().string();
      if (absl::Status s = WriteArtifacts(dir, candidates[i].source(), result); !s.ok()) {
        std::cerr << "sparseditto eval: " << s.message() << "\n";
      }
    }
  }
  json += "]\n";
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  std::cout << fmt::format("{} candidates in {:.1f} s: {:.1f} candidates/min; compile {:.1f} s (CPU, {} workers), "
                           "GPU stages {:.1f} s\n",
                           candidates.size(), wall, 60.0 * candidates.size() / wall, compile_seconds,
                           pool.num_workers(), gpu_seconds);
  if (!o.json_path.empty()) std::ofstream(o.json_path) << json;
  return failures == 0 ? kExitSuccess : kExitFailure;
}

}  // namespace

void RegisterEvalCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<EvalOptions>();
  CLI::App* cmd = app.add_subcommand("eval", "Compile, verify and time kernel files on one task, against the baselines");
  cmd->add_option("--task", o->task_path, "Task file (YAML)")->required();
  cmd->add_option("--name", o->task_name, "Task to use when the file holds several (default: the first)");
  cmd->add_option("--kernel", o->kernels, "Candidate kernel source (.cu); repeat for several")->required();
  cmd->add_option("--json", o->json_path, "Write the results as JSON here");
  cmd->add_option("--out", o->out_dir, "Write kernel.cu, compile.log, verify.json, benchmark.json here");
  cmd->add_option("--cache", o->cache_dir, "Compile and baseline cache folder (default ~/.cache/sparseditto)");
  CLI::Option* finalist =
      cmd->add_flag("--finalist", o->finalist, "Also the determinism rerun and compute-sanitizer memcheck/racecheck");
  cmd->add_flag("--task-shapes-only", o->task_shapes_only,
                "Skip the smoke shapes: every launch is of the task's own shapes (for profilers, as "
                "scripts/ncu_profile.sh; the verdict is then not a full check)")
      ->excludes(finalist);
  cmd->add_option("--seed", o->seed, "Seed of the random B inputs")->capture_default_str();
  cmd->add_option("--timing-seconds", o->timing_seconds, "Timing budget per n")->capture_default_str();
  cmd->add_option("--min-trials", o->min_trials, "Timed trials at least")->capture_default_str();
  cmd->add_option("--stage-timeout", o->stage_timeout, "Seconds a cascade stage may take")->capture_default_str();
  cmd->callback([o, exit_code] { *exit_code = RunEval(*o); });
}

}  // namespace sparseditto
