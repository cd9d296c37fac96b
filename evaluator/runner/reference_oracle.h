// The correctness oracle of a problem: ref = A·B and abs_sum = |A|·|B| in fp32 through cuBLAS
// (evaluator/gpu/reference_gemm.h), B given and C made in the task's layout, so that the candidate's
// output and the reference compare element by element; abs_sum scales the tolerance
// (evaluator/runner/output_check.h).
// Not thread-safe.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "absl/status/statusor.h"
#include "evaluator/gpu/reference_gemm.h"
#include "matrix/csr_matrix.h"
#include "task.pb.h"

namespace sparseditto {

class ReferenceOracle {
 public:
  static absl::StatusOr<std::unique_ptr<ReferenceOracle>> Create(const CsrMatrix& a, v1::Dtype dtype,
                                                                 v1::Layout layout);

  // b and abs_b: cols x n device arrays of the dtype; ref and abs_sum: rows x n fp32 device arrays;
  // all in the layout given to Create (NK: b is n x cols, ref n x rows, row-major).
  absl::Status Compute(const void* b, const void* abs_b, int64_t n, float* ref, float* abs_sum, cudaStream_t stream);

  v1::Layout layout() const { return layout_; }

 private:
  v1::Layout layout_ = v1::LAYOUT_KN;
  std::unique_ptr<gpu::ReferenceGemm> a_;
  std::unique_ptr<gpu::ReferenceGemm> abs_a_;
};

}  // namespace sparseditto
