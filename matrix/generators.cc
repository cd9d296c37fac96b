#include "matrix/generators.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "common/dtype.h"
#include "common/rng.h"
#include "common/status_macros.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

template <typename T>
absl::Status FieldError(std::string_view field, std::string_view requirement, const T& got) {
  return absl::InvalidArgumentError(fmt::format("{}: must be {}, got {}", field, requirement, got));
}

absl::Status CheckNnzLimit(int64_t rows, int64_t cols, double nnz, std::string_view what) {
  if (nnz > static_cast<double>(kMaxMatrixNnz)) {
    return absl::InvalidArgumentError(
        fmt::format("pattern: the {}x{} matrix would have {} {:.0f} nonzeros, beyond the limit {}", rows,
                    cols, what, nnz, kMaxMatrixNnz));
  }
  return absl::OkStatus();
}

absl::Status CheckSparsity(double sparsity) {
  if (!(sparsity >= 0.0 && sparsity < 1.0)) return FieldError("pattern.sparsity", "in [0, 1)", sparsity);
  return absl::OkStatus();
}

// Number of items to keep out of `total` at this sparsity: round((1 - sparsity) * total).
int64_t KeptCount(double sparsity, int64_t total) {
  return std::llround((1.0 - sparsity) * static_cast<double>(total));
}

// A CSR matrix assembled row by row, in row and column order.
class CsrBuilder {
 public:
  CsrBuilder(int64_t rows, int64_t cols, int64_t nnz_hint) {
    m_.rows = rows;
    m_.cols = cols;
    m_.row_offsets.reserve(rows + 1);
    m_.row_offsets.push_back(0);
    m_.col_indices.reserve(std::max<int64_t>(0, nnz_hint));
  }
  std::vector<int32_t>& cols() { return m_.col_indices; }
  void AppendRange(int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) m_.col_indices.push_back(static_cast<int32_t>(c));
  }
  // Closes the current row. Fails (without growing further) once nnz passes kMaxMatrixNnz, which
  // only a random family near the limit can reach; the others check their exact nnz up front.
  absl::Status EndRow() {
    if (m_.nnz() > kMaxMatrixNnz) return CheckNnzLimit(m_.rows, m_.cols, static_cast<double>(m_.nnz()), "at least");
    m_.row_offsets.push_back(static_cast<int32_t>(m_.nnz()));
    return absl::OkStatus();
  }
  CsrMatrix Finish() { return std::move(m_); }

 private:
  CsrMatrix m_;
};

// Appends each column of [0, cols) independently with probability p, in O(kept) time: the number
// of columns skipped before the next kept one is geometric, floor(log(U) / log(1 - p)), U in (0, 1].
void AppendBernoulliRow(double p, int64_t cols, Rng& rng, CsrBuilder* out) {
  if (p <= 0.0) return;
  if (p >= 1.0) return out->AppendRange(0, cols);
  const double log_miss = std::log1p(-p);
  int64_t col = -1;
  while (true) {
    const double gap = std::floor(std::log(1.0 - rng.Uniform()) / log_miss);
    if (gap >= static_cast<double>(cols - col - 1)) break;
    col += static_cast<int64_t>(gap) + 1;
    out->cols().push_back(static_cast<int32_t>(col));
  }
}

// A uniformly random k-subset of [0, n), sorted. O(n) draws when k >= n / 128
// (selection sampling), O(k log k) otherwise (Floyd's algorithm).
std::vector<int64_t> SampleSortedSubset(int64_t n, int64_t k, Rng& rng) {
  std::vector<int64_t> chosen;
  if (k <= 0) return chosen;
  chosen.reserve(k);
  if (k >= n / 128) {
    for (int64_t i = 0; i < n && static_cast<int64_t>(chosen.size()) < k; ++i) {
      const uint64_t still_needed = k - chosen.size();
      if (rng.Below(static_cast<uint64_t>(n - i)) < still_needed) chosen.push_back(i);
    }
    return chosen;
  }
  std::unordered_set<int64_t> taken;
  taken.reserve(static_cast<size_t>(k) * 2);
  for (int64_t j = n - k; j < n; ++j) {
    const int64_t t = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(j + 1)));
    taken.insert(taken.contains(t) ? j : t);
  }
  chosen.assign(taken.begin(), taken.end());
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

// Standard normal CDF.
double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// E[min(1, X)] for X = exp(mu + sigma * Z), Z standard normal.
double CappedLogNormalMean(double mu, double sigma) {
  const double below_one = std::exp(mu + 0.5 * sigma * sigma) * NormalCdf((-mu - sigma * sigma) / sigma);
  return below_one + NormalCdf(mu / sigma);
}

// The log-normal location mu for which E[min(1, exp(mu + sigma Z))] = target, 0 < target < 1.
double SolveCappedLogNormalMu(double target, double sigma) {
  double lo = std::log(target) - 0.5 * sigma * sigma;  // uncapped mean = target, so capped <= target
  double step = 1.0;
  double hi = lo + step;
  while (CappedLogNormalMean(hi, sigma) < target) hi += (step *= 2.0);
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = 0.5 * (lo + hi);
    (CappedLogNormalMean(mid, sigma) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

absl::StatusOr<CsrMatrix> GenerateUnstructured(const v1::PatternSpec& p, int64_t rows, int64_t cols, Rng& rng) {
  SD_RETURN_IF_ERROR(CheckSparsity(p.sparsity()));
  const double density = 1.0 - p.sparsity();
  const double expected_nnz = density * static_cast<double>(rows) * static_cast<double>(cols);
  SD_RETURN_IF_ERROR(CheckNnzLimit(rows, cols, expected_nnz, "about"));
  const bool skewed = p.row_lengths() == v1::ROW_LENGTHS_SKEWED;
  if (!skewed && p.row_lengths() != v1::ROW_LENGTHS_UNIFORM) {
    return FieldError("pattern.row_lengths", "UNIFORM or SKEWED", static_cast<int>(p.row_lengths()));
  }
  const double sigma = p.skew() == 0.0 ? 1.0 : p.skew();
  if (skewed && !(sigma > 0.0 && sigma <= 10.0)) return FieldError("pattern.skew", "in [0, 10] (0 means 1)", p.skew());
  const double mu = (skewed && density < 1.0) ? SolveCappedLogNormalMu(density, sigma) : 0.0;

  CsrBuilder out(rows, cols, static_cast<int64_t>(expected_nnz * 1.01) + rows);
  for (int64_t r = 0; r < rows; ++r) {
    double row_density = density;
    if (skewed && density < 1.0) row_density = std::min(1.0, std::exp(mu + sigma * rng.Normal()));
    AppendBernoulliRow(row_density, cols, rng, &out);
    SD_RETURN_IF_ERROR(out.EndRow());
  }
  return out.Finish();
}

absl::StatusOr<CsrMatrix> GenerateBlock(const v1::PatternSpec& p, int64_t rows, int64_t cols, Rng& rng) {
  SD_RETURN_IF_ERROR(CheckSparsity(p.sparsity()));
  if (p.block_rows() < 1) return FieldError("pattern.block_rows", ">= 1", p.block_rows());
  if (p.block_cols() < 1) return FieldError("pattern.block_cols", ">= 1", p.block_cols());
  const int64_t br = p.block_rows(), bc = p.block_cols();
  const int64_t block_grid_rows = (rows + br - 1) / br, block_grid_cols = (cols + bc - 1) / bc;
  const int64_t kept_blocks = KeptCount(p.sparsity(), block_grid_rows * block_grid_cols);
  SD_RETURN_IF_ERROR(CheckNnzLimit(rows, cols, static_cast<double>(kept_blocks), "at least"));
  const std::vector<int64_t> chosen = SampleSortedSubset(block_grid_rows * block_grid_cols, kept_blocks, rng);

  double nnz = 0;  // exact, with edge blocks clipped
  for (int64_t b : chosen) {
    const int64_t r0 = (b / block_grid_cols) * br, c0 = (b % block_grid_cols) * bc;
    nnz += static_cast<double>(std::min(br, rows - r0)) * static_cast<double>(std::min(bc, cols - c0));
  }
  SD_RETURN_IF_ERROR(CheckNnzLimit(rows, cols, nnz, "exactly"));

  CsrBuilder out(rows, cols, static_cast<int64_t>(nnz));
  size_t first_in_block_row = 0;
  for (int64_t block_row = 0; block_row < block_grid_rows; ++block_row) {
    size_t end = first_in_block_row;
    while (end < chosen.size() && chosen[end] / block_grid_cols == block_row) ++end;
    for (int64_t r = block_row * br; r < std::min(rows, (block_row + 1) * br); ++r) {
      for (size_t i = first_in_block_row; i < end; ++i) {
        const int64_t c0 = (chosen[i] % block_grid_cols) * bc;
        out.AppendRange(c0, std::min(cols, c0 + bc));
      }
      SD_RETURN_IF_ERROR(out.EndRow());
    }
    first_in_block_row = end;
  }
  return out.Finish();
}

absl::StatusOr<CsrMatrix> GenerateNm(const v1::PatternSpec& p, int64_t rows, int64_t cols, Rng& rng) {
  if (p.m() < 1) return FieldError("pattern.m", ">= 1", p.m());
  if (p.n() < 1 || p.n() > p.m()) return FieldError("pattern.n", fmt::format("in [1, m = {}]", p.m()), p.n());
  const int64_t n = p.n(), m = p.m();
  const int64_t full_groups = cols / m, tail = cols % m;
  const double nnz = static_cast<double>(rows) * static_cast<double>(full_groups * n + std::min(n, tail));
  SD_RETURN_IF_ERROR(CheckNnzLimit(rows, cols, nnz, "exactly"));

  CsrBuilder out(rows, cols, static_cast<int64_t>(nnz));
  std::vector<char> taken(static_cast<size_t>(std::min(m, cols)), 0);
  std::vector<int64_t> picked;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t start = 0; start < cols; start += m) {
      const int64_t length = std::min(m, cols - start), keep = std::min(n, length);
      if (keep == length) {
        out.AppendRange(start, start + length);
        continue;
      }
      picked.clear();  // Floyd's algorithm: a uniform keep-subset of [0, length)
      for (int64_t j = length - keep; j < length; ++j) {
        int64_t t = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(j + 1)));
        if (taken[t]) t = j;
        taken[t] = 1;
        picked.push_back(t);
      }
      std::sort(picked.begin(), picked.end());
      for (int64_t t : picked) {
        taken[t] = 0;
        out.cols().push_back(static_cast<int32_t>(start + t));
      }
    }
    SD_RETURN_IF_ERROR(out.EndRow());
  }
  return out.Finish();
}

absl::StatusOr<CsrMatrix> GenerateRowSparse(const v1::PatternSpec& p, int64_t rows, int64_t cols, Rng& rng) {
  SD_RETURN_IF_ERROR(CheckSparsity(p.sparsity()));
  const int64_t kept_rows = KeptCount(p.sparsity(), rows);
  SD_RETURN_IF_ERROR(CheckNnzLimit(rows, cols, static_cast<double>(kept_rows) * cols, "exactly"));
  const std::vector<int64_t> chosen = SampleSortedSubset(rows, kept_rows, rng);
  CsrBuilder out(rows, cols, kept_rows * cols);
  size_t next = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (next < chosen.size() && chosen[next] == r) {
      out.AppendRange(0, cols);
      ++next;
    }
    SD_RETURN_IF_ERROR(out.EndRow());
  }
  return out.Finish();
}

absl::StatusOr<CsrMatrix> GenerateColumnSparse(const v1::PatternSpec& p, int64_t rows, int64_t cols, Rng& rng) {
  SD_RETURN_IF_ERROR(CheckSparsity(p.sparsity()));
  const int64_t kept_cols = KeptCount(p.sparsity(), cols);
  SD_RETURN_IF_ERROR(CheckNnzLimit(rows, cols, static_cast<double>(kept_cols) * rows, "exactly"));
  const std::vector<int64_t> chosen = SampleSortedSubset(cols, kept_cols, rng);
  CsrBuilder out(rows, cols, kept_cols * rows);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c : chosen) out.cols().push_back(static_cast<int32_t>(c));
    SD_RETURN_IF_ERROR(out.EndRow());
  }
  return out.Finish();
}

// Columns [first, last) of row `r` of a banded matrix.
std::pair<int64_t, int64_t> BandOfRow(int64_t r, int64_t rows, int64_t cols, int64_t half_bandwidth) {
  const int64_t center = r * cols / rows;
  return {std::max<int64_t>(0, center - half_bandwidth), std::min(cols, center + half_bandwidth + 1)};
}

absl::StatusOr<CsrMatrix> GenerateBanded(const v1::PatternSpec& p, int64_t rows, int64_t cols) {
  if (p.half_bandwidth() < 0) return FieldError("pattern.half_bandwidth", ">= 0", p.half_bandwidth());
  double nnz = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const auto [first, last] = BandOfRow(r, rows, cols, p.half_bandwidth());
    nnz += static_cast<double>(last - first);
  }
  SD_RETURN_IF_ERROR(CheckNnzLimit(rows, cols, nnz, "exactly"));
  CsrBuilder out(rows, cols, static_cast<int64_t>(nnz));
  for (int64_t r = 0; r < rows; ++r) {
    const auto [first, last] = BandOfRow(r, rows, cols, p.half_bandwidth());
    out.AppendRange(first, last);
    SD_RETURN_IF_ERROR(out.EndRow());
  }
  return out.Finish();
}

absl::StatusOr<CsrMatrix> GenerateBlockDiagonal(const v1::PatternSpec& p, int64_t rows, int64_t cols) {
  const int64_t most = std::min(rows, cols);
  if (p.num_blocks() < 1 || p.num_blocks() > most) {
    return FieldError("pattern.num_blocks", fmt::format("in [1, min(rows, cols) = {}]", most), p.num_blocks());
  }
  const int64_t blocks = p.num_blocks();
  double nnz = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    nnz += static_cast<double>((b + 1) * rows / blocks - b * rows / blocks) *
           static_cast<double>((b + 1) * cols / blocks - b * cols / blocks);
  }
  SD_RETURN_IF_ERROR(CheckNnzLimit(rows, cols, nnz, "exactly"));
  CsrBuilder out(rows, cols, static_cast<int64_t>(nnz));
  int64_t block = 0;
  for (int64_t r = 0; r < rows; ++r) {
    while ((block + 1) * rows / blocks <= r) ++block;
    out.AppendRange(block * cols / blocks, (block + 1) * cols / blocks);
    SD_RETURN_IF_ERROR(out.EndRow());
  }
  return out.Finish();
}

absl::StatusOr<CsrMatrix> GenerateDense(int64_t rows, int64_t cols) {
  SD_RETURN_IF_ERROR(CheckNnzLimit(rows, cols, static_cast<double>(rows) * static_cast<double>(cols), "exactly"));
  CsrBuilder out(rows, cols, rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    out.AppendRange(0, cols);
    SD_RETURN_IF_ERROR(out.EndRow());
  }
  return out.Finish();
}

absl::StatusOr<CsrMatrix> GenerateStructure(const v1::PatternSpec& p, int64_t rows, int64_t cols, Rng& rng) {
  switch (p.family()) {
    case v1::PATTERN_FAMILY_UNSTRUCTURED: return GenerateUnstructured(p, rows, cols, rng);
    case v1::PATTERN_FAMILY_BLOCK: return GenerateBlock(p, rows, cols, rng);
    case v1::PATTERN_FAMILY_N_M: return GenerateNm(p, rows, cols, rng);
    case v1::PATTERN_FAMILY_ROW_SPARSE: return GenerateRowSparse(p, rows, cols, rng);
    case v1::PATTERN_FAMILY_COLUMN_SPARSE: return GenerateColumnSparse(p, rows, cols, rng);
    case v1::PATTERN_FAMILY_BANDED: return GenerateBanded(p, rows, cols);
    case v1::PATTERN_FAMILY_BLOCK_DIAGONAL: return GenerateBlockDiagonal(p, rows, cols);
    case v1::PATTERN_FAMILY_DENSE: return GenerateDense(rows, cols);
    default: {
      const std::string name = v1::PatternFamily_IsValid(p.family()) ? v1::PatternFamily_Name(p.family())
                                                                     : std::to_string(p.family());
      return FieldError("pattern.family", "a generated family (unstructured, block, n_m, row_sparse, "
                        "column_sparse, banded, block_diagonal or dense)", name);
    }
  }
}

// The seed of the values of a generated matrix: a fixed mix of its structure seed, so the two
// streams are independent.
uint64_t ValueSeedFor(uint64_t structure_seed) {
  uint64_t z = structure_seed ^ 0x76616c7565732121ULL;  // "values!!"
  z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdULL;
  z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ULL;
  return z ^ (z >> 33);
}

}  // namespace

absl::StatusOr<CsrMatrix> GenerateMatrix(const v1::PatternSpec& pattern, int64_t rows, int64_t cols,
                                         uint64_t seed, v1::Dtype dtype) {
  if (rows < 1 || rows > kMaxMatrixDim) return FieldError("rows", fmt::format("in [1, {}]", kMaxMatrixDim), rows);
  if (cols < 1 || cols > kMaxMatrixDim) return FieldError("cols", fmt::format("in [1, {}]", kMaxMatrixDim), cols);
  Rng rng(seed);
  SD_ASSIGN_OR_RETURN(CsrMatrix m, GenerateStructure(pattern, rows, cols, rng));
  FillRandomValues(&m, ValueSeedFor(seed), dtype);
  return m;
}

void FillRandomValues(CsrMatrix* m, uint64_t seed, v1::Dtype dtype) {
  Rng rng(seed);
  m->values.resize(m->col_indices.size());
  for (float& v : m->values) {
    float x = 0.0f;
    while (x == 0.0f) x = RoundToDtype(static_cast<float>(rng.Uniform(-1.0, 1.0)), dtype);
    v = x;
  }
}

}  // namespace sparseditto
