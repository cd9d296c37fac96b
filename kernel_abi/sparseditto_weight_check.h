/* SparseDitto weight check: does the sparse matrix handed to an exported kernel's prepare have the
 * pattern the kernel was searched for? Host C++ only, header-only and self-contained (the standard
 * library and sparseditto_kernel.h), shipped beside every exported kernel by `sparseditto export`,
 * whose generated <task>_prepare calls sd_check_weight before the kernel's own prepare.
 *
 * A kernel is held by the search only to what the task promised: the dtype, the declared pattern
 * (family and parameters, passed to the kernel in sd_problem.pattern), the matrix's structure in that
 * family (as matrix/generators.h makes it: N:M groups, dense blocks of the block grid, whole rows or
 * columns, a dense band, dense diagonal blocks, every entry), the divisibility of its shape by the
 * family's unit where the searched matrix had it (evaluator/runner/smoke_cases.h), and, for a task
 * over a real matrix (a file), that very matrix: its shape, nnz and structure digest.
 * Every function is static inline: several exports in one program each get their own copy. Like
 * sparseditto_kernel.h, it defines sparseditto_abi_version unless SPARSEDITTO_HARNESS is defined first
 * (the export and a host program define it; a candidate does not).
 * Thread-safe (no state). */
#ifndef SPARSEDITTO_WEIGHT_CHECK_H_
#define SPARSEDITTO_WEIGHT_CHECK_H_

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include <vector>

#include "sparseditto_kernel.h"

#define SD_WEIGHT_DIGEST_CHUNKS 16

/* What the kernel was searched for. */
typedef struct sd_weight_spec {
  int32_t dtype;       /* enum sd_dtype */
  sd_pattern pattern;  /* family and parameters, as the task declared them */
  int64_t row_unit;    /* the weight's rows must be a multiple of this (1: any) */
  int64_t col_unit;    /* the weight's cols must be a multiple of this (1: any) */
  int32_t exact;       /* nonzero: the kernel was searched on one real matrix; the weight must be it */
  int64_t rows, cols, nnz;                          /* exact only */
  uint64_t chunk_digests[SD_WEIGHT_DIGEST_CHUNKS];  /* exact only: sd_structure_digest of each chunk */
} sd_weight_spec;

/* Rows [chunk * rows / CHUNKS, (chunk + 1) * rows / CHUNKS): the chunks a structure digest covers. */
static inline int64_t sd_digest_chunk_begin(int64_t rows, int chunk) {
  return chunk * rows / SD_WEIGHT_DIGEST_CHUNKS;
}

/* FNV-1a (64-bit) over each row's length and column indices, rows [begin, end) of a canonical CSR. */
static inline uint64_t sd_structure_digest(const int32_t* row_offsets, const int32_t* col_indices, int64_t begin,
                                           int64_t end) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&h](uint32_t word) {
    for (int b = 0; b < 4; ++b) {
      h ^= (word >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  for (int64_t r = begin; r < end; ++r) {
    mix(static_cast<uint32_t>(row_offsets[r + 1] - row_offsets[r]));
    for (int32_t k = row_offsets[r]; k < row_offsets[r + 1]; ++k) mix(static_cast<uint32_t>(col_indices[k]));
  }
  return h;
}

/* Writes "weight check: <what>" into error (truncated to error_capacity) and returns 1. */
static inline int sd_weight_fail(char* error, size_t error_capacity, const char* format, ...) {
  if (error == nullptr || error_capacity == 0) return 1;
  const int head = snprintf(error, error_capacity, "weight check: ");
  if (head > 0 && static_cast<size_t>(head) < error_capacity) {
    va_list args;
    va_start(args, format);
    vsnprintf(error + head, error_capacity - head, format, args);
    va_end(args);
  }
  return 1;
}

/* Row r must hold exactly the columns [lo, hi) (none when lo >= hi). */
static inline int sd_check_row_range(const sd_problem* p, int64_t r, int64_t lo, int64_t hi, const char* what,
                                     char* error, size_t cap) {
  const int32_t begin = p->row_offsets[r], length = p->row_offsets[r + 1] - begin;
  const int64_t want = hi > lo ? hi - lo : 0;
  if (length != want || (want > 0 && p->col_indices[begin] != lo)) {
    return sd_weight_fail(error, cap, "row %lld holds %d nonzeros (columns %d..%d); %s: exactly columns %lld..%lld",
                          (long long)r, length, length > 0 ? p->col_indices[begin] : -1,
                          length > 0 ? p->col_indices[begin + length - 1] : -1, what, (long long)lo,
                          (long long)(hi - 1));
  }
  return 0;
}

/* The family's structure, over a CSR already checked canonical. */
static inline int sd_check_structure(const sd_problem* p, const sd_pattern& want, char* error, size_t cap) {
  const int64_t rows = p->rows, cols = p->cols;
  const int32_t* ro = p->row_offsets;
  const int32_t* ci = p->col_indices;
  switch (want.family) {
    case SD_PATTERN_N_M:
      for (int64_t r = 0; r < rows; ++r) {
        for (int32_t k = ro[r]; k < ro[r + 1];) {
          const int64_t group = ci[k] / want.m;
          int32_t count = 0;
          for (; k < ro[r + 1] && ci[k] / want.m == group; ++k) ++count;
          if (count > want.n) {
            return sd_weight_fail(error, cap, "row %lld, columns %lld..%lld (group %lld): %d nonzeros, the %d:%d pattern "
                                  "allows %d", (long long)r, (long long)(group * want.m),
                                  (long long)(group * want.m + want.m - 1), (long long)group, count, want.n, want.m, want.n);
          }
        }
      }
      return 0;
    case SD_PATTERN_BLOCK:
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t first = r / want.block_rows * want.block_rows;  // the block row's first row
        const int32_t length = ro[r + 1] - ro[r];
        bool same = length == ro[first + 1] - ro[first];
        for (int32_t k = 0; same && k < length; ++k) same = ci[ro[r] + k] == ci[ro[first] + k];
        if (!same) {
          return sd_weight_fail(error, cap, "rows %lld and %lld of block row %lld (rows %lld..) hold different columns: "
                                "the block pattern keeps dense %dx%d blocks", (long long)first, (long long)r,
                                (long long)(r / want.block_rows), (long long)first, want.block_rows, want.block_cols);
        }
        for (int32_t k = ro[r]; k < ro[r + 1];) {
          const int64_t block = ci[k] / want.block_cols, lo = block * want.block_cols;
          const int64_t hi = lo + want.block_cols < cols ? lo + want.block_cols : cols;
          int32_t count = 0;
          for (; k < ro[r + 1] && ci[k] / want.block_cols == block; ++k) ++count;
          if (count != hi - lo) {
            return sd_weight_fail(error, cap, "block (row block %lld, column block %lld; columns %lld..%lld) is neither "
                                  "empty nor dense: row %lld holds %d of its %lld columns", (long long)(r / want.block_rows),
                                  (long long)block, (long long)lo, (long long)(hi - 1), (long long)r, count,
                                  (long long)(hi - lo));
          }
        }
      }
      return 0;
    case SD_PATTERN_ROW_SPARSE:
      for (int64_t r = 0; r < rows; ++r) {
        const int32_t length = ro[r + 1] - ro[r];
        if (length != 0 && length != cols) {
          return sd_weight_fail(error, cap, "row %lld holds %d of %lld columns: the row-sparse pattern keeps whole rows",
                                (long long)r, length, (long long)cols);
        }
      }
      return 0;
    case SD_PATTERN_COLUMN_SPARSE: {
      std::vector<int64_t> count(cols, 0);
      for (int64_t k = 0; k < p->nnz; ++k) ++count[ci[k]];
      for (int64_t c = 0; c < cols; ++c) {
        if (count[c] != 0 && count[c] != rows) {
          return sd_weight_fail(error, cap, "column %lld holds %lld of %lld rows: the column-sparse pattern keeps whole "
                                "columns", (long long)c, (long long)count[c], (long long)rows);
        }
      }
      return 0;
    }
    case SD_PATTERN_BANDED:
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t center = r * cols / rows;
        const int64_t lo = center - want.half_bandwidth > 0 ? center - want.half_bandwidth : 0;
        const int64_t hi = center + want.half_bandwidth + 1 < cols ? center + want.half_bandwidth + 1 : cols;
        if (sd_check_row_range(p, r, lo, hi, "the band is dense", error, cap) != 0) return 1;
      }
      return 0;
    case SD_PATTERN_BLOCK_DIAGONAL:
      for (int64_t r = 0, block = 0; r < rows; ++r) {
        while ((block + 1) * rows / want.num_blocks <= r) ++block;
        const int64_t lo = block * cols / want.num_blocks, hi = (block + 1) * cols / want.num_blocks;
        if (sd_check_row_range(p, r, lo, hi, "its diagonal block is dense", error, cap) != 0) return 1;
      }
      return 0;
    case SD_PATTERN_DENSE:
      for (int64_t r = 0; r < rows; ++r) {
        if (sd_check_row_range(p, r, 0, cols, "the matrix is dense", error, cap) != 0) return 1;
      }
      return 0;
    default:  // UNSTRUCTURED, FILE: no structure beyond a canonical CSR
      return 0;
  }
}

/* 0 when `problem` describes a weight the kernel of `spec` was searched for; else 1 with
 * "weight check: <what differs, and where>" in error (at most error_capacity bytes, NUL-terminated):
 * the ABI version, dtype, a pattern field, a shape not divisible by the family's unit, a CSR that is
 * not canonical (the row or entry), the family's structure (the row, group, block or column), or for
 * a real matrix its shape, nnz or the rows whose structure differs. Reads only host memory. */
static inline int sd_check_weight(const sd_problem* p, const sd_weight_spec* spec, char* error, size_t cap) {
  if (p == nullptr || spec == nullptr) return sd_weight_fail(error, cap, "no problem given");
  if (p->abi_version != SPARSEDITTO_ABI_VERSION) {
    return sd_weight_fail(error, cap, "abi_version %d, the kernel was built for %d", p->abi_version,
                          SPARSEDITTO_ABI_VERSION);
  }
  if (p->dtype != spec->dtype) {
    return sd_weight_fail(error, cap, "dtype %d, the kernel was searched for %d (enum sd_dtype)", p->dtype, spec->dtype);
  }
  const sd_pattern& got = p->pattern;
  const sd_pattern& want = spec->pattern;
  const struct { const char* name; int32_t got, want; } fields[] = {
      {"family", got.family, want.family},         {"block_rows", got.block_rows, want.block_rows},
      {"block_cols", got.block_cols, want.block_cols}, {"n", got.n, want.n},
      {"m", got.m, want.m},                        {"half_bandwidth", got.half_bandwidth, want.half_bandwidth},
      {"num_blocks", got.num_blocks, want.num_blocks}};
  for (const auto& f : fields) {
    if (f.got != f.want) {
      return sd_weight_fail(error, cap, "pattern.%s is %d, the kernel was searched for %d", f.name, f.got, f.want);
    }
  }
  if (p->rows < 1 || p->cols < 1 || p->nnz < 0 || p->nnz > p->rows * p->cols) {
    return sd_weight_fail(error, cap, "a %lld x %lld matrix with nnz %lld", (long long)p->rows, (long long)p->cols,
                          (long long)p->nnz);
  }
  if (p->rows % spec->row_unit != 0 || p->cols % spec->col_unit != 0) {
    return sd_weight_fail(error, cap, "shape %lld x %lld: the kernel was searched on a matrix whose rows are a multiple "
                          "of %lld and cols of %lld (the pattern's unit)", (long long)p->rows, (long long)p->cols,
                          (long long)spec->row_unit, (long long)spec->col_unit);
  }
  if (p->row_offsets == nullptr || (p->nnz > 0 && (p->col_indices == nullptr || p->values == nullptr))) {
    return sd_weight_fail(error, cap, "row_offsets, col_indices or values is null");
  }
  if (p->row_offsets[0] != 0 || p->row_offsets[p->rows] != p->nnz) {
    return sd_weight_fail(error, cap, "row_offsets run from %d to %d; a canonical CSR's run from 0 to nnz %lld",
                          p->row_offsets[0], p->row_offsets[p->rows], (long long)p->nnz);
  }
  for (int64_t r = 0; r < p->rows; ++r) {
    if (p->row_offsets[r + 1] < p->row_offsets[r]) {
      return sd_weight_fail(error, cap, "row_offsets decrease at row %lld", (long long)r);
    }
    for (int32_t k = p->row_offsets[r]; k < p->row_offsets[r + 1]; ++k) {
      const int32_t c = p->col_indices[k];
      if (c < 0 || c >= p->cols || (k > p->row_offsets[r] && c <= p->col_indices[k - 1])) {
        return sd_weight_fail(error, cap, "row %lld, entry %d: column %d is outside [0, %lld) or not above the one "
                              "before", (long long)r, k, c, (long long)p->cols);
      }
    }
  }
  if (sd_check_structure(p, want, error, cap) != 0) return 1;
  if (!spec->exact) return 0;
  if (p->rows != spec->rows || p->cols != spec->cols || p->nnz != spec->nnz) {
    return sd_weight_fail(error, cap, "a %lld x %lld matrix with nnz %lld; the kernel was searched on one matrix, %lld x "
                          "%lld with nnz %lld", (long long)p->rows, (long long)p->cols, (long long)p->nnz,
                          (long long)spec->rows, (long long)spec->cols, (long long)spec->nnz);
  }
  for (int chunk = 0; chunk < SD_WEIGHT_DIGEST_CHUNKS; ++chunk) {
    const int64_t begin = sd_digest_chunk_begin(p->rows, chunk), end = sd_digest_chunk_begin(p->rows, chunk + 1);
    if (sd_structure_digest(p->row_offsets, p->col_indices, begin, end) != spec->chunk_digests[chunk]) {
      return sd_weight_fail(error, cap, "rows %lld..%lld hold other columns than the matrix the kernel was searched on",
                            (long long)begin, (long long)(end - 1));
    }
  }
  return 0;
}

#endif /* SPARSEDITTO_WEIGHT_CHECK_H_ */
