// Counter-based generators for the coordinator: each decision draws from a fresh Rng seeded by
// (run seed, task name, purpose, step), so resuming at step k needs only the counter k, never the
// internal state of a long-lived generator, and reproduces the uninterrupted run exactly.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/rng.h"

namespace sparseditto {

// 64-bit FNV-1a: a stable hash of a name (the same on every machine and run).
inline uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// The splitmix64 finaliser: spreads every input bit over the output.
inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline Rng StepRng(uint64_t run_seed, std::string_view task_name, std::string_view purpose, uint64_t step) {
  uint64_t h = Mix64(run_seed + 0x9e3779b97f4a7c15ULL);
  h = Mix64(h ^ Fnv1a64(task_name));
  h = Mix64(h ^ Fnv1a64(purpose));
  h = Mix64(h ^ step);
  return Rng(h);
}

}  // namespace sparseditto
