// RAII device memory and library handles for the evaluator's GPU code.
//
// Ownership: a DeviceBuffer owns one cudaMalloc allocation and frees it in its destructor (on the
// device that was current when it was made; the evaluator uses one device per process). The handle
// types own a cuBLAS / cuSPARSE handle or descriptor and destroy it likewise. All are move-only.
// Errors: Status naming the failed call (evaluator/gpu/cuda_status.h). Failures while freeing cannot
// be reported from a destructor and are ignored.
// Thread-safety: none; use from one thread.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "task.pb.h"

namespace sparseditto::gpu {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Allocates `bytes` (at least 256, so that every buffer is a valid, aligned, non-null pointer even
  // for an empty array). `what` names the buffer in the error message.
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes, const char* what);

  // Allocates and copies `bytes` from host memory (synchronous).
  static absl::StatusOr<DeviceBuffer> FromHost(const void* data, size_t bytes, const char* what);

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t size() const { return size_; }  // the bytes asked for (not the 256-byte minimum)

 private:
  void* ptr_ = nullptr;
  size_t size_ = 0;
};

// `values` (exactly representable in `dtype`, as CsrMatrix promises) encoded in `dtype` on the
// host: 4 bytes per element for fp32, 2 for fp16 and bf16.
std::vector<uint8_t> EncodeInDtype(const std::vector<float>& values, v1::Dtype dtype);

// The CUDA data type of `dtype` (CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF); CUDA_R_32F for unspecified.
cudaDataType_t CudaDataType(v1::Dtype dtype);

struct CublasDeleter {
  void operator()(cublasContext* handle) const;
};
struct CusparseDeleter {
  void operator()(cusparseContext* handle) const;
};
struct SpMatDeleter {
  void operator()(cusparseSpMatDescr* descr) const;
};
struct DnMatDeleter {
  void operator()(cusparseDnMatDescr* descr) const;
};
using CublasHandle = std::unique_ptr<cublasContext, CublasDeleter>;
using CusparseHandle = std::unique_ptr<cusparseContext, CusparseDeleter>;
using SpMatDescr = std::unique_ptr<cusparseSpMatDescr, SpMatDeleter>;
using DnMatDescr = std::unique_ptr<cusparseDnMatDescr, DnMatDeleter>;

absl::StatusOr<CublasHandle> MakeCublasHandle();
absl::StatusOr<CusparseHandle> MakeCusparseHandle();

// A row-major rows x cols dense descriptor over `values` (which may be a placeholder that Run
// replaces with cusparseDnMatSetValues).
absl::StatusOr<DnMatDescr> MakeRowMajorDnMat(int64_t rows, int64_t cols, void* values,
                                             cudaDataType_t type);
// The same column-major (ld = rows): the NK layout's X^T and Y^T (sd_layout, sparseditto_kernel.h).
absl::StatusOr<DnMatDescr> MakeColMajorDnMat(int64_t rows, int64_t cols, void* values, cudaDataType_t type);

// Free and total bytes of the current device (cudaMemGetInfo).
absl::Status DeviceMemoryInfo(size_t* free_bytes, size_t* total_bytes);

}  // namespace sparseditto::gpu
