// A task's identity for caching what is derived from it (matrix, smoke cases, baseline times): its
// serialized message without the fields that do not change those (budget, mutators, source file).
#pragma once

#include <string>

#include "task.pb.h"

namespace sparseditto {

std::string TaskContextKey(const v1::Task& task);

}  // namespace sparseditto
