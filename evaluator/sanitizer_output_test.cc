#include "evaluator/sanitizer_output.h"

#include "gtest/gtest.h"

namespace sparseditto {
namespace {

// What racecheck (compute-sanitizer 2025.3.1) printed on an H100 for dense_cublas on the wide finalist task, the
// candidate host's own lines between (cut to the first two reports).
constexpr char kCublasOnly[] = R"(========= COMPUTE-SANITIZER
========= Error: Race reported between Read access at nvjet_sm90_hsh_32x64_64x16_1x4_h_bz_splitK_NNN+0xb20
=========     and Write access at nvjet_sm90_hsh_32x64_64x16_1x4_h_bz_splitK_NNN+0x2f70 [128 hazards]
========= 
========= Error: Race reported between Read access at nvjet_sm90_hsh_64x64_64x13_2x1_v_bz_NNT+0xab0
=========     and Write access at nvjet_sm90_hsh_64x64_64x13_2x1_v_bz_NNT+0x2cd0 [512 hazards]
========= 
sparseditto-candidate-host --sanitize: ran crop/first_256_rows_256x11008 (1409024 nonzeros) at n = 16, 128, 2048
========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)
)";

// A candidate's own race (nm24_wgmma_sp's old elected arrive), as the tool names its functions.
constexpr char kCandidateRace[] = R"(========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at <unnamed>::BulkCopy(unsigned int, const void *, unsigned int, unsigned int)+0x1ce0 in candidate.cu:240
=========     and Read access at void <unnamed>::ComputeStage<__half, <unnamed>::Tile<(int)64, (int)6>, (bool)0>(unsigned int, const unsigned char *, int, float (&)[T2::kBn/(int)2])+0x860 in candidate.cu:354 [31744 hazards]
========= 
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
)";

// The stream seeds' old push: another kind of finding, with its backtrace.
constexpr char kExitedBlock[] = R"(========= COMPUTE-SANITIZER
========= Potential invalid __shared__ write of size 16 bytes
=========     at <unnamed>::StoreRemote4(unsigned int, const float (&)[4])+0x32b0 in candidate.cu:124
=========     by thread (109,0,0) in block (0,0,0)
=========     Address 0x1000e20 is located in a block that might have already exited
========= 
========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)
)";

// racecheck with cuBLAS's kernels left out (--kernel-name-exclude kns=nvjet_) on the same task.
constexpr char kInternalError[] = R"(========= COMPUTE-SANITIZER
========= Internal Sanitizer Error: The Sanitizer failed to handle a hardware exception.
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
)";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(RaceHazardsOnlyInLibraryKernelsTest, OnlyReportsWhollyInsideLibraryKernelsAllDisplayedCount) {
  const std::vector<std::string> nvjet = {"nvjet_"};
  struct Case { const char* name; std::string output; std::vector<std::string> prefixes; int reports; };
  const Case cases[] = {
      {"cuBLAS's kernels only", kCublasOnly, nvjet, 2},
      {"CRLF line ends", Replace(Replace(kCublasOnly, "\n", "\r\n"), "NNN+0x2f70 [128 hazards]\n", "NNN+0x2f70 [128 hazards]\r\n"),
       nvjet, 2},
      {"warnings count too", Replace(Replace(kCublasOnly, "Error: Race reported between Read access at nvjet_sm90_hsh_64x64",
                                             "Warning: Race reported between Read access at nvjet_sm90_hsh_64x64"),
                                     "(2 errors, 0 warnings)", "(1 error, 1 warning)"),
       nvjet, 2},
      {"another library prefix", kCublasOnly, {"sm90_xmma", "nvjet_sm90"}, 2},
      {"no prefix given", kCublasOnly, {}, -1},
      {"a prefix that does not match", kCublasOnly, {"cutlass"}, -1},
      {"an empty prefix matches nothing", kCublasOnly, {""}, -1},
      {"a candidate's race", kCandidateRace, nvjet, -1},
      {"a library kernel racing a candidate's function",
       Replace(kCublasOnly, "and Write access at nvjet_sm90_hsh_32x64_64x16_1x4_h_bz_splitK_NNN+0x2f70",
               "and Write access at candidate_kernel+0x2f70"),
       nvjet, -1},
      {"a candidate's kernel named like the library's, with its source line",
       Replace(kCublasOnly, "NNN+0xb20", "NNN+0xb20 in candidate.cu:12"), nvjet, -1},
      {"more hazards counted than displayed (--print-limit)",
       Replace(kCublasOnly, "(2 errors, 0 warnings)", "(171 errors, 0 warnings)"), nvjet, -1},
      {"a summary that disagrees with the reports", Replace(kCublasOnly, "2 hazards displayed (2 errors", "3 hazards displayed (3 errors"),
       nvjet, -1},
      {"no summary (the tool stopped)", Replace(kCublasOnly, "========= RACECHECK SUMMARY", "RACECHECK"), nvjet, -1},
      {"a report without its second access", Replace(kCublasOnly, "=========     and Write access at nvjet_sm90_hsh_64x64_64x13_2x1_v_bz_NNT+0x2cd0 [512 hazards]\n", ""),
       nvjet, -1},
      {"another kind of finding", kExitedBlock, nvjet, -1},
      {"an internal error", kInternalError, nvjet, -1},
      {"no hazard at all", "========= COMPUTE-SANITIZER\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n",
       nvjet, -1},
      {"two summaries", std::string(kCublasOnly) + "========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)\n",
       nvjet, -1},
      {"empty output", "", nvjet, -1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto found = RaceHazardsOnlyInLibraryKernels(c.output, c.prefixes);
    if (c.reports < 0) {
      EXPECT_FALSE(found.has_value());
      continue;
    }
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->reports, c.reports);
    EXPECT_EQ(found->kernels, (std::vector<std::string>{"nvjet_sm90_hsh_32x64_64x16_1x4_h_bz_splitK_NNN",
                                                        "nvjet_sm90_hsh_64x64_64x13_2x1_v_bz_NNT"}));
  }
}

}  // namespace
}  // namespace sparseditto
