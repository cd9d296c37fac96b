// Stage 3 of the cascade: small edge-case problems of the task's own family (DESIGN.md §3.3) —
// ragged sizes, empty rows, one dense row, n = 1 and odd n — built before the task matrix is tried.
// Shapes keep the divisibility the task's matrix has (a block task whose M is a multiple of the
// block height gets smoke shapes that are too), so a kernel is held only to what the task promises.
// Pure and deterministic in `seed`; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "matrix/csr_matrix.h"
#include "task.pb.h"

namespace sparseditto {

struct SmokeCase {
  std::string name;               // e.g. "smoke/ragged_7x96"
  CsrMatrix matrix;               // values rounded to the task dtype
  v1::PatternSpec pattern;        // what the problem declares to the kernel
  std::vector<int64_t> n_values;  // {1, an odd n, the task's smallest n}
};

// `task_rows` x `task_cols` is the task matrix's shape. Errors: InvalidArgument if the task's
// pattern cannot be generated at any small size (the task validator should have refused it).
absl::StatusOr<std::vector<SmokeCase>> MakeSmokeCases(const v1::Task& task, int64_t task_rows, int64_t task_cols,
                                                      uint64_t seed);

}  // namespace sparseditto
