// A small, portable, seeded random generator (xoshiro256** seeded by splitmix64).
// The standard library's distributions differ between implementations; generated matrices must not,
// so every draw the project makes from a seed goes through this class.
// Not thread-safe: use one instance per thread.
#pragma once

#include <cmath>
#include <cstdint>

namespace sparseditto {

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t x = seed;
    for (auto& s : state_) s = SplitMix64(x);
  }

  // Uniform over all 64-bit values.
  uint64_t Next() {
    const uint64_t result = Rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = Rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, 1), 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // Uniform in [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }

  // Uniform integer in [0, bound); bound > 0. Lemire's method without the rejection step's bias.
  uint64_t Below(uint64_t bound) {
    const unsigned __int128 m = static_cast<unsigned __int128>(Next()) * bound;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < bound) {
      const uint64_t threshold = -bound % bound;
      unsigned __int128 mm = m;
      while (low < threshold) {
        mm = static_cast<unsigned __int128>(Next()) * bound;
        low = static_cast<uint64_t>(mm);
      }
      return static_cast<uint64_t>(mm >> 64);
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Standard normal (Box-Muller; one value per call).
  double Normal() {
    double u1 = Uniform();
    while (u1 <= 0.0) u1 = Uniform();
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t SplitMix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t state_[4];
};

}  // namespace sparseditto
