// The pattern analyzer: structural features of a sparse matrix, and the family it most resembles.
//
// AnalyzePattern measures a CsrMatrix (only its pattern; values are ignored) and names the
// PatternFamily a generator would need to produce it, with the parameters it detected and the
// evidence for the choice. Every feature costs O(nnz + rows + cols) time (a few passes over the
// column indices; no per-element work on the dense rows x cols grid), so a 4096 x 11008 matrix
// with 22M nonzeros is analysed in well under a second.
//
// Classification, first match wins (thresholds are the k* constants below):
//   1. no nonzeros: UNSTRUCTURED (evidence says so).
//   2. DENSE: density >= kDenseDensity.
//   3. N_M: either every full group of m consecutive columns (2 <= m <= kMaxDetectedNmGroup, at
//      least two full groups per row) holds exactly the same count n (0 < n < m) and the final
//      partial group min(n, its length) - the smallest such m is reported; or every group conforms
//      to one of the standard ratios (1:2, 2:4, 1:4, 2:8, 4:8) and density >= kNmSaturation * n/m.
//   4. ROW_SPARSE / COLUMN_SPARSE: every row (column) is full or empty, and at least one is empty.
//   5. BANDED: the nonzeros are exactly the full band [c - lower, c + upper] (clipped) around
//      c = floor(i * cols / rows) in every row. Checked before block-diagonal because some matrices
//      (the identity) are both, and the band is the simpler description.
//   6. BLOCK_DIAGONAL: every row is one contiguous run, consecutive rows with the same run form
//      blocks, and the blocks (at least 2) tile the rows and the columns in order.
//   7. BLOCK: the exact block grid (block_rows = gcd of the rows where the row pattern changes,
//      block_cols = gcd of the column offsets where runs start or end) has area >= 2; or, for near-
//      block patterns, the largest power-of-two shape up to 64 x 64 with fill >= kBlockFill while at
//      most kBlockNonemptyMax of its blocks are nonempty.
//   8. UNSTRUCTURED, with row_lengths SKEWED when the row-length coefficient of variation exceeds
//      kSkewCvFactor x the binomial expectation sqrt((1 - d) / (cols * d)) + kSkewCvSlack, else UNIFORM.
// Tiny or nearly empty matrices can be ambiguous (a few nonzeros may happen to look like blocks).
//
// Thread-safe; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "matrix/csr_matrix.h"
#include "nlohmann/json.hpp"
#include "task.pb.h"

namespace sparseditto {

inline constexpr double kDenseDensity = 0.95;
inline constexpr int kMaxDetectedNmGroup = 64;
inline constexpr double kNmSaturation = 0.9;
inline constexpr double kBlockFill = 0.97;
inline constexpr double kBlockNonemptyMax = 0.95;
inline constexpr double kSkewCvFactor = 2.0;
inline constexpr double kSkewCvSlack = 0.1;

// Distribution of the number of nonzeros per row (or per column).
struct LengthStats {
  double mean = 0;    // nnz / rows (or cols)
  double stddev = 0;  // population standard deviation
  int64_t min = 0;
  int64_t max = 0;
  double cv = 0;      // coefficient of variation, stddev / mean; 0 when mean is 0
  double gini = 0;    // Gini coefficient of the lengths: 0 all equal, toward 1 all nonzeros in one line
  int64_t empty = 0;  // lines with no nonzeros
  int64_t full = 0;   // lines with every entry nonzero
};

// Conformance to "at most n nonzeros in every group of m consecutive columns of a row" (along K).
// Groups are [g*m, (g+1)*m) in every row; when cols % m != 0 each row ends in a partial group of
// cols % m columns, which conforms if it holds at most n.
struct NmConformance {
  int n = 0;
  int m = 0;
  int64_t groups = 0;                // rows * ceil(cols / m), partial groups included
  int64_t conforming_groups = 0;
  double conforming_fraction = 0;    // conforming_groups / groups (1 when there are no groups)
  bool partial_final_group = false;  // cols % m != 0
};

// How the nonzeros fill an aligned grid of block_rows x block_cols blocks (edge blocks clipped).
struct BlockFill {
  int64_t block_rows = 0;
  int64_t block_cols = 0;
  int64_t total_blocks = 0;     // ceil(rows / block_rows) * ceil(cols / block_cols)
  int64_t nonempty_blocks = 0;  // blocks holding at least one nonzero
  double fill = 0;              // nnz / total area of the nonempty blocks; 1 = every touched block full
  double nonempty_fraction = 0; // nonempty_blocks / total_blocks
};

// Distance of the nonzeros from the scaled diagonal c(i) = floor(i * cols / rows).
struct Bandwidth {
  int64_t lower = 0;  // max(0, max over nonzeros of c(i) - j)
  int64_t upper = 0;  // max(0, max over nonzeros of j - c(i))
  int64_t half = 0;   // max(lower, upper) = max |j - c(i)|
};

struct PatternFeatures {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
  double density = 0;  // nnz / (rows * cols); 0 for an empty shape

  LengthStats row_lengths;  // nonzeros per row
  LengthStats col_lengths;  // nonzeros per column

  std::vector<NmConformance> n_m;   // 1:2, 2:4, 1:4, 2:8, 4:8 in that order
  std::vector<BlockFill> blocks;    // square 8, 16, 32, 64 in that order
  Bandwidth bandwidth;

  // The family the matrix most resembles and its detected parameters, written as the PatternSpec a
  // generator would take: family always; sparsity (unstructured: 1 - density; block: fraction of
  // empty blocks; row/column-sparse: fraction of empty rows/columns); row_lengths (unstructured);
  // block_rows/block_cols; n/m; half_bandwidth (banded; see bandwidth for lower/upper);
  // num_blocks (block-diagonal). Fields that do not apply to the family are left unset.
  v1::PatternSpec detected;
  // Human-readable reasons for the choice, e.g. "all 2:4 groups conform, density 0.500".
  std::vector<std::string> evidence;

  v1::PatternFamily family() const { return detected.family(); }
};

// Measures `m` (its pattern; values are ignored) and classifies it. `m` must satisfy ValidateCsr.
PatternFeatures AnalyzePattern(const CsrMatrix& m);

// Every field above as JSON: {"rows", "cols", "nnz", "density", "row_lengths": {...},
// "col_lengths": {...}, "n_m": [...], "blocks": [...], "bandwidth": {...}, "family": "block",
// "detected": {"family": "block", "block_rows": 32, ...}, "evidence": [...]}. Families are written
// as in task YAML (lower case: unstructured, block, n_m, row_sparse, ...).
nlohmann::json FeaturesToJson(const PatternFeatures& f);

// One line for logs and reports, e.g.
// "2048x512 nnz=104857 density=0.100 unstructured (uniform rows, cv 0.21); 2:4 conform 0.43;
//  block16 fill 0.11; empty rows 0".
std::string FeaturesSummary(const PatternFeatures& f);

// The family's name as task YAML writes it ("block_diagonal").
std::string FamilyYamlName(v1::PatternFamily family);

}  // namespace sparseditto
