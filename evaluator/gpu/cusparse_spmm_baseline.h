// Internal to evaluator/gpu: the part the cuSPARSE generic-API baselines (CSR, BSR, Blocked-ELL)
// share. A subclass only builds its sparse-matrix descriptor; this class owns the handle, the dense
// B/C descriptors for every prepared n (created in Prepare over a placeholder and repointed in Run
// with cusparseDnMatSetValues, which neither allocates nor synchronizes), and one workspace sized by
// cusparseSpMM_bufferSize for the largest need over n_values. Prepare ends with one trial
// product: a real cusparseSpMM for the smallest n on zeroed scratch B/C, so a combination cuSPARSE
// refuses only at run time is reported absent (FailedPrecondition) rather than failing the harness.
// Compute type is always CUDA_R_32F (fp32 accumulation; fp16/bf16 in and out). In the NK layout the
// dense descriptors are CUSPARSE_ORDER_COL (B cols x n with ld cols, C rows x n with ld rows): the
// caller's X [n x cols] and Y [n x rows] row-major as they are.
// Ownership: owns every device buffer and descriptor (RAII). Thread-safety: none.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "evaluator/gpu/baseline.h"
#include "evaluator/gpu/device_buffer.h"

namespace sparseditto::gpu {

class CusparseSpmmBaseline : public Baseline {
 public:
  absl::Status Prepare(const CsrMatrix& a, v1::Dtype dtype, const v1::PatternSpec& pattern,
                       const std::vector<int64_t>& n_values, v1::Layout layout) final;
  absl::Status Run(const void* b, void* c, int64_t n, cudaStream_t stream) final;
  std::string note() const final { return note_; }

 protected:
  // Uploads `a` in the subclass's format (keeping the device arrays in `storage`) and returns its
  // descriptor. FailedPrecondition when the format does not apply to this matrix or pattern.
  // `note` receives the format's parameters for the report.
  virtual absl::StatusOr<SpMatDescr> BuildMatrix(const CsrMatrix& a, v1::Dtype dtype,
                                                 const v1::PatternSpec& pattern,
                                                 std::vector<DeviceBuffer>* storage, std::string* note) = 0;
  virtual cusparseSpMMAlg_t algorithm() const = 0;

 private:
  absl::Status PrepareImpl(const CsrMatrix& a, v1::Dtype dtype, const v1::PatternSpec& pattern,
                           const std::vector<int64_t>& n_values, v1::Layout layout);
  absl::Status Multiply(const void* b, void* c, int64_t n, cudaStream_t stream);

  struct Dense {
    DnMatDescr b;
    DnMatDescr c;
  };
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  v1::Dtype dtype_ = v1::DTYPE_FP32;
  std::vector<DeviceBuffer> storage_;
  DeviceBuffer placeholder_;
  DeviceBuffer workspace_;
  CusparseHandle handle_;
  SpMatDescr matrix_;
  std::map<int64_t, Dense> dense_;  // by n
  std::string note_;
};

// Shared by the block formats: the square block size used for a BLOCK pattern of block_rows x
// block_cols (the pattern's size when square, else gcd(block_rows, block_cols), which tiles every
// pattern block exactly), or FailedPrecondition when it is 1, or does not divide rows and cols (the
// library would read B and write C beyond their ends).
absl::StatusOr<int64_t> SquareBlockSize(const CsrMatrix& a, const v1::PatternSpec& pattern,
                                        const char* format);

}  // namespace sparseditto::gpu
