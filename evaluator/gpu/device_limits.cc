#include "evaluator/gpu/device_limits.h"

#include <cuda_fp16.h>

#include <algorithm>

#include "common/status_macros.h"
#include "evaluator/gpu/cuda_status.h"
#include "evaluator/gpu/device_buffer.h"

namespace sparseditto::gpu {
namespace {

// Best time in ms of `runs` calls of `launch` on the default stream, after one warm-up.
template <typename Launch>
absl::StatusOr<double> BestMs(Launch launch, int runs) {
  cudaEvent_t start, stop;
  SD_CUDA_CHECK(cudaEventCreate(&start));
  SD_CUDA_CHECK(cudaEventCreate(&stop));
  SD_RETURN_IF_ERROR(launch());
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    SD_CUDA_CHECK(cudaEventRecord(start));
    SD_RETURN_IF_ERROR(launch());
    SD_CUDA_CHECK(cudaEventRecord(stop));
    SD_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    SD_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    best = std::min(best, static_cast<double>(ms));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return best;
}

}  // namespace

absl::StatusOr<DeviceLimits> MeasureDeviceLimits() {
  DeviceLimits limits;
  constexpr size_t kCopyBytes = size_t{1} << 30;
  SD_ASSIGN_OR_RETURN(DeviceBuffer from, DeviceBuffer::Allocate(kCopyBytes, "copy source"));
  SD_ASSIGN_OR_RETURN(DeviceBuffer to, DeviceBuffer::Allocate(kCopyBytes, "copy target"));
  SD_CUDA_CHECK(cudaMemset(from.get(), 1, kCopyBytes));
  SD_ASSIGN_OR_RETURN(const double copy_ms, BestMs([&] {
    return CudaStatus(cudaMemcpyAsync(to.get(), from.get(), kCopyBytes, cudaMemcpyDeviceToDevice), "copy");
  }, 5));
  limits.copy_bandwidth_gbs = 2.0 * kCopyBytes / (copy_ms * 1e-3) / 1e9;

  constexpr int kSize = 8192;
  const size_t elements = size_t{kSize} * kSize;
  SD_ASSIGN_OR_RETURN(DeviceBuffer a, DeviceBuffer::Allocate(elements * 4, "gemm A"));
  SD_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::Allocate(elements * 4, "gemm B"));
  SD_ASSIGN_OR_RETURN(DeviceBuffer c, DeviceBuffer::Allocate(elements * 4, "gemm C"));
  SD_CUDA_CHECK(cudaMemset(a.get(), 0x3c, elements * 4));  // nonzero operands: zeros run faster
  SD_CUDA_CHECK(cudaMemset(b.get(), 0x3c, elements * 4));
  SD_ASSIGN_OR_RETURN(CublasHandle handle, MakeCublasHandle());
  const float alpha = 1.0f, beta = 0.0f;
  SD_ASSIGN_OR_RETURN(const double half_ms, BestMs([&] {
    return CublasStatus(cublasGemmEx(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, kSize, kSize, kSize, &alpha, a.get(),
                                     CUDA_R_16F, kSize, b.get(), CUDA_R_16F, kSize, &beta, c.get(), CUDA_R_16F, kSize,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                        "cublasGemmEx");
  }, 5));
  limits.tensor_tflops = 2.0 * kSize * kSize * kSize / (half_ms * 1e-3) / 1e12;
  SD_CUBLAS_CHECK(cublasSetMathMode(handle.get(), CUBLAS_PEDANTIC_MATH));
  SD_ASSIGN_OR_RETURN(const double single_ms, BestMs([&] {
    return CublasStatus(cublasSgemm(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, kSize / 2, kSize / 2, kSize / 2, &alpha,
                                    a.as<float>(), kSize / 2, b.as<float>(), kSize / 2, &beta, c.as<float>(), kSize / 2),
                        "cublasSgemm");
  }, 3));
  limits.fp32_tflops = 2.0 * (kSize / 2.0) * (kSize / 2.0) * (kSize / 2.0) / (single_ms * 1e-3) / 1e12;
  SD_CUDA_CHECK(cudaDeviceSynchronize());
  return limits;
}

}  // namespace sparseditto::gpu
