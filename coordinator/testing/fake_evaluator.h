// A deterministic FAKE evaluator, for the coordinator's tests only (the one place a fake evaluator
// is allowed; the real one is evaluator/). Fitness is a pure function of the tunable values declared in
// the candidate's source: for a seed with an optimum,
//     fitness = peak * exp(-sum_t d_t^2 / (2 width^2)),  d_t = (index of value - index of best) / (count - 1)
// over the seed's declared tunables (a smooth landscape with one known maximum, `peak`, at the optimum);
// a seed without tunables scores its peak. Results below `slower_below` are SLOWER (correct, still in
// the archive). A candidate matching every (tunable, value) pair of a failure rule fails with its
// category and fitness 0. Register use (for the archive's resource dimension) is 24 + 8 x the sum of the
// value indices. Every call is counted by source hash, so a test can prove none was evaluated twice.
// Per-n times (when the landscape lists n_values): the baseline takes 1 ms at every n, a candidate's
// speed at n (baseline / its time) is the fitness above times speed_at_n[seed][n] (1 where absent), and
// its fitness is then the geomean of those speeds (SpeedupFitness, common/fitness.h), as the judge's.
// A dispatch plan (mutators/plan/plan_composer.h) is scored as the plan it is: each variant's body
// scored as a candidate of the variant's seed, the plan's time at n that of the variant serving n (the
// first variant's failure, if one fails, is the plan's), its registers the most of any variant's.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "candidate.pb.h"
#include "eval_result.pb.h"

namespace sparseditto::testing {

struct FakeFailureRule {
  std::map<std::string, std::string> when;  // tunable -> value; all must match
  v1::FailureCategory category = v1::FAILURE_CATEGORY_COMPILE;
};

struct FakeLandscape {
  std::map<std::string, std::map<std::string, std::string>> optimum;  // seed -> tunable -> best value
  std::map<std::string, double> peak;                                   // seed -> fitness at its optimum
  double width = 0.3;
  double slower_below = 1.0;
  std::vector<FakeFailureRule> failures;
  // Seeds whose candidates fail the finalist checks (a racecheck error) though their scoring passed.
  std::set<std::string> finalist_failing_seeds;
  std::vector<int64_t> n_values;                                      // empty: no per-n times
  std::map<std::string, std::map<int64_t, double>> speed_at_n;        // seed -> n -> speed factor
};

class FakeEvaluator {
 public:
  explicit FakeEvaluator(FakeLandscape landscape) : landscape_(std::move(landscape)) {}

  // Counts the call; the result names the candidate and its task.
  v1::EvalResult Evaluate(const v1::Candidate& candidate);
  // The same result without counting.
  v1::EvalResult Score(const v1::Candidate& candidate) const;
  // Score of a plan (see above); an INTERNAL result for a damaged plan or a landscape without n_values.
  v1::EvalResult ScorePlan(const v1::Candidate& plan) const;
  // Score plus the finalist checks, not counted: CRASH at FINALIST for a seed of
  // finalist_failing_seeds, else the sanitizer lines in run_log.
  v1::EvalResult ScoreFinalist(const v1::Candidate& candidate) const;

  // The largest peak: the fitness a search should find.
  double BestPossible() const;
  int64_t calls() const { return calls_; }
  const std::map<std::string, int>& calls_by_hash() const { return calls_by_hash_; }

 private:
  FakeLandscape landscape_;
  int64_t calls_ = 0;
  std::map<std::string, int> calls_by_hash_;
};

}  // namespace sparseditto::testing
