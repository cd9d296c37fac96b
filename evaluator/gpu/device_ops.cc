#include "evaluator/gpu/device_ops.h"

#include <limits>

#include "common/dtype.h"
#include "evaluator/gpu/cuda_status.h"
#include "evaluator/gpu/device_kernels.h"
#include "fmt/format.h"

namespace sparseditto::gpu {

static_assert(static_cast<int>(ElementType::kFp32) == v1::DTYPE_FP32);
static_assert(static_cast<int>(ElementType::kFp16) == v1::DTYPE_FP16);
static_assert(static_cast<int>(ElementType::kBf16) == v1::DTYPE_BF16);

absl::StatusOr<DeviceBuffer> DensifyOnDevice(const CsrMatrix& a, v1::Dtype dtype, const char* what) {
  if (dtype == v1::DTYPE_UNSPECIFIED) dtype = v1::DTYPE_FP32;
  const int element_bytes = DtypeBytes(dtype);
  if (a.rows < 0 || a.cols < 0 || element_bytes == 0) {
    return absl::InvalidArgumentError(fmt::format("{}: bad shape {}x{} or dtype", what, a.rows, a.cols));
  }
  if (a.values.size() != a.col_indices.size() || a.row_offsets.size() != static_cast<size_t>(a.rows) + 1) {
    return absl::InvalidArgumentError(fmt::format("{}: CSR arrays do not match (rows {}, {} offsets, {} columns, {} values)",
                                                  what, a.rows, a.row_offsets.size(), a.col_indices.size(), a.values.size()));
  }
  if (a.cols > 0 && a.rows > std::numeric_limits<int64_t>::max() / a.cols / element_bytes) {
    return absl::InvalidArgumentError(fmt::format("{}: {}x{} dense overflows", what, a.rows, a.cols));
  }
  const size_t bytes = static_cast<size_t>(a.rows) * a.cols * element_bytes;
  size_t free_bytes = 0, total_bytes = 0;
  SD_RETURN_IF_ERROR(DeviceMemoryInfo(&free_bytes, &total_bytes));
  const size_t csr_bytes = (a.row_offsets.size() + a.col_indices.size() + a.values.size()) * 4;
  if (bytes + csr_bytes > free_bytes) {
    return absl::ResourceExhaustedError(fmt::format(
        "{}: a dense {}x{} {} matrix needs {} bytes (plus {} for the CSR copy); the device has {} of {} free",
        what, a.rows, a.cols, DtypeName(dtype), bytes, csr_bytes, free_bytes, total_bytes));
  }
  SD_ASSIGN_OR_RETURN(DeviceBuffer dense, DeviceBuffer::Allocate(bytes, what));
  SD_ASSIGN_OR_RETURN(DeviceBuffer offsets, DeviceBuffer::FromHost(a.row_offsets.data(),
                                                                    a.row_offsets.size() * 4, "CSR row offsets"));
  SD_ASSIGN_OR_RETURN(DeviceBuffer columns, DeviceBuffer::FromHost(a.col_indices.data(),
                                                                    a.col_indices.size() * 4, "CSR columns"));
  SD_ASSIGN_OR_RETURN(DeviceBuffer values,
                      DeviceBuffer::FromHost(a.values.data(), a.values.size() * 4, "CSR values"));
  SD_CUDA_CHECK(LaunchDensify(a.rows, a.cols, a.cols, offsets.as<int32_t>(), columns.as<int32_t>(),
                              values.as<float>(), static_cast<ElementType>(dtype), dense.get(),
                              /*stream=*/nullptr));
  SD_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  return dense;
}

absl::Status ConvertToFloatOnDevice(const void* in, v1::Dtype dtype, int64_t count, float* out,
                                    cudaStream_t stream) {
  if (DtypeBytes(dtype) == 0 || count < 0) {
    return absl::InvalidArgumentError(fmt::format("ConvertToFloatOnDevice: bad dtype {} or count {}",
                                                  static_cast<int>(dtype), count));
  }
  SD_CUDA_CHECK(LaunchConvertToFloat(in, static_cast<ElementType>(dtype), count, out, stream));
  return absl::OkStatus();
}

}  // namespace sparseditto::gpu
