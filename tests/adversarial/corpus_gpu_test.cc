// GPU test (label "gpu"): every adversarial and fault candidate of corpus.json, through the real
// evaluator on the real GPU, ends with its expected failure category, and this process (the evaluator)
// survives the whole corpus. Each is evaluated as a finalist, so the sanitizer checks run too.
#include <cuda_runtime_api.h>

#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <set>
#include <sstream>

#include "evaluator/compile/compile_pool.h"
#include "evaluator/evaluator.h"
#include "tests/testing/temp_folder.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace sparseditto {
namespace {

namespace fs = std::filesystem;
const fs::path kCorpus = SPARSEDITTO_SOURCE_DIR "/tests/adversarial";

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string CategoryName(v1::FailureCategory c) {
  const std::string name = v1::FailureCategory_Name(c);
  return name.substr(name.find("CATEGORY_") + 9);
}

TEST(CorpusGpuTest, EveryCandidateIsCaughtWithItsCategoryAndTheEvaluatorSurvives) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device";
  EvaluatorOptions options;
  options.compiler.cache_directory = testing_support::ProcessTempDir() + "compile_cache";
  options.compile.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
  options.compile.timeout_seconds = 20;  // the compile bomb ends here
  options.runner.runner_path = SPARSEDITTO_RUNNER;
  options.runner.stage_timeout_seconds = 20;  // the infinite loop ends here
  options.runner_options.set_max_timing_seconds(0.3);
  options.sanitizer_timeout_seconds = 120;
  auto evaluator = Evaluator::Create(options);
  ASSERT_TRUE(evaluator.ok()) << evaluator.status();
  // A second evaluator whose runner shares the GPU through a lock folder (`--per-gpu`,
  // evaluator/runner/gpu_share.h), for the entries that attack that lock (corpus.json "gpu_share").
  EvaluatorOptions sharing = options;
  sharing.runner.gpu_share_dir = testing_support::ProcessTempDir() + "gpu_share";
  ASSERT_TRUE(fs::create_directories(sharing.runner.gpu_share_dir));
  auto shared_evaluator = Evaluator::Create(sharing);
  ASSERT_TRUE(shared_evaluator.ok()) << shared_evaluator.status();

  v1::Task task;
  task.set_name("corpus_unstructured80_fp16");
  task.set_dtype(v1::DTYPE_FP16);
  task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  task.mutable_pattern()->set_sparsity(0.8);
  task.mutable_matrix()->mutable_generated()->set_rows(1000);
  task.mutable_matrix()->mutable_generated()->set_cols(1536);
  task.add_n(16);
  task.add_n(129);
  task.add_arch("sm_90");
  task.set_seed(9);
  auto setup = (*evaluator)->SetupTask(task);
  ASSERT_TRUE(setup.ok()) << setup.status();
  auto shared_setup = (*shared_evaluator)->SetupTask(task);
  ASSERT_TRUE(shared_setup.ok()) << shared_setup.status();
  // The same task in PyTorch's activation layout, for entries that cheat on it (corpus.json "layout").
  v1::Task nk_task = task;
  nk_task.set_name("corpus_unstructured80_fp16_nk");
  nk_task.set_layout(v1::LAYOUT_NK);
  auto nk_setup = (*evaluator)->SetupTask(nk_task);
  ASSERT_TRUE(nk_setup.ok()) << nk_setup.status();

  // The honest reference before the corpus; evaluated again after it, its verdict and times must hold.
  v1::Candidate reference;
  reference.set_id("reference_before_corpus");
  reference.set_source(Slurp(SPARSEDITTO_SOURCE_DIR "/kernels/reference/csr_reference.cu"));
  const v1::EvalResult before = (*evaluator)->Evaluate(task, reference, false, 76);
  ASSERT_TRUE(before.failure() == v1::FAILURE_CATEGORY_NONE || before.failure() == v1::FAILURE_CATEGORY_SLOWER)
      << before.failure_detail() << "\n" << before.run_log();

  const auto corpus = nlohmann::json::parse(Slurp(kCorpus / "corpus.json"));
  // Compile the whole corpus at once on every core; the GPU then takes them one at a time.
  CompilePool pool(&(*evaluator)->compiler());
  std::vector<std::future<absl::StatusOr<CompileResult>>> compiles;
  for (const auto& entry : corpus["entries"]) {
    compiles.push_back(pool.Submit(Slurp(kCorpus / entry["file"].get<std::string>()), (*evaluator)->CompileOptionsFor(task)));
  }
  int caught = 0, total = 0, skipped = 0;  // skipped: left out by SPARSEDITTO_CORPUS_ONLY, counted in neither
  const char* only_env = std::getenv("SPARSEDITTO_CORPUS_ONLY");
  const std::string only = only_env == nullptr ? "" : "," + std::string(only_env) + ",";
  const bool finalist = std::getenv("SPARSEDITTO_CORPUS_NOT_FINALIST") == nullptr;
  for (const auto& entry : corpus["entries"]) {
    const std::string file = entry["file"];
    std::set<std::string> accepted = {entry["expected"].get<std::string>()};
    if (entry.contains("also_acceptable")) {
      for (const auto& a : entry["also_acceptable"]) accepted.insert(a.get<std::string>());
    }
    // SPARSEDITTO_CORPUS_ONLY (a comma list of files): a short run of some entries, e.g. on a GPU
    // machine with little time left; the count check below is then skipped.
    if (!only.empty() && only.find("," + file + ",") == std::string::npos) {
      compiles[total + skipped].wait();
      ++skipped;
      continue;
    }
    Evaluator& judge = entry.contains("gpu_share") && entry["gpu_share"].get<bool>() ? **shared_evaluator : **evaluator;
    judge.set_static_screen(!entry.contains("screen") || entry["screen"].get<bool>());
    v1::Candidate candidate;
    candidate.set_id(fs::path(file).stem().string());
    candidate.set_source(Slurp(kCorpus / file));
    auto compiled = compiles[total + skipped].get();
    ASSERT_TRUE(compiled.ok()) << file << ": " << compiled.status();
    const bool nk = entry.contains("layout") && entry["layout"].get<std::string>() == "nk";
    const v1::EvalResult result = judge.Evaluate(nk ? nk_task : task, candidate, finalist, 1000 + total + skipped, &*compiled);
    const std::string got = CategoryName(result.failure());
    bool ok = accepted.contains(got);
    // "stage": where it must be caught, when an earlier catch would hide that the cheat went unseen (a candidate
    // whose cheat shows only under the finalist's sanitizers must not pass for caught by failing sooner).
    if (entry.contains("stage")) ok = ok && v1::EvalStage_Name(result.stage_reached()) == "EVAL_STAGE_" + entry["stage"].get<std::string>();
    // "times_like_reference": a candidate that is the reference apart from how it reports its times must
    // not come out more than 15% faster than the reference did.
    if (ok && entry.contains("times_like_reference") && entry["times_like_reference"].get<bool>()) {
      for (const v1::TimingStats& t : result.timings()) {
        for (const v1::TimingStats& r : before.timings()) {
          if (r.n() != t.n()) continue;
          const double ratio = t.median_ms() / r.median_ms();
          std::printf("%-28s n=%lld: %.4f ms against the reference's %.4f ms (%.2fx)\n", file.c_str(),
                      static_cast<long long>(t.n()), t.median_ms(), r.median_ms(), ratio);
          if (ratio < 0.85) ok = false;
        }
      }
    }
    ++total;
    caught += ok;
    std::printf("%-28s expected %-8s got %-8s at %-26s %s\n", file.c_str(), entry["expected"].get<std::string>().c_str(),
                got.c_str(), v1::EvalStage_Name(result.stage_reached()).c_str(),
                result.failure_detail().substr(0, 110).c_str());
    EXPECT_TRUE(ok) << file << ": got " << got << ": " << result.failure_detail() << "\n" << result.run_log();
  }
  std::printf("corpus: %d of %d caught with the right category%s; evaluator process alive\n", caught, total,
              skipped > 0 ? (", " + std::to_string(skipped) + " entries not run (SPARSEDITTO_CORPUS_ONLY)").c_str() : "");
  if (only.empty()) {
    EXPECT_GE(total, 14);
  }

  // The evaluator still works after the whole corpus, and nothing the corpus left behind moved the
  // reference candidate's verdict or times (a lingering thread or kernel would slow it down).
  (*evaluator)->set_static_screen(true);
  reference.set_id("reference_after_corpus");
  const v1::EvalResult after = (*evaluator)->Evaluate(task, reference, false, 77);
  EXPECT_EQ(after.failure(), before.failure()) << after.failure_detail();
  ASSERT_EQ(after.timings_size(), before.timings_size());
  for (int i = 0; i < after.timings_size(); ++i) {
    const double was = before.timings(i).median_ms(), now = after.timings(i).median_ms();
    std::printf("reference n=%lld: %.4f ms before the corpus, %.4f ms after (%+.1f%%); %d verified batches, bracket "
                "excess %.4f ms (tolerance %.4f)\n",
                static_cast<long long>(after.timings(i).n()), was, now, 100.0 * (now / was - 1),
                after.timings(i).verified_batches(), after.timings(i).bracket_excess_ms(),
                after.timings(i).bracket_tolerance_ms());
    EXPECT_NEAR(now / was, 1.0, 0.15) << "n=" << after.timings(i).n();
  }
}

}  // namespace
}  // namespace sparseditto
