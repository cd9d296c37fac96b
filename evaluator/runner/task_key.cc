#include "evaluator/runner/task_key.h"

namespace sparseditto {

std::string TaskContextKey(const v1::Task& task) {
  v1::Task key = task;
  key.clear_budget();
  key.clear_mutators();
  key.clear_source_file();
  key.clear_source_line();
  std::string bytes;
  key.SerializeToString(&bytes);
  return bytes;
}

}  // namespace sparseditto
