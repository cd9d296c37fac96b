// Test code only: the LLM search tests' common ground. A small task whose mutators are models served
// by the local protocol server (llm_mutator/testing/fake_llm_server.h), the one seed those tests
// search from (csr_warp_per_row, edited by the scripted answers), real SEARCH/REPLACE edits of it, and
// LlmSearchMutator options that record the retry pauses instead of sleeping.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "coordinator/search/llm_search_mutator.h"
#include "coordinator/testing/search_fixture.h"
#include "kernels/seed_library.h"

namespace sparseditto::testing {

inline constexpr char kLlmSeedName[] = "csr_warp_per_row";

// Edits of kernels/seeds/csr_warp_per_row.cu. Each applies to the seed; kUnrollDiff moves UNROLL to
// the fake landscape's optimum (Landscape() puts it half the list away from the default: 1), so the
// child improves on the seed; kBlockDiff does the same for BLOCK_THREADS (512) and applies to the
// seed and to kUnrollDiff's child; kUnrollDiff also rewrites the inner FMA (a real code change).
inline constexpr char kUnrollDiff[] =
    "The FMA with an explicit rounding mode, and UNROLL 1 keeps fewer B rows in registers.\n\n"
    "<<<<<<< SEARCH\n"
    "      for (int v = 0; v < V; ++v) acc[i][v] = fmaf(a[u], bv[u][i][v], acc[i][v]);\n"
    "=======\n"
    "      for (int v = 0; v < V; ++v) acc[i][v] = __fmaf_rn(a[u], bv[u][i][v], acc[i][v]);\n"
    ">>>>>>> REPLACE\n"
    "<<<<<<< SEARCH\n"
    "#define UNROLL 4                 // sparseditto:tunable values=[1, 2, 4, 8]\n"
    "=======\n"
    "#define UNROLL 1                 // sparseditto:tunable values=[1, 2, 4, 8]\n"
    ">>>>>>> REPLACE\n";
inline constexpr char kBlockDiff[] =
    "<<<<<<< SEARCH\n"
    "#define BLOCK_THREADS 128        // sparseditto:tunable values=[64, 128, 256, 512]\n"
    "=======\n"
    "#define BLOCK_THREADS 512        // sparseditto:tunable values=[64, 128, 256, 512]\n"
    ">>>>>>> REPLACE\n";
// SEARCH text that is in no kernel.
inline constexpr char kBadDiff[] =
    "<<<<<<< SEARCH\n#define UNROLL 16\n=======\n#define UNROLL 8\n>>>>>>> REPLACE\n";

// An OpenAI-compatible model at `server_url` (the fake server's url()).
inline v1::MutatorSpec OpenAiModel(const std::string& name, const std::string& server_url, double weight = 1) {
  v1::MutatorSpec m;
  m.set_name(name);
  m.set_kind(v1::MUTATOR_KIND_OPENAI_COMPATIBLE);
  m.set_model(name + "-model");
  m.set_endpoint(server_url + "/v1");
  m.set_weight(weight);
  m.set_concurrency(1);
  m.set_timeout_seconds(10);
  m.set_max_retries(1);
  m.set_usd_per_million_input_tokens(3);
  m.set_usd_per_million_output_tokens(15);
  return m;
}

// SmallTask on sm_80 with a generated 96x80 matrix at 90% sparsity (its features go into the
// prompts), these mutators and limits (0: none).
inline v1::Task LlmTask(const std::vector<v1::MutatorSpec>& mutators, int64_t max_evaluations, int64_t max_tokens,
                        const std::string& name = "llm") {
  v1::Task task = SmallTask(max_evaluations, name);
  task.mutable_pattern()->set_sparsity(0.9);
  task.mutable_matrix()->mutable_generated()->set_rows(96);
  task.mutable_matrix()->mutable_generated()->set_cols(80);
  task.clear_arch();
  task.add_arch("sm_80");
  task.add_n(128);
  task.mutable_budget()->set_max_tokens(max_tokens);
  for (const v1::MutatorSpec& m : mutators) *task.add_mutators() = m;
  return task;
}

// The seed library's csr_warp_per_row alone (empty when the library cannot be read).
inline std::vector<SeedKernel> LlmSeeds() {
  std::vector<SeedKernel> out;
  absl::StatusOr<std::vector<SeedKernel>> all = LoadSeedLibrary(SPARSEDITTO_SOURCE_DIR "/kernels/seeds");
  if (!all.ok()) return out;
  for (const SeedKernel& s : *all) {
    if (s.name == kLlmSeedName) out.push_back(s);
  }
  return out;
}

// Options over the repository's prompts; retry pauses are appended to *sleeps, not slept.
inline LlmSearchMutatorOptions TestLlmOptions(std::vector<double>* sleeps) {
  LlmSearchMutatorOptions o;
  o.prompts_dir = SPARSEDITTO_SOURCE_DIR "/configs/prompts";
  o.abi_header = SPARSEDITTO_SOURCE_DIR "/kernel_abi/sparseditto_kernel.h";
  o.mutator.sleep = [sleeps](double s) { sleeps->push_back(s); };
  return o;
}

}  // namespace sparseditto::testing
