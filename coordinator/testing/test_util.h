// Small builders of candidates and results for the coordinator's tests. Test code only.
#pragma once

#include <string>
#include <vector>

#include "candidate.pb.h"
#include "eval_result.pb.h"

namespace sparseditto::testing {

// A candidate of task "t" with a source hash derived from its id and `movable` two-valued tunables.
inline v1::Candidate MakeCandidate(const std::string& id, const std::string& seed, int movable = 1,
                                   int island = 0) {
  v1::Candidate c;
  c.set_id(id);
  c.set_task_name("t");
  c.set_seed_name(seed);
  c.set_source_hash(std::string("hash-").append(id));
  c.set_island(island);
  for (int i = 0; i < movable; ++i) {
    v1::Tunable* t = c.add_tunables();
    t->set_name(std::string("T").append(std::to_string(i)));
    t->set_value("1");
    t->add_allowed_values("1");
    t->add_allowed_values("2");
  }
  return c;
}

inline v1::EvalResult MakeResult(const std::string& id, double fitness,
                                 v1::FailureCategory failure = v1::FAILURE_CATEGORY_NONE, int registers = -1) {
  v1::EvalResult r;
  r.set_candidate_id(id);
  r.set_task_name("t");
  r.set_failure(failure);
  r.set_fitness(fitness);
  if (registers >= 0) r.add_resources()->set_registers(registers);
  return r;
}

}  // namespace sparseditto::testing
