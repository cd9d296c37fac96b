// The tunable space of a source: every assignment of its declared tunables to allowed values (the
// cartesian product), each point a source (ApplyTunables) with its normalised hash (source_hash.h), the
// key of the coordinator's duplicate index. The built-in mutator uses it to never propose a point the
// search already knows while an unseen one remains, and to say when a space is exhausted.
//
// NearestUnseenPoint walks the points by Hamming distance from the origin (the parent's values): all
// points at distance 1, then 2, ...; at the first distance that holds unseen points it picks one of
// them uniformly with the Rng. It probes at most `max_probes` points (each costs a substitution and a
// hash); a space of at most that many points is walked whole, so "exhausted" is exact.
// Errors: ResourceExhausted when every point of the space is known (the message names the count);
// FailedPrecondition when max_probes points were probed without finding an unseen one in a larger
// space (not proof of exhaustion); InvalidArgument from the declarations.
// Determinism: the walk's order is fixed (tunables in source order, values in declaration order); the
// only draw is one Rng::Below among the unseen points of the nearest distance.
// Thread-safety: pure functions; `known` is called on the caller's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "candidate.pb.h"
#include "common/rng.h"
#include "kernel_abi/tunable_values.h"

namespace sparseditto {

// Answers whether a normalised source hash is already known to the search (proposed before).
using KnownSourcePredicate = std::function<bool(const std::string& source_hash)>;

// The number of points: the product of the allowed-value counts, saturated at INT64_MAX.
int64_t TunableSpaceSize(const std::vector<v1::Tunable>& tunables);

// A key equal for every point of one space and different for spaces of different code: the hash of
// the source with every tunable set to its first allowed value. InvalidArgument from the declarations.
absl::StatusOr<std::string> TunableSpaceKey(std::string_view source, const DeviceFacts& device = {});

inline constexpr int64_t kDefaultMaxProbes = 4096;

// The changes (tunable name -> value, only those that differ from the origin) of an unseen point.
absl::StatusOr<std::map<std::string, std::string>> NearestUnseenPoint(std::string_view source,
                                                                      const DeviceFacts& device,
                                                                      const KnownSourcePredicate& known, Rng& rng,
                                                                      int64_t max_probes = kDefaultMaxProbes);

}  // namespace sparseditto
