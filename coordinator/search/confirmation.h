// The confirmation stage (issue 24 item 3): once a task's search has stopped, what it found (its best
// candidate, a dispatch plan when that is best) and the best seed are timed again, together with the
// baselines, in rounds. Each round first re-times the baselines (CandidateEvaluator::RetimeBaselines:
// the GPU evaluator times them in a fresh process, bypassing every cache), then evaluates each subject
// once, in an order rotated by the round, so that drift of the GPU (clocks, temperature, a neighbour)
// falls on every subject alike. A selection's fitness was measured once, on the baselines of the
// search's start, and the best of many noisy measurements is biased upwards; the confirmed figures are
// what a user should read: the median over rounds, with the lowest and highest round, and per round
// the ratio of the result's fitness to the best seed's (both on that round's baselines).
// Not thread-safe: one thread drives the evaluator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "coordinator/search/candidate_evaluator.h"
#include "population_store/population_store.h"
#include "task.pb.h"

namespace sparseditto {

struct ConfirmationOptions {
  // Rounds of (baselines, every subject). 3 gives a median and a range; each round costs one evaluation
  // of every subject plus the baselines (seconds each on a GPU).
  int rounds = 3;
};

struct ConfirmationSubject {
  std::string role;  // "result" (what the search found), "best seed"
  v1::Candidate candidate;
};

struct ConfirmedCandidate {
  std::string role;
  std::string candidate_id;
  int rounds_correct = 0;     // rounds whose evaluation was correct (CORRECT or SLOWER)
  double fitness_median = 0;  // over the correct rounds; 0 when none
  double fitness_low = 0;
  double fitness_high = 0;
  std::string failure;        // the first failed round's category and detail; empty when none failed
  bool shared_gpu = false;    // some round's times were taken while other work shared the GPU
};

struct Confirmation {
  int rounds = 0;
  std::vector<ConfirmedCandidate> subjects;  // in the order given
  // The first subject's fitness over the second's, per round where both were correct.
  int ratio_rounds = 0;
  double ratio_median = 0;
  double ratio_low = 0;
  double ratio_high = 0;
};

// The subjects of a finished search of `task_name` in `run_id`: the search's best correct candidate
// ("result") and the fittest correct seed ("best seed"), from the stored evaluations. One subject when
// the best is a seed; none when nothing is correct. Errors: the store's.
absl::StatusOr<std::vector<ConfirmationSubject>> ConfirmationSubjects(const PopulationStore& store,
                                                                      const std::string& run_id,
                                                                      const std::string& task_name);

// Runs the rounds. The evaluator must be set up for `task` (SetUp). Round r evaluates the subjects
// starting at index r mod size, with check seed `seed` + r. Errors: InvalidArgument for no subject or
// rounds < 1; a RetimeBaselines error ends the stage with it.
absl::StatusOr<Confirmation> ConfirmSubjects(CandidateEvaluator& evaluator, const v1::Task& task,
                                             const std::vector<ConfirmationSubject>& subjects,
                                             const ConfirmationOptions& options, uint64_t seed);

// For people, one line per subject and one for the ratio: "confirmed over 3 rounds (baselines
// re-timed each round): result <id> fitness 0.950 [0.941, 0.957]; ..." with the shared-GPU and
// failure notes.
std::string DescribeConfirmation(const Confirmation& confirmation);

// The numbers of a confirmation as one JSON document (kept as <run>/<task>.confirmation.json beside the
// words, so that `status --json` and the report give the median and range as numbers):
//   {"rounds", "subjects": [{"role", "candidate_id", "rounds_correct", "fitness_median", "fitness_low",
//    "fitness_high", "failure", "shared_gpu"}], "ratio": {"rounds", "median", "low", "high"}}
std::string ConfirmationToJson(const Confirmation& confirmation);
// The inverse. InvalidArgument naming the field when `text` is not such a document (a file written by
// another version or by hand). Thread-safe.
absl::StatusOr<Confirmation> ConfirmationFromJson(const std::string& text);

}  // namespace sparseditto
