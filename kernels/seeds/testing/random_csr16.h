// Test matrices for the seeds' CPU tests of 16-bit formats: a CSR whose values are already dtype bits.
#ifndef SPARSEDITTO_KERNELS_SEEDS_TESTING_RANDOM_CSR16_H_
#define SPARSEDITTO_KERNELS_SEEDS_TESTING_RANDOM_CSR16_H_

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace sparseditto::seed_testing {

struct Csr16 {
  int64_t rows, cols;
  std::vector<int32_t> offsets{0}, cols_of;
  std::vector<uint16_t> bits;
};

// Each element nonzero with probability `density`; rows in `dense_rows` full, in `empty_rows` empty. Values
// are never 0 (a stored zero would be invisible to a round trip).
inline Csr16 RandomCsr16(int64_t rows, int64_t cols, double density, uint32_t seed, std::vector<int64_t> dense_rows = {},
                         std::vector<int64_t> empty_rows = {}) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Csr16 m{rows, cols};
  for (int64_t r = 0; r < rows; ++r) {
    const bool dense = std::find(dense_rows.begin(), dense_rows.end(), r) != dense_rows.end();
    const bool empty = std::find(empty_rows.begin(), empty_rows.end(), r) != empty_rows.end();
    for (int64_t c = 0; c < cols; ++c) {
      if (empty || !(dense || u(rng) < density)) continue;
      m.cols_of.push_back(static_cast<int32_t>(c));
      m.bits.push_back(static_cast<uint16_t>(1 + rng() % 65535));
    }
    m.offsets.push_back(static_cast<int32_t>(m.cols_of.size()));
  }
  return m;
}

}  // namespace sparseditto::seed_testing

#endif  // SPARSEDITTO_KERNELS_SEEDS_TESTING_RANDOM_CSR16_H_
