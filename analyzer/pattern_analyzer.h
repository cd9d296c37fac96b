// The pattern analyzer: structural features of a sparse matrix, and the family it most resembles.
// (Contract sketch; the implementer completes the struct and documents every field.)
#pragma once

#include <string>

#include "matrix/csr_matrix.h"
#include "nlohmann/json.hpp"
#include "task.pb.h"

namespace sparseditto {

struct PatternFeatures;  // shape, nnz, density, row-length stats (mean, std, min, max, Gini), column stats,
                         // N:M conformance (1:2, 2:4, 1:4, 2:8, 4:8), block fill at 8/16/32/64,
                         // bandwidth, empty rows/cols, family + evidence.

PatternFeatures AnalyzePattern(const CsrMatrix& m);
nlohmann::json FeaturesToJson(const PatternFeatures& f);
std::string FeaturesSummary(const PatternFeatures& f);  // one line

}  // namespace sparseditto
