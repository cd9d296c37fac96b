// A MAP-Elites archive: the best correct candidate of every cell of a feature grid.
//
// A cell is the tuple of a candidate's buckets along the configured feature dimensions, written as
// "name=bucket|name=bucket" (e.g. "seed=csr_warp_per_row|registers=<=64"). The default grid is
// strategy family (the seed the candidate descends from) x register use (the most registers of any
// kernel in EvalResult.resources, in buckets). Other dimensions: a declared tunable's value, shared
// memory or spill bytes.
//
// What counts as correct (IsCorrectResult): failure NONE or SLOWER (correct but slower than the best
// baseline: early in a search every kernel may be), a finite fitness > 0, and not flagged_implausible
// (a speedup beyond the physical limit is flagged, not celebrated). Anything else is not inserted.
// A newcomer replaces a cell's elite only with a strictly higher fitness (ties keep the incumbent), and
// the global best likewise, so the outcome depends only on the order of insertions.
//
// Thread-safety: none; the coordinator owns one archive per task and calls it from one thread.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "coordinator.pb.h"
#include "eval_result.pb.h"

namespace sparseditto {

struct FeatureDimension {
  enum class Kind { kSeedName, kTunable, kRegisters, kSharedBytes, kSpillBytes };
  Kind kind = Kind::kSeedName;
  std::string tunable;         // kTunable: the tunable's name
  std::vector<int64_t> edges;  // resource kinds: ascending upper bounds of the buckets ("<=64");
                               // values above the last fall in ">last"; no resources at all: "?"

  // The spec ParseFeatureDimension reads back: "seed", "tunable:UNROLL", "registers:32,64,128",
  // "shared_bytes:16384,49152", "spill_bytes:0".
  std::string Spec() const;
  // The dimension's name in cell keys: "seed", "UNROLL", "registers", "shared_bytes", "spill_bytes".
  std::string Name() const;
  // The bucket of a candidate. kTunable reads Candidate.tunables ("-" when it does not declare it).
  std::string Bucket(const v1::Candidate& candidate, const v1::EvalResult& result) const;
};

// InvalidArgument naming the spec when it is not one of FeatureDimension::Spec()'s forms, or the edges
// are not ascending integers.
absl::StatusOr<FeatureDimension> ParseFeatureDimension(std::string_view spec);

// seed x registers:32,64,96,128,168,255.
std::vector<FeatureDimension> DefaultFeatureDimensions();

bool IsCorrectResult(const v1::EvalResult& result);

// Tunables with two or more allowed values: what the built-in mutator can change.
int32_t MovableTunables(const v1::Candidate& candidate);

struct InsertOutcome {
  bool accepted = false;       // the result is correct (IsCorrectResult)
  std::string cell;            // the candidate's cell (set even when not accepted)
  bool new_cell = false;       // the cell was empty
  bool improved_cell = false;  // the candidate is now the cell's elite (true for a new cell)
  bool improved_best = false;  // the candidate is the new global best
  std::string replaced_id;     // the elite it replaced, if any
};

class MapElitesArchive {
 public:
  // `dimensions` may be empty (one cell: a plain elitist archive).
  explicit MapElitesArchive(std::vector<FeatureDimension> dimensions);

  std::string CellOf(const v1::Candidate& candidate, const v1::EvalResult& result) const;
  InsertOutcome Insert(const v1::Candidate& candidate, const v1::EvalResult& result);
  // Sets movable_tunables to 0 for these candidates' elites (their tunable space is exhausted).
  void MarkImmovable(const std::set<std::string>& candidate_ids);

  const std::map<std::string, coordinator::Elite>& cells() const { return cells_; }
  // Null while the archive is empty. Points into cells(); valid until the next Insert or LoadFrom.
  const coordinator::Elite* best() const;
  const std::vector<FeatureDimension>& dimensions() const { return dimensions_; }

  // Writes archive, best_candidate_id and best_fitness of `state`.
  void SaveTo(coordinator::SearchState* state) const;
  // Replaces the contents from `state`. InvalidArgument when an elite's cell key is duplicated or does
  // not name this archive's dimensions, or the best is not an elite.
  absl::Status LoadFrom(const coordinator::SearchState& state);

 private:
  std::vector<FeatureDimension> dimensions_;
  std::map<std::string, coordinator::Elite> cells_;
  std::string best_cell_;  // the best elite's cell; not in cells_ while the archive is empty
};

}  // namespace sparseditto
