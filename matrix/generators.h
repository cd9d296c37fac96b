// Deterministic, seeded generators for every pattern family (DESIGN.md §1), and seeded values.
// The same (pattern, rows, cols, seed, dtype) gives the same matrix on every machine: all draws go
// through common/rng.h. Thread-safe (no shared state).
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "matrix/csr_matrix.h"
#include "task.pb.h"

namespace sparseditto {

// Generates a rows x cols matrix with the structure `pattern` describes and values from `seed`
// (FillRandomValues with a seed derived from `seed`).
// Families: UNSTRUCTURED (row_lengths UNIFORM: each entry kept with probability 1 - sparsity;
// SKEWED: per-row density log-normal with sigma = skew (default 1), mean 1 - sparsity, capped at 1),
// BLOCK (exactly round((1 - sparsity) * number of blocks) blocks of block_rows x block_cols, edge
// blocks clipped), N_M (in every group of m consecutive columns of a row, exactly n kept; a final
// partial group keeps min(n, its length)), ROW_SPARSE / COLUMN_SPARSE (exactly
// round((1 - sparsity) * rows|cols) whole rows|columns kept), BANDED (|j - floor(i * cols / rows)|
// <= half_bandwidth, dense inside), BLOCK_DIAGONAL (num_blocks dense diagonal blocks, row block r
// covering rows [r*rows/num_blocks, (r+1)*rows/num_blocks) and the matching column range), DENSE.
// Errors: InvalidArgument naming the field for parameters out of range (sparsity outside [0, 1),
// non-positive sizes, n > m, shapes beyond kMaxMatrixDim, nnz beyond kMaxMatrixNnz, FILE or
// UNSPECIFIED family).
absl::StatusOr<CsrMatrix> GenerateMatrix(const v1::PatternSpec& pattern, int64_t rows, int64_t cols,
                                         uint64_t seed, v1::Dtype dtype);

// Replaces m->values with values uniform in [-1, 1) drawn from `seed`, rounded to `dtype`,
// none of them zero (a zero is redrawn), so the stored pattern is the true pattern.
void FillRandomValues(CsrMatrix* m, uint64_t seed, v1::Dtype dtype);

}  // namespace sparseditto
