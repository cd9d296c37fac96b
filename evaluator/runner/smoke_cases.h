// Stage 3 of the cascade: small edge-case problems of the task's own family (DESIGN.md §3.3) —
// ragged sizes, empty rows, one dense row, n = 1, odd n and the task's largest n (capped) — built before
// the task matrix is tried.
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

// The largest n a smoke case runs: the task's largest n, capped here. A kernel's path for large n (a wider
// tile, another kernel instance) then runs on the smoke shapes too, so the finalist stage's sanitizers see
// it; 1024 is above every seed's small/large-n switch (at most 512) and cheap at smoke sizes.
inline constexpr int64_t kSmokeMaxN = 1024;

struct SmokeCase {
  std::string name;               // e.g. "smoke/ragged_7x96"
  CsrMatrix matrix;               // values rounded to the task dtype
  v1::PatternSpec pattern;        // what the problem declares to the kernel
  std::vector<int64_t> n_values;  // {1, an odd n, the task's smallest n (at most 256), its largest (at most
                                  // kSmokeMaxN)}, each once
};

// `task_rows` x `task_cols` is the task matrix's shape. Errors: InvalidArgument if the task's
// pattern cannot be generated at any small size (the task validator should have refused it).
absl::StatusOr<std::vector<SmokeCase>> MakeSmokeCases(const v1::Task& task, int64_t task_rows, int64_t task_cols,
                                                      uint64_t seed);

}  // namespace sparseditto
