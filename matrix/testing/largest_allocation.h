// Test support: the largest single allocation made through operator new since the last reset, to show a
// reader never allocates out of proportion to what it reads. Linking largest_allocation.cc into a test
// replaces the global operator new and delete (every form that is not over-aligned) with malloc and free
// that record the size. Thread-safe (an atomic maximum).
#pragma once

#include <cstddef>

namespace sparseditto::testing {

size_t LargestAllocation();
void ResetLargestAllocation();

}  // namespace sparseditto::testing
