// The lineage of a candidate: its parents (Candidate.parent_ids: one for a tuned child, two for a
// crossover, the variants of a dispatch plan) and theirs, back to the seeds, as a depth-first list for
// the report to draw as a tree. Crossovers make the lineage a graph: a candidate reached a second time
// is listed again but not expanded.
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "candidate.pb.h"

namespace sparseditto::report {

struct LineageEntry {
  int depth = 0;              // 0: the candidate asked about; its parents 1, ...
  std::string candidate_id;
  const v1::Candidate* candidate = nullptr;  // null when the id is not in `candidates` (missing parent)
  bool repeated = false;      // listed earlier; its parents are not listed again
};

// Depth-first from `id`, parents in their recorded order, at most `max_entries` entries (then
// `*truncated` is set, when given). `candidates` maps id to candidate; the pointers point into it.
std::vector<LineageEntry> Lineage(const std::map<std::string, const v1::Candidate*>& candidates, const std::string& id,
                                  size_t max_entries, bool* truncated = nullptr);

}  // namespace sparseditto::report
