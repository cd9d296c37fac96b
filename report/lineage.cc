#include "report/lineage.h"

#include <set>
#include <utility>

namespace sparseditto::report {

std::vector<LineageEntry> Lineage(const std::map<std::string, const v1::Candidate*>& candidates, const std::string& id,
                                  size_t max_entries, bool* truncated) {
  std::vector<LineageEntry> out;
  std::set<std::string> seen;
  // An explicit stack (a long chain of tuned children is thousands deep): (depth, id), the next on top.
  std::vector<std::pair<int, std::string>> stack = {{0, id}};
  if (truncated != nullptr) *truncated = false;
  while (!stack.empty()) {
    if (out.size() == max_entries) {
      if (truncated != nullptr) *truncated = true;
      break;
    }
    auto [depth, at] = std::move(stack.back());
    stack.pop_back();
    LineageEntry entry{.depth = depth, .candidate_id = at};
    const auto found = candidates.find(at);
    entry.candidate = found == candidates.end() ? nullptr : found->second;
    entry.repeated = !seen.insert(at).second;
    if (entry.candidate != nullptr && !entry.repeated) {
      const auto& parents = entry.candidate->parent_ids();
      for (auto p = parents.rbegin(); p != parents.rend(); ++p) stack.emplace_back(depth + 1, *p);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace sparseditto::report
