#include "coordinator/search/evaluator_group.h"

#include <thread>

#include "common/non_retryable.h"
#include "fmt/format.h"

namespace sparseditto {

absl::Status EvaluatorGroup::SetUp(const v1::Task& task) {
  if (members_.size() == 1) return members_[0]->SetUp(task);
  std::vector<absl::Status> statuses(members_.size());
  {
    std::vector<std::jthread> threads;
    for (size_t i = 0; i < members_.size(); ++i) {
      threads.emplace_back([&, i] { statuses[i] = members_[i]->SetUp(task); });
    }
  }  // joined
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (statuses[i].ok()) continue;
    return Reworded(statuses[i], fmt::format("evaluator {} of {} (set-up): {}", i + 1, members_.size(),
                                             std::string(statuses[i].message())));
  }
  return absl::OkStatus();
}

}  // namespace sparseditto
