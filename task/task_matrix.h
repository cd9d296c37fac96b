// The matrix a task names, materialised as the canonical host CSR: generated from the pattern and
// seed, or read from a file (values from the file, or from the seed where it has none), with values
// rounded to the task's dtype. Deterministic: the same task gives the same matrix on every machine.
// Thread-safe.
#pragma once

#include "absl/status/statusor.h"
#include "matrix/csr_matrix.h"
#include "task.pb.h"

namespace sparseditto {

// The seed of the task's matrix: matrix.seed when set, else the task's seed.
uint64_t TaskMatrixSeed(const v1::Task& task);

// Errors: those of GenerateMatrix / ReadMatrixFile (InvalidArgument, NotFound), or InvalidArgument
// when the task names no matrix.
absl::StatusOr<CsrMatrix> MaterializeTaskMatrix(const v1::Task& task);

}  // namespace sparseditto
