// Test inputs for the block-sparse seeds' CPU tests (bsr_mma, bsr_wgmma): a CSR matrix whose nonzeros fall
// in randomly kept square blocks (edge blocks clipped, blocks partly filled, block-rows likely empty), its
// dense expansion, and values that keep products and sums exact in fp32.
#ifndef SPARSEDITTO_KERNELS_SEEDS_TESTING_RANDOM_BLOCK_CSR_H_
#define SPARSEDITTO_KERNELS_SEEDS_TESTING_RANDOM_BLOCK_CSR_H_

#include <cstdint>
#include <random>
#include <vector>

namespace sparseditto::seed_testing {

struct BlockCsr {
  int64_t rows = 0, cols = 0;
  std::vector<int32_t> ro{0}, ci;
  std::vector<float> v;
};

inline float Eighths(std::mt19937& rng) {  // nonzero multiples of 1/8 in [-1, 1]
  const int x = static_cast<int>(rng() % 16) - 8;
  return (x == 0 ? 3 : x) / 8.0f;
}

// Keeps each block x block tile with probability `keep`, then each entry of a kept tile with 0.8.
inline BlockCsr RandomBlockCsr(int64_t rows, int64_t cols, int block, double keep, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const int64_t bcols = (cols + block - 1) / block, brows = (rows + block - 1) / block;
  std::vector<char> kept(brows * bcols);
  for (auto& k : kept) k = u(rng) < keep;
  BlockCsr m;
  m.rows = rows, m.cols = cols;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      if (kept[(r / block) * bcols + c / block] && u(rng) < 0.8) m.ci.push_back(static_cast<int32_t>(c)), m.v.push_back(Eighths(rng));
    }
    m.ro.push_back(static_cast<int32_t>(m.ci.size()));
  }
  return m;
}

inline std::vector<float> Dense(const BlockCsr& m) {
  std::vector<float> d(m.rows * m.cols, 0.0f);
  for (int64_t r = 0; r < m.rows; ++r)
    for (int32_t e = m.ro[r]; e < m.ro[r + 1]; ++e) d[r * m.cols + m.ci[e]] = m.v[e];
  return d;
}

}  // namespace sparseditto::seed_testing

#endif  // SPARSEDITTO_KERNELS_SEEDS_TESTING_RANDOM_BLOCK_CSR_H_
