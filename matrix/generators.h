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
// (FillRandomValues with a fixed mix of `seed`, so structure and values are independent streams).
// DTYPE_UNSPECIFIED values are left as fp32.
// Families (and the PatternSpec fields each reads; the others are ignored):
//  - UNSTRUCTURED (sparsity, row_lengths, skew). UNIFORM: each entry kept independently with
//    probability 1 - sparsity (geometric skipping: O(nnz + rows) time). SKEWED: each row's density is
//    min(1, X) with X log-normal, sigma = skew (0 means the default 1, at most 10), its location
//    solved so that E[min(1, X)] = 1 - sparsity; the row's entries are then kept independently.
//  - BLOCK (sparsity, block_rows, block_cols): exactly round((1 - sparsity) * number of blocks)
//    dense block_rows x block_cols blocks of the block grid, chosen uniformly; edge blocks clipped.
//  - N_M (n, m): in every group of m consecutive columns of a row, exactly n kept (chosen uniformly);
//    a final partial group keeps min(n, its length).
//  - ROW_SPARSE / COLUMN_SPARSE (sparsity): exactly round((1 - sparsity) * rows|cols) whole
//    rows|columns kept, chosen uniformly.
//  - BANDED (half_bandwidth): |j - floor(i * cols / rows)| <= half_bandwidth, dense inside.
//  - BLOCK_DIAGONAL (num_blocks): dense diagonal blocks, row block r covering rows
//    [r*rows/num_blocks, (r+1)*rows/num_blocks) and the matching column range (integer division).
//  - DENSE: every entry.
// Errors: InvalidArgument whose message starts with the field ("pattern.block_rows: must be >= 1,
// got 0"): sparsity outside [0, 1), rows or cols outside [1, kMaxMatrixDim], block sizes < 1,
// m < 1, n outside [1, m], half_bandwidth < 0, num_blocks outside [1, min(rows, cols)], skew outside
// [0, 10], FILE, UNSPECIFIED or unknown family; and "pattern: ..." when the (expected) nnz is beyond
// kMaxMatrixNnz, refused before anything is allocated.
// Determinism: every draw goes through Rng; floating-point steps use only log/exp/erfc/cos, so
// two libms that round those differently in the last place could (very rarely) differ.
absl::StatusOr<CsrMatrix> GenerateMatrix(const v1::PatternSpec& pattern, int64_t rows, int64_t cols,
                                         uint64_t seed, v1::Dtype dtype);

// Replaces m->values with values drawn uniform in [-1, 1) from `seed` and rounded to `dtype`
// (so +-1 itself can appear), none of them zero (a value that rounds to zero is redrawn), so the
// stored pattern is the true pattern. One draw per nonzero in storage order.
void FillRandomValues(CsrMatrix* m, uint64_t seed, v1::Dtype dtype);

}  // namespace sparseditto
