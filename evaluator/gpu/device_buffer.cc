#include "evaluator/gpu/device_buffer.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/dtype.h"
#include "evaluator/gpu/cuda_status.h"
#include "fmt/format.h"

namespace sparseditto::gpu {

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes, const char* what) {
  DeviceBuffer buffer;
  const cudaError_t error = cudaMalloc(&buffer.ptr_, std::max<size_t>(bytes, 256));
  if (error != cudaSuccess) {
    buffer.ptr_ = nullptr;
    return CudaStatus(error, fmt::format("cudaMalloc({}, {} bytes)", what, bytes).c_str());
  }
  buffer.size_ = bytes;
  return buffer;
}

absl::StatusOr<DeviceBuffer> DeviceBuffer::FromHost(const void* data, size_t bytes, const char* what) {
  SD_ASSIGN_OR_RETURN(DeviceBuffer buffer, Allocate(bytes, what));
  if (bytes > 0) {
    SD_RETURN_IF_ERROR(CudaStatus(cudaMemcpy(buffer.get(), data, bytes, cudaMemcpyHostToDevice),
                                  fmt::format("cudaMemcpy({}, {} bytes, HostToDevice)", what, bytes).c_str()));
  }
  return buffer;
}

std::vector<uint8_t> EncodeInDtype(const std::vector<float>& values, v1::Dtype dtype) {
  std::vector<uint8_t> out;
  if (dtype == v1::DTYPE_FP16 || dtype == v1::DTYPE_BF16) {
    out.resize(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
      const uint16_t bits =
          dtype == v1::DTYPE_FP16 ? FloatToHalfBits(values[i]) : FloatToBfloat16Bits(values[i]);
      std::memcpy(out.data() + 2 * i, &bits, 2);
    }
  } else {
    out.resize(values.size() * 4);
    if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  }
  return out;
}

cudaDataType_t CudaDataType(v1::Dtype dtype) {
  switch (dtype) {
    case v1::DTYPE_FP16: return CUDA_R_16F;
    case v1::DTYPE_BF16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

void CublasDeleter::operator()(cublasContext* handle) const { cublasDestroy(handle); }
void CusparseDeleter::operator()(cusparseContext* handle) const { cusparseDestroy(handle); }
void SpMatDeleter::operator()(cusparseSpMatDescr* descr) const { cusparseDestroySpMat(descr); }
void DnMatDeleter::operator()(cusparseDnMatDescr* descr) const { cusparseDestroyDnMat(descr); }

absl::StatusOr<CublasHandle> MakeCublasHandle() {
  cublasHandle_t handle = nullptr;
  SD_CUBLAS_CHECK(cublasCreate(&handle));
  return CublasHandle(handle);
}

absl::StatusOr<CusparseHandle> MakeCusparseHandle() {
  cusparseHandle_t handle = nullptr;
  SD_CUSPARSE_CHECK(cusparseCreate(&handle));
  return CusparseHandle(handle);
}

absl::StatusOr<DnMatDescr> MakeRowMajorDnMat(int64_t rows, int64_t cols, void* values,
                                             cudaDataType_t type) {
  cusparseDnMatDescr_t descr = nullptr;
  SD_CUSPARSE_CHECK(cusparseCreateDnMat(&descr, rows, cols, /*ld=*/cols, values, type, CUSPARSE_ORDER_ROW));
  return DnMatDescr(descr);
}

absl::StatusOr<DnMatDescr> MakeColMajorDnMat(int64_t rows, int64_t cols, void* values, cudaDataType_t type) {
  cusparseDnMatDescr_t descr = nullptr;
  SD_CUSPARSE_CHECK(cusparseCreateDnMat(&descr, rows, cols, /*ld=*/rows, values, type, CUSPARSE_ORDER_COL));
  return DnMatDescr(descr);
}

absl::Status DeviceMemoryInfo(size_t* free_bytes, size_t* total_bytes) {
  SD_CUDA_CHECK(cudaMemGetInfo(free_bytes, total_bytes));
  return absl::OkStatus();
}

}  // namespace sparseditto::gpu
