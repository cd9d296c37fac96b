#include <cmath>
#include <string>

#include "analyzer/pattern_measures.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

// Sets the family, records why, and returns the spec for its parameters.
v1::PatternSpec& Choose(PatternFeatures* f, v1::PatternFamily family, std::string why) {
  f->detected.Clear();
  f->detected.set_family(family);
  f->evidence.push_back(std::move(why));
  return f->detected;
}

bool TryDense(PatternFeatures* f) {
  if (f->density < kDenseDensity) {
    f->evidence.push_back(fmt::format("density {:.3f} < {:.2f}: not dense", f->density, kDenseDensity));
    return false;
  }
  Choose(f, v1::PATTERN_FAMILY_DENSE, fmt::format("density {:.3f} >= {:.2f}", f->density, kDenseDensity));
  return true;
}

bool TryNm(const CsrMatrix& a, PatternFeatures* f) {
  if (const auto exact = DetectExactNm(a)) {
    const auto [n, m] = *exact;
    v1::PatternSpec& spec = Choose(f, v1::PATTERN_FAMILY_N_M,
                                   fmt::format("every full group of {} columns holds exactly {} nonzeros{}, density {:.3f}",
                                               m, n, a.cols % m ? " (partial final group min(n, length))" : "",
                                               f->density));
    spec.set_n(n);
    spec.set_m(m);
    return true;
  }
  // "At most n" patterns: saturated standard ratios, the sparsest first (then the shortest group).
  const NmConformance* best = nullptr;
  for (const NmConformance& c : f->n_m) {
    const double ratio = static_cast<double>(c.n) / c.m;
    if (c.conforming_groups != c.groups || f->density < kNmSaturation * ratio) continue;
    if (best == nullptr || ratio < static_cast<double>(best->n) / best->m) best = &c;
  }
  if (best == nullptr) return false;
  v1::PatternSpec& spec = Choose(f, v1::PATTERN_FAMILY_N_M,
                                 fmt::format("all {}:{} groups conform{}, density {:.3f}", best->n, best->m,
                                             best->partial_final_group ? " (partial final group included)" : "",
                                             f->density));
  spec.set_n(best->n);
  spec.set_m(best->m);
  return true;
}

bool TryRowOrColumnSparse(PatternFeatures* f) {
  const LengthStats& rows = f->row_lengths;
  if (rows.empty > 0 && rows.empty + rows.full == f->rows) {
    const double dropped = static_cast<double>(rows.empty) / f->rows;
    Choose(f, v1::PATTERN_FAMILY_ROW_SPARSE,
           fmt::format("rows all full or empty: {} of {} empty", rows.empty, f->rows))
        .set_sparsity(dropped);
    return true;
  }
  const LengthStats& cols = f->col_lengths;
  if (cols.empty > 0 && cols.empty + cols.full == f->cols) {
    const double dropped = static_cast<double>(cols.empty) / f->cols;
    Choose(f, v1::PATTERN_FAMILY_COLUMN_SPARSE,
           fmt::format("columns all full or empty: {} of {} empty", cols.empty, f->cols))
        .set_sparsity(dropped);
    return true;
  }
  return false;
}

bool TryBanded(const CsrMatrix& a, PatternFeatures* f) {
  if (!IsFullBand(a, f->bandwidth)) return false;
  Choose(f, v1::PATTERN_FAMILY_BANDED,
         fmt::format("every row is dense exactly on [c - {}, c + {}] around c = floor(i*K/M)", f->bandwidth.lower,
                     f->bandwidth.upper))
      .set_half_bandwidth(static_cast<int32_t>(std::min<int64_t>(f->bandwidth.half, INT32_MAX)));
  return true;
}

bool TryBlockDiagonal(const CsrMatrix& a, PatternFeatures* f) {
  const int64_t blocks = CountDiagonalBlocks(a);
  if (blocks == 0) return false;
  Choose(f, v1::PATTERN_FAMILY_BLOCK_DIAGONAL,
         fmt::format("every row one contiguous run; {} dense diagonal blocks tile the rows and columns", blocks))
      .set_num_blocks(static_cast<int32_t>(std::min<int64_t>(blocks, INT32_MAX)));
  return true;
}

bool TryBlock(const CsrMatrix& a, PatternFeatures* f) {
  const auto [grid_rows, grid_cols] = ExactBlockGrid(a);
  BlockFill fill;
  std::string why;
  if (grid_rows * grid_cols >= 2 && !(grid_rows >= a.rows && grid_cols >= a.cols)) {
    fill = MeasureBlockFill(a, grid_rows, grid_cols);
    why = fmt::format("exactly made of {}x{} blocks: rows change only at multiples of {}, runs start and end at "
                      "multiples of {}; {} of {} blocks nonempty",
                      grid_rows, grid_cols, grid_rows, grid_cols, fill.nonempty_blocks, fill.total_blocks);
  } else if (const auto approximate = FindApproximateBlockShape(a)) {
    fill = *approximate;
    why = fmt::format("{}x{} blocks fill {:.3f} (>= {:.2f}), {} of {} blocks nonempty", fill.block_rows,
                      fill.block_cols, fill.fill, kBlockFill, fill.nonempty_blocks, fill.total_blocks);
  } else {
    return false;
  }
  v1::PatternSpec& spec = Choose(f, v1::PATTERN_FAMILY_BLOCK, std::move(why));
  spec.set_block_rows(static_cast<int32_t>(std::min<int64_t>(fill.block_rows, INT32_MAX)));
  spec.set_block_cols(static_cast<int32_t>(std::min<int64_t>(fill.block_cols, INT32_MAX)));
  spec.set_sparsity(1.0 - fill.nonempty_fraction);
  return true;
}

void ChooseUnstructured(PatternFeatures* f) {
  const double d = f->density;
  const double binomial_cv = d > 0 && d < 1 ? std::sqrt((1 - d) / (static_cast<double>(f->cols) * d)) : 0.0;
  const double threshold = kSkewCvFactor * binomial_cv + kSkewCvSlack;
  const bool skewed = f->row_lengths.cv > threshold;
  v1::PatternSpec& spec =
      Choose(f, v1::PATTERN_FAMILY_UNSTRUCTURED,
             fmt::format("no structure found; row-length cv {:.3f} {} {:.3f} (binomial cv {:.3f}): {} rows",
                         f->row_lengths.cv, skewed ? ">" : "<=", threshold, binomial_cv, skewed ? "skewed" : "uniform"));
  spec.set_sparsity(1.0 - d);
  spec.set_row_lengths(skewed ? v1::ROW_LENGTHS_SKEWED : v1::ROW_LENGTHS_UNIFORM);
}

}  // namespace

void ClassifyFamily(const CsrMatrix& a, PatternFeatures* f) {
  f->evidence.clear();
  if (f->nnz == 0) {
    Choose(f, v1::PATTERN_FAMILY_UNSTRUCTURED, "no nonzeros").set_sparsity(1.0);
    return;
  }
  if (TryDense(f) || TryNm(a, f) || TryRowOrColumnSparse(f) || TryBanded(a, f) || TryBlockDiagonal(a, f) ||
      TryBlock(a, f)) {
    return;
  }
  ChooseUnstructured(f);
}

}  // namespace sparseditto
