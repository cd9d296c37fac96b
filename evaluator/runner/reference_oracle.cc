#include "evaluator/runner/reference_oracle.h"

#include <cmath>

#include "common/status_macros.h"

namespace sparseditto {

absl::StatusOr<std::unique_ptr<ReferenceOracle>> ReferenceOracle::Create(const CsrMatrix& a, v1::Dtype dtype,
                                                                        v1::Layout layout) {
  auto oracle = std::unique_ptr<ReferenceOracle>(new ReferenceOracle);
  oracle->layout_ = layout;
  SD_ASSIGN_OR_RETURN(oracle->a_, gpu::ReferenceGemm::Create(a, dtype));
  CsrMatrix abs_a = a;
  for (float& v : abs_a.values) v = std::abs(v);
  SD_ASSIGN_OR_RETURN(oracle->abs_a_, gpu::ReferenceGemm::Create(abs_a, dtype));
  return oracle;
}

absl::Status ReferenceOracle::Compute(const void* b, const void* abs_b, int64_t n, float* ref, float* abs_sum,
                                      cudaStream_t stream) {
  SD_RETURN_IF_ERROR(a_->Compute(b, n, ref, stream, layout_));
  return abs_a_->Compute(abs_b, n, abs_sum, stream, layout_);
}

}  // namespace sparseditto
