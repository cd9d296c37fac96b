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

// The rows the finalist crop keeps: enough row tiles for a kernel's grid to look like the task's (several
// 128-row blocks), few enough that a wide n under racecheck finishes in seconds.
inline constexpr int64_t kTaskCropRows = 256;

// The finalist sanitizers' case that reaches the task's own tiles: the task matrix's first kTaskCropRows rows
// (a whole number of block rows for a block task; every row when the matrix has fewer), every column, the
// task's values, run at every n of the task, uncapped. A kernel picks its tile from n, K and the row lengths,
// which the crop keeps, so the sanitizers see the path each width of the task takes (a wide tile at n = 2048,
// a long-row path), which the small smoke shapes above never select. Only the sanitizers run it (the judged
// cascade already checks every n on the whole task matrix). The pattern declared is the task's (for a file
// task, unstructured at the crop's density, as for the smoke cases). Pure; thread-safe.
// Errors: FailedPrecondition for a block-diagonal task (its declared blocks span the whole matrix, so a crop
// would not have the pattern it declares); InvalidArgument when `task_matrix` has no rows or columns.
absl::StatusOr<SmokeCase> MakeTaskCropCase(const v1::Task& task, const CsrMatrix& task_matrix);

}  // namespace sparseditto
