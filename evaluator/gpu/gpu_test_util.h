// Test support for the evaluator's GPU tests: a host double-precision SpMM, seeded inputs, device
// upload/download in any dtype, and the tolerance check. Not for production code.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "evaluator/gpu/device_buffer.h"
#include "matrix/csr_matrix.h"
#include "task.pb.h"

namespace sparseditto::gpu::testing {

// True when cudaGetDeviceCount reports at least one device.
bool HasCudaDevice();

// The transpose of `x` (`rows` x `cols`, row-major) as `cols` x `rows`: an operand or result in the other layout
// (X = B^T, Y = C^T).
template <typename T>
std::vector<T> Transposed(const std::vector<T>& x, int64_t rows, int64_t cols) {
  std::vector<T> t(x.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) t[j * rows + i] = x[i * cols + j];
  return t;
}

// count values uniform in [-1, 1), rounded to dtype.
std::vector<float> RandomValues(int64_t count, uint64_t seed, v1::Dtype dtype);

// C = A * B in double on the host (B cols x n row-major), and |A| * |B| (the scale of each element's
// rounding error).
struct HostProduct {
  std::vector<double> c;
  std::vector<double> abs;
};
HostProduct HostSpmm(const CsrMatrix& a, const std::vector<float>& b, int64_t n);

// HostSpmm with B and the result in `layout` (sparseditto_kernel.h's sd_layout): for NK `b` is
// X = B^T (n x cols row-major) and c, abs are Y = C^T (n x rows row-major); KN is HostSpmm.
HostProduct HostSpmmIn(v1::Layout layout, const CsrMatrix& a, const std::vector<float>& b, int64_t n);
// The width of one row of C as `layout` lays it out (n for KN, rows for NK): Compare's `n`.
inline int64_t OutputWidth(v1::Layout layout, int64_t rows, int64_t n) { return layout == v1::LAYOUT_NK ? rows : n; }

// Device copy of `values` in dtype.
absl::StatusOr<DeviceBuffer> Upload(const std::vector<float>& values, v1::Dtype dtype);
// count elements of dtype from the device, widened to float.
absl::StatusOr<std::vector<float>> Download(const void* device, int64_t count, v1::Dtype dtype);
// Fills bytes with 0xFF: NaN in fp32, fp16 and bf16.
absl::Status FillNaN(void* device, size_t bytes);

// got[i] passes when finite and |got[i] - ref[i]| <= rel_out * |ref[i]| + rel_acc * abs[i].
struct Comparison {
  bool ok = true;
  double max_abs_error = 0;
  double max_scaled_error = 0;  // max |got - ref| / abs (the error relative to the terms' magnitude)
  std::string first_failure;    // "element i (row r, col c): expected e, got g, allowed t"
};
Comparison Compare(const std::vector<float>& got, const std::vector<double>& ref, const std::vector<double>& abs,
                   int64_t n, double rel_out, double rel_acc);
// The same against a float reference (e.g. the GPU ReferenceGemm's output).
Comparison Compare(const std::vector<float>& got, const std::vector<float>& ref, const std::vector<double>& abs,
                   int64_t n, double rel_out, double rel_acc);

}  // namespace sparseditto::gpu::testing
