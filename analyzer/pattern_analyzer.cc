#include "analyzer/pattern_analyzer.h"

#include <cctype>
#include <string_view>

#include "analyzer/pattern_measures.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

constexpr std::pair<int, int> kReportedNmRatios[] = {{1, 2}, {2, 4}, {1, 4}, {2, 8}, {4, 8}};
constexpr int64_t kReportedBlockSides[] = {8, 16, 32, 64};

nlohmann::json LengthStatsToJson(const LengthStats& s) {
  return {{"mean", s.mean}, {"stddev", s.stddev}, {"min", s.min},     {"max", s.max},
          {"cv", s.cv},     {"gini", s.gini},     {"empty", s.empty}, {"full", s.full}};
}

nlohmann::json DetectedToJson(const v1::PatternSpec& p) {
  nlohmann::json j = {{"family", FamilyYamlName(p.family())}};
  switch (p.family()) {
    case v1::PATTERN_FAMILY_UNSTRUCTURED:
      j["sparsity"] = p.sparsity();
      j["row_lengths"] = p.row_lengths() == v1::ROW_LENGTHS_SKEWED ? "skewed" : "uniform";
      break;
    case v1::PATTERN_FAMILY_BLOCK:
      j["block_rows"] = p.block_rows();
      j["block_cols"] = p.block_cols();
      j["sparsity"] = p.sparsity();
      break;
    case v1::PATTERN_FAMILY_N_M:
      j["n"] = p.n();
      j["m"] = p.m();
      break;
    case v1::PATTERN_FAMILY_ROW_SPARSE:
    case v1::PATTERN_FAMILY_COLUMN_SPARSE: j["sparsity"] = p.sparsity(); break;
    case v1::PATTERN_FAMILY_BANDED: j["half_bandwidth"] = p.half_bandwidth(); break;
    case v1::PATTERN_FAMILY_BLOCK_DIAGONAL: j["num_blocks"] = p.num_blocks(); break;
    default: break;
  }
  return j;
}

std::string DescribeFamily(const PatternFeatures& f) {
  const v1::PatternSpec& p = f.detected;
  switch (p.family()) {
    case v1::PATTERN_FAMILY_UNSTRUCTURED:
      if (f.nnz == 0) return "unstructured (no nonzeros)";
      return fmt::format("unstructured ({} rows, cv {:.2f})",
                         p.row_lengths() == v1::ROW_LENGTHS_SKEWED ? "skewed" : "uniform", f.row_lengths.cv);
    case v1::PATTERN_FAMILY_BLOCK:
      return fmt::format("block {}x{} ({:.0f}% of blocks empty)", p.block_rows(), p.block_cols(), 100 * p.sparsity());
    case v1::PATTERN_FAMILY_N_M: return fmt::format("{}:{}", p.n(), p.m());
    case v1::PATTERN_FAMILY_ROW_SPARSE: return fmt::format("row_sparse ({:.0f}% of rows empty)", 100 * p.sparsity());
    case v1::PATTERN_FAMILY_COLUMN_SPARSE:
      return fmt::format("column_sparse ({:.0f}% of columns empty)", 100 * p.sparsity());
    case v1::PATTERN_FAMILY_BANDED: return fmt::format("banded (half bandwidth {})", p.half_bandwidth());
    case v1::PATTERN_FAMILY_BLOCK_DIAGONAL: return fmt::format("block_diagonal ({} blocks)", p.num_blocks());
    default: return FamilyYamlName(p.family());
  }
}

}  // namespace

std::string FamilyYamlName(v1::PatternFamily family) {
  if (!v1::PatternFamily_IsValid(family)) return fmt::format("unknown({})", static_cast<int>(family));
  std::string name = v1::PatternFamily_Name(family);
  constexpr std::string_view kPrefix = "PATTERN_FAMILY_";
  if (name.starts_with(kPrefix)) name.erase(0, kPrefix.size());
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

PatternFeatures AnalyzePattern(const CsrMatrix& m) {
  PatternFeatures f;
  f.rows = m.rows;
  f.cols = m.cols;
  f.nnz = m.nnz();
  f.density = m.Density();
  f.row_lengths = RowLengthStats(m);
  f.col_lengths = ColumnLengthStats(m);
  for (const auto& [n, group] : kReportedNmRatios) f.n_m.push_back(MeasureNmConformance(m, n, group));
  for (int64_t side : kReportedBlockSides) f.blocks.push_back(MeasureBlockFill(m, side, side));
  f.bandwidth = MeasureBandwidth(m);
  ClassifyFamily(m, &f);
  return f;
}

nlohmann::json FeaturesToJson(const PatternFeatures& f) {
  nlohmann::json j;
  j["rows"] = f.rows;
  j["cols"] = f.cols;
  j["nnz"] = f.nnz;
  j["density"] = f.density;
  j["row_lengths"] = LengthStatsToJson(f.row_lengths);
  j["col_lengths"] = LengthStatsToJson(f.col_lengths);
  j["n_m"] = nlohmann::json::array();
  for (const NmConformance& c : f.n_m) {
    j["n_m"].push_back({{"n", c.n},
                        {"m", c.m},
                        {"groups", c.groups},
                        {"conforming_groups", c.conforming_groups},
                        {"conforming_fraction", c.conforming_fraction},
                        {"partial_final_group", c.partial_final_group}});
  }
  j["blocks"] = nlohmann::json::array();
  for (const BlockFill& b : f.blocks) {
    j["blocks"].push_back({{"block_rows", b.block_rows},
                           {"block_cols", b.block_cols},
                           {"total_blocks", b.total_blocks},
                           {"nonempty_blocks", b.nonempty_blocks},
                           {"fill", b.fill},
                           {"nonempty_fraction", b.nonempty_fraction}});
  }
  j["bandwidth"] = {{"lower", f.bandwidth.lower}, {"upper", f.bandwidth.upper}, {"half", f.bandwidth.half}};
  j["family"] = FamilyYamlName(f.family());
  j["detected"] = DetectedToJson(f.detected);
  j["evidence"] = f.evidence;
  return j;
}

std::string FeaturesSummary(const PatternFeatures& f) {
  std::string line = fmt::format("{}x{} nnz={} density={:.3f} {}", f.rows, f.cols, f.nnz, f.density, DescribeFamily(f));
  for (const NmConformance& c : f.n_m) {
    if (c.n == 2 && c.m == 4) line += fmt::format("; 2:4 conform {:.2f}", c.conforming_fraction);
  }
  for (const BlockFill& b : f.blocks) {
    if (b.block_rows == 16 && b.block_cols == 16) line += fmt::format("; block16 fill {:.2f}", b.fill);
  }
  line += fmt::format("; empty rows {}", f.row_lengths.empty);
  return line;
}

}  // namespace sparseditto
