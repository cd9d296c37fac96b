#include "evaluator/runner/smoke_cases.h"

#include <algorithm>

#include "common/status_format.h"
#include "fmt/format.h"
#include "matrix/generators.h"

namespace sparseditto {
namespace {

// Rounds `size` to a multiple of `unit` (at least one unit) when the task's size is a multiple too.
int64_t Conform(int64_t size, int64_t unit, int64_t task_size) {
  if (unit <= 1 || task_size % unit != 0) return size;
  return std::max<int64_t>(unit, (size + unit - 1) / unit * unit);
}

// The pattern a smoke case declares: structure-free families borrow unstructured at the case's density.
v1::PatternSpec SmokePattern(const v1::Task& task, double density) {
  v1::PatternSpec p = task.pattern();
  if (p.family() == v1::PATTERN_FAMILY_FILE || p.family() == v1::PATTERN_FAMILY_UNSPECIFIED) {
    p = v1::PatternSpec();
    p.set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
    p.set_sparsity(std::clamp(1.0 - density, 0.0, 0.99));
  }
  return p;
}

// Row 0 dense, rows 1 and 2 empty: the extremes of row length.
void MakeExtremeRows(CsrMatrix* m, uint64_t seed, v1::Dtype dtype) {
  CsrMatrix out;
  out.rows = m->rows;
  out.cols = m->cols;
  out.row_offsets.push_back(0);
  for (int64_t r = 0; r < m->rows; ++r) {
    if (r == 0) {
      for (int64_t c = 0; c < m->cols; ++c) out.col_indices.push_back(static_cast<int32_t>(c));
    } else if (r > 2) {
      out.col_indices.insert(out.col_indices.end(), m->col_indices.begin() + m->row_offsets[r],
                             m->col_indices.begin() + m->row_offsets[r + 1]);
    }
    out.row_offsets.push_back(static_cast<int32_t>(out.col_indices.size()));
  }
  FillRandomValues(&out, seed, dtype);
  *m = std::move(out);
}

}  // namespace

absl::StatusOr<std::vector<SmokeCase>> MakeSmokeCases(const v1::Task& task, int64_t task_rows, int64_t task_cols,
                                                      uint64_t seed) {
  const v1::PatternSpec& declared = task.pattern();
  int64_t row_unit = 1, col_unit = 1;
  if (declared.family() == v1::PATTERN_FAMILY_BLOCK) {
    row_unit = declared.block_rows();
    col_unit = declared.block_cols();
  } else if (declared.family() == v1::PATTERN_FAMILY_N_M) {
    col_unit = declared.m();
  } else if (declared.family() == v1::PATTERN_FAMILY_BLOCK_DIAGONAL) {
    row_unit = col_unit = declared.num_blocks();
  }
  const int64_t smallest_n = task.n().empty() ? 1 : *std::min_element(task.n().begin(), task.n().end());
  const int64_t largest_n = task.n().empty() ? 1 : *std::max_element(task.n().begin(), task.n().end());
  std::vector<int64_t> n_values = {1, 7};
  for (const int64_t n : {std::min<int64_t>(smallest_n, 256), std::min(largest_n, kSmokeMaxN)}) {
    if (std::find(n_values.begin(), n_values.end(), n) == n_values.end()) n_values.push_back(n);
  }

  const double density = 0.3;  // for families without a declared density (FILE)
  struct Shape { const char* label; int64_t rows, cols; };
  const Shape shapes[] = {{"ragged", 7, 96}, {"tall", 65, 33}, {"wide", 33, 200}};
  std::vector<SmokeCase> cases;
  for (const Shape& shape : shapes) {
    int64_t rows = Conform(std::min(shape.rows, task_rows), row_unit, task_rows);
    int64_t cols = Conform(std::min(shape.cols, task_cols), col_unit, task_cols);
    if (declared.family() == v1::PATTERN_FAMILY_BLOCK_DIAGONAL) {
      rows = std::max<int64_t>(rows, declared.num_blocks());
      cols = std::max<int64_t>(cols, declared.num_blocks());
    }
    SmokeCase c;
    c.pattern = SmokePattern(task, density);
    if (c.pattern.family() == v1::PATTERN_FAMILY_BANDED) {
      c.pattern.set_half_bandwidth(std::min<int64_t>(c.pattern.half_bandwidth(), cols - 1));
    }
    auto matrix = GenerateMatrix(c.pattern, rows, cols, seed + cases.size(), task.dtype());
    if (!matrix.ok()) {
      return absl::InvalidArgumentError(fmt::format("smoke case {}x{}: {}", rows, cols, matrix.status().message()));
    }
    c.matrix = *std::move(matrix);
    c.name = fmt::format("smoke/{}_{}x{}", shape.label, rows, cols);
    c.n_values = n_values;
    cases.push_back(std::move(c));
  }
  // Unstructured-like families also get the extremes of row length in one matrix.
  const auto family = cases.front().pattern.family();
  if (family == v1::PATTERN_FAMILY_UNSTRUCTURED && task_rows >= 3) {
    SmokeCase c = cases.back();
    MakeExtremeRows(&c.matrix, seed + 100, task.dtype());
    c.name = fmt::format("smoke/dense_and_empty_rows_{}x{}", c.matrix.rows, c.matrix.cols);
    cases.push_back(std::move(c));
  }
  return cases;
}

absl::StatusOr<SmokeCase> MakeTaskCropCase(const v1::Task& task, const CsrMatrix& task_matrix) {
  const v1::PatternSpec& declared = task.pattern();
  if (declared.family() == v1::PATTERN_FAMILY_BLOCK_DIAGONAL) {
    return absl::FailedPreconditionError("no crop of a block-diagonal task: its blocks span the whole matrix");
  }
  if (task_matrix.rows <= 0 || task_matrix.cols <= 0) {
    return absl::InvalidArgumentError(
        fmt::format("task crop: the task matrix is {}x{}", task_matrix.rows, task_matrix.cols));
  }
  if (absl::Status valid = ValidateCsr(task_matrix, "task crop"); !valid.ok()) return valid;
  if (task_matrix.values.size() != task_matrix.col_indices.size()) {
    return absl::InvalidArgumentError("task crop: the task matrix has no values");
  }
  int64_t rows = std::min(task_matrix.rows, kTaskCropRows);
  if (declared.family() == v1::PATTERN_FAMILY_BLOCK && declared.block_rows() > 0 && rows < task_matrix.rows) {
    const int64_t unit = declared.block_rows();
    rows = std::min(task_matrix.rows, std::max<int64_t>(unit, rows / unit * unit));
  }
  SmokeCase crop;
  crop.matrix.rows = rows;
  crop.matrix.cols = task_matrix.cols;
  const int32_t nnz = task_matrix.row_offsets[rows];
  crop.matrix.row_offsets.assign(task_matrix.row_offsets.begin(), task_matrix.row_offsets.begin() + rows + 1);
  crop.matrix.col_indices.assign(task_matrix.col_indices.begin(), task_matrix.col_indices.begin() + nnz);
  crop.matrix.values.assign(task_matrix.values.begin(), task_matrix.values.begin() + nnz);
  crop.pattern = SmokePattern(task, crop.matrix.Density());
  crop.name = fmt::format("crop/first_{}_rows_{}x{}", rows, rows, task_matrix.cols);
  crop.n_values.assign(task.n().begin(), task.n().end());
  std::sort(crop.n_values.begin(), crop.n_values.end());
  crop.n_values.erase(std::unique(crop.n_values.begin(), crop.n_values.end()), crop.n_values.end());
  return crop;
}

}  // namespace sparseditto
