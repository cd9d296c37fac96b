#include "mutators/builtin/tunable_space.h"

#include <algorithm>
#include <limits>

#include "fmt/format.h"
#include "kernel_abi/tunables.h"
#include "mutators/builtin/source_hash.h"

namespace sparseditto {
namespace {

struct Walk {
  std::string_view source;
  const DeviceFacts& device;
  const KnownSourcePredicate& known;
  const std::vector<v1::Tunable>& tunables;
  std::vector<int> origin;  // index of each tunable's current value
  int64_t probes_left;
  int64_t probed = 0;
  std::vector<std::map<std::string, std::string>> unseen;  // at the current distance
  absl::Status error;

  // Every point that differs from the origin in exactly the tunables `chosen` (in order), each moved
  // to another allowed value; stops when the probes run out.
  void Points(const std::vector<int>& chosen, size_t i, std::map<std::string, std::string>* changes) {
    if (!error.ok() || probes_left <= 0) return;
    if (i == chosen.size()) {
      --probes_left;
      ++probed;
      absl::StatusOr<std::string> s = ApplyTunables(source, *changes, device);
      if (!s.ok()) {
        error = s.status();
        return;
      }
      if (!known || !known(SourceHash(*s))) unseen.push_back(*changes);
      return;
    }
    const v1::Tunable& t = tunables[chosen[i]];
    for (int v = 0; v < t.allowed_values_size(); ++v) {
      if (v == origin[chosen[i]]) continue;
      (*changes)[t.name()] = t.allowed_values(v);
      Points(chosen, i + 1, changes);
      changes->erase(t.name());
    }
  }

  // Every subset of `d` movable tunables, in lexicographic order.
  void Subsets(const std::vector<int>& movable, int d, size_t from, std::vector<int>* chosen) {
    if (!error.ok() || probes_left <= 0) return;
    if (static_cast<int>(chosen->size()) == d) {
      std::map<std::string, std::string> changes;
      Points(*chosen, 0, &changes);
      return;
    }
    for (size_t k = from; k < movable.size(); ++k) {
      chosen->push_back(movable[k]);
      Subsets(movable, d, k + 1, chosen);
      chosen->pop_back();
    }
  }
};

}  // namespace

int64_t TunableSpaceSize(const std::vector<v1::Tunable>& tunables) {
  int64_t size = 1;
  for (const v1::Tunable& t : tunables) {
    const int64_t n = std::max(t.allowed_values_size(), 1);
    if (size > std::numeric_limits<int64_t>::max() / n) return std::numeric_limits<int64_t>::max();
    size *= n;
  }
  return size;
}

absl::StatusOr<std::string> TunableSpaceKey(std::string_view source, const DeviceFacts& device) {
  absl::StatusOr<std::vector<v1::Tunable>> tunables = ParseTunables(source, device);
  if (!tunables.ok()) return tunables.status();
  std::map<std::string, std::string> first;
  for (const v1::Tunable& t : *tunables) first[t.name()] = t.allowed_values(0);
  absl::StatusOr<std::string> s = ApplyTunables(source, first, device);
  if (!s.ok()) return s.status();
  return SourceHash(*s);
}

absl::StatusOr<std::map<std::string, std::string>> NearestUnseenPoint(std::string_view source,
                                                                      const DeviceFacts& device,
                                                                      const KnownSourcePredicate& known, Rng& rng,
                                                                      int64_t max_probes) {
  absl::StatusOr<std::vector<v1::Tunable>> tunables = ParseTunables(source, device);
  if (!tunables.ok()) return tunables.status();
  Walk walk{.source = source, .device = device, .known = known, .tunables = *tunables, .origin = {},
            .probes_left = max_probes, .probed = 0, .unseen = {}, .error = absl::OkStatus()};
  std::vector<int> movable;
  for (size_t i = 0; i < tunables->size(); ++i) {
    const v1::Tunable& t = (*tunables)[i];
    const auto& allowed = t.allowed_values();
    walk.origin.push_back(static_cast<int>(std::find(allowed.begin(), allowed.end(), t.value()) - allowed.begin()));
    if (t.allowed_values_size() >= 2) movable.push_back(static_cast<int>(i));
  }
  const int64_t size = TunableSpaceSize(*tunables);
  for (int d = 1; d <= static_cast<int>(movable.size()); ++d) {
    std::vector<int> chosen;
    walk.Subsets(movable, d, 0, &chosen);
    if (!walk.error.ok()) return walk.error;
    if (!walk.unseen.empty()) return walk.unseen[rng.Below(walk.unseen.size())];
    if (walk.probes_left <= 0) break;
  }
  // The origin itself is the parent, known by construction; every other point was probed when the
  // walk covered the space.
  if (walk.probed + 1 >= size) {
    return absl::ResourceExhaustedError(
        fmt::format("every one of the {} points of its tunable space was proposed", size));
  }
  return absl::FailedPreconditionError(fmt::format(
      "no unseen point among the {} probed nearest of its {} points", walk.probed, size));
}

}  // namespace sparseditto
