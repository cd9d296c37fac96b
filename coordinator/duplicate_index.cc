#include "coordinator/duplicate_index.h"

#include "fmt/format.h"

namespace sparseditto {

std::optional<std::string> DuplicateIndex::Find(const std::string& hash) const {
  auto it = entries_.find(hash);
  if (it == entries_.end()) return std::nullopt;
  return it->second.candidate_id();
}

std::optional<std::string> DuplicateIndex::FindOrAdd(const std::string& hash, const std::string& candidate_id) {
  auto [it, inserted] = entries_.try_emplace(hash);
  if (inserted) {
    it->second.set_source_hash(hash);
    it->second.set_candidate_id(candidate_id);
    return std::nullopt;
  }
  if (it->second.candidate_id() == candidate_id) return std::nullopt;
  return it->second.candidate_id();
}

absl::Status DuplicateIndex::MarkEvaluated(const std::string& hash, const std::string& candidate_id) {
  auto it = entries_.find(hash);
  if (it == entries_.end()) {
    return absl::FailedPreconditionError(
        fmt::format("candidate '{}': source hash {} was never registered", candidate_id, hash));
  }
  if (it->second.candidate_id() != candidate_id) {
    return absl::FailedPreconditionError(fmt::format(
        "candidate '{}' duplicates '{}' (same normalised source); reuse that result", candidate_id,
        it->second.candidate_id()));
  }
  if (it->second.evaluated()) {
    return absl::FailedPreconditionError(fmt::format("candidate '{}' was already evaluated", candidate_id));
  }
  it->second.set_evaluated(true);
  return absl::OkStatus();
}

void DuplicateIndex::SaveTo(coordinator::SearchState* state) const {
  state->clear_hashes();
  for (const auto& [hash, entry] : entries_) *state->add_hashes() = entry;
}

absl::Status DuplicateIndex::LoadFrom(const coordinator::SearchState& state) {
  std::map<std::string, coordinator::SourceHashEntry> entries;
  for (const auto& entry : state.hashes()) {
    if (entry.source_hash().empty()) return absl::InvalidArgumentError("state holds an empty source hash");
    if (!entries.emplace(entry.source_hash(), entry).second) {
      return absl::InvalidArgumentError(fmt::format("source hash {} appears twice", entry.source_hash()));
    }
  }
  entries_ = std::move(entries);
  return absl::OkStatus();
}

}  // namespace sparseditto
