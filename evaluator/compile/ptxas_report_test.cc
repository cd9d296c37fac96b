#include "evaluator/compile/ptxas_report.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

// Captured from nvcc 13.0 -Xptxas -v on kernels/reference/csr_reference.cu (one arch shown), with a
// non-entry function's properties and an smem line added as ptxas prints them.
constexpr char kCapturedLog[] =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Function properties for _Z9NoInlineHelperf\n"
    "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
    "ptxas info    : Compiling entry function "
    "'_ZN49_GLOBAL__N__f6d23aec_16_csr_reference_cu_2ecec07118CsrSpmmElementwiseIfEEvllPKiS2_PKT_S5_PS3_' for "
    "'sm_80'\n"
    "ptxas info    : Function properties for "
    "_ZN49_GLOBAL__N__f6d23aec_16_csr_reference_cu_2ecec07118CsrSpmmElementwiseIfEEvllPKiS2_PKT_S5_PS3_\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 32 registers, used 0 barriers, 408 bytes cmem[0], 8 bytes cmem[2]\n"
    "ptxas info    : Compile time = 42.673 ms\n"
    "ptxas info    : Compiling entry function '_Z4TileILi64EEvPf' for 'sm_90a'\n"
    "ptxas info    : Function properties for _Z4TileILi64EEvPf\n"
    "    96 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads\n"
    "ptxas info    : Used 255 registers, used 1 barriers, 16384 bytes smem\n"
    "ptxas info    : Compiling entry function 'spmm_c_kernel' for 'sm_90'\n"
    "ptxas info    : Used 12 registers, 360 bytes cmem[0]\n";

struct ExpectedRecord {
  std::string arch;
  std::string kernel_name;
  int registers, shared_bytes, stack_bytes, spill_bytes;
};

TEST(ParsePtxasResources, ReadsEveryEntryOfTheCapturedLog) {
  const std::vector<v1::KernelResources> records = ParsePtxasResources(kCapturedLog);
  const std::vector<ExpectedRecord> expected = {
      {"sm_80", "(anonymous namespace)::CsrSpmmElementwise<float>", 32, 0, 0, 0},
      {"sm_90a", "Tile<64>", 255, 16384, 96, 40},
      {"sm_90", "spmm_c_kernel", 12, 0, 0, 0},
  };
  ASSERT_EQ(records.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].kernel_name);
    EXPECT_EQ(records[i].arch(), expected[i].arch);
    EXPECT_EQ(records[i].kernel_name(), expected[i].kernel_name);
    EXPECT_EQ(records[i].registers(), expected[i].registers);
    EXPECT_EQ(records[i].shared_bytes(), expected[i].shared_bytes);
    EXPECT_EQ(records[i].stack_bytes(), expected[i].stack_bytes);
    EXPECT_EQ(records[i].spill_bytes(), expected[i].spill_bytes);
  }
}

TEST(ParsePtxasResources, IgnoresLogsWithoutEntries) {
  EXPECT_TRUE(ParsePtxasResources("").empty());
  EXPECT_TRUE(ParsePtxasResources("candidate.cu(3): error: expected a \";\"\n1 error detected\n").empty());
  EXPECT_TRUE(ParsePtxasResources("ptxas info    : Used 10 registers\n").empty());  // no entry line before
}

TEST(TrimLog, KeepsHeadAndTailAndSaysWhatWasCut) {
  EXPECT_EQ(TrimLog("short", 100), "short");
  const std::string log = std::string(1000, 'h') + std::string(1000, 'm') + std::string(1000, 't');
  const std::string trimmed = TrimLog(log, 400);
  EXPECT_TRUE(trimmed.starts_with(std::string(300, 'h')));
  EXPECT_TRUE(trimmed.ends_with(std::string(100, 't')));
  EXPECT_THAT(trimmed, ::testing::HasSubstr("[... 2600 bytes of log cut ...]"));
}

}  // namespace
}  // namespace sparseditto
