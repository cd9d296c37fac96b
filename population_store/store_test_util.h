// Test helpers for population_store/: a temporary folder and small sample records.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "candidate.pb.h"
#include "eval_result.pb.h"
#include "store.pb.h"
#include "task.pb.h"

namespace sparseditto::store_testing {

// A fresh folder under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/population_store_test-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  // A path inside the folder.
  std::string Sub(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

inline store::RunRecord SampleRun(std::string_view id) {
  store::RunRecord run;
  run.set_run_id(std::string(id));
  run.set_created_unix_ms(1'700'000'000'000);
  run.set_project_revision("v0.1.0-42-gabcdef0");
  run.set_provenance_json(R"({"argv": ["sparseditto", "search", "t.yaml"], "host": "node1"})");
  return run;
}

inline v1::Task SampleTask(std::string_view name) {
  v1::Task task;
  task.set_name(std::string(name));
  task.set_op(v1::OP_SPMM);
  task.set_dtype(v1::DTYPE_FP16);
  task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  task.mutable_pattern()->set_sparsity(0.9);
  task.mutable_matrix()->mutable_generated()->set_rows(4096);
  task.mutable_matrix()->mutable_generated()->set_cols(4096);
  task.add_n(32);
  task.add_n(128);
  task.add_arch("sm_90");
  task.mutable_budget()->set_max_evaluations(200);
  task.set_seed(7);
  return task;
}

inline v1::Candidate SampleCandidate(std::string_view id, std::string_view task,
                                     std::initializer_list<std::string_view> parents = {},
                                     std::string_view source_hash = "") {
  v1::Candidate candidate;
  candidate.set_id(std::string(id));
  candidate.set_task_name(std::string(task));
  candidate.set_source("// kernel " + std::string(id) +
                       "\n#define TILE 64  // sparseditto:tunable values=[32, 64]\n");
  v1::Tunable* tile = candidate.add_tunables();
  tile->set_name("TILE");
  tile->set_value("64");
  tile->add_allowed_values("32");
  tile->add_allowed_values("64");
  for (std::string_view parent : parents) candidate.add_parent_ids(std::string(parent));
  candidate.set_operator_(parents.size() == 0 ? v1::MUTATION_OPERATOR_SEED : v1::MUTATION_OPERATOR_TUNE);
  candidate.set_mutator("builtin");
  candidate.set_generation(static_cast<int>(parents.size()));
  candidate.set_seed_name("csr_warp_per_row");
  candidate.set_source_hash(source_hash.empty() ? "hash-" + std::string(id) : std::string(source_hash));
  candidate.set_created_unix_ms(1'700'000'000'000);
  return candidate;
}

inline v1::EvalResult SampleEvaluation(std::string_view candidate_id, std::string_view task, double fitness) {
  v1::EvalResult result;
  result.set_candidate_id(std::string(candidate_id));
  result.set_task_name(std::string(task));
  result.set_stage_reached(v1::EVAL_STAGE_DONE);
  result.set_failure(v1::FAILURE_CATEGORY_NONE);
  result.set_fitness(fitness);
  v1::TimingStats* timing = result.add_timings();
  timing->set_n(128);
  timing->set_median_ms(0.25);
  timing->set_trials(20);
  v1::BaselineTime* baseline = (*result.mutable_baselines())[128].add_baselines();
  baseline->set_name("cublas_dense");
  baseline->set_available(true);
  baseline->mutable_timing()->set_median_ms(0.3);
  result.set_gpu_name("NVIDIA H200");
  result.set_arch("sm_90");
  return result;
}

// A run state after `evaluations` evaluations; the coordinator's state is opaque bytes to the store.
inline store::RunState SampleRunState(std::string_view task, int64_t evaluations, std::string_view in_flight_id = "") {
  store::RunState state;
  state.set_task_name(std::string(task));
  state.set_status(store::TASK_RUN_STATUS_RUNNING);
  state.set_status_detail(std::to_string(evaluations) + " evaluations");
  state.set_search_state(std::string("\x01\x00\xff state ", 10) + std::to_string(evaluations));
  state.set_in_flight_candidate_id(std::string(in_flight_id));
  state.set_attempts(1);
  return state;
}

}  // namespace sparseditto::store_testing
