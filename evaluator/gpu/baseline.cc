#include "evaluator/gpu/baseline.h"

#include "evaluator/gpu/baseline_impls.h"

namespace sparseditto::gpu {
namespace {

bool IsTwoFourCompatible(const v1::PatternSpec& pattern) {
  if (pattern.family() != v1::PATTERN_FAMILY_N_M) return false;
  return (pattern.m() == 4 && pattern.n() >= 1 && pattern.n() <= 2) || (pattern.m() == 2 && pattern.n() == 1);
}

}  // namespace

std::vector<std::string> BaselineNames(const v1::PatternSpec& pattern, v1::Dtype dtype) {
  std::vector<std::string> names = {"cublas_dense", "cusparse_csr"};
  if (pattern.family() == v1::PATTERN_FAMILY_BLOCK) {
    names.push_back("cusparse_bsr");
    names.push_back("cusparse_blocked_ell");
  }
  if (IsTwoFourCompatible(pattern) && (dtype == v1::DTYPE_FP16 || dtype == v1::DTYPE_BF16)) {
    names.push_back("cusparselt_2to4");
  }
  return names;
}

std::vector<std::unique_ptr<Baseline>> MakeBaselines(const v1::PatternSpec& pattern, v1::Dtype dtype) {
  std::vector<std::unique_ptr<Baseline>> baselines;
  for (const std::string& name : BaselineNames(pattern, dtype)) {
    if (name == "cublas_dense") baselines.push_back(NewCublasDenseBaseline());
    if (name == "cusparse_csr") baselines.push_back(NewCusparseCsrBaseline());
    if (name == "cusparse_bsr") baselines.push_back(NewCusparseBsrBaseline());
    if (name == "cusparse_blocked_ell") baselines.push_back(NewCusparseBlockedEllBaseline());
    if (name == "cusparselt_2to4") baselines.push_back(NewCusparseLt2to4Baseline());
  }
  return baselines;
}

}  // namespace sparseditto::gpu
