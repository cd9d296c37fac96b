#include "kernels/testing/device_run.h"

#include <cuda_runtime_api.h>

#include <cstring>

#include "common/dtype.h"
#include "evaluator/gpu/device_buffer.h"
#include "fmt/format.h"

namespace sparseditto::testing {
namespace {

constexpr int kGuard = 16;  // values watched on each side of C

absl::Status Cuda(cudaError_t e, const char* what) {
  return e == cudaSuccess ? absl::OkStatus() : absl::InternalError(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}

float FromBytes(const unsigned char* p, v1::Dtype dtype) {
  if (dtype == v1::DTYPE_FP32) {
    float x;
    std::memcpy(&x, p, 4);
    return x;
  }
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return dtype == v1::DTYPE_FP16 ? HalfBitsToFloat(bits) : Bfloat16BitsToFloat(bits);
}

}  // namespace

absl::StatusOr<std::vector<float>> RunOnDevice(const CandidateLibrary& library, const sd_problem& problem,
                                               const std::vector<float>& b, int64_t n, int b_off, int c_off) {
  if (b_off < 0 || c_off < 0 || c_off > kGuard || b_off > kGuard) return absl::InvalidArgumentError("offsets 0 .. 16 values");
  const v1::Dtype dtype = static_cast<v1::Dtype>(problem.dtype);
  const int size = DtypeBytes(dtype);
  void* state = nullptr;
  char error[512] = {0};
  if (library.prepare(&problem, &state, error, sizeof(error)) != 0 || state == nullptr) {
    return absl::FailedPreconditionError(fmt::format("prepare: {}", error));
  }
  const std::vector<uint8_t> b_bytes = gpu::EncodeInDtype(b, dtype);
  const size_t c_count = static_cast<size_t>(problem.rows) * n;
  const size_t c_bytes = (c_count + 2 * kGuard) * size;
  unsigned char *d_b = nullptr, *d_c = nullptr;
  cudaStream_t stream = nullptr;
  std::vector<unsigned char> out(c_bytes);
  absl::Status s = Cuda(cudaMalloc(reinterpret_cast<void**>(&d_b), b_bytes.size() + kGuard * size), "cudaMalloc B");
  if (s.ok()) s = Cuda(cudaMalloc(reinterpret_cast<void**>(&d_c), c_bytes), "cudaMalloc C");
  if (s.ok()) s = Cuda(cudaMemcpy(d_b + b_off * size, b_bytes.data(), b_bytes.size(), cudaMemcpyHostToDevice), "copy B");
  if (s.ok()) s = Cuda(cudaMemset(d_c, 0xff, c_bytes), "fill C");
  if (s.ok()) s = Cuda(cudaStreamCreate(&stream), "stream");
  if (s.ok() && library.run(state, d_b + b_off * size, d_c + c_off * size, n, stream) != 0) s = absl::InternalError("run returned nonzero");
  if (s.ok()) s = Cuda(cudaStreamSynchronize(stream), "run");
  if (s.ok()) s = Cuda(cudaMemcpy(out.data(), d_c, c_bytes, cudaMemcpyDeviceToHost), "copy C");
  if (stream != nullptr) cudaStreamDestroy(stream);
  cudaFree(d_b), cudaFree(d_c);
  library.release(state);
  if (!s.ok()) return s;
  const size_t after = (c_off + c_count) * size;  // C is [c_off * size, after); watched: before it and kGuard values after
  for (size_t i = 0; i < c_bytes; ++i) {
    if ((i < static_cast<size_t>(c_off) * size || (i >= after && i < after + kGuard * size)) && out[i] != 0xff) {
      return absl::InternalError(fmt::format("a value {} C was written (byte {} of C)", i < after ? "before" : "after",
                                             static_cast<int64_t>(i) - static_cast<int64_t>(c_off) * size));
    }
  }
  std::vector<float> c(c_count);
  for (size_t i = 0; i < c_count; ++i) c[i] = FromBytes(&out[(c_off + i) * size], dtype);
  return c;
}

}  // namespace sparseditto::testing
