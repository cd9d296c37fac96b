#include "evaluator/gpu/baseline_cache_key.h"

#include <cstring>

#include "fmt/format.h"

namespace sparseditto::gpu {
namespace {

class Fnv1a64 {
 public:
  void Bytes(const void* data, size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) {
      hash_ ^= p[i];
      hash_ *= 0x100000001b3ULL;
    }
  }
  void U64(uint64_t v) {
    unsigned char le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(v >> (8 * i));
    Bytes(le, 8);
  }
  void String(const std::string& s) {
    U64(s.size());
    Bytes(s.data(), s.size());
  }
  // Little-endian 32-bit words of an array, length first.
  template <typename T>
  void Words32(const std::vector<T>& v) {
    static_assert(sizeof(T) == 4);
    U64(v.size());
    for (const T& x : v) {
      uint32_t u;
      std::memcpy(&u, &x, 4);
      const unsigned char le[4] = {static_cast<unsigned char>(u), static_cast<unsigned char>(u >> 8),
                                   static_cast<unsigned char>(u >> 16), static_cast<unsigned char>(u >> 24)};
      Bytes(le, 4);
    }
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

}  // namespace

uint64_t MatrixFingerprint(const CsrMatrix& a) {
  Fnv1a64 h;
  h.String("sparseditto.csr.v1");
  h.U64(static_cast<uint64_t>(a.rows));
  h.U64(static_cast<uint64_t>(a.cols));
  h.Words32(a.row_offsets);
  h.Words32(a.col_indices);
  h.Words32(a.values);
  return h.value();
}

std::string BaselineCacheKey(uint64_t matrix_fingerprint, v1::Dtype dtype, int64_t n, const std::string& gpu_name,
                             const std::string& baseline_name, v1::Layout layout) {
  Fnv1a64 h;
  // v2: baselines timed with the flush inside the gated trial, right before the start event, as the candidate
  // host times candidates (evaluator/runner/timing.h); a change of method, so v1's timings are not reused.
  h.String("sparseditto.baseline.v2");
  h.U64(matrix_fingerprint);
  h.U64(static_cast<uint64_t>(dtype));
  h.U64(static_cast<uint64_t>(n));
  h.String(gpu_name);
  h.String(baseline_name);
  if (layout != v1::LAYOUT_KN) h.U64(static_cast<uint64_t>(layout));
  return fmt::format("{:016x}", h.value());
}

std::string BaselineCacheKey(const CsrMatrix& a, v1::Dtype dtype, int64_t n, const std::string& gpu_name,
                             const std::string& baseline_name, v1::Layout layout) {
  return BaselineCacheKey(MatrixFingerprint(a), dtype, n, gpu_name, baseline_name, layout);
}

}  // namespace sparseditto::gpu
