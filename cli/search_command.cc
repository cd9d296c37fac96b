// `sparseditto search TASKS.yaml`: the embedded search of every task of a file (a batch), with the
// built-in mutator, the task's LLM mutators (or those of --mutators FILE; cli/llm_setup.h) and the
// evaluator on the local GPU; the store under runs/<run>/store makes the same
// command resume a run, and runs/<run>/ holds the artifacts (coordinator/search/run_artifacts.h).
// SIGINT / SIGTERM stop the search at its next safe point (search_loop.h stop_requested: nothing half
// written, the evaluation in hand finished and stored, jobs submitted ahead made again on resume),
// with a stop event in runs/<run>/events.jsonl, and the command exits 130 / 143; the same command
// resumes the run.
// The run itself is search_common.h's, shared with `sparseditto coordinator`.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/install_paths.h"
#include "cli/fake_search_backend.h"
#include "cli/logging.h"
#include "cli/search_common.h"
#include "cli/stop_signals.h"
#include "coordinator/search/evaluator_group.h"
#include "coordinator/search/gpu_candidate_evaluator.h"
#include "fmt/format.h"
#include "spdlog/spdlog.h"

namespace sparseditto {
namespace {

// "0,1" -> {"0", "1"}; a GPU UUID ("GPU-5f1c...") is taken as CUDA_VISIBLE_DEVICES takes it. Empty: {""}
// (one evaluator that inherits our CUDA_VISIBLE_DEVICES). InvalidArgument names a bad or repeated id.
absl::StatusOr<std::vector<std::string>> ParseGpuList(const std::string& list) {
  if (list.empty()) return std::vector<std::string>{""};
  std::vector<std::string> ids;
  for (absl::string_view raw : absl::StrSplit(list, ',')) {
    const std::string id(absl::StripAsciiWhitespace(raw));
    const bool index = !id.empty() && id.size() < 4 && std::all_of(id.begin(), id.end(), ::isdigit);
    const bool uuid = id.starts_with("GPU-") && id.size() > 4 &&
                      std::all_of(id.begin() + 4, id.end(), [](char c) { return std::isxdigit(c) || c == '-'; });
    if (!index && !uuid) {
      return absl::InvalidArgumentError(fmt::format("--gpus {}: '{}' is not a device index or a GPU UUID", list, id));
    }
    if (std::find(ids.begin(), ids.end(), id) != ids.end()) {
      return absl::InvalidArgumentError(fmt::format("--gpus {}: '{}' is listed twice", list, id));
    }
    ids.push_back(id);
  }
  return ids;
}

// One evaluator (its own runner process) per GPU, or several per GPU under a timing lock; the search's
// jobs go to all of them at once.
class LocalGpus final : public SearchBackend {
 public:
  static absl::StatusOr<std::unique_ptr<SearchBackend>> Make(const SearchOptions& o,
                                                             const std::vector<std::string>& gpu_ids,
                                                             const EvaluatorOptions& evaluator_options) {
    if (absl::Status s = RequireSandboxLayers("search"); !s.ok()) return s;
    auto local = std::unique_ptr<LocalGpus>(new LocalGpus());
    std::string share_dir;  // where the evaluators of one GPU keep its timing lock (gpu_share.h)
    if (o.per_gpu > 1) {
      share_dir =
          (std::filesystem::path(evaluator_options.compiler.cache_directory).parent_path() / "gpu-share").string();
      std::error_code error;
      std::filesystem::create_directories(share_dir, error);
      if (error) return absl::InternalError(fmt::format("--per-gpu: cannot make {}: {}", share_dir, error.message()));
    }
    std::vector<CandidateEvaluator*> members;
    for (size_t k = 0; k < gpu_ids.size() * static_cast<size_t>(o.per_gpu); ++k) {
      EvaluatorOptions one = evaluator_options;
      one.runner.cuda_visible_devices = gpu_ids[k % gpu_ids.size()];
      one.runner.gpu_share_dir = share_dir;
      auto evaluator = Evaluator::Create(one);
      if (!evaluator.ok()) return evaluator.status();
      local->evaluators_.push_back(*std::move(evaluator));
      local->gpu_evaluators_.push_back(std::make_unique<GpuCandidateEvaluator>(local->evaluators_.back().get()));
      members.push_back(local->gpu_evaluators_.back().get());
    }
    local->group_ = std::make_unique<EvaluatorGroup>(members);
    return local;
  }
  CandidateEvaluator& evaluator() override { return *group_; }
  EvaluationPipeline& pipeline() override { return group_->pipeline(); }
  size_t evaluators() override { return group_->size(); }

 private:
  LocalGpus() = default;
  std::vector<std::unique_ptr<Evaluator>> evaluators_;
  std::vector<std::unique_ptr<GpuCandidateEvaluator>> gpu_evaluators_;
  std::unique_ptr<EvaluatorGroup> group_;  // last: goes first, joining its takers
};

}  // namespace

void RegisterSearchCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<SearchOptions>();
  CLI::App* cmd = app.add_subcommand("search", "Evolve kernels for each task of a file from the seed library "
                                               "(embedded: built-in mutator, local GPU); resumes an existing run");
  AddSearchOptions(cmd, o.get());
  cmd->add_option("--gpus", o->gpus,
                  "CUDA devices to search on, one evaluator each, evaluating at once (e.g. 0,1 or GPU UUIDs); "
                  "default: the first device visible. Each times the baselines on its own GPU; use GPUs of one "
                  "model, or fitness from different ones mixes");
  cmd->add_option("--per-gpu", o->per_gpu,
                  "Evaluators on each GPU: their untimed stages (smoke, correctness, host start) overlap, while "
                  "each timing (and each baseline timing) has the GPU to itself, under a lock the runners of one "
                  "GPU share. Above 1, another evaluator's candidate process is alive while one times, and the "
                  "lock binds only the judges: a candidate's own threads could still launch GPU work that slows a "
                  "rival's timing (the corpus' thread_left_running launches one every 5 ms; not yet measured "
                  "beside a rival). Keep 1 where candidates may be hostile")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  cmd->callback([o, exit_code] {
    // First, before any thread starts (the compile pool, the evaluators' takers): every thread and
    // child (nvcc, the runner) then has SIGINT and SIGTERM blocked, so Ctrl-C reaches the search alone.
    StopSignals stop_signals;
    if (absl::Status s = SetUpLogging(o->log_level, o->log_file); !s.ok()) {
      *exit_code = FailWith("search", s);
      return;
    }
    std::atomic<int> stop_signal{0};
    stop_signals.Watch([&stop_signal](int signal_number) {
      stop_signal = signal_number;
      spdlog::warn("search: {}: stopping at the next safe point (the evaluation in hand is finished and stored); "
                   "the same command resumes the run", StopSignals::Name(signal_number));
    });
    absl::StatusOr<std::vector<std::string>> gpu_ids = ParseGpuList(o->gpus);
    absl::StatusOr<std::optional<int>> fake_ms = FakeEvaluatorDelayMs();
    for (const absl::Status& s : {gpu_ids.status(), fake_ms.status()}) {
      if (!s.ok()) {
        *exit_code = FailWith("search", s);
        return;
      }
    }
    SearchHooks hooks;
    hooks.stop_requested = [&stop_signal]() -> std::string {
      const int s = stop_signal.load();
      return s == 0 ? "" : StopSignals::Name(s);
    };
    const int code = RunSearch(*o, "search", [&](const EvaluatorOptions& evaluator_options, const std::string&) {
      if (fake_ms->has_value()) {
        spdlog::warn("search: SPARSEDITTO_FAKE_EVALUATOR_MS is set: the fake evaluator of the tests scores the "
                     "candidates, nothing runs on a GPU");
        absl::StatusOr<std::vector<v1::Task>> tasks = LoadSearchTasks(*o);
        if (!tasks.ok()) return absl::StatusOr<std::unique_ptr<SearchBackend>>(tasks.status());
        return MakeFakeSearchBackend(*tasks, **fake_ms);
      }
      return LocalGpus::Make(*o, *gpu_ids, evaluator_options);
    }, hooks);
    const int signal_number = stop_signals.Finish();
    *exit_code = signal_number != 0 ? 128 + signal_number : code;  // 130 for SIGINT, 143 for SIGTERM
  });
}

}  // namespace sparseditto
