// The correctness reference (DESIGN.md §3.4): C_ref = densify(A) * B in true fp32 with cuBLAS.
//
// A is densified once, in fp32, on the current device (rows x cols x 4 bytes: 256 MB for 8192x8192).
// B arrives in the task dtype; fp16/bf16 B is widened to fp32 on the device (exact), fp32 B is used
// as is. The product is cublasSgemm with the handle's math mode pinned to CUBLAS_PEDANTIC_MATH: the
// prescribed fp32 compute type for every step, so no TF32 tensor-core path (and no other
// reduced-precision shortcut) can be chosen, whatever NVIDIA_TF32_OVERRIDE or cuBLAS defaults say.
// Row-major is handled by the transpose trick: row-major C = A*B is column-major C^T = B^T * A^T, so
// Sgemm(m = n, n = rows, k = cols, B with ld n, A with ld cols, C with ld n). In SD_LAYOUT_NK B is
// X = B^T (n x cols row-major, i.e. B column-major) and C is Y = C^T (n x rows row-major, i.e. C
// column-major): Sgemm(OP_T, OP_N, m = rows, n = n, k = cols, A with ld cols, X with ld cols, Y with ld rows).
//
// Ownership: owns its device copy of A, the fp32 copy of B, and its cuBLAS handle (RAII).
// Errors: Status naming the CUDA/cuBLAS call; ResourceExhausted when the dense A does not fit.
// Thread-safety: not thread-safe; one CUDA device, the one current at Create.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "evaluator/gpu/device_buffer.h"
#include "matrix/csr_matrix.h"
#include "task.pb.h"

namespace sparseditto::gpu {

class ReferenceGemm {
 public:
  // `a` must satisfy ValidateCsr (values exactly representable in `dtype`); `dtype` is the type B
  // will be given in (fp32, fp16 or bf16; InvalidArgument otherwise).
  static absl::StatusOr<std::unique_ptr<ReferenceGemm>> Create(const CsrMatrix& a, v1::Dtype dtype);

  // c_ref (fp32, device) = A * B, with b_device (the dtype given to Create, device), both in `layout`:
  // KN: B cols x n and C rows x n row-major; NK: B as X = B^T (n x cols) and C as Y = C^T (n x rows),
  // row-major. Enqueues on `stream` and does not wait. Not for timing: for fp16/bf16 it may
  // (re)allocate the fp32 copy of B, which synchronizes the device.
  // Errors: InvalidArgument for n < 1 or n beyond int, or a layout the enum does not name; the failing call otherwise.
  absl::Status Compute(const void* b_device, int64_t n, float* c_ref_device, cudaStream_t stream,
                       v1::Layout layout = v1::LAYOUT_KN);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  v1::Dtype dtype() const { return dtype_; }
  // The dense fp32 A on the device, rows x cols row-major (valid while this object lives).
  const float* dense_a() const { return dense_a_.as<float>(); }

 private:
  ReferenceGemm() = default;

  int64_t rows_ = 0;
  int64_t cols_ = 0;
  v1::Dtype dtype_ = v1::DTYPE_FP32;
  DeviceBuffer dense_a_;
  DeviceBuffer b_fp32_;  // grows to the largest cols x n seen; unused for fp32 B
  CublasHandle cublas_;
};

}  // namespace sparseditto::gpu
