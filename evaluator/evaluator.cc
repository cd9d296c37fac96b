#include "evaluator/evaluator.h"

#include <filesystem>
#include <fstream>

#include "common/eval_outcome.h"
#include "common/sha256.h"
#include "common/status_format.h"
#include "common/text_tail.h"
#include "common/untrusted_text.h"
#include "evaluator/compile/host_preprocess.h"
#include "evaluator/compile/staged_library.h"
#include "evaluator/compile/static_screen.h"
#include "evaluator/runner/framing.h"
#include "evaluator/runner/task_key.h"
#include "evaluator/sandbox/host_layers.h"
#include "evaluator/sanitizer_output.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace sparseditto {
namespace {


}  // namespace

absl::StatusOr<std::unique_ptr<Evaluator>> Evaluator::Create(EvaluatorOptions options) {
  if (options.runner.runner_path.empty() || !std::filesystem::exists(options.runner.runner_path)) {
    return absl::InvalidArgumentError(fmt::format("runner binary not found: '{}'", options.runner.runner_path));
  }
  if (options.compile.abi_include_dir.empty()) return absl::InvalidArgumentError("compile.abi_include_dir is required");
  if (options.compute_sanitizer.empty()) {
    const auto beside_nvcc = std::filesystem::path(options.compiler.nvcc).parent_path() / "compute-sanitizer";
    if (std::filesystem::exists(beside_nvcc)) options.compute_sanitizer = beside_nvcc.string();
  }
  if (!options.baseline_cache_dir.empty()) options.runner_options.set_baseline_cache_dir(options.baseline_cache_dir);
  auto compiler = NvccCompiler::Create(options.compiler);
  if (!compiler.ok()) return compiler.status();
  return std::unique_ptr<Evaluator>(new Evaluator(std::move(options), *std::move(compiler)));
}

Evaluator::Evaluator(EvaluatorOptions options, std::unique_ptr<NvccCompiler> compiler)
    : options_(std::move(options)),
      compiler_(std::move(compiler)),
      baseline_runner_([&] {
        RunnerClientOptions lazy = options_.runner;
        lazy.eager_module_loading = false;
        return lazy;
      }()),
      runner_(options_.runner) {}

absl::StatusOr<v1::SetupTaskReply> Evaluator::SetupTask(const v1::Task& task, bool fresh_baselines) {
  v1::SetupTaskRequest request;
  *request.mutable_task() = task;
  *request.mutable_options() = options_.runner_options;
  if (fresh_baselines) request.mutable_options()->clear_baseline_cache_dir();
  if (options_.missing_driver) {
    if (std::optional<std::string> missing = options_.missing_driver()) {
      gpu_unavailable_ = *missing;
      return absl::UnavailableError(*missing);
    }
  }
  auto reply = baseline_runner_.SetupTask(request);
  gpu_unavailable_ = absl::IsUnavailable(reply.status()) ? std::string(reply.status().message()) : "";
  if (reply.ok()) {
    setups_[TaskContextKey(task)] = *reply;
    baseline_runner_.Reset();  // frees its GPU memory; the baselines travel with each request
  }
  return reply;
}

absl::Status Evaluator::Screen(const v1::Candidate& candidate, const v1::Task& task) const {
  const CompileOptions options = CompileOptionsFor(task);
  std::string key = candidate.source();
  for (const std::string& arch : options.archs) key += "\n" + arch;
  for (const std::string& flag : options.extra_flags) key += "\n" + flag;  // the task's dtype among them
  key = Sha256Hex(key);
  {
    absl::MutexLock lock(&screen_mutex_);
    if (auto it = screened_.find(key); it != screened_.end()) return it->second;
  }
  bool settled = false;  // a harness error or a timeout is not remembered: the next call tries again
  absl::Status verdict = ScreenCandidate(*compiler_, candidate.source(), options, &settled);
  if (!settled) return verdict;
  absl::MutexLock lock(&screen_mutex_);
  if (screened_.size() >= 4096) screened_.clear();
  screened_[key] = verdict;
  return verdict;
}

CompileOptions Evaluator::CompileOptionsFor(const v1::Task& task) const {
  CompileOptions options = options_.compile;
  if (task.arch_size() > 0) options.archs.assign(task.arch().begin(), task.arch().end());
  // Only the task's dtype is built (sparseditto_kernel.h, SPARSEDITTO_BUILDS_DTYPE): every problem the
  // cascade prepares is in the task's dtype, and kernels that guard their dtypes compile in less time.
  if (task.dtype() != v1::DTYPE_UNSPECIFIED) {
    options.extra_flags.push_back(fmt::format("-DSPARSEDITTO_TASK_DTYPE={}", static_cast<int>(task.dtype())));
  }
  // And only its layout (SPARSEDITTO_BUILDS_LAYOUT), for the same reason: every run is in the task's layout.
  options.extra_flags.push_back(fmt::format("-DSPARSEDITTO_TASK_LAYOUT={}", static_cast<int>(task.layout())));
  return options;
}

v1::EvalResult Evaluator::Evaluate(const v1::Task& task, const v1::Candidate& candidate, bool finalist,
                                   uint64_t check_seed, const CompileResult* compiled, TimingDepth depth,
                                   const v1::ScreenBar* screen_bar) {
  v1::EvalResult result =
      RunCascade(task, candidate, finalist, check_seed, compiled, finalist ? TimingDepth::kFull : depth, screen_bar);
  result.set_sanitizer_verdicts_recorded(true);  // RunSanitizer's lines are the only ones in sanitizer_verdicts
  CleanUntrustedFields(result);
  return result;
}

v1::EvalResult Evaluator::RunCascade(const v1::Task& task, const v1::Candidate& candidate, bool finalist,
                                     uint64_t check_seed, const CompileResult* compiled, TimingDepth depth,
                                     const v1::ScreenBar* screen_bar) {
  v1::EvalResult result;
  result.set_candidate_id(candidate.id());
  result.set_task_name(task.name());
  result.set_stage_reached(v1::EVAL_STAGE_STATIC_SCREEN);
  if (absl::Status screen = options_.static_screen ? Screen(candidate, task) : absl::OkStatus(); !screen.ok()) {
    result.set_failure(v1::FAILURE_CATEGORY_REJECTED);
    result.set_failure_detail(std::string(screen.message()));
    return result;
  }
  result.set_stage_reached(v1::EVAL_STAGE_COMPILE);
  CompileResult local;
  if (compiled == nullptr) {
    auto done = compiler_->Compile(candidate.source(), CompileOptionsFor(task));
    if (!done.ok()) {
      result.set_failure(v1::FAILURE_CATEGORY_INTERNAL);
      result.set_failure_detail(fmt::format("compiler: {}", done.status().message()));
      return result;
    }
    local = *std::move(done);
    compiled = &local;
  }
  result.set_compile_log(compiled->log);
  result.set_compile_seconds(compiled->seconds);
  for (const auto& r : compiled->resources) *result.add_resources() = r;
  if (!compiled->ok) {
    result.set_failure(v1::FAILURE_CATEGORY_COMPILE);
    result.set_failure_detail(compiled->failure);
    return result;
  }

  if (!gpu_unavailable_.empty()) {
    result.set_failure(v1::FAILURE_CATEGORY_INTERNAL);
    result.set_failure_detail("GPU stages not run: " + gpu_unavailable_.substr(0, gpu_unavailable_.find('\n')));
    return result;
  }
  // The runner loads a verified copy in a folder of ours, never the cache's own file; a cached library
  // that fails its hash check is compiled again (once).
  absl::StatusOr<StagedLibrary> library = StagedLibrary::Stage(compiler_->cache(), compiled->cache_key);
  if (absl::IsDataLoss(library.status())) {
    result.set_run_log(fmt::format("[sparseditto] {}; compiled again\n", library.status().message()));
    CompileOptions fresh = CompileOptionsFor(task);
    fresh.use_cache = false;
    auto again = compiler_->Compile(candidate.source(), fresh);
    if (again.ok() && again->ok) library = StagedLibrary::Stage(compiler_->cache(), again->cache_key);
  }
  if (!library.ok()) {
    result.set_failure(v1::FAILURE_CATEGORY_INTERNAL);
    result.set_failure_detail(fmt::format("compiled library: {}", library.status().message()));
    return result;
  }
  v1::EvaluateRequest request;
  request.set_candidate_id(candidate.id());
  request.set_library_path(library->path());
  *request.mutable_task() = task;
  *request.mutable_options() = options_.runner_options;
  request.mutable_options()->clear_baseline_cache_dir();  // only processes that never load a candidate write it
  const bool screen_in_runner = depth == TimingDepth::kScreen && screen_bar != nullptr;
  if (screen_in_runner) {
    *request.mutable_screen() = *screen_bar;
    request.mutable_screen()->set_screen_timing_seconds(options_.screen_timing_seconds);
  } else if (depth == TimingDepth::kScreen) {
    request.mutable_options()->set_max_timing_seconds(options_.screen_timing_seconds);
  }
  request.set_check_seed(check_seed);
  request.set_finalist(finalist);
  if (auto setup = setups_.find(TaskContextKey(task)); setup != setups_.end()) {
    *request.mutable_baselines() = setup->second.baselines();
  }
  v1::EvalResult gpu = runner_.Evaluate(request);
  if (!screen_in_runner) gpu.set_timing_screen(depth == TimingDepth::kScreen && gpu.timings_size() > 0);
  if (!result.run_log().empty()) gpu.set_run_log(result.run_log() + gpu.run_log());
  gpu.set_compile_log(result.compile_log());
  gpu.set_compile_seconds(result.compile_seconds());
  *gpu.mutable_resources() = result.resources();
  result = std::move(gpu);

  if (finalist && IsCorrect(result) && !options_.compute_sanitizer.empty()) {
    for (const char* tool : {"memcheck", "racecheck", "initcheck"}) {
      RunSanitizer(tool, task, candidate, library->path(), check_seed, &result);
      if (!IsCorrect(result)) break;
    }
    if (IsCorrect(result)) result.set_stage_reached(v1::EVAL_STAGE_DONE);
  }
  return result;
}

void Evaluator::RunSanitizer(const std::string& tool, const v1::Task& task, const v1::Candidate& candidate,
                             const std::string& library, uint64_t check_seed, v1::EvalResult* result) {
  constexpr int kSanitizerFound = 97;
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("sd_sanitizer_{}_{}", getpid(), tool);
  std::filesystem::create_directories(dir);
  v1::RunnerRequest request;
  v1::EvaluateRequest* evaluate = request.mutable_evaluate();
  evaluate->set_candidate_id(candidate.id());
  evaluate->set_library_path(library);
  *evaluate->mutable_task() = task;
  *evaluate->mutable_options() = options_.runner_options;
  evaluate->mutable_options()->clear_baseline_cache_dir();
  evaluate->mutable_options()->set_skip_baselines(true);
  evaluate->set_check_seed(check_seed + 7);
  evaluate->set_small_only(true);
  const std::string request_path = (dir / "request.bin").string();
  {
    auto frame = EncodeFrame(request);
    std::ofstream(request_path, std::ios::binary) << (frame.ok() ? *frame : std::string());
  }
  // The tool wraps the candidate host in its smoke mode (evaluator/host/sanitize_smoke.h): only that
  // process, the one that loads the candidate, is instrumented; no judge and no CUDA IPC under the tool.
  const auto setup = setups_.find(TaskContextKey(task));
  if (setup == setups_.end() || setup->second.matrix_rows() <= 0) {
    result->set_run_log(result->run_log() + fmt::format("\n[{}] not run: the task was not set up", tool));
    result->add_sanitizer_verdicts(fmt::format("[compute-sanitizer {}: not run: the task was not set up]", tool));
    std::filesystem::remove_all(dir);
    return;
  }
  const std::string host =
      (std::filesystem::path(options_.runner.runner_path).parent_path() / "sparseditto-candidate-host").string();
  SpawnOptions spawn;
  // racecheck displays every report (up to 1000), so that all of them can be read for their kernels below.
  spawn.argv = {options_.compute_sanitizer, "--tool", tool, "--error-exitcode", std::to_string(kSanitizerFound),
                "--print-limit", tool == "racecheck" ? "1000" : "20", host, "--sanitize", request_path,
                std::to_string(setup->second.matrix_rows()), std::to_string(setup->second.matrix_cols())};
  spawn.inherit_variables = options_.runner.inherit_variables;
  spawn.environment["CUDA_MODULE_LOADING"] = "EAGER";
  // The candidate runs here as in the judged cascade: inside the candidate host's sandbox (DESIGN.md §3.6), the
  // tool's process inside it too. A candidate that behaves while judged and acts only under the tool (it can
  // tell: the tool's library is in its process) meets the same walls. SPARSEDITTO_HOST_SANDBOX as the runner
  // reads it; a value it refuses has already failed the candidate's evaluation there.
  auto layers = ParseHostSandboxLayers(HostSandboxLayerList(), host, std::filesystem::path(library).parent_path().string());
  if (!layers.ok()) {
    result->set_run_log(result->run_log() + fmt::format("\n[{}] not run: {}", tool, layers.status().message()));
    result->set_failure(v1::FAILURE_CATEGORY_INTERNAL);
    result->set_failure_detail(fmt::format("compute-sanitizer {} not run: {}", tool, layers.status().message()));
    std::filesystem::remove_all(dir);
    return;
  }
  spawn.sandbox = layers->spawn;
  if (spawn.sandbox && spawn.sandbox->landlock) {  // spawn-landlock: the tool itself, and the request it hands the host
    spawn.sandbox->landlock->executable.push_back(options_.compute_sanitizer);
    spawn.sandbox->landlock->read_only.push_back(dir.string());
  }
  if (!layers->in_process.empty()) spawn.environment["SPARSEDITTO_HOST_LOCKDOWN"] = layers->in_process;
  // On the evaluator's own GPU (`--gpus`). Not under the GPU's shared lock (gpu_share.h): the search
  // runs its finalists only once its evaluations are over.
  if (!options_.runner.cuda_visible_devices.empty()) {
    spawn.environment["CUDA_VISIBLE_DEVICES"] = options_.runner.cuda_visible_devices;
  }
  spawn.merge_stderr_into_stdout = true;
  auto run = RunCommand(spawn, options_.sanitizer_timeout_seconds);
  std::filesystem::remove_all(dir);
  result->set_stage_reached(v1::EVAL_STAGE_FINALIST);
  if (!run.ok()) {
    result->set_run_log(result->run_log() + fmt::format("\n[{}] could not run: {}", tool, run.status().message()));
    // Said where reports and exports read the tools' verdicts, so a finalist is never shown as sanitized by a tool
    // that did not run.
    result->add_sanitizer_verdicts(fmt::format("[compute-sanitizer {}: could not run: {}]", tool, run.status().message()));
    return;  // the tool is missing or broken: not the candidate's fault, recorded in the log
  }
  const std::string output = TextTail(run->stdout_output.bytes, 8 << 10);
  std::optional<LibraryRaceHazards> library_only;
  std::string verdict = run->outcome.ToString();
  if (tool == "racecheck" && run->outcome.kind == ExitOutcome::Kind::kExited &&
      run->outcome.exit_code == kSanitizerFound && !run->stdout_output.truncated) {
    library_only = RaceHazardsOnlyInLibraryKernels(run->stdout_output.bytes, options_.racecheck_library_kernels);
  }
  if (library_only) {
    const std::string kernels = fmt::format("{} of its hazard reports lie inside kernels named like NVIDIA library "
                                            "kernels ({}: {})", library_only->reports, library_only->kernels.size(),
                                            fmt::join(library_only->kernels, ", "));
    // A name is the candidate's to choose when it can bring kernels of its own in at run time.
    if (std::optional<std::string> why = WhyLibraryKernelNamesAreNotTrusted(candidate.source(),
                                                                             options_.racecheck_library_kernels)) {
      verdict = fmt::format("{}; all {}, but they are counted: the candidate {}", verdict, kernels, *why);
      library_only.reset();
    } else {
      verdict = fmt::format("{}; all {}, not the candidate's: not counted", verdict, kernels);
    }
  }
  const std::string line = fmt::format("[compute-sanitizer {}: {}]", tool, verdict);
  result->add_sanitizer_verdicts(line);
  result->set_run_log(result->run_log() + "\n" + line + "\n" + output);
  if (library_only) return;
  if (run->outcome.kind == ExitOutcome::Kind::kTimedOut) {
    result->set_failure(v1::FAILURE_CATEGORY_TIMEOUT);
    result->set_failure_detail(fmt::format("compute-sanitizer {} did not finish in {:.0f} s", tool,
                                           options_.sanitizer_timeout_seconds));
  } else if (!run->outcome.success()) {
    result->set_failure(v1::FAILURE_CATEGORY_CRASH);
    result->set_failure_detail(fmt::format("compute-sanitizer {} reported errors ({})", tool, run->outcome.ToString()));
  }
}

}  // namespace sparseditto
