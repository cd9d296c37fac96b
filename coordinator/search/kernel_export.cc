#include "coordinator/search/kernel_export.h"

#include <cctype>
#include <vector>

#include "common/dtype.h"
#include "common/eval_outcome.h"
#include "common/shared_gpu.h"
#include "coordinator/search/export_wrapper.h"
#include "coordinator/search/finalist_stage.h"
#include "coordinator/search/stored_search.h"
#include "fmt/format.h"
#include "mutators/plan/plan_composer.h"
#include "nlohmann/json.hpp"
#include "population_store/population_store.h"
#include "task/run_paths.h"
#include "task/task_matrix.h"
#include "task/task_names.h"

namespace sparseditto {
namespace {

// "fp16" -> "SD_DTYPE_FP16": the ABI header's names.
std::string AbiName(std::string_view prefix, std::string_view name) {
  std::string out(prefix);
  for (char c : name) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string DescribePattern(const v1::PatternSpec& p) {
  std::string out(PatternFamilyName(p.family()));
  if (p.sparsity() > 0) out += fmt::format(", sparsity {}", p.sparsity());
  if (p.block_rows() > 0) out += fmt::format(", blocks {}x{}", p.block_rows(), p.block_cols());
  if (p.m() > 0) out += fmt::format(", {}:{}", p.n(), p.m());
  if (p.half_bandwidth() > 0) out += fmt::format(", half bandwidth {}", p.half_bandwidth());
  if (p.num_blocks() > 0) out += fmt::format(", {} diagonal blocks", p.num_blocks());
  return out;
}

std::string DescribeMatrix(const v1::MatrixSource& m) {
  if (m.has_file()) return fmt::format("file {}", m.file().path());
  return fmt::format("{} x {} generated from seed {}", m.generated().rows(), m.generated().cols(), m.seed());
}

// "n=128: kernel 0.0123 ms | cublas_dense 0.0200 | cusparse_csr 0.0310 -> 1.63x the best baseline".
std::vector<std::string> TimingLines(const v1::EvalResult& result) {
  std::vector<std::string> lines;
  for (const v1::TimingStats& t : result.timings()) {
    std::string line = fmt::format("n={}: kernel {:.4f} ms", t.n(), t.median_ms());
    double best = 0;
    auto baselines = result.baselines().find(t.n());
    if (baselines != result.baselines().end()) {
      for (const v1::BaselineTime& b : baselines->second.baselines()) {
        if (!b.available()) continue;
        line += fmt::format(" | {} {:.4f}", b.name(), b.timing().median_ms());
        if (best == 0 || b.timing().median_ms() < best) best = b.timing().median_ms();
      }
    }
    if (best > 0 && t.median_ms() > 0) line += fmt::format(" -> {:.2f}x the best baseline", best / t.median_ms());
    lines.push_back(line);
  }
  if (lines.empty()) lines.push_back("(no timings stored)");
  return lines;
}

// What the kernel passed: the correctness checks, and the finalist checks' lines from the run log
// ("[compute-sanitizer memcheck: exited with code 0]") or a line saying they were not run and how to.
std::vector<std::string> CheckLines(const v1::Task& task, const std::string& candidate_id, const v1::EvalResult& result,
                                    const std::string& finalist_note) {
  int passed = 0;
  for (const v1::CorrectnessCheck& c : result.checks()) passed += c.passed();
  std::vector<std::string> lines = {fmt::format(
      "Checks: {}/{} correctness checks passed (smoke shapes, the task at every n, a re-check after timing), "
      "max rel error {:.3g}",
      passed, result.checks_size(), result.max_rel_error())};
  for (const std::string& verdict : SanitizerVerdicts(result)) lines.push_back("  " + verdict);
  if (!finalist_note.empty()) {
    lines.push_back("  Finalist checks: " + finalist_note);
  } else if (lines.size() == 1) {
    lines.push_back("  Not run on it: the finalist checks (determinism rerun, compute-sanitizer memcheck, racecheck,");
    lines.push_back("  initcheck). Run them before use on the kernel's own source (this file renames its ABI):");
    lines.push_back(fmt::format("  sparseditto eval --task <task file> --name {0} --kernel <run folder>/{0}/candidates/{1}/"
                                "kernel.cu --finalist",
                                task.name(), candidate_id));
  }
  return lines;
}

std::string ProvenanceLine(const store::RunRecord& run) {
  const nlohmann::json p = nlohmann::json::parse(run.provenance_json(), nullptr, /*allow_exceptions=*/false);
  auto field = [&](const char* key) {
    return p.is_object() && p.contains(key) && p[key].is_string() ? p[key].get<std::string>() : std::string("?");
  };
  std::string line = fmt::format("revision {}, GPU {}, driver {}, CUDA {}",
                                 run.project_revision().empty() ? "?" : run.project_revision(), field("gpu"),
                                 field("driver"), field("cuda"));
  // A run scored by the tests' fake evaluator (cli/fake_search_backend.h) says so where a user looks.
  if (p.is_object() && p.contains("fake_evaluator")) line += "; NOT MEASURED: " + field("fake_evaluator");
  return line;
}

}  // namespace

absl::StatusOr<std::string> ExportedKernel(const store::RunRecord& run, const v1::Task& task, const v1::Candidate& best,
                                           const v1::EvalResult& result, const CsrMatrix& searched,
                                           const std::string& finalist_note) {
  const std::string symbol = ExportSymbol(task.name());
  absl::StatusOr<std::string> wrapped = WrapForExport(best.source(), symbol, WeightSpecInitializer(task, searched));
  if (!wrapped.ok()) return wrapped.status();
  std::vector<std::string> tunables;
  for (const v1::Tunable& t : best.tunables()) tunables.push_back(fmt::format("{}={}", t.name(), t.value()));
  std::vector<std::string> ns;
  for (int64_t n : task.n()) ns.push_back(std::to_string(n));
  std::string h;
  auto line = [&h](const std::string& text) { h += "// " + text + "\n"; };
  line(fmt::format("SparseDitto: the best kernel found for task {} (run {}).", task.name(), run.run_id()));
  line(fmt::format("Candidate {}: seed {}, tunables {}, fitness {:.3f}", best.id(), best.seed_name(),
                   tunables.empty() ? "none" : fmt::format("{}", fmt::join(tunables, " ")), result.fitness()));
  line("  (fitness: geometric mean over n of the best baseline's time / this kernel's time)");
  if (absl::StatusOr<std::vector<ParsedPlanVariant>> plan = ParsePlanSource(best.source()); plan.ok()) {
    line("A dispatch plan: run() picks the variant by n:");
    for (const ParsedPlanVariant& v : *plan) line(fmt::format("  {} (seed {}) serves n {}", v.name, v.seed_name, FormatRanges(v.serves)));
  }
  const bool nk = task.layout() == v1::LAYOUT_NK;
  line(fmt::format("Task: {} {}, A is {}; pattern {}; n = {}; arch {}; layout {}", OpName(task.op()),
                   DtypeName(task.dtype()), DescribeMatrix(task.matrix()), DescribePattern(task.pattern()),
                   fmt::join(ns, ", "), fmt::join(task.arch(), ", "), LayoutName(task.layout())));
  line(fmt::format("Median times on {} ({}):", result.gpu_name().empty() ? "?" : result.gpu_name(),
                   result.arch().empty() ? "?" : result.arch()));
  for (const std::string& t : TimingLines(result)) line("  " + t);
  if (result.prepare_ms() > 0) line(fmt::format("  prepare (format conversion, untimed in run): {:.3f} ms", result.prepare_ms()));
  if (const double idle = SharedGpuIdleTrialMs(result); idle > 0) {
    line(fmt::format("  Warning: timed while other work shared the GPU (idle trials took {:.3f} ms, median, {}):",
                     idle, kSharedGpuRule));
    line("  these times are not comparable with a quiet GPU's.");
  }
  for (const std::string& c : CheckLines(task, best.id(), result, finalist_note)) line(c);
  line("Provenance: " + ProvenanceLine(run));
  line("");
  line(fmt::format("Use: ./build.sh in this folder builds every export here into libsparseditto_kernels.so with the "
                   "evaluator's nvcc flags ({}.cu alone: ./build.sh -o lib{}.so {}.cu). Declared in {}.h, under the ABI "
                   "of sparseditto_kernel.h with every name prefixed {}_:",
                   task.name(), symbol, task.name(), task.name(), symbol));
  line("  sd_problem problem = {};");
  line("  problem.abi_version = SPARSEDITTO_ABI_VERSION;");
  line(fmt::format("  problem.dtype = {};", AbiName("SD_DTYPE_", DtypeName(task.dtype()))));
  line("  problem.rows = M; problem.cols = K; problem.nnz = nnz;");
  line(fmt::format("  problem.pattern.family = {};  // and the family's parameters, as above",
                   AbiName("SD_PATTERN_", PatternFamilyName(task.pattern().family()))));
  line("  problem.row_offsets = row_offsets; problem.col_indices = col_indices; problem.values = values;  // host CSR");
  line(fmt::format("  int64_t n_values[] = {{{}}};", fmt::join(ns, ", ")));
  line(fmt::format("  problem.n_values = n_values; problem.num_n_values = {}; problem.device = 0;", ns.size()));
  line(fmt::format("  problem.layout = {};  // the layout it was searched and timed in ({}_layouts() lists what it serves)",
                   nk ? "SD_LAYOUT_NK" : "SD_LAYOUT_KN", symbol));
  line("  void* state = nullptr; char error[256];");
  line(fmt::format("  if ({}_prepare(&problem, &state, error, sizeof error) != 0) {{ /* error says why */ }}", symbol));
  line("  // prepare fails with \"weight check: ...\" when the weight lacks the pattern above (naming the row,");
  line("  // group, block or column), has another dtype or pattern parameters, or is not a canonical CSR.");
  line(nk ? "  // B: device X [n x K] row-major (PyTorch's activations), C: device Y [n x M] row-major; work is enqueued on `stream`."
          : "  // B: device, K x n row-major; C: device, M x n row-major; work is enqueued on `stream`.");
  line(fmt::format("  if ({}_run(state, d_B, d_C, /*n=*/{}, stream) != 0) {{ /* n not supported */ }}", symbol,
                   ns.empty() ? std::string("n") : ns.front()));
  line(fmt::format("  {}_release(state);", symbol));
  return h + "\n" + *wrapped;
}

namespace {

// The task's matrix as far as the weight check needs it: its shape, and for a matrix file the matrix.
absl::StatusOr<CsrMatrix> SearchedMatrix(const v1::Task& task) {
  if (task.matrix().has_file()) {
    absl::StatusOr<CsrMatrix> m = MaterializeTaskMatrix(task);
    if (!m.ok()) {
      return absl::FailedPreconditionError(fmt::format(
          "the task's matrix file, needed for the weight check of a kernel searched on it: {}", std::string(m.status().message())));
    }
    return m;
  }
  CsrMatrix shape;
  shape.rows = task.matrix().generated().rows();
  shape.cols = task.matrix().generated().cols();
  return shape;
}

}  // namespace

absl::StatusOr<ExportedTask> ExportBestKernel(const PopulationStore& store, const store::RunRecord& run,
                                               const std::string& task_name) {
  absl::StatusOr<StoredSearch> s = ReadStoredSearch(store, run.run_id(), task_name);
  if (!s.ok()) return s.status();
  const std::string& best_id = s->search.best_candidate_id();
  if (best_id.empty()) return absl::NotFoundError("no correct candidate yet");
  // The best candidate that passed the finalist checks, with that evaluation; else the search's best.
  static const FinalistAttempts kNone;
  const FinalistAttempts& attempts = s->state ? s->state->finalist_attempts() : kNone;
  const store::FinalistAttempt* passed = PassedAttempt(attempts);
  const std::string id = passed != nullptr ? passed->candidate_id() : best_id;
  absl::StatusOr<v1::Candidate> chosen = store.GetCandidate(run.run_id(), id);
  if (!chosen.ok()) return chosen.status();
  v1::EvalResult result;
  if (passed == nullptr) {
    absl::StatusOr<v1::EvalResult> stored = store.GetEvaluation(run.run_id(), id);
    if (!stored.ok()) return stored.status();
    result = *std::move(stored);
  } else if (!result.ParseFromString(passed->result())) {
    return absl::DataLossError(fmt::format("the finalist result of {} does not parse", id));
  }
  std::string note;
  if (passed != nullptr && id != best_id) {
    note = fmt::format("passed; the search's best, {} (fitness {:.3f}), did not ({})", best_id,
                       s->search.best_fitness(), DescribeFinalists(attempts));
  } else if (passed == nullptr && !attempts.empty()) {
    note = "FAILED: " + DescribeFinalists(attempts);
  }
  // The task name comes from the store: one written before names were checked may hold any.
  if (absl::Status checked = CheckTaskName(task_name); !checked.ok()) return checked;
  absl::StatusOr<CsrMatrix> searched = SearchedMatrix(s->task);
  if (!searched.ok()) return searched.status();
  ExportedTask out;
  out.symbol = ExportSymbol(task_name);
  absl::StatusOr<std::string> cu = ExportedKernel(run, s->task, *chosen, result, *searched, note);
  if (!cu.ok()) return cu.status();
  absl::StatusOr<std::vector<std::string>> flags = ExportNvccFlags(s->task);
  if (!flags.ok()) return flags.status();
  out.cu = *std::move(cu);
  out.declarations = ExportDeclarations(out.symbol);
  out.nvcc_flags = *std::move(flags);
  return out;
}

}  // namespace sparseditto
