// When a screened child is worth a full timing (the search's timing screen, SearchLoopOptions::
// screen_margin): one rule for the search loop (evaluators that only screen) and the runner (which
// goes on to the full timing in the same evaluation, EvaluateRequest.screen).
#pragma once

#include <vector>

#include "eval_result.pb.h"
#include "runner.pb.h"

namespace sparseditto {

// True when a correct screen (fitness > 0) has its fitness within bar.margin of bar.elite_fitness (or
// there is no elite yet), or at some n a median time within bar.margin of the fastest full timing
// at that n (an n with no full timing yet counts as near), so that children a plan would use at one
// n are not lost for being slow at the others. False for a failed screen (fitness 0): its verdict
// does not depend on the timing. Pure; thread-safe.
bool NearScreenBar(double fitness, const std::vector<v1::TimingStats>& timings, const v1::ScreenBar& bar);

// Raises `bar` by a result: its fitness becomes the elite fitness when higher, and its median times the elite
// times at their n when lower. Only a correct result's full timing counts (fitness > 0, not timing_screen;
// a time of 0 or less is skipped). Pure; thread-safe for distinct bars.
void NoteFullTiming(const v1::EvalResult& result, v1::ScreenBar* bar);

}  // namespace sparseditto
