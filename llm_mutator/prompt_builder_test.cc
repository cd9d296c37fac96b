// Prompts rendered from the real templates in configs/prompts/: what they carry per operator, how they
// shrink, and what privacy keeps out.
#include "llm_mutator/prompt_builder.h"

#include <unistd.h>

#include <cstdlib>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto::llm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kParentSource[] =
    "#include \"sparseditto_kernel.h\"\n#define THREADS 128  // sparseditto:tunable values=[64, 128, 256]\n// PARENT BODY\n";

std::string HostName() {
  char name[256] = {0};
  gethostname(name, sizeof(name) - 1);
  return name;
}

MutationRequest Request(v1::MutationOperator op) {
  MutationRequest r;
  r.op = op;
  r.task.set_name("secret_task_name");
  r.task.set_source_file("/home/alice/tasks/secret.yaml");
  r.task.set_dtype(v1::DTYPE_FP16);
  r.task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_FILE);
  r.task.mutable_matrix()->mutable_file()->set_path("/data/private/weights_layer7.smtx");
  r.task.add_n(16);
  r.task.add_n(128);
  r.task.add_arch("sm_90");
  r.matrix_features_json = "{\n  \"rows\": 4096,\n  \"density\": 0.1\n}";
  r.gpu = {.name = "NVIDIA H200 SN-1324021000123", .arch = "sm_90", .sm_count = 132, .copy_bandwidth_gbs = 4000};
  EvaluatedCandidate parent;
  parent.candidate.set_id("secret_task_name.000003");
  parent.candidate.set_source(kParentSource);
  parent.result.set_stage_reached(v1::EVAL_STAGE_COMPILE);
  parent.result.set_failure(v1::FAILURE_CATEGORY_COMPILE);
  parent.result.set_failure_detail("nvcc exited with code 2");
  parent.result.set_gpu_name("NVIDIA H200 SN-1324021000123");
  parent.result.set_compile_log(
      std::string(5000, '.') + "\n/tmp/sd-compile-8f2a/candidate.cu(3): error: expected a ';' on " + HostName() +
      " in /home/alice/work; ~/notes too\nLAST LINE OF THE LOG\n");
  r.parents.push_back(parent);
  if (op == v1::MUTATION_OPERATOR_LLM_CROSSOVER) {
    EvaluatedCandidate mate;
    mate.candidate.set_id("secret_task_name.000009");
    mate.candidate.set_source("// MATE BODY\n");
    mate.result.set_stage_reached(v1::EVAL_STAGE_DONE);
    mate.result.set_fitness(1.7);
    v1::TimingStats* t = mate.result.add_timings();
    t->set_n(16);
    t->set_median_ms(0.0123);
    r.parents.push_back(mate);
  }
  EvaluatedCandidate inspiration;
  inspiration.candidate.set_id("secret_task_name.000001");
  inspiration.candidate.set_source("// INSPIRATION BODY\n");
  r.inspirations.push_back(inspiration);
  r.previous_failure = "SEARCH block 2 not found in the parent";
  return r;
}

PromptLibrary Library() {
  absl::StatusOr<PromptLibrary> lib = PromptLibrary::Load(SPARSEDITTO_SOURCE_DIR "/configs/prompts",
                                                          SPARSEDITTO_SOURCE_DIR "/kernel_abi/sparseditto_kernel.h");
  EXPECT_TRUE(lib.ok()) << lib.status();
  return lib.ok() ? *lib : PromptLibrary("", "", "");
}

std::string Render(const MutationRequest& r, int level, bool privacy) {
  absl::StatusOr<ChatRequest> p = Library().BuildPrompt(r, level, privacy);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? PromptMarkdown(*p) : "";
}

TEST(PromptBuilderTest, EachOperatorAsksForItsAnswerForm) {
  struct Case {
    v1::MutationOperator op;
    std::vector<std::string> present, absent;
  };
  const Case cases[] = {
      {v1::MUTATION_OPERATOR_LLM_DIFF, {"<<<<<<< SEARCH", ">>>>>>> REPLACE", "PARENT BODY"}, {"MATE BODY", "exactly one ```cuda"}},
      {v1::MUTATION_OPERATOR_LLM_REWRITE, {"exactly one ```cuda fenced block", "PARENT BODY"}, {"<<<<<<< SEARCH", "MATE BODY"}},
      {v1::MUTATION_OPERATOR_LLM_CROSSOVER, {"Combine the strengths", "MATE BODY", "PARENT BODY", "fitness", "n=16: median 0.0123 ms"},
       {"<<<<<<< SEARCH"}},
  };
  for (const Case& c : cases) {
    const std::string prompt = Render(Request(c.op), 0, false);
    for (const std::string& w : c.present) EXPECT_THAT(prompt, HasSubstr(w)) << v1::MutationOperator_Name(c.op);
    for (const std::string& w : c.absent) EXPECT_THAT(prompt, Not(HasSubstr(w))) << v1::MutationOperator_Name(c.op);
    // Common to all: the ABI verbatim, the task, the tunables, the evaluation, the feedback.
    for (const char* w : {"SPARSEDITTO_EXPORT int sparseditto_prepare", "dtype of A, B and C: fp16", "16, 128", "sm_90",
                          "\"density\": 0.1", "THREADS = 128 (allowed: 64, 128, 256)", "outcome: compile",
                          "LAST LINE OF THE LOG", "INSPIRATION BODY", "SEARCH block 2 not found", "SMs: 132"}) {
      EXPECT_THAT(prompt, HasSubstr(w)) << v1::MutationOperator_Name(c.op);
    }
  }
}

// The task's layout is in the prompt: an NK task says how run() reads B and writes C, and that the mask
// must stay.
TEST(PromptBuilderTest, ThePromptNamesTheTasksLayout) {
  MutationRequest r = Request(v1::MUTATION_OPERATOR_LLM_DIFF);
  EXPECT_THAT(Render(r, 0, false), HasSubstr("A sparse; B and C dense row-major (layout kn)"));
  r.task.set_layout(v1::LAYOUT_NK);
  const std::string nk = Render(r, 0, false);
  EXPECT_THAT(nk, HasSubstr("layout nk (PyTorch's Linear): run() gets B as X = B^T, n x K row-major"));
  EXPECT_THAT(nk, HasSubstr("SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK)"));
  EXPECT_THAT(nk, Not(HasSubstr("(layout kn)")));
}

TEST(PromptBuilderTest, PrivacyKeepsPathsHostsUsersAndNamesOut) {
  const MutationRequest request = Request(v1::MUTATION_OPERATOR_LLM_CROSSOVER);
  const std::string open = Render(request, 0, false);
  EXPECT_THAT(open, HasSubstr("secret_task_name"));
  EXPECT_THAT(open, HasSubstr("/data/private/weights_layer7.smtx"));
  EXPECT_THAT(open, HasSubstr("NVIDIA H200 SN-1324021000123"));

  const std::string prompt = Render(request, 0, true);
  std::vector<std::string> forbidden = {"secret_task_name", "/home/alice", "alice", "/data/private", "weights_layer7",
                                        "/tmp/sd-compile", "~/notes", "H200", "SN-1324021000123", HostName()};
  if (const char* user = std::getenv("USER"); user != nullptr && std::string(user).size() >= 2) forbidden.push_back(user);
  for (const std::string& w : forbidden) EXPECT_THAT(prompt, Not(HasSubstr(w))) << w;
  // What it still carries: the kernels, the matrix statistics, the evaluation.
  for (const char* w : {"PARENT BODY", "MATE BODY", "INSPIRATION BODY", "\"rows\": 4096", "sm_90", "<path>",
                        "error: expected a ';'", "fitness"}) {
    EXPECT_THAT(prompt, HasSubstr(w)) << w;
  }
}

TEST(PromptBuilderTest, ShrinkLevelsDropInspirationsThenTrimThenDropLogs) {
  const MutationRequest request = Request(v1::MUTATION_OPERATOR_LLM_DIFF);
  const std::string p0 = Render(request, 0, false), p1 = Render(request, 1, false);
  const std::string p2 = Render(request, 2, false), p3 = Render(request, 3, false);
  EXPECT_THAT(p0, HasSubstr("INSPIRATION BODY"));
  EXPECT_THAT(p1, Not(HasSubstr("INSPIRATION BODY")));
  EXPECT_THAT(p2, HasSubstr("LAST LINE OF THE LOG"));
  EXPECT_THAT(p3, Not(HasSubstr("LAST LINE OF THE LOG")));
  EXPECT_GT(p0.size(), p1.size());
  EXPECT_GT(p1.size(), p2.size());
  EXPECT_GT(p2.size(), p3.size());
  EXPECT_THAT(p3, HasSubstr("PARENT BODY"));
}

TEST(PromptBuilderTest, BadRequestsAndTemplates) {
  MutationRequest r = Request(v1::MUTATION_OPERATOR_LLM_CROSSOVER);
  r.parents.pop_back();
  EXPECT_EQ(Library().BuildPrompt(r, 0, false).status().code(), absl::StatusCode::kInvalidArgument);
  r.op = v1::MUTATION_OPERATOR_TUNE;
  EXPECT_EQ(Library().BuildPrompt(r, 0, false).status().code(), absl::StatusCode::kInvalidArgument);
  const PromptLibrary typo("{{abi_heder}}", "", "");
  absl::Status s = typo.BuildPrompt(Request(v1::MUTATION_OPERATOR_LLM_DIFF), 0, false).status();
  EXPECT_THAT(std::string(s.message()), HasSubstr("system.txt:1: unknown placeholder 'abi_heder'"));
  EXPECT_EQ(PromptLibrary::Load("/no/such/dir", "/no/such/h").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace sparseditto::llm
