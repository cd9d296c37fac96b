#include "coordinator/search/mutator.h"

#include <algorithm>

namespace sparseditto {

absl::StatusOr<MutatorSet> MutatorSet::Create(Mutator* fallback, std::vector<Mutator*> others) {
  if (fallback == nullptr) return absl::InvalidArgumentError("a mutator set needs a fallback mutator");
  if (std::any_of(others.begin(), others.end(), [](const Mutator* m) { return m == nullptr; })) {
    return absl::InvalidArgumentError("a mutator set's mutators must not be null");
  }
  MutatorSet set(fallback, std::move(others));
  const std::vector<Mutator*> all = set.All();
  if (std::count_if(all.begin(), all.end(), [](const Mutator* m) { return m->KeepsState(); }) > 1) {
    return absl::InvalidArgumentError("more than one mutator keeps state; a run stores one mutator state");
  }
  return set;
}

std::vector<Mutator*> MutatorSet::All() const {
  std::vector<Mutator*> all = others_;
  all.push_back(fallback_);
  return all;
}

Mutator& MutatorSet::For(v1::MutatorKind kind) const {
  for (Mutator* m : others_) {
    if (m->Serves(kind) && m->Available()) return *m;
  }
  return *fallback_;
}

Mutator* MutatorSet::MakerOf(const v1::Candidate& candidate) const {
  for (Mutator* m : All()) {
    if (m->Made(candidate)) return m;
  }
  return nullptr;
}

bool MutatorSet::Replayable() const {
  const std::vector<Mutator*> all = All();
  return std::all_of(all.begin(), all.end(), [](const Mutator* m) { return m->Replayable(); });
}

std::string MutatorSet::SaveState() const {
  for (const Mutator* m : All()) {
    if (m->KeepsState()) return m->SaveState();
  }
  return "";
}

absl::Status MutatorSet::RestoreState(const std::string& state) const {
  if (state.empty()) return absl::OkStatus();
  for (Mutator* m : All()) {
    if (m->KeepsState()) return m->RestoreState(state);
  }
  return absl::OkStatus();
}

}  // namespace sparseditto
