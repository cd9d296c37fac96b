// Strict answer parsing: SEARCH/REPLACE diffs that apply, that do not, and ```cuda rewrites.
#include "llm_mutator/answer_parser.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto::llm {
namespace {

using ::testing::HasSubstr;

constexpr char kParent[] =
    "#define THREADS 128  // sparseditto:tunable values=[64, 128]\n"
    "__global__ void K(float* c) {\n"
    "  c[0] = 1.0f;\n"
    "  __syncthreads();\n"
    "  c[1] = 1.0f;\n"
    "  __syncthreads();\n"
    "}\n";

struct DiffCase {
  std::string label;
  std::string answer;
  absl::StatusCode code;        // kOk: applies
  std::string expected_or_why;  // the child, or words of the reason
};

TEST(AnswerParserTest, DiffTable) {
  const DiffCase cases[] = {
      {"one_block_with_prose_and_fences",
       "I widen the block.\n```\n<<<<<<< SEARCH\n#define THREADS 128  // sparseditto:tunable values=[64, 128]\n"
       "=======\n#define THREADS 64  // sparseditto:tunable values=[64, 128]\n>>>>>>> REPLACE\n```\n",
       absl::StatusCode::kOk,
       "#define THREADS 64  // sparseditto:tunable values=[64, 128]\n__global__ void K(float* c) {\n  c[0] = 1.0f;\n"
       "  __syncthreads();\n  c[1] = 1.0f;\n  __syncthreads();\n}\n"},
      {"two_blocks_in_order_crlf_markers",
       "<<<<<<< SEARCH\r\n  c[0] = 1.0f;\n=======\n  c[0] = 2.0f;\n>>>>>>> REPLACE  \n"
       "<<<<<<< SEARCH\n  c[0] = 2.0f;\n  __syncthreads();\n  c[1] = 1.0f;\n=======\n  c[0] = 3.0f;\n>>>>>>> REPLACE\n",
       absl::StatusCode::kOk,
       "#define THREADS 128  // sparseditto:tunable values=[64, 128]\n__global__ void K(float* c) {\n  c[0] = 3.0f;\n"
       "  __syncthreads();\n}\n"},
      {"empty_replace_deletes", "<<<<<<< SEARCH\n  c[1] = 1.0f;\n  __syncthreads();\n\n=======\n>>>>>>> REPLACE\n",
       absl::StatusCode::kOk,
       "#define THREADS 128  // sparseditto:tunable values=[64, 128]\n__global__ void K(float* c) {\n  c[0] = 1.0f;\n"
       "  __syncthreads();\n}\n"},
      {"not_found", "<<<<<<< SEARCH\n  c[2] = 1.0f;\n=======\n  c[2] = 0;\n>>>>>>> REPLACE\n",
       absl::StatusCode::kFailedPrecondition, "SEARCH block 1 not found in the parent (first line: '  c[2] = 1.0f;')"},
      {"indentation_differs", "<<<<<<< SEARCH\nc[0] = 1.0f;\n=======\nx\n>>>>>>> REPLACE\n",
       absl::StatusCode::kFailedPrecondition, "not found"},
      {"part_of_a_line", "<<<<<<< SEARCH\n = 1.0f;\n=======\n = 2.0f;\n>>>>>>> REPLACE\n",
       absl::StatusCode::kFailedPrecondition, "not found"},
      {"ambiguous", "<<<<<<< SEARCH\n  __syncthreads();\n=======\n  __syncwarp();\n>>>>>>> REPLACE\n",
       absl::StatusCode::kFailedPrecondition, "SEARCH block 1 matches 2 places"},
      {"second_block_fails", "<<<<<<< SEARCH\n  c[0] = 1.0f;\n=======\n  c[9] = 1.0f;\n>>>>>>> REPLACE\n"
       "<<<<<<< SEARCH\n  c[0] = 1.0f;\n=======\n"
       "x\n>>>>>>> REPLACE\n", absl::StatusCode::kFailedPrecondition, "SEARCH block 2 not found"},
      {"no_blocks", "Here is the improved kernel:\n```cuda\nint x;\n```\n", absl::StatusCode::kInvalidArgument,
       "no '<<<<<<< SEARCH'"},
      {"missing_divider", "<<<<<<< SEARCH\n  c[0] = 1.0f;\n>>>>>>> REPLACE\n", absl::StatusCode::kInvalidArgument,
       "SEARCH block 1 has no '=======' line"},
      {"missing_replace_marker", "<<<<<<< SEARCH\n  c[0] = 1.0f;\n=======\n  c[0] = 2.0f;\n",
       absl::StatusCode::kInvalidArgument, "SEARCH block 1 has no '>>>>>>> REPLACE' line"},
      {"empty_search", "<<<<<<< SEARCH\n\n=======\nint x;\n>>>>>>> REPLACE\n", absl::StatusCode::kInvalidArgument,
       "SEARCH block 1 is empty"},
  };
  for (const DiffCase& c : cases) {
    SCOPED_TRACE(c.label);
    absl::StatusOr<std::string> child = ApplyDiffAnswer(kParent, c.answer);
    EXPECT_EQ(child.status().code(), c.code) << child.status();
    if (c.code == absl::StatusCode::kOk && child.ok()) {
      EXPECT_EQ(*child, c.expected_or_why);
    } else if (!child.ok()) {
      EXPECT_THAT(std::string(child.status().message()), HasSubstr(c.expected_or_why));
    }
  }
}

TEST(AnswerParserTest, CudaBlockTable) {
  struct Case {
    std::string label;
    std::string answer;
    bool ok;
    std::string expected_or_why;
  };
  const Case cases[] = {
      {"one_block", "Faster:\n```cuda\nint a;\nint b;\n```\nDone.", true, "int a;\nint b;\n"},
      {"cpp_tag_and_other_fences", "```text\nnotes\n```\n```cpp\nint a;\n```\n", true, "int a;\n"},
      {"none", "I could not improve it.", false, "no ```cuda block"},
      {"untagged_only", "```\nint a;\n```\n", false, "no ```cuda block"},
      {"two_blocks", "```cuda\nint a;\n```\nor\n```cuda\nint b;\n```\n", false, "2 ```cuda blocks"},
      {"unclosed", "```cuda\nint a;\n", false, "not closed"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    absl::StatusOr<std::string> source = ExtractCudaBlock(c.answer);
    ASSERT_EQ(source.ok(), c.ok) << source.status();
    if (c.ok) {
      EXPECT_EQ(*source, c.expected_or_why);
    } else {
      EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(std::string(source.status().message()), HasSubstr(c.expected_or_why));
    }
  }
}

}  // namespace
}  // namespace sparseditto::llm
