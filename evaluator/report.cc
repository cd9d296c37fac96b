#include "evaluator/report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>

#include "common/eval_outcome.h"
#include "common/shared_gpu.h"
#include "common/status_format.h"
#include "common/untrusted_text.h"
#include "fmt/format.h"
#include "google/protobuf/util/json_util.h"

namespace sparseditto {
namespace {

std::string StageName(v1::EvalStage stage) {
  std::string name = v1::EvalStage_Name(stage);
  return name.substr(name.find("STAGE_") + 6);
}

std::string FailureName(v1::FailureCategory failure) {
  std::string name = v1::FailureCategory_Name(failure);
  return name.substr(name.find("CATEGORY_") + 9);
}

absl::Status WriteFile(const std::filesystem::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  if (!out) return absl::UnavailableError(fmt::format("cannot write {}", path.string()));
  return absl::OkStatus();
}

}  // namespace

std::string ResultToJson(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}

std::string FormatReport(const v1::Task& task, const v1::EvalResult& result) {
  std::string out = fmt::format("candidate {} on task {} ({}{}){}\n", result.candidate_id(), task.name(),
                                result.gpu_name().empty() ? "no GPU" : result.gpu_name(),
                                result.arch().empty() ? "" : ", " + result.arch(),
                                result.flagged_implausible() ? " [FLAGGED: faster than the pattern allows]" : "");
  const bool passed = IsCorrect(result);
  out += fmt::format("  verdict: {}  (stage reached: {})\n", passed && result.failure() == v1::FAILURE_CATEGORY_NONE
                                                                 ? "CORRECT"
                                                                 : FailureName(result.failure()),
                     StageName(result.stage_reached()));
  // Results read back from a store may predate the evaluator's cleaning: clean again (idempotent).
  if (!result.failure_detail().empty()) {
    UntrustedTextOptions clean;
    clean.max_bytes = 8192;
    out += fmt::format("  detail: {}\n", CleanUntrustedText(result.failure_detail(), clean));
  }
  if (result.smoke_skipped()) {
    out += "  note: the smoke shapes were skipped (--task-shapes-only): this verdict checked the task's own shapes "
           "alone\n";
  }
  for (const auto& r : result.resources()) {
    out += fmt::format("  {} {}: {} registers, {} B shared, {} B stack, {} B spilled\n", r.arch(), r.kernel_name(),
                       r.registers(), r.shared_bytes(), r.stack_bytes(), r.spill_bytes());
  }
  if (result.compile_seconds() > 0) out += fmt::format("  compile: {:.1f} s\n", result.compile_seconds());
  int passed_checks = 0;
  for (const auto& c : result.checks()) passed_checks += c.passed();
  if (result.checks_size() > 0) {
    out += fmt::format("  correctness: {}/{} checks passed, max abs error {:.3g}, max rel error {:.3g}\n",
                       passed_checks, result.checks_size(), result.max_abs_error(), result.max_rel_error());
  }
  if (result.prepare_ms() > 0) out += fmt::format("  prepare (format conversion): {:.2f} ms\n", result.prepare_ms());
  if (result.timings_size() > 0) {
    out += fmt::format("  {:>6}  {:>12}  {:>9}  {}\n", "n", "kernel ms", "spread", "baselines (ms, speedup)");
    for (const auto& t : result.timings()) {
      std::string row = fmt::format("  {:>6}  {:>12.4f}  {:>8.1f}%  ", t.n(), t.median_ms(),
                                    100.0 * (t.p90_ms() - t.p10_ms()) / std::max(t.median_ms(), 1e-12));
      auto it = result.baselines().find(t.n());
      if (it != result.baselines().end()) {
        for (const auto& b : it->second.baselines()) {
          row += b.available() ? fmt::format("{} {:.4f} ({:.2f}x)  ", b.name(), b.timing().median_ms(),
                                             b.timing().median_ms() / std::max(t.median_ms(), 1e-12))
                               : fmt::format("{} absent  ", b.name());
        }
      }
      out += row + "\n";
    }
    out += fmt::format("  fitness (geomean of best baseline / kernel): {:.3f}\n", result.fitness());
    if (const double idle = SharedGpuIdleTrialMs(result); idle > 0) {
      out += fmt::format("  warning: the GPU was shared while timing (idle trials took {:.3f} ms, median, {}): these "
                         "times are not comparable with a quiet GPU's\n",
                         idle, kSharedGpuRule);
    }
  }
  if (result.gpu_seconds() > 0) out += fmt::format("  GPU stage wall time: {:.1f} s\n", result.gpu_seconds());
  for (const std::string& verdict : SanitizerVerdicts(result)) out += "  " + verdict + "\n";
  return out;
}

absl::Status WriteArtifacts(const std::string& dir, const std::string& source, const v1::EvalResult& result) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return absl::UnavailableError(fmt::format("cannot create {}: {}", dir, error.message()));
  const std::filesystem::path base(dir);
  v1::EvalResult verify;
  verify.set_candidate_id(result.candidate_id());
  verify.set_task_name(result.task_name());
  verify.set_stage_reached(result.stage_reached());
  verify.set_failure(result.failure());
  verify.set_failure_detail(result.failure_detail());
  *verify.mutable_checks() = result.checks();
  verify.set_max_abs_error(result.max_abs_error());
  verify.set_max_rel_error(result.max_rel_error());
  v1::EvalResult benchmark;
  benchmark.set_candidate_id(result.candidate_id());
  benchmark.set_task_name(result.task_name());
  *benchmark.mutable_timings() = result.timings();
  *benchmark.mutable_baselines() = result.baselines();
  benchmark.set_fitness(result.fitness());
  benchmark.set_prepare_ms(result.prepare_ms());
  benchmark.set_gpu_name(result.gpu_name());
  benchmark.set_arch(result.arch());
  benchmark.set_flagged_implausible(result.flagged_implausible());
  for (const auto& [name, contents] :
       {std::pair<const char*, std::string>{"kernel.cu", source}, {"compile.log", CleanUntrustedText(result.compile_log())},
        {"verify.json", ResultToJson(verify)}, {"benchmark.json", ResultToJson(benchmark)},
        {"result.json", ResultToJson(result)}}) {
    if (absl::Status s = WriteFile(base / name, contents); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace sparseditto
