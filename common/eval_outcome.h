// What a result's failure category says about correctness: NONE and SLOWER are correct kernels (SLOWER
// only lost to a baseline); every other category is a failure. The one place this rule is written.
#pragma once

#include "eval_result.pb.h"

namespace sparseditto {

inline bool IsCorrect(const v1::EvalResult& result) {
  return result.failure() == v1::FAILURE_CATEGORY_NONE || result.failure() == v1::FAILURE_CATEGORY_SLOWER;
}

}  // namespace sparseditto
