#include "llm_mutator/prompt_builder.h"

#include <fstream>
#include <sstream>

#include "common/text_tail.h"
#include "common/untrusted_text.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "kernel_abi/tunables.h"
#include "llm_mutator/prompt_template.h"

namespace sparseditto::llm {
namespace {

absl::StatusOr<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("{}: cannot open", path));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return absl::UnavailableError(fmt::format("{}: read failed", path));
  return s.str();
}

// "FULL_CORRECTNESS" -> "full_correctness"
template <typename Enum>
std::string EnumWord(const std::string& full, std::string_view prefix) {
  std::string s = full.starts_with(prefix) ? full.substr(prefix.size()) : full;
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string PatternText(const v1::PatternSpec& p) {
  const std::string family = EnumWord<v1::PatternFamily>(v1::PatternFamily_Name(p.family()), "PATTERN_FAMILY_");
  switch (p.family()) {
    case v1::PATTERN_FAMILY_UNSTRUCTURED:
      return fmt::format("{} (sparsity {}, {} row lengths)", family, p.sparsity(),
                         p.row_lengths() == v1::ROW_LENGTHS_SKEWED ? "skewed" : "uniform");
    case v1::PATTERN_FAMILY_BLOCK:
      return fmt::format("{} ({}x{} blocks, sparsity {} of the blocks)", family, p.block_rows(), p.block_cols(),
                         p.sparsity());
    case v1::PATTERN_FAMILY_N_M: return fmt::format("{} ({}:{} along K)", family, p.n(), p.m());
    case v1::PATTERN_FAMILY_ROW_SPARSE:
    case v1::PATTERN_FAMILY_COLUMN_SPARSE: return fmt::format("{} (sparsity {})", family, p.sparsity());
    case v1::PATTERN_FAMILY_BANDED: return fmt::format("{} (half bandwidth {})", family, p.half_bandwidth());
    case v1::PATTERN_FAMILY_BLOCK_DIAGONAL: return fmt::format("{} ({} blocks)", family, p.num_blocks());
    default: return family;
  }
}

std::string GpuText(const GpuInfo& g, bool privacy) {
  std::string s;
  if (!privacy && !g.name.empty()) s += fmt::format("- GPU: {}\n", g.name);
  if (!g.arch.empty()) s += fmt::format("- arch: {}\n", g.arch);
  if (g.sm_count > 0) s += fmt::format("- SMs: {}\n", g.sm_count);
  if (g.shared_memory_per_block_kib > 0) s += fmt::format("- shared memory per block: {} KiB\n", g.shared_memory_per_block_kib);
  if (g.registers_per_thread_max > 0) s += fmt::format("- registers per thread: at most {}\n", g.registers_per_thread_max);
  if (g.copy_bandwidth_gbs > 0) s += fmt::format("- measured copy bandwidth: {:.0f} GB/s\n", g.copy_bandwidth_gbs);
  if (g.tensor_tflops > 0) s += fmt::format("- dense fp16 tensor-core rate: {:.0f} TFLOP/s\n", g.tensor_tflops);
  if (g.fp32_tflops > 0) s += fmt::format("- dense fp32 rate: {:.1f} TFLOP/s\n", g.fp32_tflops);
  return s;
}

std::string TunablesText(const std::string& source) {
  absl::StatusOr<std::vector<v1::Tunable>> tunables = ParseTunables(source);
  if (!tunables.ok()) return fmt::format("(the declarations do not parse: {})", std::string(tunables.status().message()));
  if (tunables->empty()) return "(none declared)";
  std::string s;
  for (const v1::Tunable& t : *tunables) {
    s += fmt::format("- {} = {} (allowed: {})\n", t.name(), t.value(), fmt::join(t.allowed_values(), ", "));
  }
  return s;
}

// Candidate text (logs, failure messages) is untrusted: cleaned (capped, controls escaped, secrets
// redacted) before it reaches a prompt, and under privacy also stripped of paths and names.
std::string Scrub(std::string_view text, bool privacy, const std::vector<std::string>& extra) {
  const std::string cleaned = CleanUntrustedText(text);
  return privacy ? ScrubPrivate(cleaned, extra) : cleaned;
}

// The evaluation as the model should read it; logs separately (they shrink first).
std::string EvaluationText(const v1::EvalResult& r, bool privacy, const std::vector<std::string>& extra) {
  if (r.stage_reached() == v1::EVAL_STAGE_UNSPECIFIED) return "(not evaluated yet)\n";
  std::string s = fmt::format("- stage reached: {}\n- outcome: {}\n",
                              EnumWord<v1::EvalStage>(v1::EvalStage_Name(r.stage_reached()), "EVAL_STAGE_"),
                              EnumWord<v1::FailureCategory>(v1::FailureCategory_Name(r.failure()), "FAILURE_CATEGORY_"));
  if (!r.failure_detail().empty()) s += fmt::format("- detail: {}\n", Scrub(r.failure_detail(), privacy, extra));
  if (r.fitness() > 0) s += fmt::format("- fitness (geomean over n of best baseline time / this kernel's time): {:.3f}\n", r.fitness());
  for (const v1::TimingStats& t : r.timings()) {
    std::string line = fmt::format("- n={}: median {:.4f} ms (p10 {:.4f}, p90 {:.4f})", t.n(), t.median_ms(), t.p10_ms(),
                                   t.p90_ms());
    auto it = r.baselines().find(t.n());
    if (it != r.baselines().end()) {
      for (const v1::BaselineTime& b : it->second.baselines()) {
        if (b.available()) line += fmt::format("; {} {:.4f} ms", b.name(), b.timing().median_ms());
      }
    }
    s += line + "\n";
  }
  if (r.max_abs_error() > 0 || r.max_rel_error() > 0) {
    s += fmt::format("- max abs error {:.3g}, max relative error {:.3g}\n", r.max_abs_error(), r.max_rel_error());
  }
  for (const v1::CorrectnessCheck& c : r.checks()) {
    if (!c.passed()) s += fmt::format("- failed check {}: {}\n", c.case_name(), Scrub(c.detail(), privacy, extra));
  }
  for (const v1::KernelResources& k : r.resources()) {
    s += fmt::format("- {} on {}: {} registers, {} B shared, {} B spilled\n", k.kernel_name(), k.arch(), k.registers(),
                     k.shared_bytes(), k.spill_bytes());
  }
  if (r.prepare_ms() > 0) s += fmt::format("- prepare (untimed format conversion): {:.3f} ms\n", r.prepare_ms());
  return s;
}

std::string LogsText(const v1::EvalResult& r, int shrink_level, bool privacy, const std::vector<std::string>& extra) {
  if (shrink_level >= 3) return "";
  const size_t limit = shrink_level >= 2 ? kTrimmedLogBytes : kFullLogBytes;
  std::string s;
  const bool compile_failed = r.failure() == v1::FAILURE_CATEGORY_COMPILE;
  if (compile_failed && !r.compile_log().empty()) {
    s += fmt::format("compile log (end):\n```\n{}\n```\n", TextTail(Scrub(r.compile_log(), privacy, extra), limit));
  }
  if (!r.run_log().empty() && r.failure() != v1::FAILURE_CATEGORY_NONE) {
    s += fmt::format("run log (end):\n```\n{}\n```\n", TextTail(Scrub(r.run_log(), privacy, extra), limit));
  }
  return s;
}

std::string Label(const v1::Candidate& c, std::string_view fallback, bool privacy) {
  if (privacy || c.id().empty()) return std::string(fallback);
  return fmt::format("{} ({})", fallback, c.id());
}

}  // namespace

absl::StatusOr<PromptLibrary> PromptLibrary::Load(const std::string& prompts_dir, const std::string& abi_header_path) {
  absl::StatusOr<std::string> system = ReadText(prompts_dir + "/system.txt");
  if (!system.ok()) return system.status();
  absl::StatusOr<std::string> user = ReadText(prompts_dir + "/user.txt");
  if (!user.ok()) return user.status();
  absl::StatusOr<std::string> abi = ReadText(abi_header_path);
  if (!abi.ok()) return abi.status();
  return PromptLibrary(std::move(*system), std::move(*user), std::move(*abi));
}

absl::StatusOr<ChatRequest> PromptLibrary::BuildPrompt(const MutationRequest& request, int shrink_level,
                                                       bool privacy) const {
  const v1::MutationOperator op = request.op;
  if (op != v1::MUTATION_OPERATOR_LLM_DIFF && op != v1::MUTATION_OPERATOR_LLM_REWRITE &&
      op != v1::MUTATION_OPERATOR_LLM_CROSSOVER) {
    return absl::InvalidArgumentError(fmt::format("operator {} is not an LLM operator", v1::MutationOperator_Name(op)));
  }
  const size_t parents_needed = op == v1::MUTATION_OPERATOR_LLM_CROSSOVER ? 2 : 1;
  if (request.parents.size() != parents_needed) {
    return absl::InvalidArgumentError(fmt::format("{} needs {} parent(s), got {}", v1::MutationOperator_Name(op),
                                                  parents_needed, request.parents.size()));
  }
  const v1::Task& task = request.task;
  // Words that must not leave under privacy even where they hide in logs.
  std::vector<std::string> extra = {task.name(), task.source_file()};
  if (task.matrix().has_file()) extra.push_back(task.matrix().file().path());
  if (!request.gpu.name.empty()) extra.push_back(request.gpu.name);
  for (const EvaluatedCandidate& p : request.parents) extra.push_back(p.result.gpu_name());

  TemplateVars vars;
  vars["abi_header"] = abi_header_;
  vars["task_name"] = privacy ? "" : task.name();
  vars["dtype"] = EnumWord<v1::Dtype>(v1::Dtype_Name(task.dtype()), "DTYPE_");
  vars["pattern"] = PatternText(task.pattern());
  vars["n_values"] = fmt::format("{}", fmt::join(task.n(), ", "));
  vars["archs"] = fmt::format("{}", fmt::join(task.arch(), ", "));
  vars["layout"] = task.layout() == v1::LAYOUT_NK
      ? "layout nk (PyTorch's Linear): run() gets B as X = B^T, n x K row-major, and writes C as Y = C^T, "
        "n x M row-major (sd_layout SD_LAYOUT_NK); the kernel must keep exporting sparseditto_layouts() with "
        "SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK)"
      : "B and C dense row-major (layout kn)";
  if (task.matrix().has_generated()) {
    vars["shape"] = fmt::format("{} x {}", task.matrix().generated().rows(), task.matrix().generated().cols());
    vars["matrix_source"] = "generated from a seed";
  } else {
    vars["shape"] = "";
    vars["matrix_source"] = privacy ? "a real matrix from a file" : fmt::format("the file {}", task.matrix().file().path());
  }
  vars["matrix_features"] = request.matrix_features_json;
  vars["gpu"] = GpuText(request.gpu, privacy);

  const EvaluatedCandidate& parent = request.parents[0];
  vars["parent_label"] = Label(parent.candidate, "parent", privacy);
  vars["parent_source"] = parent.candidate.source();
  vars["parent_tunables"] = TunablesText(parent.candidate.source());
  vars["parent_evaluation"] = EvaluationText(parent.result, privacy, extra);
  vars["parent_logs"] = LogsText(parent.result, shrink_level, privacy, extra);
  const bool crossover = op == v1::MUTATION_OPERATOR_LLM_CROSSOVER;
  const EvaluatedCandidate* mate = crossover ? &request.parents[1] : nullptr;
  vars["mate_label"] = mate ? Label(mate->candidate, "second parent", privacy) : "";
  vars["mate_source"] = mate ? mate->candidate.source() : "";
  vars["mate_tunables"] = mate ? TunablesText(mate->candidate.source()) : "";
  vars["mate_evaluation"] = mate ? EvaluationText(mate->result, privacy, extra) : "";

  std::string inspirations;
  if (shrink_level < 1) {
    for (size_t i = 0; i < request.inspirations.size(); ++i) {
      const EvaluatedCandidate& c = request.inspirations[i];
      inspirations += fmt::format("### {}\n\n{}\n```cuda\n{}\n```\n\n", Label(c.candidate, fmt::format("inspiration {}", i + 1), privacy),
                                  EvaluationText(c.result, privacy, extra), c.candidate.source());
    }
  }
  vars["inspirations"] = inspirations;
  vars["previous_failure"] = Scrub(request.previous_failure, privacy, extra);
  vars["op_diff"] = op == v1::MUTATION_OPERATOR_LLM_DIFF ? "yes" : "";
  vars["op_rewrite"] = op == v1::MUTATION_OPERATOR_LLM_REWRITE ? "yes" : "";
  vars["op_crossover"] = crossover ? "yes" : "";
  vars["privacy"] = privacy ? "yes" : "";

  ChatRequest out;
  absl::StatusOr<std::string> system = RenderTemplate(system_, vars, "system.txt");
  if (!system.ok()) return system.status();
  absl::StatusOr<std::string> user = RenderTemplate(user_, vars, "user.txt");
  if (!user.ok()) return user.status();
  out.system = std::move(*system);
  out.user = std::move(*user);
  return out;
}

}  // namespace sparseditto::llm
