#include "evaluator/gpu/gpu_test_util.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>

#include "common/dtype.h"
#include "common/rng.h"
#include "evaluator/gpu/cuda_status.h"
#include "fmt/format.h"

namespace sparseditto::gpu::testing {

bool HasCudaDevice() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

std::vector<float> RandomValues(int64_t count, uint64_t seed, v1::Dtype dtype) {
  Rng rng(seed);
  std::vector<float> v(count);
  for (float& x : v) x = RoundToDtype(static_cast<float>(rng.Uniform(-1.0, 1.0)), dtype);
  return v;
}

HostProduct HostSpmm(const CsrMatrix& a, const std::vector<float>& b, int64_t n) {
  HostProduct p;
  p.c.assign(a.rows * n, 0.0);
  p.abs.assign(a.rows * n, 0.0);
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int32_t e = a.row_offsets[r]; e < a.row_offsets[r + 1]; ++e) {
      const double v = a.values[e];
      const float* brow = b.data() + static_cast<int64_t>(a.col_indices[e]) * n;
      for (int64_t j = 0; j < n; ++j) {
        p.c[r * n + j] += v * brow[j];
        p.abs[r * n + j] += std::fabs(v * brow[j]);
      }
    }
  }
  return p;
}

HostProduct HostSpmmIn(v1::Layout layout, const CsrMatrix& a, const std::vector<float>& b, int64_t n) {
  if (layout != v1::LAYOUT_NK) return HostSpmm(a, b, n);
  const HostProduct kn = HostSpmm(a, Transposed(b, n, a.cols), n);  // X (n x cols) to B (cols x n)
  return HostProduct{Transposed(kn.c, a.rows, n), Transposed(kn.abs, a.rows, n)};  // C (rows x n) to Y (n x rows)
}

absl::StatusOr<DeviceBuffer> Upload(const std::vector<float>& values, v1::Dtype dtype) {
  const std::vector<uint8_t> bytes = EncodeInDtype(values, dtype);
  return DeviceBuffer::FromHost(bytes.data(), bytes.size(), "test upload");
}

absl::StatusOr<std::vector<float>> Download(const void* device, int64_t count, v1::Dtype dtype) {
  const int element = DtypeBytes(dtype);
  std::vector<uint8_t> bytes(count * element);
  SD_CUDA_CHECK(cudaMemcpy(bytes.data(), device, bytes.size(), cudaMemcpyDeviceToHost));
  std::vector<float> out(count);
  for (int64_t i = 0; i < count; ++i) {
    if (element == 4) {
      std::memcpy(&out[i], bytes.data() + 4 * i, 4);
    } else {
      uint16_t bits;
      std::memcpy(&bits, bytes.data() + 2 * i, 2);
      out[i] = dtype == v1::DTYPE_FP16 ? HalfBitsToFloat(bits) : Bfloat16BitsToFloat(bits);
    }
  }
  return out;
}

absl::Status FillNaN(void* device, size_t bytes) {
  SD_CUDA_CHECK(cudaMemset(device, 0xFF, bytes));
  return absl::OkStatus();
}

namespace {

template <typename Ref>
Comparison CompareImpl(const std::vector<float>& got, const std::vector<Ref>& ref, const std::vector<double>& abs,
                       int64_t n, double rel_out, double rel_acc) {
  Comparison c;
  if (got.size() != ref.size() || got.size() != abs.size()) {
    c.ok = false;
    c.first_failure = fmt::format("sizes differ: got {}, reference {}, scale {}", got.size(), ref.size(), abs.size());
    return c;
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const double expected = ref[i];
    const double error = std::fabs(static_cast<double>(got[i]) - expected);
    const double allowed = rel_out * std::fabs(expected) + rel_acc * abs[i] + 1e-30;
    if (std::isfinite(error)) {
      c.max_abs_error = std::max(c.max_abs_error, error);
      if (abs[i] > 0) c.max_scaled_error = std::max(c.max_scaled_error, error / abs[i]);
    }
    if (!(error <= allowed)) {  // NaN fails too
      if (c.ok) {
        c.first_failure = fmt::format("element {} (row {}, col {}): expected {}, got {}, allowed error {}", i,
                                      static_cast<int64_t>(i) / n, static_cast<int64_t>(i) % n, expected, got[i],
                                      allowed);
      }
      c.ok = false;
    }
  }
  return c;
}

}  // namespace

Comparison Compare(const std::vector<float>& got, const std::vector<double>& ref, const std::vector<double>& abs,
                   int64_t n, double rel_out, double rel_acc) {
  return CompareImpl(got, ref, abs, n, rel_out, rel_acc);
}

Comparison Compare(const std::vector<float>& got, const std::vector<float>& ref, const std::vector<double>& abs,
                   int64_t n, double rel_out, double rel_acc) {
  return CompareImpl(got, ref, abs, n, rel_out, rel_acc);
}

}  // namespace sparseditto::gpu::testing
