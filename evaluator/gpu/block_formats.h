// Host-side conversion of a CSR matrix to the block formats cuSPARSE takes: BSR and Blocked-ELL, with
// square block x block blocks aligned to the block grid. Pure CPU code (tested without a GPU).
// The caller ensures rows and cols are multiples of `block` (SquareBlockSize does).
// Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <vector>

#include "matrix/csr_matrix.h"

namespace sparseditto::gpu {

// The nonzero blocks of a matrix: block rows of `block` rows each; for each, the sorted block columns
// holding at least one nonzero.
struct BlockStructure {
  int64_t block = 0;
  int64_t block_rows = 0;               // rows / block
  int64_t block_cols = 0;               // cols / block
  std::vector<int32_t> row_offsets;     // block_rows + 1 entries (BSR row offsets)
  std::vector<int32_t> col_indices;     // one per nonzero block, sorted within a block row

  int64_t num_blocks() const { return static_cast<int64_t>(col_indices.size()); }
  int64_t max_blocks_per_row() const;   // the Blocked-ELL width in blocks
};

BlockStructure FindBlocks(const CsrMatrix& a, int64_t block);

// BSR values: num_blocks() blocks in col_indices order, each block x block row-major
// (cusparseCreateBsr with CUSPARSE_ORDER_ROW), explicit zeros where the block is not full.
std::vector<float> BsrValues(const CsrMatrix& a, const BlockStructure& blocks);

// Blocked-ELL (cusparseCreateBlockedEll): every block row holds max_blocks_per_row() slots.
struct BlockedEll {
  int64_t ell_cols = 0;              // max_blocks_per_row() * block, in elements
  std::vector<int32_t> col_indices;  // block_rows x max_blocks_per_row(), block columns, -1 = padding
  std::vector<float> values;         // rows x ell_cols, row-major; zero in padding and block holes
};
BlockedEll ToBlockedEll(const CsrMatrix& a, const BlockStructure& blocks);

}  // namespace sparseditto::gpu
