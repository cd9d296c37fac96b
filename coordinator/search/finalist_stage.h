// The finalist stage of a task's search (DESIGN.md §3.3 step 7). Once the search has stopped, its best
// correct candidates, highest fitness first, go through the finalist checks (determinism rerun,
// compute-sanitizer memcheck, racecheck, initcheck) one at a time, until one passes or
// `max_finalists` have been tried. The search's fitness and archive do not change: the stage only
// says which candidate a user can take (`sparseditto export` prefers it) and why the others failed.
// Every attempt is stored in the task's RunState (finalist_attempts) as soon as it ends, so a search
// killed during the stage resumes it without repeating a finished attempt. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "candidate.pb.h"
#include "coordinator/map_elites.h"
#include "coordinator/search/candidate_evaluator.h"
#include "eval_result.pb.h"
#include "store.pb.h"

namespace sparseditto {

// RunState.finalist_attempts, in the order they were made.
using FinalistAttempts = google::protobuf::RepeatedPtrField<store::FinalistAttempt>;

// The archive's elites by fitness, highest first (ties by candidate id), at most `max_count`.
std::vector<std::string> FinalistOrder(const MapElitesArchive& archive, int max_count);

// The finalist checks of candidate `id`: `evaluate_finalist` on it (the caller runs the checks with the
// task's seed). An id missing from `candidates` (an elite not loaded: a harness fault, not the
// candidate's) gives an INTERNAL result saying so, and `evaluate_finalist` is not called.
v1::EvalResult EvaluateFinalistById(const std::function<v1::EvalResult(const v1::Candidate&)>& evaluate_finalist,
                                    const std::map<std::string, v1::Candidate>& candidates, const std::string& id);

// A finalist evaluation that passed: stage DONE and correct (IsCorrect, common/eval_outcome.h).
bool PassedFinalistChecks(const v1::EvalResult& result);

// The attempt that passed, or null.
const store::FinalistAttempt* PassedAttempt(const FinalistAttempts& attempts);

// Runs the stage over `order`, appending to `attempts` (which holds what earlier calls stored; the
// candidates named there are not evaluated again, and a passed one ends the stage at once).
// `evaluate_finalist` runs the checks on a candidate id; `store_attempts` is called after each new
// attempt with the list so far, and an error from it ends the stage with that error.
absl::Status RunFinalistStage(const std::vector<std::string>& order,
                              const std::function<v1::EvalResult(const std::string& id)>& evaluate_finalist,
                              const std::function<absl::Status()>& store_attempts,
                              FinalistAttempts* attempts);

// One line for people: "<id> passed the finalist checks" (then "; K before it failed (...)" when some
// did) or "none of K passed the finalist checks (<id>: <category>: <detail>; ...)"; empty when no
// attempt was made.
std::string DescribeFinalists(const FinalistAttempts& attempts);

}  // namespace sparseditto
