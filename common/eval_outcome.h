// What a result's failure category says about correctness: NONE and SLOWER are correct kernels (SLOWER
// only lost to a baseline); every other category is a failure. The one place this rule is written.
#pragma once

#include <string>
#include <vector>

#include "common/untrusted_text.h"
#include "eval_result.pb.h"

namespace sparseditto {

inline bool IsCorrect(const v1::EvalResult& result) {
  return result.failure() == v1::FAILURE_CATEGORY_NONE || result.failure() == v1::FAILURE_CATEGORY_SLOWER;
}

// The finalist sanitizer verdicts of a result, one line each, in order ("[compute-sanitizer memcheck: exited with
// code 0]"); empty when the finalist checks did not run. From sanitizer_verdicts where the evaluator recorded them;
// from the run log in results stored before that (where a line the candidate printed could pass for one).
inline std::vector<std::string> SanitizerVerdicts(const v1::EvalResult& result) {
  UntrustedTextOptions clean;  // read back from stores that may predate the evaluator's cleaning: cleaned again
  clean.max_bytes = 512;
  std::vector<std::string> lines;
  if (result.sanitizer_verdicts_recorded()) {
    for (const std::string& verdict : result.sanitizer_verdicts()) lines.push_back(CleanUntrustedText(verdict, clean));
    return lines;
  }
  const std::string& run_log = result.run_log();
  for (size_t at = run_log.find("[compute-sanitizer"); at != std::string::npos;
       at = run_log.find("[compute-sanitizer", at + 1)) {
    lines.push_back(CleanUntrustedText(run_log.substr(at, run_log.find('\n', at) - at), clean));
  }
  return lines;
}

}  // namespace sparseditto
