// Duplicate detection by normalised source hash (Candidate.source_hash,
// mutators/builtin/source_hash.h): the first candidate with a hash owns it; a later proposal with the
// same hash is a duplicate, and the caller reuses the owner's stored result instead of evaluating it.
// The index also remembers which owners have been evaluated, so a result is never reported twice.
// Thread-safety: none; owned by the coordinator.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "coordinator.pb.h"

namespace sparseditto {

class DuplicateIndex {
 public:
  // The owner of `hash`, if any.
  std::optional<std::string> Find(const std::string& hash) const;
  // Registers `candidate_id` as the owner of `hash` unless it has one; returns the earlier owner.
  // Registering an owner again with its own hash is not a duplicate (returns nullopt).
  std::optional<std::string> FindOrAdd(const std::string& hash, const std::string& candidate_id);
  // Marks the owner evaluated. FailedPrecondition when the hash is unknown, owned by another candidate
  // (a duplicate must not be evaluated) or already evaluated.
  absl::Status MarkEvaluated(const std::string& hash, const std::string& candidate_id);
  size_t size() const { return entries_.size(); }

  void SaveTo(coordinator::SearchState* state) const;
  // InvalidArgument on an empty or repeated hash.
  absl::Status LoadFrom(const coordinator::SearchState& state);

 private:
  std::map<std::string, coordinator::SourceHashEntry> entries_;  // by hash
};

}  // namespace sparseditto
